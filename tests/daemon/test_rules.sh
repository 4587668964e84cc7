#!/bin/bash
# Documentation/prometheus/rules.yml: `promtool check rules` (syntax, names)
# and `promtool test rules` on rules_test.yml (hand-computed answers for
# every recording rule). One ok/not ok each.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
dir=$top/Documentation/prometheus

if ! command -v promtool >/dev/null; then
	not_ok "promtool not installed (apt-get install prometheus)"
	finish
	exit 1
fi
# quiet CMD...: run it, show its output only when it fails.
quiet() {
	local said
	said=$("$@" 2>&1) && return 0
	echo "$said" | head -30 >&2
	return 1
}
check "promtool check rules rules.yml" quiet promtool check rules "$dir/rules.yml"
check "promtool test rules rules_test.yml" quiet bash -c "cd '$dir' && promtool test rules rules_test.yml"
# Every rule is tested: each recorded name appears as an expr in the test.
untested=$(grep -oP '^\s*- record: \K\S+' "$dir/rules.yml" | while read -r r; do
	grep -q "expr: $r\$" "$dir/rules_test.yml" || echo "$r"
done | tr '\n' ' ')
check "every recording rule has a test${untested:+ (missing: $untested)}" test -z "$untested"
finish
