#!/bin/bash
# Self-test of scripts/run-tests' tier counting (count_log) on canned logs:
# ctest's total wins over a "cli: N passed, N failed" line printed inside it,
# skipped and disabled ctest tests count as failed, a tier's own closing line
# counts. Prints "run-tests-count: N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pass=0 fail=0

# expect NAME "P F" < log
expect() {
	cat >"$dir/log"
	local got; got=$("$top/scripts/run-tests" --count "$dir/log")
	if [ "$got" = "$2" ]; then
		pass=$((pass + 1)); echo "run-tests-count: PASS $1"
	else
		fail=$((fail + 1)); echo "run-tests-count: FAIL $1: got '$got', want '$2'"
	fi
}

expect "failing cli test inside ctest: ctest's total" "172 1" <<'LOG'
172/173 Test #173: cli.hwsigctl ........***Failed    3.10 sec
cli: PASS help has examples
cli: FAIL json: both a value and unavailable
cli: 8 passed, 1 failed

99% tests passed, 1 tests failed out of 173

Total Test time (real) =  40.00 sec

The following tests FAILED:
	173 - cli.hwsigctl (Failed)
Errors while running CTest
make: *** [Makefile:45: unit] Error 8
LOG

expect "skipped, disabled and not-run ctest tests are failures" "2 4" <<'LOG'
5/6 Test #5: notrun ...........................***Not Run   0.00 sec
6/6 Test #6: bad ..............................***Failed    0.04 sec

60% tests passed, 2 tests failed out of 5

Total Test time (real) =   0.55 sec

The following tests did not run:
	  3 - skip (Skipped)
	  4 - dis (Disabled)

The following tests FAILED:
	  5 - notrun (Not Run)
	  6 - bad (Failed)
Errors while running CTest
LOG

expect "all ctest tests pass" "173 0" <<'LOG'
100% tests passed, 0 tests failed out of 173

Total Test time (real) =  40.00 sec
LOG

expect "a tier's own closing line" "12 1" <<'LOG'
bpf-live: FAIL something
bpf-live: 12 passed, 1 failed

LOG

expect "own closing line after a ctest run inside the tier" "5 0" <<'LOG'
100% tests passed, 0 tests failed out of 2
vm-test: 5 passed, 0 failed
LOG

expect "no count: one failure" "0 1" <<'LOG'
make: *** [Makefile:1: fuzz-build] Error 2
LOG

echo "run-tests-count: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
