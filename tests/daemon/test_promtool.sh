#!/bin/bash
# The exposition of every fixture tree, both formats, with and without
# per-CPU series and with synthetic PMU/BPF series: `promtool check metrics`
# must print nothing for the 0.0.4 text (it parses and lints: _total on
# counters only, base units, HELP...); promtool 2.42 cannot read OpenMetrics,
# so that text gets check_openmetrics.py (# EOF, family naming, UNIT, bucket
# structure), and a real Prometheus server scrapes both formats once. Every
# exported family must be listed by `hwsigctl metrics --prometheus` with
# its type (prometheus.rst, "Families"). One ok/not ok
# per check; env HWSIG_BUILD is the build directory.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
here=$(cd "$(dirname "$0")" && pwd)

tool=$build/tests/unit/render-prometheus-fixture
if [ ! -x "$tool" ]; then
	cmake --build "$build" --target render-prometheus-fixture >/dev/null 2>&1 ||
		{ not_ok "build render-prometheus-fixture in $build"; finish; exit 1; }
fi
if ! command -v promtool >/dev/null; then
	not_ok "promtool not installed (apt-get install prometheus)"
	finish
	exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# promtool_clean FILE: exit 0 and no output at all.
promtool_clean() {
	local said
	said=$(promtool check metrics <"$1" 2>&1) && [ -z "$said" ] && return 0
	echo "promtool: $said" | head -5 >&2
	return 1
}
om_sound() {
	python3 "$here/check_openmetrics.py" <"$1" >&2
}

# The checkers themselves catch what they are meant to catch.
printf '# HELP x_bytes Help.\n# TYPE x_bytes counter\nx_bytes 1\n' >"$out/bad.prom"
check "promtool lints a counter without _total" bash -c "! promtool check metrics <'$out/bad.prom' >/dev/null 2>&1"
printf '# TYPE x histogram\nx_bucket{le="1"} 2\nx_bucket{le="+Inf"} 3\nx_count 2\nx_sum 1\n# EOF\n' >"$out/bad.om"
check "check_openmetrics.py refuses +Inf != _count" bash -c "! python3 '$here/check_openmetrics.py' <'$out/bad.om' >/dev/null"
printf '# TYPE x gauge\nx 1\n' >"$out/noeof.om"
check "check_openmetrics.py refuses a text without # EOF" bash -c "! python3 '$here/check_openmetrics.py' <'$out/noeof.om' >/dev/null"

n=0
fixtures=$(find "$top/tests/unit/fixtures" -mindepth 2 -maxdepth 3 -type d \( -name proc -o -name sys \) \
	-printf '%h\n' | sort -u)
for f in $fixtures; do
	name=${f#"$top/tests/unit/fixtures/"}
	for extra in "" --synthetic; do
		for pc in "" --per-cpu; do
			tag="$name${extra:+ $extra}${pc:+ $pc}"
			# shellcheck disable=SC2086
			if "$tool" --root "$f" $extra $pc >"$out/p" 2>"$out/err"; then
				check "promtool check metrics: $tag" promtool_clean "$out/p"
				cp "$out/p" "$out/all.$((++n))"
			else
				not_ok "render $tag: $(head -1 "$out/err")"
			fi
			# shellcheck disable=SC2086
			if "$tool" --root "$f" $extra $pc --openmetrics >"$out/o" 2>"$out/err"; then
				check "openmetrics structure: $tag" om_sound "$out/o"
			else
				not_ok "render $tag --openmetrics: $(head -1 "$out/err")"
			fi
		done
	done
done
# A real Prometheus server scrapes both formats (promtool cannot read
# OpenMetrics; the server's parser is the one that matters): the target is
# up, without a scrape error, and every sample line was ingested.
# scrape FILE CONTENT-TYPE
scrape() {
	local file=$1 ctype=$2 port pport dir=$out/prom.$RANDOM spid ppid said=""
	if ! command -v prometheus >/dev/null || ! command -v curl >/dev/null; then
		echo "prometheus or curl not installed" >&2
		return 1
	fi
	port=$(free_port) pport=$(free_port)
	mkdir -p "$dir"
	python3 "$here/serve_file.py" "$port" "$file" "$ctype" & spid=$!
	printf 'global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: hwsig\n    static_configs: [{targets: ["127.0.0.1:%s"]}]\n' \
		"$port" >"$dir/prom.yml"
	prometheus --config.file="$dir/prom.yml" --storage.tsdb.path="$dir/data" \
		--web.listen-address="127.0.0.1:$pport" >"$dir/log" 2>&1 & ppid=$!
	local api="http://127.0.0.1:$pport/api/v1" want got="" tries=0
	want=$(grep -vc '^#' "$file")
	# Up to 20 s for the server to start and scrape once.
	while [ $((tries += 1)) -le 40 ]; do
		sleep 0.5
		said=$(curl -sf "$api/targets" | python3 -c '
import json, sys
t = json.load(sys.stdin)["data"]["activeTargets"]
print(t[0]["health"] + " " + t[0]["lastError"] if t else "none")' 2>/dev/null) || continue
		case $said in none | unknown*) continue ;; esac
		got=$(curl -sf "$api/query?query=scrape_samples_scraped" | python3 -c '
import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")' 2>/dev/null)
		[ -n "$got" ] && break
	done
	kill "$ppid" "$spid" 2>/dev/null
	wait "$ppid" "$spid" 2>/dev/null
	[ "$said" = "up " ] && [ "$got" = "$want" ] && return 0
	echo "target: '$said', samples scraped: $got of $want" >&2
	return 1
}
"$tool" --root "$top/tests/unit/fixtures/kvm-host" --synthetic --per-cpu --openmetrics >"$out/scrape.om"
"$tool" --root "$top/tests/unit/fixtures/kvm-host" --synthetic --per-cpu >"$out/scrape.prom"
check "prometheus scrapes the OpenMetrics text" scrape "$out/scrape.om" \
	"application/openmetrics-text; version=1.0.0; charset=utf-8"
check "prometheus scrapes the 0.0.4 text" scrape "$out/scrape.prom" "text/plain; version=0.0.4; charset=utf-8"

# Every family the renderer produces (on any fixture, with the synthetic
# series) is listed by `hwsigctl metrics --prometheus`, with its type (an
# info family is a gauge in the 0.0.4 text).
listing=$("$build/hwsigctl" metrics --prometheus | awk 'NR > 1 { print $1, ($2 == "info" ? "gauge" : $2) }')
unlisted=$(cat "$out"/all.* | grep -oP '^# TYPE \K\S+ \S+' | sort -u |
	grep -v -e '^hwsig_snapshots_total ' -e '^hwsig_render_fixture_root ' |
	while read -r fam type; do
		grep -qx "$fam $type" <<<"$listing" || echo "$fam ($type)"
	done | tr '\n' ' ')
check "every exported family is listed by hwsigctl metrics --prometheus${unlisted:+ (missing: $unlisted)}" \
	test -n "$listing" -a -z "$unlisted"
finish
