#!/bin/bash
# hwsigd under hostile and heavy HTTP clients: malformed request lines,
# headers over 64 KiB, unknown paths and methods, slowloris half requests,
# drip slowloris beyond the connection limit, 200 concurrent scrapers.
# The daemon runs on a fixture root with --bpf none
# --pmu off (no root or BPF needed), sampling every second; the clients and
# the acceptable answers are in test_http_faults.py (its header says which
# answers are acceptable and why). Checks: every answer acceptable, the
# daemon alive throughout and exiting 0 on SIGTERM, RSS after within +20 MB
# of before, hwsig_snapshots_total advancing by elapsed/interval (at most 2
# intervals missed), the worst snapshot lateness reported.
#
# HWSIG_STANDIN=node_exporter points the clients at prometheus-node-exporter
# (harness development only: the hwsig_* checks fail there).
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

fixture=${FIXTURE:-$top/tests/unit/fixtures/xeon-2s-256cpu-8node}
interval=1
tmp=$(mktemp -d /tmp/hwsig-faults.XXXXXX)
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=$(free_port)
if [ "${HWSIG_STANDIN:-}" = node_exporter ]; then
	prometheus-node-exporter --web.listen-address="127.0.0.1:$port" >"$tmp/daemon.log" 2>&1 &
else
	"$HWSIGD" --config /dev/null --listen "127.0.0.1:$port" --socket none --interval "$interval" \
		--pmu off --bpf none --root "$fixture" >"$tmp/daemon.log" 2>&1 &
fi
pid=$!
for _ in $(seq 100); do
	curl -sf --max-time 1 -o /dev/null "http://127.0.0.1:$port/metrics" && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if ! curl -sf --max-time 5 -o /dev/null "http://127.0.0.1:$port/metrics"; then
	not_ok "daemon answers GET /metrics on 127.0.0.1:$port within 10 s"
	tail -20 "$tmp/daemon.log" | sed 's/^/# daemon: /'
	finish; exit
fi
ok "daemon answers GET /metrics on 127.0.0.1:$port"

read -ra extra <<<"${FAULTS_ARGS:-}"  # more options for test_http_faults.py
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "${line#ok - }" ;;
	"not ok - "*) not_ok "${line#not ok - }" ;;
	*) echo "$line" ;;
	esac
done < <(timeout 300 python3 "$here/test_http_faults.py" --port "$port" --pid "$pid" --interval "$interval" "${extra[@]}" 2>&1)

if [ "${HWSIG_STANDIN:-}" != node_exporter ]; then
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"
		rc=0
		wait "$pid" || rc=$?
		pid=""
		check "daemon exits 0 on SIGTERM after the faults (exit $rc)" [ "$rc" -eq 0 ]
	else
		not_ok "daemon still running at the end"
		tail -20 "$tmp/daemon.log" | sed 's/^/# daemon: /'
	fi
fi
finish
