#!/bin/bash
# scripts/dkms-install with private DKMS trees (nothing touches the system's):
#   - DKMS_INSTALL_TREE pointing to a missing directory: created, the module
#     installed there, one registration, and for a kernel that is not the
#     running one the last line does not say to modprobe it;
#   - an install tree that cannot be created: its own message, nothing
#     registered;
#   - a failing `dkms install` after the build: the registration is undone.
# usage: test_dkms_install.sh [KERNELRELEASE]  (default: the first installed
# linux-headers-* that is not the running kernel). Prints "dkms-install: N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
pass=0 fail=0
ok() { echo "ok: $*"; pass=$((pass + 1)); }
not_ok() { echo "not ok: $*"; fail=$((fail + 1)); }
finish() { echo "dkms-install: $pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit; }

rel=${1:-}
if [ -z "$rel" ]; then
	for d in /lib/modules/*/build; do
		r=$(basename "$(dirname "$d")")
		[ -e "$d/Makefile" ] && [ "$r" != "$(uname -r)" ] && { rel=$r; break; }
	done
fi
if [ "$(id -u)" -ne 0 ] || ! command -v dkms >/dev/null || [ -z "$rel" ]; then
	not_ok "needs root, dkms and kernel headers (have: uid $(id -u), rel '${rel}')"
	finish
fi
version=$(cat "$top/VERSION")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
registrations() { dkms status --dkmstree "$1/tree" --sourcetree "$1/src" -m hwsig 2>/dev/null | grep -c .; }
run() { # tree install-tree
	mkdir -p "$1/tree" "$1/src"
	DKMS_TREE="$1/tree" DKMS_SOURCE_TREE="$1/src" DKMS_INSTALL_TREE="$2" DKMS_NO_DEPMOD=1 \
		"$top/scripts/dkms-install" "$rel" >"$1/out" 2>&1
}

# 1. A missing install tree is created.
t=$tmp/a
if run "$t" "$t/missing/install"; then ok "missing DKMS_INSTALL_TREE: exit 0"; else
	not_ok "missing DKMS_INSTALL_TREE: exit $?"; sed 's/^/    /' "$t/out" | tail -15; fi
if find "$t/missing/install/$rel" -name 'hwsig.ko*' 2>/dev/null | grep -q .; then
	ok "hwsig.ko installed under the created tree"; else not_ok "no hwsig.ko under $t/missing/install/$rel"; fi
[ "$(registrations "$t")" -eq 1 ] && ok "one registration" || not_ok "registrations: $(registrations "$t")"
last=$(tail -1 "$t/out")
if [[ $last == *"installed for $rel"* && $last != *modprobe* ]]; then
	ok "last line for a kernel that is not running: no modprobe ($last)"
else
	not_ok "last line: $last"
fi

# 2. An install tree that cannot be created: our message, nothing registered.
t=$tmp/b
touch "$tmp/a-file"
if run "$t" "$tmp/a-file/install"; then not_ok "uncreatable install tree: exit 0"; else
	grep -q "dkms-install: error: cannot create the install tree $tmp/a-file/install/$rel" "$t/out" &&
		ok "uncreatable install tree: its own message" ||
		{ not_ok "uncreatable install tree: message"; sed 's/^/    /' "$t/out"; }
fi
[ "$(registrations "$t")" -eq 0 ] && ok "nothing registered after the refusal" ||
	not_ok "registered after the refusal: $(registrations "$t")"

# 3. dkms install fails after add and build (its destination directory is a
# file): the registration is undone.
t=$tmp/c
mkdir -p "$t/inst/$rel"
touch "$t/inst/$rel/updates"
if run "$t" "$t/inst"; then not_ok "failing dkms install: exit 0"; else
	grep -q "dkms-install: error: dkms install for $rel failed: no hwsig.ko under $t/inst/$rel" "$t/out" &&
		grep -q "undoing the registration of hwsig/$version" "$t/out" &&
		ok "failing dkms install: says so and undoes the registration" ||
		{ not_ok "failing dkms install: messages"; sed 's/^/    /' "$t/out" | tail -15; }
fi
[ "$(registrations "$t")" -eq 0 ] && ok "nothing left registered after the failure" ||
	{ not_ok "left registered: $(registrations "$t")"; dkms status --dkmstree "$t/tree" --sourcetree "$t/src" -m hwsig; }
[ ! -e "$t/src/hwsig-$version" ] && ok "copied sources removed" || not_ok "sources left in $t/src"

# Nothing of ours in the system's DKMS tree.
if dkms status -m hwsig -v "$version" 2>/dev/null | grep -q .; then
	not_ok "hwsig/$version registered in the system DKMS tree"; else ok "system DKMS tree untouched"; fi
finish
