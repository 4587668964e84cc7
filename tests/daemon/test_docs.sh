#!/bin/bash
# The documentation says what the programs do: hwsigd's option table
# (hwsigd --print-options) = the keys of hwsigd.rst's OPTIONS = the keys of
# the shipped hwsigd.conf (with the same defaults and help lines), the
# shipped hwsigd.conf is accepted as it is and uncommented. Both man pages
# (hwsigd.8, hwsigctl.8) render without warnings, and every page of
# Documentation/ parses without a docutils warning.
source "$(dirname "$0")/lib.sh"

rst=$top/Documentation/hwsigd.rst
conf=$top/userspace/daemon/hwsigd.conf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- hwsigd: one option table, three places ----------------------------
if ! "$HWSIGD" --print-options >"$tmp/table"; then
	not_ok "hwsigd --print-options"
fi
cut -f1,2 "$tmp/table" | sort >"$tmp/table.kd"
cut -f1,3 "$tmp/table" | sort >"$tmp/table.kh"
check "--print-options lists keys ($(wc -l <"$tmp/table") )" test -s "$tmp/table"

# hwsigd.rst, OPTIONS: "``key`` (default ``value``)" then the help, indented.
sed -n '/^OPTIONS$/,/^Options of the command line only/p' "$rst" >"$tmp/rst.options"
python3 - "$tmp/rst.options" "$tmp" <<'EOF'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
kd, kh = [], []
for i, l in enumerate(lines):
    m = re.match(r'^``([a-z][a-z-]*)`` \(default ``(.*)``\)$', l)
    if m:
        kd.append(f"{m[1]}\t{m[2]}")
        help_line = lines[i + 1].strip() if i + 1 < len(lines) else ""
        kh.append(f"{m[1]}\t{help_line}")
open(sys.argv[2] + "/rst.kd", "w").write("".join(sorted(x + "\n" for x in kd)))
open(sys.argv[2] + "/rst.kh", "w").write("".join(sorted(x + "\n" for x in kh)))
EOF
# hwsigd.conf: "# help" then "#key = default".
python3 - "$conf" "$tmp" <<'EOF'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
kd, kh = [], []
for i, l in enumerate(lines):
    m = re.match(r'^#([a-z][a-z-]*) = (.*)$', l)
    if m:
        kd.append(f"{m[1]}\t{m[2]}")
        prev = lines[i - 1][2:] if i > 0 and lines[i - 1].startswith("# ") else ""
        kh.append(f"{m[1]}\t{prev}")
open(sys.argv[2] + "/conf.kd", "w").write("".join(sorted(x + "\n" for x in kd)))
open(sys.argv[2] + "/conf.kh", "w").write("".join(sorted(x + "\n" for x in kh)))
EOF
same() { # NAME A B: the two sorted lists are equal, else the difference
	if [ -s "$2" ] && cmp -s "$2" "$3"; then ok "$1"; else
		not_ok "$1"; diff "$2" "$3" | sed 's/^/    /'
	fi
}
same "hwsigd.rst OPTIONS: the same keys and defaults as --print-options" "$tmp/table.kd" "$tmp/rst.kd"
same "hwsigd.rst OPTIONS: each key's help line is --print-options' help" "$tmp/table.kh" "$tmp/rst.kh"
same "hwsigd.conf: the same keys and defaults as --print-options" "$tmp/table.kd" "$tmp/conf.kd"
same "hwsigd.conf: each key's comment is --print-options' help" "$tmp/table.kh" "$tmp/conf.kh"
# hwsigd --help: "--key arg (=default)", the same default (false, not 0).
"$HWSIGD" --help 2>&1 | sed -nE 's/^  --([a-z][a-z-]*) arg \(=([^)]*)\).*/\1\t\2/p' | sort >"$tmp/help.kd"
join -t "$(printf '\t')" "$tmp/table.kd" "$tmp/help.kd" | awk -F '\t' '$2 != $3' >"$tmp/help.differs"
check "hwsigd --help: every key's default as --print-options says it$(sed 's/^/; /' "$tmp/help.differs" | tr -d '\n')" \
	test -s "$tmp/help.kd" -a ! -s "$tmp/help.differs"
