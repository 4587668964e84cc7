#!/bin/bash
# Documentation/prometheus/rules.yml against the catalog (catalog.cpp, applied
# by derive): catalog-rules-test renders a few minutes of made-up counters
# the way hwsigd exports them and writes a `promtool test rules` file whose
# expected values derive() computed from the same snapshots; promtool runs
# the rules on it. Also: every recording rule is compared or excused, every
# catalog ratio or rate has a rule or is a known gap, no rule reads a record
# of another group (it would see an older window: the comparison catches it
# only when promtool happens to run the groups the wrong way round), and a
# rule with a wrong scale fails the comparison. One ok/not ok each; env
# HWSIG_BUILD is the build directory.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
rules=$top/Documentation/prometheus/rules.yml
tool=$build/tests/unit/catalog-rules-test

# The tool always rebuilt: the expected values come from the library's derive().
missing=
cmake --build "$build" --target catalog-rules-test >/dev/null 2>&1 || missing="build catalog-rules-test in $build"
command -v promtool >/dev/null || missing="promtool not installed (apt-get install prometheus)"
if [ -n "$missing" ]; then
	not_ok "$missing"
	finish
	exit 1
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# quiet CMD...: run it, show its output only when it fails.
quiet() {
	local said
	said=$("$@" 2>&1) && return 0
	echo "$said" | head -40 >&2
	return 1
}
# compare RULES: promtool runs RULES on the test file of derive()'s answers.
compare() {
	"$tool" --promtool-test "$1" >"$out/test.yml" && promtool test rules "$out/test.yml"
}

check "every rule compared with the catalog or excused and reading no stale record; every catalog ratio or rate a rule or a known gap" \
	quiet "$tool" --coverage "$rules"
check "rules.yml gives derive()'s values on the same counters" quiet compare "$rules"

# The comparison sees a wrong scale: LLC MPKI per 100 instructions. It
# must fail on that rule's values, not on anything else.
sed '/record: instance:hwsig_cpu_llc_mpki:rate1m/,/record:/ s/1000 \*/100 */' "$rules" >"$out/wrong.yml"
caught_on() {
	local said
	said=$(compare "$1" 2>&1) && return 1
	grep -q "round(instance:hwsig_cpu_llc_mpki:rate1m" <<<"$said"
}
check "a wrong scale was planted in a copy" bash -c "! cmp -s '$rules' '$out/wrong.yml'"
check "rules.yml with a wrong LLC MPKI scale fails the comparison" caught_on "$out/wrong.yml"
finish
