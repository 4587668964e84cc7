#!/bin/bash
# `make deb`, then what can be checked without touching the system: each
# package's control fields, conffiles and maintainer scripts, md5sums
# against the files, hwsig's files against what `make install PREFIX=/usr`
# ships, the programs' version and the pages and runbooks they cite, all in
# the unpacked package. Then the two packages on this machine: dpkg -i
# both, their files, the conffile, the hwsig group, the unit enabled,
# Depends covering every shared library the programs need, DKMS having
# built and installed hwsig/<VERSION> for the installed header sets; a
# reinstall keeps a changed conffile; dpkg --purge both leaves nothing
# behind (the hwsig group stays, as hwsig's postrm explains; this test
# removes it again if it created it).
# On a host where hwsig is installed (either package, a DKMS registration,
# /usr/src/hwsig-*, a make install, hwsigd's /etc/hwsig, /run/hwsig or
# /var/lib/hwsig) the install/purge cycle would replace it and purge its
# configuration and dumps: each of its checks is reported as "skip - ...",
# counted neither as passed nor as failed (finish says how many).
# Needs root, dpkg and dkms; the DKMS builds take a minute or two.
source "$(dirname "$0")/lib.sh"

version=$(cat "$top/VERSION")
arch=$(dpkg --print-architecture)
out=$top/out/deb
deb=$out/hwsig_${version}_${arch}.deb
dkms_deb=$out/hwsig-dkms_${version}_all.deb
tmp=$(mktemp -d)

if [ "$(id -u)" -ne 0 ] || ! command -v dpkg >/dev/null || ! command -v dkms >/dev/null; then
	not_ok "needs root, dpkg and dkms"
	rm -rf "$tmp"
	finish
	exit
fi

# installed_here: what of hwsig this host has (empty: nothing), e.g.
# "hwsig 0.9.0 (dpkg); hwsig/0.9.0, 6.1.0-28-amd64, x86_64: installed (dkms)".
installed_here() {
	local p v what=()
	for p in hwsig hwsig-dkms; do
		if dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qv '^not-installed$'; then
			v=$(dpkg-query -W -f='${Version} ${db:Status-Status}' "$p" 2>/dev/null)
			what+=("$p $v (dpkg)")
		fi
	done
	v=$(dkms status -m hwsig 2>/dev/null | head -1)
	[ -n "$v" ] && what+=("$v (dkms)")
	for p in /usr/src/hwsig-* /usr/sbin/hwsigd /usr/local/sbin/hwsigd /etc/hwsig /run/hwsig /var/lib/hwsig \
		/lib/systemd/system/hwsigd.service /usr/local/lib/systemd/system/hwsigd.service \
		/etc/systemd/system/hwsigd.service; do
		[ -e "$p" ] || continue
		case $p in
		*/sbin/hwsigd) v=$("$p" --version 2>/dev/null | head -1); what+=("$p${v:+ ($v)}") ;;
		*) what+=("$p") ;;
		esac
	done
	local IFS=';'
	echo "${what[*]}" | sed 's/;/; /g'
}
here=$(installed_here)
group_before=$(getent group hwsig || true)

