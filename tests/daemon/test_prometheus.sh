#!/bin/bash
# hwsigd scraped by a real Prometheus (Debian's), against ground truth.
#
# A private loop device (a 64 MiB temp file) gets a known number of O_DIRECT
# 4 KiB reads (dd iflag=direct: one synchronous request each, nothing to
# merge; the kernel's /sys/block/loopN/stat counts the same completions).
# hwsigd (BPF block collector) exports hwsig_block_reads_total{device="loopN"};
# Prometheus, started here on 127.0.0.1 with a temp config and TSDB, scrapes it
# every second. Checks, each printing its numbers:
#   - up{job="hwsigd"} == 1, and Prometheus reports the target healthy with
#     no scrape error (Prometheus 2.42 asks for OpenMetrics first and hwsigd
#     answers with it: the counts below went through that exposition, while
#     promtool reads the 0.0.4 text of a plain curl);
#   - the counter's delta between two instant queries bracketing the reads
#     equals the read count within 2%. This is the exact figure: each instant
#     query returns a stored sample, and the brackets are taken when the
#     stored sample equals a direct scrape of an idle counter;
#   - increase(...[Ws]) over a window holding only pre- and post-workload
#     samples: Prometheus extrapolates the sampled delta to the window's
#     edges (each by at most 1.1 average scrape intervals), so increase() is
#     delta x (sampled span + extrapolation) / sampled span: between delta
#     and delta x W/(W-2.2) with 1 s scrapes. Checked against that band
#     (2% slack each side), not against the count;
#   - the latency histogram's _count advances by the read count (within 2%),
#     its _sum (an estimate: slot middles) lies within [1/16 x 0.75, 1.5]
#     of the workload's wall time;
#   - histogram_quantile(0.99, rate(hwsig_block_latency_seconds_bucket[Ws]))
#     is finite, positive and at most the workload's wall time;
#   - `promtool check metrics` on a direct scrape prints nothing.
# Needs root (losetup, BPF). Cleans up (servers, loop device, temp dir) on exit.
#
# HWSIG_STANDIN=node_exporter runs the same mechanics against
# prometheus-node-exporter's diskstats (harness development only; there is no
# latency histogram there, so that check is skipped).
set -u
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

READS=${READS:-2000}
standin=${HWSIG_STANDIN:-}

if [ "$(id -u)" -ne 0 ]; then
	echo "# skip: needs root (losetup, BPF)"
	finish; exit
fi
for tool in prometheus promtool curl losetup dd; do
	if ! command -v "$tool" >/dev/null; then
		not_ok "$tool is installed (scripts/install-deps)"
		finish; exit
	fi
done

tmp=$(mktemp -d /tmp/hwsig-prom.XXXXXX)
loop="" target_pid="" prom_pid=""
cleanup() {
	[ -n "$prom_pid" ] && kill "$prom_pid" 2>/dev/null && wait "$prom_pid" 2>/dev/null
	[ -n "$target_pid" ] && kill "$target_pid" 2>/dev/null && wait "$target_pid" 2>/dev/null
	[ -n "$loop" ] && losetup -d "$loop" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

truncate -s 64M "$tmp/backing"
loop=$(losetup -f --show "$tmp/backing") || { not_ok "losetup a 64 MiB temp file"; finish; exit; }
dev=$(basename "$loop")
echo "# device $loop (label device=\"$dev\")"

port=$(free_port)
if [ "$standin" = node_exporter ]; then
	reads_metric=node_disk_reads_completed_total
	prometheus-node-exporter --web.listen-address="127.0.0.1:$port" \
		--collector.diskstats.device-exclude='^$' >"$tmp/target.log" 2>&1 &
else
	reads_metric=hwsig_block_reads_total
	"$HWSIGD" --config /dev/null --listen "127.0.0.1:$port" --socket none --interval 1 \
		--pmu off --bpf block >"$tmp/target.log" 2>&1 &
fi
target_pid=$!
target_url="http://127.0.0.1:$port/metrics"
sel="$reads_metric{device=\"$dev\"}"

# scrape_value: the counter's value in a direct scrape of the target ("" if absent).
scrape_value() {
	curl -sf --max-time 5 "$target_url" |
		awk -v m="$reads_metric" -v d="device=\"$dev\"" '
			$0 !~ /^#/ && index($0, m "{") == 1 && index($0, d) { print $NF; exit }'
}
# promq EXPR: the first result's value of an instant query ("none" if empty).
# promq QUERY [TIME]: evaluated at TIME (a window ending then) when given.
promq() {
	local at=()
	[ -n "${2:-}" ] && at=(--data-urlencode "time=$2")
	curl -sf --max-time 5 -G "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" "${at[@]}" |
		python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    print("error"); sys.exit()
r = d.get("data", {}).get("result", [])
print(r[0]["value"][1] if r else "none")'
}
kernel_reads() { awk '{ print $1 }' "/sys/block/$dev/stat"; }
# same A B: numerically equal (Prometheus prints floats, the exposition may not).
same() { python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) == float(sys.argv[2]) else 1)' "$1" "$2" 2>/dev/null; }

