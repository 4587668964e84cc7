#!/bin/bash
# hwsigd.service: `systemd-analyze verify` is clean, the required directives
# are there, the capability set is the one hwsigd.rst documents, and that set
# is both enough and needed: hwsigctl (the same library and operations as
# hwsigd) run under that bounding set (setpriv) measures what full root
# measures, and dropping each capability loses what hwsigd.rst says it is for.
# Works where systemd is not PID 1 (verify and security --offline only read
# files). Needs root for the capability checks.
source "$(dirname "$0")/lib.sh"

unit=$top/userspace/daemon/hwsigd.service
tmp=$(mktemp -d)
fake_pid=
cleanup() {
	[ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

check "unit file exists" test -f "$unit"
check "hwsigd is built ($HWSIGD)" test -x "$HWSIGD"

# verify checks that ExecStart= exists and that Documentation=man: pages
# resolve: a copy runs the build's binary, MANPATH holds the generated pages.
mkdir -p "$tmp/unit" "$tmp/man/man8"
sed "s|^ExecStart=/usr/sbin/hwsigd|ExecStart=$HWSIGD|" "$unit" >"$tmp/unit/hwsigd.service"
version=$(cat "$top/VERSION")
for page in hwsigd hwsigctl; do
	"$top/packaging/rst2man8" "$top/Documentation/$page.rst" "$tmp/man/man8/$page.8" "$version" ||
		not_ok "man page $page.8 generated"
done
out=$(MANPATH=$tmp/man systemd-analyze verify "$tmp/unit/hwsigd.service" 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && [ -z "$out" ]; then
	ok "systemd-analyze verify: clean"
else
	not_ok "systemd-analyze verify: exit $rc"
	sed 's/^/    /' <<<"$out"
fi

# directive VALUE: the unit sets it exactly so (last assignment wins).
has() {
	local key=$1 want=$2 got
	got=$(grep -E "^$key=" "$unit" | tail -1 | cut -d= -f2-)
	if [ "$got" = "$want" ]; then ok "$key=$want"; else not_ok "$key=$want (unit: '${got}')"; fi
}
has Type notify
has NotifyAccess main
has ExecStart /usr/sbin/hwsigd
has ExecReload '/bin/kill -HUP $MAINPID'
has WatchdogSec 30s
has Restart on-failure
has RuntimeDirectory hwsig
has RuntimeDirectoryMode 0750
has Group hwsig
has NoNewPrivileges yes
has ProtectSystem strict
has ProtectHome yes
has PrivateTmp yes
has MemoryDenyWriteExecute yes
has LockPersonality yes
has SystemCallArchitectures native
has RestrictAddressFamilies 'AF_UNIX AF_NETLINK AF_INET AF_INET6'
has WantedBy multi-user.target
check "no AmbientCapabilities= (root: the bounding set is enough)" \
	bash -c "! grep -q '^AmbientCapabilities=' '$unit'"

exposure=$(systemd-analyze security --offline=yes "$tmp/unit/hwsigd.service" 2>/dev/null |
	sed -n 's/.*Overall exposure level for hwsigd.service: \([0-9.]*\).*/\1/p')
if [ -n "$exposure" ] && awk -v e="$exposure" 'BEGIN { exit !(e <= 4.0) }'; then
	ok "systemd-analyze security: exposure $exposure (<= 4.0)"
else
	not_ok "systemd-analyze security: exposure '${exposure}' (want <= 4.0)"
fi

# The unit's capabilities are exactly those hwsigd.rst's CAPABILITIES lists.
unit_caps=$(grep '^CapabilityBoundingSet=' "$unit" | tail -1 | cut -d= -f2- | tr ' ' '\n' | sort)
doc_caps=$(sed -n '/^CAPABILITIES$/,/^Not needed/p' "$top/Documentation/hwsigd.rst" |
	grep -E '^CAP_[A-Z_]+$' | sort)
if [ -n "$unit_caps" ] && [ "$unit_caps" = "$doc_caps" ]; then
	ok "CapabilityBoundingSet = hwsigd.rst's table ($(echo $unit_caps))"
else
	not_ok "CapabilityBoundingSet ($(echo $unit_caps)) != hwsigd.rst ($(echo $doc_caps))"
fi

# --- the capability set, exercised -------------------------------------
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	not_ok "capability checks need root and setpriv"
	finish
	exit
fi
caps=$(for c in $unit_caps; do c=${c#CAP_}; printf '+%s,' "${c,,}"; done)
caps=${caps%,}
# with_caps LIST CMD...: CMD as root, bounding set LIST (like the unit).
with_caps() {
	local list=$1; shift
	setpriv --bounding-set="-all${list:+,$list}" --inh-caps=-all -- "$@"
}
without() { # the unit's set minus the given capabilities (setpriv names)
	local out=$caps c
	for c in "$@"; do out=$(tr ',' '\n' <<<"$out" | grep -vx "+$c" | paste -sd,); done
	echo "$out"
}
# A capability the environment itself lacks cannot be tested here.
for c in $unit_caps; do
	if ! capsh --print | grep -q "^Bounding set.*${c,,}"; then
		not_ok "$c is not in this shell's bounding set: cannot test the unit's set"
	fi
done

# summary: one line per metric (VALUE id scope) or unavailable (id scope
# reason). A transient note (code no_events or incomplete: no block I/O in
# those 0.5 s) is a measured metric too: whether I/O happened is not the
# capability's doing; and io.* are compared by id, as devices of other
# tests come and go.
summary() {
	python3 -c '
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    def value(m):  # block devices come and go with other tests: io.* by id
        print("VALUE", m["id"], "" if m["id"].startswith("io.") else m["scope"])
    for m in d["metrics"]:
        value(m)
    for m in d["unavailable"]:
        if m["code"] in ("no_events", "incomplete"):
            value(m)
        else:
            print(m["id"], m["scope"], m["reason"])' | sort -u
}
stat_as() { # LIST, or "root": this shell's own capabilities
	local run=(with_caps "$1")
	[ "$1" = root ] && run=()
	"${run[@]}" timeout 60 "$HWSIGCTL" stat --no-daemon --count 1 --interval 0.5 --format json -v 2>/dev/null | summary
}
stat_as root >"$tmp/stat.full"
stat_as "$caps" >"$tmp/stat.unit"
if [ -s "$tmp/stat.full" ] && cmp -s "$tmp/stat.full" "$tmp/stat.unit"; then
	ok "hwsigctl stat under the unit's set = as full root ($(grep -c '^VALUE' "$tmp/stat.unit") values, $(grep -vc '^VALUE' "$tmp/stat.unit") unavailable)"
else
	not_ok "hwsigctl stat under the unit's set differs from full root"
	diff "$tmp/stat.full" "$tmp/stat.unit" | sed 's/^/    /' | head -20
fi
# The BPF scheduler collector measures here (tp_btf/raw_tp work on this
# host): without CAP_BPF or without CAP_PERFMON (and CAP_SYS_ADMIN, which
# implies both) its values are gone.
if grep -q '^VALUE sched.runq_wait_p50_us system' "$tmp/stat.unit"; then
	for c in bpf perfmon; do
		stat_as "$(without "$c" sys_admin)" >"$tmp/stat.no_$c"
		if grep -q '^VALUE sched.runq_wait_p50_us system' "$tmp/stat.no_$c"; then
			not_ok "without CAP_${c^^}: sched.runq_wait_p50_us still measured (is it needed?)"
		else
			ok "without CAP_${c^^} (and CAP_SYS_ADMIN): sched.runq_wait_p50_us unavailable"
		fi
	done
else
	not_ok "sched.runq_wait_p50_us not measured under the unit's set: cannot test CAP_BPF/CAP_PERFMON"
fi

# hwsigd itself, started as the unit starts it: root with the unit's bounding
# set, the unit's group as its primary group (Group=; a test group here, with
# --socket-group naming it), no CAP_CHOWN, under the unit's system call
# filter. It must get ready, ping the
# watchdog, make the socket 0660 of that group, export the same series and
# unavailable reasons as hwsigd run with every capability, log no EPERM, and
# exit 0 on SIGTERM.
# The unit's SystemCallFilter= too: an allow-list built from the same
# groups (systemd-analyze syscall-filter), EPERM for the rest, as
# SystemCallErrorNumber=EPERM; applied last, right before hwsigd's execve.
cat >"$tmp/seccomp_exec.py" <<'PYEOF'
# seccomp_exec.py SPEC -- PROGRAM ARGS...: exec PROGRAM under a seccomp
# allow-list built like systemd's SystemCallFilter=SPEC (groups from
# `systemd-analyze syscall-filter`, names), every other system call failing
# with EPERM (SystemCallErrorNumber=EPERM). libseccomp through ctypes.
import ctypes, errno, os, subprocess, sys
spec = sys.argv[1].split()
argv = sys.argv[sys.argv.index("--") + 1:]
groups, cur = {}, None
for line in subprocess.run(["systemd-analyze", "syscall-filter"], capture_output=True, text=True).stdout.splitlines():
    if line.startswith("@"):
        cur = groups.setdefault(line.strip(), [])
    elif line.startswith("    ") and not line.strip().startswith("#") and cur is not None:
        cur.append(line.strip())
def expand(item, seen):
    if not item.startswith("@"):
        return {item}
    if item in seen:
        return set()
    seen.add(item)
    out = set()
    for x in groups[item]:
        out |= expand(x, seen)
    return out
names = set()
for item in spec:
    names |= expand(item, set())
names |= expand("@default", set())  # systemd always permits these
lib = ctypes.CDLL("libseccomp.so.2")
lib.seccomp_init.restype = ctypes.c_void_p
lib.seccomp_init.argtypes = [ctypes.c_uint32]
lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
lib.seccomp_load.argtypes = [ctypes.c_void_p]
lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
SCMP_ACT_ALLOW = 0x7fff0000
SCMP_ACT_ERRNO = lambda e: 0x00050000 | (e & 0xffff)
ctx = lib.seccomp_init(SCMP_ACT_ERRNO(errno.EPERM))
allowed = 0
for n in sorted(names):
    nr = lib.seccomp_syscall_resolve_name(n.encode())
    if nr < 0:
        continue  # not a system call of this architecture
    if lib.seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0) == 0:
        allowed += 1
rc = lib.seccomp_load(ctx)
if rc != 0:
    sys.exit(f"seccomp_load: {os.strerror(-rc)}")
os.execv(argv[0], argv)
PYEOF
cat >"$tmp/run_as_unit.py" <<'PYEOF'
import grp, os, re, signal, subprocess, sys, tempfile, time, urllib.request
sys.path.insert(0, os.path.join(sys.argv[1], "tests", "daemon"))
from daemon_harness import HWSIGD, Notify, free_port
caps, group, out = sys.argv[2], sys.argv[3], sys.argv[4]
syscall_filter = sys.argv[5] if len(sys.argv) > 5 else ""
d = tempfile.mkdtemp(prefix="hwsigd-unit-")
os.chmod(d, 0o755)
notify = Notify(d)
port = free_port()
sock = os.path.join(d, "hwsigd.sock")
env = dict(os.environ, NOTIFY_SOCKET=notify.path, WATCHDOG_USEC="2000000")
wrap = [] if caps == "root" else ["setpriv", "--bounding-set=-all," + caps, "--inh-caps=-all",
                                  "--regid=" + group, "--clear-groups", "--"]
if syscall_filter:
    wrap += [sys.executable, os.path.join(os.path.dirname(out), "seccomp_exec.py"), syscall_filter, "--"]
log = open(os.path.join(d, "log"), "w")
p = subprocess.Popen(wrap + [HWSIGD, "--config", "/dev/null", "--listen", f"127.0.0.1:{port}",
                             "--socket", sock, "--socket-group", group], env=env, stdout=log, stderr=log)
res = {}
res["ready"] = notify.wait_for("READY=1", 60)
res["watchdog"] = notify.wait_for("WATCHDOG=1", 5)
st = os.stat(sock) if os.path.exists(sock) else None
res["socket"] = bool(st) and (st.st_mode & 0o777) == 0o660 and st.st_gid == grp.getgrnam(group).gr_gid
time.sleep(2.5)  # a couple of intervals
try:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
except Exception:
    text = ""
series = set()
for line in text.splitlines():
    if not line or line.startswith("#"):
        continue
    name = re.split(r"[{ ]", line, maxsplit=1)[0]
    # Block families exist once a device has done I/O since the programs
    # attached: that depends on the moment, not on the capabilities.
    if name.startswith(("hwsig_block_", "hwsig_vhost_", "hwsig_vm_")):
        continue
    # unavailable series with their labels (metric, scope, reason); others
    # by name. Transient notes (idle this interval or not: the moment, not
    # the capabilities) are not exported.
    series.add(line.rsplit(" ", 1)[0] if name == "hwsig_unavailable" else name)
# What the daemon measured, read through its socket as hwsigctl reads it:
# every id and scope with a value, every unavailable one with its reason
# (normalized as summary() above does).
import json
ctl = subprocess.run([os.path.join(os.path.dirname(HWSIGD), "hwsigctl"), "stat", "--format", "json", "-v",
                      "-c", "1", "-i", "0.5"], env=dict(os.environ, HWSIG_SOCKET=sock),
                     capture_output=True, text=True, timeout=60)
def value(m):  # block devices come and go with other tests: io.* by id
    series.add(f"VALUE {m['id']} " + ("" if m["id"].startswith("io.") else m["scope"]))
for line in ctl.stdout.splitlines():
    snap = json.loads(line)
    for m in snap.get("metrics", []):
        value(m)
    for m in snap.get("unavailable", []):
        if m["code"] in ("no_events", "incomplete"):
            value(m)
        else:
            series.add(f"{m['id']} {m['scope']} {m['reason']}")
res["socket_read"] = ctl.returncode == 0 and bool(ctl.stdout)
open(out, "w").write("".join(sorted(x + "\n" for x in series)))
p.send_signal(signal.SIGTERM)
try:
    res["exit0"] = p.wait(5) == 0
except subprocess.TimeoutExpired:
    p.kill()
    p.wait()
    res["exit0"] = False
log.close()
logtext = open(os.path.join(d, "log")).read()
res["no_eperm"] = "Operation not permitted" not in logtext and "EPERM" not in logtext
for k, v in res.items():
    print(f"{k}={'yes' if v else 'no'}")
sys.stderr.write(logtext[-2000:])
subprocess.run(["rm", "-rf", d])
PYEOF
group=hwsig-unit-test
created_group=
if ! getent group "$group" >/dev/null; then groupadd --system "$group" && created_group=1; fi
python3 "$tmp/run_as_unit.py" "$top" root "$group" "$tmp/series.root" >"$tmp/d.root" 2>"$tmp/d.root.log"
syscall_filter=$(grep '^SystemCallFilter=' "$unit" | tail -1 | cut -d= -f2-)
python3 "$tmp/run_as_unit.py" "$top" "$caps" "$group" "$tmp/series.unit" "$syscall_filter" >"$tmp/d.unit" 2>"$tmp/d.unit.log"
python3 "$tmp/run_as_unit.py" "$top" "$(without bpf sys_admin)" "$group" "$tmp/series.nobpf" >/dev/null 2>&1
python3 "$tmp/run_as_unit.py" "$top" "$caps" "$group" "$tmp/series.nobpfcall" "@system-service" >/dev/null 2>&1
[ -n "$created_group" ] && groupdel "$group"
as_unit() { grep -qx "$1=yes" "$tmp/d.unit"; }
check "hwsigd as the unit runs it: READY=1" as_unit ready
check "hwsigd as the unit runs it: WATCHDOG=1 pings" as_unit watchdog
check "hwsigd as the unit runs it: socket 0660, group of Group= (no CAP_CHOWN)" as_unit socket
check "hwsigd as the unit runs it: SIGTERM, exit 0" as_unit exit0
check "hwsigd as the unit runs it: no EPERM in its log" as_unit no_eperm
check "hwsigd as the unit runs it: hwsigctl reads it through the socket" as_unit socket_read
if [ -s "$tmp/series.root" ] && cmp -s "$tmp/series.root" "$tmp/series.unit"; then
	ok "hwsigd as the unit runs it measures what it measures with every capability ($(grep -c '^VALUE' "$tmp/series.unit") values, $(grep -vc '^VALUE' "$tmp/series.unit") other lines: /metrics names, unavailable reasons)"
else
	not_ok "hwsigd as the unit runs it measures differently from hwsigd with every capability"
	diff "$tmp/series.root" "$tmp/series.unit" | head -20 | sed 's/^/    /'
fi
# The comparison can tell: without CAP_BPF (and CAP_SYS_ADMIN) it differs.
if [ -s "$tmp/series.nobpf" ] && ! cmp -s "$tmp/series.root" "$tmp/series.nobpf"; then
	ok "hwsigd without CAP_BPF measures less (the comparison above can fail)"
else
	not_ok "hwsigd without CAP_BPF measures the same: the comparison proves nothing"
fi
if [ -s "$tmp/series.nobpfcall" ] && ! cmp -s "$tmp/series.root" "$tmp/series.nobpfcall"; then
	ok "hwsigd under a filter without bpf() measures less (the filter above is really applied)"
else
	not_ok "hwsigd under a filter without bpf() measures the same: the filter emulation proves nothing"
fi
if ! as_unit ready || ! as_unit no_eperm; then
	tail -8 "$tmp/d.unit.log" | sed 's/^/    log: /'
fi

# CAP_SYS_ADMIN: libbpf enumerates module BTF (vhost, vhost_net) with
# BPF_BTF_GET_NEXT_ID, which needs it; bpftool btf list does the same.
if command -v bpftool >/dev/null; then
	check "BTF ids enumerable under the unit's set (module BTF for vhost)" \
		with_caps "$caps" bash -c 'bpftool btf list >/dev/null' 
	if with_caps "$(without sys_admin)" bpftool btf list >/dev/null 2>&1; then
		not_ok "without CAP_SYS_ADMIN: BTF ids still enumerable (is it needed?)"
	else
		ok "without CAP_SYS_ADMIN: BPF_BTF_GET_NEXT_ID refused (module BTF out of reach)"
	fi
else
	not_ok "bpftool missing: CAP_SYS_ADMIN's reason not checked"
fi

# VM discovery of a QEMU of another user: a fake (comm qemu-system-x86, a
# "CPU 0/KVM" thread) running as nobody, dumpable like QEMU, holding the fds
# discovery reads through /proc/PID/fd: a kvm-vcpu fd where /dev/kvm exists
# (CI machines may have none) and a tap fd, whose interface name comes from
# /proc/PID/fdinfo, behind the same ptrace access check as the fd links.
[ -c /dev/net/tun ] || modprobe tun 2>/dev/null || true
if [ -c /dev/kvm ] || [ -c /dev/net/tun ]; then
	cat >"$tmp/fakeqemu.py" <<'EOF'
import ctypes, fcntl, os, struct, threading, time
libc = ctypes.CDLL(None, use_errno=True)
PR_SET_NAME, PR_SET_DUMPABLE = 15, 4
held = []
if os.path.exists("/dev/kvm"):
    kvm = os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC)
    vm = fcntl.ioctl(kvm, 0xAE01, 0)           # KVM_CREATE_VM
    held.append(fcntl.ioctl(vm, 0xAE41, 0))    # KVM_CREATE_VCPU
if os.path.exists("/dev/net/tun"):
    tun = os.open("/dev/net/tun", os.O_RDWR | os.O_CLOEXEC)
    IFF_TAP, IFF_NO_PI, TUNSETIFF = 0x0002, 0x1000, 0x400454CA
    fcntl.ioctl(tun, TUNSETIFF, struct.pack("16sH", b"hwsigcap%d", IFF_TAP | IFF_NO_PI))
    held.append(tun)
ready = threading.Event()
def vcpu_thread():
    libc.prctl(PR_SET_NAME, b"CPU 0/KVM", 0, 0, 0)
    ready.set()
    time.sleep(600)
threading.Thread(target=vcpu_thread, daemon=True).start()
ready.wait()
libc.prctl(PR_SET_NAME, b"qemu-system-x86", 0, 0, 0)
os.setgroups([])
os.setresgid(65534, 65534, 65534)
os.setresuid(65534, 65534, 65534)
libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
print("ready", flush=True)
time.sleep(600)
EOF
	python3 "$tmp/fakeqemu.py" -name guest=hwsig-captest,debug-threads=on >"$tmp/fake.out" 2>&1 &
	fake_pid=$!
	for _ in $(seq 50); do grep -q ready "$tmp/fake.out" && break; sleep 0.1; done
	vm_line() { with_caps "$1" "$HWSIGCTL" vms --format json 2>/dev/null | grep '"hwsig-captest"'; }
	# What the fake holds shows as "vcpu_fds":1 (kvm) and a "hwsigcapN" tap (tun).
	held_read() {
		if [ -c /dev/kvm ] && ! grep -q '"vcpu_fds":1' <<<"$1"; then return 1; fi
		if [ -c /dev/net/tun ] && ! grep -Eq '"taps":\["hwsigcap[0-9]+"\]' <<<"$1"; then return 1; fi
		return 0
	}
	held_unread() { grep -q '"vcpu_fds":0' <<<"$1" && grep -q '"taps":\[\]' <<<"$1"; }
	what="$([ -c /dev/kvm ] && printf 'vCPU fd ')$([ -c /dev/net/tun ] && printf 'tap fd')"
	if ! grep -q ready "$tmp/fake.out"; then
		not_ok "fake QEMU did not start: $(head -c 300 "$tmp/fake.out")"
	else
		l=$(vm_line "$caps")
		if grep -q '"fds_readable":true' <<<"$l" && held_read "$l"; then
			ok "under the unit's set: nobody's QEMU fds are read ($what)"
		else
			not_ok "under the unit's set: nobody's QEMU fds ($what) not read: $l"
		fi
		l=$(vm_line "$(without dac_read_search)")
		if grep -q '"fds_readable":false' <<<"$l"; then
			ok "without CAP_DAC_READ_SEARCH: /proc/PID/fd of nobody's QEMU unreadable"
		else
			not_ok "without CAP_DAC_READ_SEARCH: /proc/PID/fd still read (is it needed?): $l"
		fi
		l=$(vm_line "$(without sys_ptrace)")
		if grep -q '"fds_readable":true' <<<"$l" && held_unread "$l"; then
			ok "without CAP_SYS_PTRACE: fd links and fdinfo of nobody's QEMU unreadable ($what)"
		else
			not_ok "without CAP_SYS_PTRACE: fd links or fdinfo still read (is it needed?): $l"
		fi
	fi
else
	not_ok "neither /dev/kvm nor /dev/net/tun: VM discovery capabilities not checked"
fi

finish
