#!/bin/bash
# The top-level Makefile's user-facing targets, without building anything:
#   - `make run` builds hwsigctl only (not the tests, benches, live tests)
#     and no make "Entering directory" chatter reaches its output;
#   - `make kmod` without kernel headers says which package to install
#     instead of kbuild's raw error.
# Prints "make-targets: N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
pass=0 fail=0
ok() { echo "ok: $*"; pass=$((pass + 1)); }
not_ok() { echo "not ok: $*"; fail=$((fail + 1)); }

# make -n: the recipe of run and of the targets it depends on.
plan=$(make -C "$top" -n run BUILD=build-make-test JOBS=2 2>&1)
if grep -q -- '--target hwsigctl$' <<<"$plan" && ! grep -qE 'cmake --build [^ ]+ -j[0-9]+$' <<<"$plan"; then
	ok "make run builds only the hwsigctl target"
else
	not_ok "make run's plan builds more than hwsigctl:"; sed 's/^/    /' <<<"$plan"
fi
grep -q 'hwsigctl stat' <<<"$plan" && ok "make run runs hwsigctl stat" || not_ok "make run does not run hwsigctl stat"
# Directory chatter comes from sub-makes (cmake's): MAKEFLAGS reaches them.
flags=$(cd "$top" && make -f Makefile -f <(printf 'print-flags:\n\t@echo "flags: $(MAKEFLAGS)"\n') print-flags 2>&1)
if grep -q -- '^flags: .*--no-print-directory' <<<"$flags"; then
	ok "MAKEFLAGS passes --no-print-directory to sub-makes"
else
	not_ok "MAKEFLAGS lacks --no-print-directory: $flags"
fi

# make kmod: with KDIR naming no headers, and (where they are missing) for
# the running kernel.
out=$(make -C "$top" --no-print-directory kmod KDIR=/nonexistent/kdir 2>&1)
rc=$?
if [ "$rc" -ne 0 ] && grep -q "make kmod: KDIR=/nonexistent/kdir holds no kernel headers" <<<"$out" &&
	grep -q "apt-get install linux-headers-" <<<"$out"; then
	ok "make kmod KDIR=<no headers>: says so and which package"
else
	not_ok "make kmod KDIR=<no headers> (exit $rc):"; sed 's/^/    /' <<<"$out"
fi
if [ ! -e "/lib/modules/$(uname -r)/build/Makefile" ]; then
	out=$(make -C "$top" --no-print-directory kmod 2>&1)
	rc=$?
	if [ "$rc" -ne 0 ] && grep -q "apt-get install linux-headers-$(uname -r)" <<<"$out" &&
		! grep -q "No such file or directory" <<<"$out"; then
		ok "make kmod without headers for $(uname -r): names linux-headers-$(uname -r)"
	else
		not_ok "make kmod without headers (exit $rc):"; sed 's/^/    /' <<<"$out"
	fi
fi
echo "make-targets: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