for _ in $(seq 150); do
	curl -sf --max-time 1 -o /dev/null "$target_url" && break
	kill -0 "$target_pid" 2>/dev/null || break
	sleep 0.1
done
if ! curl -sf --max-time 5 -o /dev/null "$target_url"; then
	not_ok "target answers GET /metrics on 127.0.0.1:$port within 15 s"
	sed 's/^/# target: /' "$tmp/target.log" | tail -20
	finish; exit
fi
ok "target answers GET /metrics on 127.0.0.1:$port"

pport=$(free_port)
cat >"$tmp/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: hwsigd
    static_configs:
      - targets: ['127.0.0.1:$port']
EOF
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
	--web.listen-address="127.0.0.1:$pport" --log.level=warn >"$tmp/prometheus.log" 2>&1 &
prom_pid=$!
for _ in $(seq 300); do
	curl -sf --max-time 1 -o /dev/null "http://127.0.0.1:$pport/-/ready" && break
	kill -0 "$prom_pid" 2>/dev/null || break
	sleep 0.1
done

# up == 1 (first scrape within a few seconds)
up=none
for _ in $(seq 20); do
	up=$(promq 'up{job="hwsigd"}')
	[ "$up" = 1 ] && break
	sleep 0.5
done
if [ "$up" = 1 ]; then ok "up{job=\"hwsigd\"} == 1"; else
	not_ok "up{job=\"hwsigd\"} == 1 (got $up)"
	sed 's/^/# prometheus: /' "$tmp/prometheus.log" | tail -10