check "hwsigd.conf sets nothing (every key commented out)" \
	bash -c "! grep -Ev '^[[:space:]]*(#|$)' '$conf'"

# The shipped file is accepted, as it is and with every key uncommented
# (listen and socket moved out of the way). hwsigd may then run: it is
# stopped after 3 s; only exit status 2 (bad configuration) is a failure.
port=$(free_port)
sed -e 's/^#\([a-z][a-z-]*\) = /\1 = /' \
	-e "s|^listen = .*|listen = 127.0.0.1:$port|" \
	-e "s|^socket = .*|socket = $tmp/hwsigd.sock|" "$conf" >"$tmp/uncommented.conf"
for f in "$conf" "$tmp/uncommented.conf"; do
	timeout -s TERM 3 "$HWSIGD" --config "$f" --listen "127.0.0.1:$port" --socket "$tmp/hwsigd.sock" \
		>/dev/null 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 2 ] && ! grep -q "config $f" "$tmp/err"; then
		ok "hwsigd accepts $(basename "$f") (exit $rc)"
	else
		not_ok "hwsigd refuses $(basename "$f"): $(head -1 "$tmp/err")"
	fi
done
echo "intervall = 2" >"$tmp/bad.conf"
"$HWSIGD" --config "$tmp/bad.conf" >/dev/null 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q intervall "$tmp/err"; then
	ok "a bad key: exit 2, one line naming it (as hwsigd.rst says)"
else
	not_ok "a bad key: exit $rc, stderr: $(head -3 "$tmp/err")"
fi

# The sections hwsigd.rst must have, and what they must mention.
for s in NAME SYNOPSIS DESCRIPTION OPTIONS "CONFIGURATION FILE" SIGNALS "HTTP ENDPOINT" SYSTEMD \
	CAPABILITIES FILES "EXIT STATUS" EXAMPLES "SEE ALSO"; do
	grep -qx -- "$s" "$rst" || not_ok "hwsigd.rst has no $s section"
done
ok "hwsigd.rst has its 13 sections"
for w in SIGTERM SIGINT SIGHUP /etc/hwsig/hwsigd.conf /run/hwsig/hwsigd.sock \
	Documentation/prometheus.rst Type=notify WatchdogSec addgroup; do
	grep -qF -- "$w" "$rst" || not_ok "hwsigd.rst does not mention $w"
done
ok "hwsigd.rst mentions the signals, files, the prometheus.rst page, the unit, the group"

# hwsigctl.rst's --help blocks: tests/daemon/test_cli_doc.sh (verbatim).

# --- the man pages render without warnings ------------------------------
for page in hwsigd hwsigctl; do
	"$top/packaging/rst2man8" "$top/Documentation/$page.rst" "$tmp/$page.8" "$(cat "$top/VERSION")" 2>"$tmp/err"
	LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$tmp/$page.8" >"$tmp/$page.txt" 2>>"$tmp/err"
	if [ -s "$tmp/$page.txt" ] && [ ! -s "$tmp/err" ] && grep -q "^${page^^}(8)" "$tmp/$page.txt"; then
		ok "$page.8: rst2man and man render it without warnings"
	else
		not_ok "$page.8 renders with warnings or not at all"
		sed 's/^/    /' "$tmp/err" | head -5
	fi
done

# --- every page of Documentation/ parses without a docutils warning ------
# (a malformed table or a broken reference shows as an error box, or not
# at all, in any reStructuredText viewer). Subfolders too: the package
# renders them all (runbooks/ is where alerts' runbook_url points).
while IFS= read -r f; do
	python3 -c '
import sys, docutils.core
path = sys.argv[1]
docutils.core.publish_doctree(open(path).read(), source_path=path,
                              settings_overrides={"report_level": 2, "halt_level": 5})
' "$f" >"$tmp/err" 2>&1
	if [ ! -s "$tmp/err" ]; then
		ok "${f#"$top"/} parses without docutils warnings"
	else
		not_ok "${f#"$top"/} has docutils warnings"
		sed 's/^/    /' "$tmp/err" | head -5
	fi
done < <(find "$top/Documentation" -name '*.rst' | sort)

finish
