# Shared by the daemon tier's shell tests: check/report helpers and a
# hwsigd started on a free loopback port that is always stopped.
# shellcheck shell=bash
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${HWSIG_BUILD:-$top/build}
HWSIGD=$build/hwsigd
HWSIGCTL=$build/hwsigctl
passed=0 failed=0 skipped=0

ok() { passed=$((passed + 1)); echo "ok - $*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $*"; }
# skip "CHECK: why": a check this host cannot run without harm (one that
# would replace an installed hwsig): printed, neither passed nor failed;
# finish and the tiers' summaries say how many.
skip() { skipped=$((skipped + 1)); echo "skip - $*"; }
# check NAME COMMAND...: one result from a command's exit status.
check() {
	local name=$1; shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}
finish() {
	if [ "$skipped" -ne 0 ]; then
		echo "$(basename "$0" .sh): $passed passed, $failed failed, $skipped skipped (not counted as passed)"
	else
		echo "$(basename "$0" .sh): $passed passed, $failed failed"
	fi
	[ "$failed" -eq 0 ]
}

# free_port: a TCP port on 127.0.0.1 nothing listens on now.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