fi
# Prometheus's own view of the target: healthy, no scrape error, and the
# format it negotiated (2.42 asks for OpenMetrics first: the checks below
# read what the OpenMetrics exposition carried).
target=$(curl -sf --max-time 5 "http://127.0.0.1:$pport/api/v1/targets" | python3 -c '
import json, sys
try:
    t = json.load(sys.stdin)["data"]["activeTargets"][0]
except (ValueError, KeyError, IndexError):
    print("none||"); sys.exit()
print("%s|%s|%s" % (t.get("health"), t.get("lastError", ""), t.get("scrapeUrl")))')
health=${target%%|*} rest=${target#*|}
scrape_error=${rest%%|*}
target_ok() { [ "$health" = up ] && [ -z "$scrape_error" ]; }
check "Prometheus's target ${rest#*|}: health $health, scrape error '$scrape_error' (want up, none)" target_ok

# promtool on a direct scrape: no output, exit 0
lint=$(curl -sf --max-time 5 "$target_url" | promtool check metrics 2>&1)
lint_rc=$?
if [ -z "$lint" ] && [ "$lint_rc" -eq 0 ]; then ok "promtool check metrics on a direct scrape: silent, exit 0"; else
	not_ok "promtool check metrics on a direct scrape (exit $lint_rc):"
	head -20 <<<"$lint" | sed 's/^/#   /'
fi

# Priming reads make the device's series exist; then wait until the stored
# sample equals a direct scrape of the idle counter (the "before" bracket).
dd if="$loop" of=/dev/null bs=4096 count=16 iflag=direct status=none
settle() { # settle VAR_PREFIX: sets settled_value, settled_at ("" on timeout)
	local d p prev=""
	settled_value="" settled_at=""
	for _ in $(seq 60); do
		d=$(scrape_value)
		p=$(promq "$sel")
		# idle: the daemon's value unchanged over two polls 1.5 s apart
		# (more than one interval), and Prometheus has stored it.
		if [ -n "$d" ] && [ "$d" = "$prev" ] && [ "$p" != none ] && same "$d" "$p"; then
			settled_value=$p settled_at=$(date +%s.%N)
			# the same scrape's (same timestamp's) latency histogram
			settled_count=$(promq "hwsig_block_latency_seconds_count{device=\"$dev\"}")
			settled_sum=$(promq "hwsig_block_latency_seconds_sum{device=\"$dev\"}")
			return 0
		fi
		prev=$d
		sleep 1.5
	done
	return 1
}
if ! settle; then
	not_ok "series $sel appears in Prometheus and settles within 90 s (direct: $(scrape_value), stored: $(promq "$sel"))"
	finish; exit
fi
v0=$settled_value t0=$settled_at c0=$settled_count s0=$settled_sum
# Leave a few pre-workload samples inside the increase() window.
sleep 5
k0=$(kernel_reads)
ts=$(date +%s.%N)
dd if="$loop" of=/dev/null bs=4096 count="$READS" iflag=direct status=none
te=$(date +%s.%N)
k1=$(kernel_reads)
kernel=$((k1 - k0))
echo "# $READS O_DIRECT 4 KiB reads in $(python3 -c "print(f'{$te - $ts:.2f}')") s; kernel diskstats counted $kernel"
check "kernel diskstats count the $READS reads exactly (got $kernel)" [ "$kernel" -eq "$READS" ]

if ! settle; then
	not_ok "the counter settles after the workload within 90 s"
	finish; exit
fi
v1=$settled_value c1=$settled_count s1=$settled_sum
sleep 5
tq=$(date +%s.%N)
# The window starts after the "before" sample was stored and settled.
W=$(python3 -c "import math; print(int(math.floor($tq - $t0)) - 1)")
check "delta of instant queries: $v1 - $v0 within 2% of $READS" python3 - "$v0" "$v1" "$READS" <<'EOF'
import sys
v0, v1, n = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
d = v1 - v0
print(f"# delta {d:.0f} vs {n} reads: {100 * (d - n) / n:+.2f}%")
sys.exit(0 if abs(d - n) <= 0.02 * n else 1)
EOF

inc=$(promq "increase(${sel}[${W}s])" "$tq")
check "increase(${sel}[${W}s]) = $inc within Prometheus's extrapolation band" python3 - "$inc" "$v0" "$v1" "$W" <<'EOF'
import sys
try:
    inc = float(sys.argv[1])
except ValueError:
    print(f"# no increase() result: {sys.argv[1]}"); sys.exit(1)
d = float(sys.argv[3]) - float(sys.argv[2]); W = int(sys.argv[4])
lo, hi = d * 0.98, d * W / (W - 2.2) * 1.02
print(f"# increase {inc:.1f} = delta {d:.0f} x {inc / d:.4f} (extrapolation); band [{lo:.1f}, {hi:.1f}] for a {W} s window")
sys.exit(0 if lo <= inc <= hi else 1)
EOF

if [ "$standin" = node_exporter ]; then
	echo "# skip: latency histogram checks (the stand-in has none)"
else
	# One latency per request, each inside the one dd's wall time.
	# _sum is an estimate (each value at its log2 slot's middle: within
	# 0.75..1.5 of the truth, Documentation/prometheus.rst); the latency is
	# most of a loop device's pread (test_block_truth: at least 1/16).
	wall=$(python3 -c "print($te - $ts)")
	check "latency _count delta $c1 - $c0 within 2% of $READS" python3 - "$c0" "$c1" "$READS" <<'EOF'
import sys
try:
    d = float(sys.argv[2]) - float(sys.argv[1])
except ValueError:
    sys.exit(1)
n = int(sys.argv[3])
print(f"# latency samples {d:.0f} vs {n} reads")
sys.exit(0 if abs(d - n) <= 0.02 * n else 1)
EOF
	check "latency _sum delta within [wall/16 x 0.75, wall x 1.5] of the dd's $wall s" python3 - "$s0" "$s1" "$wall" <<'EOF'
import sys
try:
    d = float(sys.argv[2]) - float(sys.argv[1])
except ValueError:
    sys.exit(1)
wall = float(sys.argv[3])
print(f"# latency _sum delta {d:.4f} s over a {wall:.4f} s workload ({100 * d / wall:.0f}%)")
sys.exit(0 if wall / 16 * 0.75 <= d <= wall * 1.5 else 1)
EOF
	q=$(promq "histogram_quantile(0.99, rate(hwsig_block_latency_seconds_bucket{device=\"$dev\"}[${W}s]))" "$tq")
	check "histogram_quantile(0.99, rate(hwsig_block_latency_seconds_bucket{device=\"$dev\"}[${W}s])) = $q s: finite, > 0, <= the workload's $wall s" python3 - "$q" "$wall" <<'EOF'
import math, sys
try:
    q = float(sys.argv[1])
except ValueError:
    sys.exit(1)
print(f"# p99 latency {q * 1e6:.1f} us")
sys.exit(0 if math.isfinite(q) and 0 < q <= float(sys.argv[2]) else 1)
EOF
fi

# hwsig_unavailable's reason is a code of the fixed set, transient ones
# (no_events, incomplete: this idle-then-busy loop device's) never
# exported; the words are in the log, the first time at info.
if [ -z "$standin" ]; then
	reasons=$(curl -sf --max-time 5 "$target_url" | sed -n 's/^hwsig_unavailable{.*reason="\([^"]*\)"}.*/\1/p' |
		sort -u | tr '\n' ' ')
	check "hwsig_unavailable reasons are lasting codes: $reasons" python3 - "$reasons" <<'EOF'
import sys
got = set(sys.argv[1].split())
sys.exit(0 if got and got <= {"disabled", "unsupported", "permission", "read_error", "malformed", "capacity",
                              "no_target"} else 1)
EOF
	check "the log has the words of cpu.ipc's note at info" \
		grep -qE '^[0-9T:.-]+Z info: unavailable: cpu\.ipc at system \(disabled\): hardware counters disabled' "$tmp/target.log"
fi

# Still up after all that, and the daemon exits 0 on SIGTERM.
check "target still running" kill -0 "$target_pid"
if [ -z "$standin" ]; then
	kill -TERM "$target_pid"
	rc=0
	wait "$target_pid" || rc=$?
	target_pid=""
	check "hwsigd exits 0 on SIGTERM (exit $rc)" [ "$rc" -eq 0 ]
fi
finish
