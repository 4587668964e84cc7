#!/bin/bash
# `make install DESTDIR=... PREFIX=/usr` puts exactly the expected files
# there, with their modes (programs stripped, the unit pointing at the
# installed hwsigd, man pages that render without warnings); a second
# install keeps a changed configuration file; `make uninstall` removes
# everything but a changed configuration file, then (once it is back to
# the shipped one) leaves no file at all. PREFIX=/usr/local: the unit under
# /usr/local/lib/systemd/system runs /usr/local/sbin/hwsigd. Documentation/
# ships as text and HTML with the rules and dashboards, and every page a
# message cites is where it says.
source "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dest=$tmp/root
version=$(cat "$top/VERSION")
mk() { make --no-print-directory -C "$top" BUILD="$build" "$@"; }

if ! mk install DESTDIR="$dest" PREFIX=/usr >"$tmp/install.log" 2>&1; then
	not_ok "make install DESTDIR PREFIX=/usr"
	tail -20 "$tmp/install.log" | sed 's/^/    /'
	finish
	exit
fi
ok "make install DESTDIR PREFIX=/usr"

# shipped_docs PREFIX: the documentation, rules and dashboards make install
# puts under PREFIX (usr, usr/local), "path mode" a line.
shipped_docs() {
	(cd "$top/Documentation" && find . -name '*.rst' -printf '%P\n') | while read -r page; do
		echo "$1/share/doc/hwsig/$page 644"
		echo "$1/share/doc/hwsig/html/${page%.rst}.html 644"
	done
	(cd "$top/Documentation" && ls prometheus/*.yml grafana/*.json 2>/dev/null) | grep -v '_test\.yml$' |
		sed "s|^|$1/share/hwsig/|; s|\$| 644|"
}
# cited_docs DIR PREFIX: the documentation paths the programs installed
# under DIR print (help, errors, reasons), each with whether it is there.
cited_docs() {
	strings -n 6 "$1/$2/sbin/hwsigctl" "$1/$2/sbin/hwsigd" |
		grep -o "/$2/share/doc/hwsig/[A-Za-z0-9_./-]*\.\(rst\|html\)" | sort -u |
		while read -r path; do
			if [ -f "$1$path" ]; then echo "ok $path"; else echo "missing $path"; fi
		done
}

# path mode: every file installed, nothing else.
expected=$( {
	echo "etc/hwsig/hwsigd.conf 644
lib/systemd/system/hwsigd.service 644
usr/sbin/hwsigctl 755
usr/sbin/hwsigd 755
usr/share/man/man8/hwsigctl.8 644
usr/share/man/man8/hwsigd.8 644"
	shipped_docs usr
} | sort)
got=$(cd "$dest" && find . \( -type f -o -type l \) -printf '%P %m\n' | sort)
if [ "$got" = "$expected" ]; then
	ok "exactly the $(wc -l <<<"$expected") expected files, with their modes (programs, unit, pages, Documentation/ as text and HTML, rules, dashboards)"
else
	not_ok "installed files differ from the expected list"
	diff <(echo "$expected") <(echo "$got") | sed 's/^/    /'
fi

cited=$(cited_docs "$dest" usr)
check "every documentation path the programs print exists once installed ($(grep -c '^ok' <<<"$cited") cited${cited:+; }$(grep '^missing' <<<"$cited" | tr '\n' ' '))" \
	bash -c "[ -n '$cited' ] && ! grep -q '^missing' <<<'$cited'"
check "the rules, alerts and dashboards are under /usr/share/hwsig" \
	test -f "$dest/usr/share/hwsig/prometheus/rules.yml" -a -f "$dest/usr/share/hwsig/prometheus/alerts.yml" \
	-a -n "$(ls "$dest"/usr/share/hwsig/grafana/*.json 2>/dev/null)"

for p in hwsigctl hwsigd; do
	f=$dest/usr/sbin/$p
	if [ -f "$f" ] && ! readelf -S "$f" | grep -q '\.symtab'; then
		ok "$p is stripped"
	else
		not_ok "$p is not stripped (or missing)"
	fi
done
check "installed hwsigd --version says $version" \
	bash -c "'$dest/usr/sbin/hwsigd' --version | grep -qx 'hwsigd $version'"
check "installed hwsigctl --version runs" bash -c "'$dest/usr/sbin/hwsigctl' --version >/dev/null"
check "the configuration file is the shipped one" cmp -s "$top/userspace/daemon/hwsigd.conf" "$dest/etc/hwsig/hwsigd.conf"
check "the unit runs /usr/sbin/hwsigd" grep -qx 'ExecStart=/usr/sbin/hwsigd' "$dest/lib/systemd/system/hwsigd.service"

# The installed unit verifies (ExecStart pointed into DESTDIR, MANPATH at
# the installed pages: verify resolves both on the real root).
mkdir -p "$tmp/unit"
sed "s|^ExecStart=/usr/sbin/hwsigd|ExecStart=$dest/usr/sbin/hwsigd|" \
	"$dest/lib/systemd/system/hwsigd.service" >"$tmp/unit/hwsigd.service"
out=$(MANPATH=$dest/usr/share/man systemd-analyze verify "$tmp/unit/hwsigd.service" 2>&1)
if [ $? -eq 0 ] && [ -z "$out" ]; then ok "installed unit: systemd-analyze verify clean"; else
	not_ok "installed unit: systemd-analyze verify: $out"
fi

for page in hwsigctl hwsigd; do
	f=$dest/usr/share/man/man8/$page.8
	LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$f" >"$tmp/$page.txt" 2>"$tmp/$page.err"
	if [ -s "$tmp/$page.txt" ] && [ ! -s "$tmp/$page.err" ] && head -1 "$tmp/$page.txt" | grep -q "^${page^^}(8)"; then
		ok "$page.8 renders with man -l, no warnings"
	else
		not_ok "$page.8: $(head -3 "$tmp/$page.err")"
	fi
	if LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$f" 2>&1 | grep -q .; then
		not_ok "$page.8: groff -ww warns"
	else
		ok "$page.8: groff -ww is quiet"
	fi
	check "$page.8: .TH names section 8 and hwsig $version" \
		grep -q "^\.TH \"${page^^}\" \"8\" \"[0-9-]*\" \"hwsig $version\"" "$f"
done

# A changed configuration survives install and uninstall.
echo "interval = 2" >>"$dest/etc/hwsig/hwsigd.conf"
cp "$dest/etc/hwsig/hwsigd.conf" "$tmp/changed.conf"
mk install DESTDIR="$dest" PREFIX=/usr >"$tmp/install2.log" 2>&1
check "a second install keeps a changed hwsigd.conf" cmp -s "$tmp/changed.conf" "$dest/etc/hwsig/hwsigd.conf"
mk uninstall DESTDIR="$dest" PREFIX=/usr >"$tmp/uninstall.log" 2>&1
left=$(cd "$dest" && find . \( -type f -o -type l \) -printf '%P\n' | sort)
if [ "$left" = "etc/hwsig/hwsigd.conf" ]; then
	ok "uninstall removes all but the changed hwsigd.conf"
else
	not_ok "after uninstall with a changed hwsigd.conf: '$(echo $left)'"
fi
cp "$top/userspace/daemon/hwsigd.conf" "$dest/etc/hwsig/hwsigd.conf"
mk uninstall DESTDIR="$dest" PREFIX=/usr >"$tmp/uninstall2.log" 2>&1
left=$(cd "$dest" && find . \( -type f -o -type l \) -printf '%P\n')
check "uninstall of an unchanged install leaves no file (and no /etc/hwsig)" \
	bash -c "[ -z '$left' ] && [ ! -e '$dest/etc/hwsig' ]"

# PREFIX=/usr/local
dest2=$tmp/local
if mk install DESTDIR="$dest2" PREFIX=/usr/local >"$tmp/install3.log" 2>&1; then
	check "PREFIX=/usr/local: unit in /usr/local/lib/systemd/system runs /usr/local/sbin/hwsigd" \
		grep -qx 'ExecStart=/usr/local/sbin/hwsigd' "$dest2/usr/local/lib/systemd/system/hwsigd.service"
	check "PREFIX=/usr/local: programs in /usr/local/sbin, pages in /usr/local/share/man/man8, config in /etc/hwsig" \
		test -x "$dest2/usr/local/sbin/hwsigd" -a -x "$dest2/usr/local/sbin/hwsigctl" \
		-a -f "$dest2/usr/local/share/man/man8/hwsigd.8" -a -f "$dest2/etc/hwsig/hwsigd.conf"
	cited=$(cited_docs "$dest2" usr/local)
	check "PREFIX=/usr/local: the programs cite /usr/local/share/doc/hwsig, where the pages are${cited:+ ($(grep -c '^ok' <<<"$cited") cited)}" \
		bash -c "[ -n '$cited' ] && ! grep -q '^missing' <<<'$cited'"
	mk uninstall DESTDIR="$dest2" PREFIX=/usr/local >/dev/null 2>&1
	left=$(cd "$dest2" && find . \( -type f -o -type l \) -printf '%P\n')
	check "PREFIX=/usr/local: uninstall leaves no file" test -z "$left"
else
	not_ok "make install PREFIX=/usr/local"
fi
# The build cites /usr's pages again, as the other tests and make deb expect.
mk build-bin PREFIX=/usr >/dev/null 2>&1 || not_ok "make build-bin PREFIX=/usr (back to /usr's pages)"

finish