cleanup() {
	# Only what this test installed: never a hwsig that was here before.
	if [ -z "$here" ]; then
		dpkg --purge hwsig hwsig-dkms >/dev/null 2>&1
		# Test hygiene, not package behaviour: the group this test made goes.
		if [ -z "$group_before" ] && getent group hwsig >/dev/null; then
			delgroup --system --quiet hwsig >/dev/null 2>&1 || groupdel hwsig
		fi
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

if ! make --no-print-directory -C "$top" deb BUILD="$build" >"$tmp/make.log" 2>&1; then
	not_ok "make deb"
	tail -20 "$tmp/make.log" | sed 's/^/    /'
	finish
	exit
fi
check "make deb: $(basename "$deb") ($(stat -c %s "$deb" 2>/dev/null) bytes)" test -s "$deb"
check "make deb: $(basename "$dkms_deb") ($(stat -c %s "$dkms_deb" 2>/dev/null) bytes)" test -s "$dkms_deb"

# --- the packages' metadata ---------------------------------------------
field() { dpkg-deb -f "$1" "$2"; }
check "hwsig: conffiles lists /etc/hwsig/hwsigd.conf" \
	bash -c "dpkg-deb --ctrl-tarfile '$deb' | tar -xO ./conffiles | grep -qx /etc/hwsig/hwsigd.conf"
depends=$(field "$deb" Depends)
# Every library the programs link (NEEDED; the libraries' own needs are
# their packages' business) comes from a package that Depends names.
dep_pkgs=$(sed 's/([^)]*)//g; s/|/,/g' <<<"$depends" | tr ',' '\n' | awk '{ print $1 }')
missing=
for bin in hwsigd hwsigctl; do
	for soname in $(readelf -d "$build/$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		lib=$(ldd "$build/$bin" | awk -v n="$soname" '$1 == n { print $3 }')
		pkg=
		for path in "$lib" "$(readlink -f "$lib")" "/usr$lib" "${lib#/usr}"; do
			pkg=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1)
			[ -n "$pkg" ] && break
		done
		if [ -z "$pkg" ]; then
			missing+=" $soname(no package owns $lib)"
		elif ! grep -qxF "$pkg" <<<"$dep_pkgs"; then
			missing+=" $pkg($soname)"
		fi
	done
done
if [ -z "$missing" ]; then ok "hwsig: Depends covers every library hwsigd and hwsigctl load"; else
	not_ok "hwsig: Depends ($depends) lacks:$missing"
fi
check "hwsig: Depends on adduser (postinst's addgroup)" grep -q 'adduser' <<<"$depends"
check "hwsig-dkms: Architecture all, Depends dkms" \
	bash -c "[ \"\$(dpkg-deb -f '$dkms_deb' Architecture)\" = all ] && dpkg-deb -f '$dkms_deb' Depends | grep -qw dkms"
dpkg-deb -c "$dkms_deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$tmp/dkms.contents"
for f in dkms.conf VERSION kmod/Makefile kmod/Kbuild include/uapi/linux/hwsig.h; do
	grep -qx "/usr/src/hwsig-$version/$f" "$tmp/dkms.contents" || not_ok "hwsig-dkms lacks /usr/src/hwsig-$version/$f"
done
ok "hwsig-dkms: /usr/src/hwsig-$version holds dkms.conf, VERSION, kmod/, the uapi header"

# --- the packages unpacked (nothing installed) -----------------------------
for p in hwsig hwsig-dkms; do
	f=$deb; [ "$p" = hwsig-dkms ] && f=$dkms_deb
	check "$p: Package $p, Version $version" \
		bash -c "[ \"\$(dpkg-deb -f '$f' Package)\" = $p ] && [ \"\$(dpkg-deb -f '$f' Version)\" = '$version' ]"
done
check "hwsig: Architecture $arch" bash -c "[ \"\$(dpkg-deb -f '$deb' Architecture)\" = '$arch' ]"
# The maintainer scripts, executable, @VERSION@ filled in.
for p in hwsig:postinst,prerm,postrm hwsig-dkms:preinst,postinst,prerm; do
	name=${p%%:*} f=$deb scripts=${p#*:}
	[ "$name" = hwsig-dkms ] && f=$dkms_deb
	mkdir -p "$tmp/ctrl.$name"
	dpkg-deb -e "$f" "$tmp/ctrl.$name"
	bad=
	for s in ${scripts//,/ }; do
		[ -x "$tmp/ctrl.$name/$s" ] || bad+=" $s(missing or not executable)"
	done
	grep -l '@VERSION@' "$tmp/ctrl.$name"/* >/dev/null 2>&1 && bad+=" @VERSION@ left"
	if [ -z "$bad" ]; then ok "$name: maintainer scripts $scripts, executable, versioned"; else
		not_ok "$name: maintainer scripts:$bad"
	fi
done
check "hwsig-dkms: its postinst registers hwsig/$version with DKMS" \
	bash -c "grep -q 'dkms' '$tmp/ctrl.hwsig-dkms/postinst' && grep -q '$version' '$tmp/ctrl.hwsig-dkms/postinst'"
# Unpacked: md5sums agree with the files, the files are make install's.
dpkg-deb -x "$deb" "$tmp/x"
check "hwsig: md5sums agree with every file unpacked" \
	bash -c "cd '$tmp/x' && md5sum --quiet -c '$tmp/ctrl.hwsig/md5sums' &&
		[ \$(wc -l <'$tmp/ctrl.hwsig/md5sums') -eq \$(find . -type f | wc -l) ]"
if make --no-print-directory -C "$top" BUILD="$build" install DESTDIR="$tmp/mi" PREFIX=/usr \
	>"$tmp/mi.log" 2>&1; then
	# The package's own additions: gzipped man pages, copyright, changelog.
	(cd "$tmp/mi" && find . ! -type d -printf '/%P %m\n' |
		sed -E 's|^(/usr/share/man/man8/.*\.8) |\1.gz |'
	 echo "/usr/share/doc/hwsig/copyright 644"
	 echo "/usr/share/doc/hwsig/changelog.Debian.gz 644") | sort >"$tmp/mi.files"
	(cd "$tmp/x" && find . ! -type d -printf '/%P %m\n') | sort >"$tmp/deb.files"
	diff=$(diff "$tmp/mi.files" "$tmp/deb.files")
	if [ -z "$diff" ]; then ok "hwsig: its files and modes are make install PREFIX=/usr's ($(wc -l <"$tmp/deb.files") files)"
	else
		not_ok "hwsig: its files differ from make install PREFIX=/usr's (< make install, > package)"
		head -20 <<<"$diff" | sed 's/^/    /'
	fi
else
	not_ok "make install DESTDIR PREFIX=/usr (to compare with the package)"
	tail -10 "$tmp/mi.log" | sed 's/^/    /'
fi
for f in /usr/sbin/hwsigd /usr/sbin/hwsigctl /lib/systemd/system/hwsigd.service /etc/hwsig/hwsigd.conf \
	/usr/share/man/man8/hwsigd.8.gz /usr/share/man/man8/hwsigctl.8.gz /usr/share/doc/hwsig/copyright \
	/usr/share/doc/hwsig/vms.rst /usr/share/doc/hwsig/html/vms.html /usr/share/hwsig/prometheus/rules.yml \
	/usr/share/hwsig/prometheus/alerts.yml; do
	[ -f "$tmp/x$f" ] || not_ok "the hwsig package lacks $f"
done
ok "hwsig holds the programs, unit, conffile, man pages, copyright, pages, rules"
check "the package's hwsigd --version says $version" \
	bash -c "'$tmp/x/usr/sbin/hwsigd' --version | grep -qx 'hwsigd $version'"
check "the package's unit runs /usr/sbin/hwsigd" \
	grep -qx 'ExecStart=/usr/sbin/hwsigd' "$tmp/x/lib/systemd/system/hwsigd.service"
cited=$(strings -n 6 "$tmp/x/usr/sbin/hwsigctl" "$tmp/x/usr/sbin/hwsigd" |
	grep -o '/usr/share/doc/hwsig/[A-Za-z0-9_./-]*\.\(rst\|html\)' | sort -u)
absent=$(for f in $cited; do [ -f "$tmp/x$f" ] || echo "$f"; done)
check "every page the packaged programs cite is in the package ($(wc -w <<<"$cited") cited${absent:+; missing: $absent})" \
	test -n "$cited" -a -z "$absent"
runbooks=$(grep -E '^[[:space:]]*runbook_url:' "$tmp/x/usr/share/hwsig/prometheus/alerts.yml" \
	2>/dev/null | grep -o 'file:///usr/share/doc/hwsig/[A-Za-z0-9_./-]*' | sed 's|^file://||' | sort -u)
absent=$(for f in $runbooks; do [ -f "$tmp/x$f" ] || echo "$f"; done)
check "every runbook_url of the packaged alerts is in the package ($(wc -w <<<"$runbooks") runbooks${absent:+; missing: $absent})" \
	test -n "$runbooks" -a -z "$absent"

# --- install, on this machine ---------------------------------------------
# The checks of the cycle below, for the skip lines of a host that has hwsig.
cycle_checks=(
	"dpkg -i both" "hwsig, hwsig-dkms: installed, every path of dpkg -L exists"
	"dpkg -L hwsig: programs, unit, conffile, man pages, copyright"
	"hwsig: /etc/hwsig/hwsigd.conf is a conffile" "/usr/sbin/hwsigd --version says $version"
	"man hwsigd finds the installed page" "hwsig ships Documentation/, the rules and the dashboards"
	"every page the installed programs cite exists" "every runbook_url of the installed alerts exists"
	"the hwsig group exists" "postinst enabled hwsigd.service (deb-systemd-helper)"
	"dkms status: hwsig/$version installed for every kernel with headers"
	"reinstall keeps a changed conffile" "dpkg --purge both"
	"purge leaves no file, /usr/src/hwsig-*, DKMS entry, hwsig.ko, /etc/hwsig, /var/lib/hwsig, /run/hwsig, enablement"
	"the hwsig group is kept on purge (see hwsig's postrm)"
)
if [ -n "$here" ]; then
	for c in "${cycle_checks[@]}"; do
		skip "$c: hwsig is installed on this host ($here); the install/purge cycle would replace it"
	done
	finish
	exit
fi

if dpkg -i "$deb" "$dkms_deb" >"$tmp/install.log" 2>&1; then
	ok "dpkg -i both"
else
	not_ok "dpkg -i both"
	tail -20 "$tmp/install.log" | sed 's/^/    /'
fi
grep 'hwsig-dkms:' "$tmp/install.log" | sed 's/^/    /'
for p in hwsig hwsig-dkms; do
	check "$p: installed" bash -c "dpkg-query -W -f='\${db:Status-Status}' $p | grep -qx installed"
	dpkg -L "$p" >"$tmp/$p.list" 2>/dev/null
	absent=$(while read -r f; do [ -e "$f" ] || echo "$f"; done <"$tmp/$p.list")
	check "$p: every path of dpkg -L exists ($(wc -l <"$tmp/$p.list") paths)" test -z "$absent"
done
for f in /usr/sbin/hwsigd /usr/sbin/hwsigctl /lib/systemd/system/hwsigd.service /etc/hwsig/hwsigd.conf \
	/usr/share/man/man8/hwsigd.8.gz /usr/share/man/man8/hwsigctl.8.gz /usr/share/doc/hwsig/copyright; do
	grep -qx "$f" "$tmp/hwsig.list" || not_ok "dpkg -L hwsig lacks $f"
done
ok "dpkg -L hwsig: programs, unit, conffile, man pages, copyright"
check "hwsig: /etc/hwsig/hwsigd.conf is a conffile" \
	bash -c "dpkg-query -W -f='\${Conffiles}' hwsig | grep -q '^ /etc/hwsig/hwsigd.conf '"
check "/usr/sbin/hwsigd --version says $version" bash -c "/usr/sbin/hwsigd --version | grep -qx 'hwsigd $version'"
check "man hwsigd finds the installed page" bash -c "man -w hwsigd | grep -qx /usr/share/man/man8/hwsigd.8.gz"
# What the messages, man pages and alerts cite is on the installed system.
for f in /usr/share/doc/hwsig/vms.rst /usr/share/doc/hwsig/html/vms.html /usr/share/hwsig/prometheus/rules.yml \
	/usr/share/hwsig/prometheus/alerts.yml; do
	grep -qx "$f" "$tmp/hwsig.list" || not_ok "dpkg -L hwsig lacks $f"
done
pages=$(grep -c '^/usr/share/doc/hwsig/.*\.rst$' "$tmp/hwsig.list")
dashboards=$(grep -c '^/usr/share/hwsig/grafana/.*\.json$' "$tmp/hwsig.list")
check "hwsig ships Documentation/ ($pages pages, text and HTML), the rules and $dashboards dashboards" \
	test "$pages" -ge 15 -a "$dashboards" -ge 3
cited=$(strings -n 6 /usr/sbin/hwsigctl /usr/sbin/hwsigd | grep -o '/usr/share/doc/hwsig/[A-Za-z0-9_./-]*\.\(rst\|html\)' |
	sort -u)
absent=$(for f in $cited; do [ -f "$f" ] || echo "$f"; done)
check "every page the installed programs cite exists ($(wc -w <<<"$cited") cited${absent:+; missing: $absent})" \
	test -n "$cited" -a -z "$absent"
runbooks=$(grep -E '^[[:space:]]*runbook_url:' /usr/share/hwsig/prometheus/alerts.yml 2>/dev/null |
	grep -o 'file:///usr/share/doc/hwsig/[A-Za-z0-9_./-]*' | sed 's|^file://||' | sort -u)
absent=$(for f in $runbooks; do [ -f "$f" ] || echo "$f"; done)
check "every runbook_url of the installed alerts exists ($(wc -w <<<"$runbooks") runbooks${absent:+; missing: $absent})" \
	test -n "$runbooks" -a -z "$absent"
check "the hwsig group exists" bash -c "getent group hwsig >/dev/null"
check "postinst enabled hwsigd.service (deb-systemd-helper)" \
	test -L /etc/systemd/system/multi-user.target.wants/hwsigd.service

# --- DKMS ----------------------------------------------------------------
dkms status -m hwsig -v "$version" >"$tmp/dkms.status" 2>&1
sed 's/^/    /' "$tmp/dkms.status"
installed=$(grep -E ": installed" "$tmp/dkms.status" | sed -E 's/^[^,]*, ([^,]*),.*/\1/' | sort)
if [ -n "$installed" ]; then
	ok "dkms status: hwsig/$version installed for $(echo $installed)"
else
	not_ok "dkms status: hwsig/$version installed for no kernel"
fi
for k in /lib/modules/*/build; do
	[ -e "$k/include" ] || continue
	k=${k#/lib/modules/}; k=${k%/build}
	if grep -qx "$k" <<<"$installed"; then
		ko=$(find "/lib/modules/$k/updates" -name 'hwsig.ko*' 2>/dev/null | head -1)
		if [ -n "$ko" ] && [ "$(modinfo -F version "$ko")" = "$version" ]; then
			ok "$k: $ko, version $version"
		else
			not_ok "$k: no hwsig.ko of version $version under /lib/modules/$k/updates"
		fi
	else
		not_ok "$k has headers but hwsig is not installed for it"
	fi
done

# --- a changed conffile survives a reinstall (upgrade path of postinst) ----
echo "interval = 2" >>/etc/hwsig/hwsigd.conf
if dpkg -i --force-confold "$deb" >"$tmp/reinstall.log" 2>&1 && grep -qx 'interval = 2' /etc/hwsig/hwsigd.conf; then
	ok "reinstall keeps a changed conffile"
else
	not_ok "reinstall: $(tail -3 "$tmp/reinstall.log")"
fi

# --- purge ---------------------------------------------------------------
# What hwsigd makes at run time goes with a purge: a dump, the socket dir.
mkdir -p /var/lib/hwsig/dumps /run/hwsig
echo dump >/var/lib/hwsig/dumps/hwsig-test.hwsd
if dpkg --purge hwsig hwsig-dkms >"$tmp/purge.log" 2>&1; then ok "dpkg --purge both"; else
	not_ok "dpkg --purge both"; tail -10 "$tmp/purge.log" | sed 's/^/    /'
fi
for p in hwsig hwsig-dkms; do
	check "$p: gone from dpkg's database" \
		bash -c "! dpkg-query -W -f='\${db:Status-Status}' $p 2>/dev/null | grep -qv '^not-installed$'"
done
# Files (not the shared directories such as /usr/sbin) of both lists.
left=$(cat "$tmp/hwsig.list" "$tmp/hwsig-dkms.list" | while read -r f; do
	[ -e "$f" ] && [ ! -d "$f" ] && echo "$f"; done)
check "no file of either package is left" test -z "$left"
check "no /usr/src/hwsig-*" bash -c '! compgen -G "/usr/src/hwsig-*" >/dev/null'
check "no DKMS tree entry /var/lib/dkms/hwsig" test ! -e /var/lib/dkms/hwsig
check "dkms status knows no hwsig" bash -c '[ -z "$(dkms status -m hwsig 2>/dev/null)" ]'
check "no hwsig.ko left under /lib/modules" bash -c '[ -z "$(find /lib/modules -name "hwsig.ko*" 2>/dev/null)" ]'
check "no /etc/hwsig (the conffile, changed, is purged too)" test ! -e /etc/hwsig
check "no /var/lib/hwsig (hwsigd's dumps) and no /run/hwsig after purge" \
	bash -c '[ ! -e /var/lib/hwsig ] && [ ! -e /run/hwsig ]'
check "no enablement left (wants link, deb-systemd-helper state)" \
	bash -c '[ ! -e /etc/systemd/system/multi-user.target.wants/hwsigd.service ] &&
		[ -z "$(find /var/lib/systemd/deb-systemd-helper-enabled /var/lib/systemd/deb-systemd-helper-masked \
			-name "*hwsigd*" 2>/dev/null)" ] && [ ! -L /etc/systemd/system/hwsigd.service ]'
check "the hwsig group is kept on purge (see hwsig's postrm)" bash -c "getent group hwsig >/dev/null"

finish
