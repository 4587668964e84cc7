#!/usr/bin/env python3
"""End-to-end checks of the hwsigctl binary: bad input gives clear errors
(exit 2, a message naming the problem), JSON output has the documented
schema and real values on this host, Ctrl-C prints the summary.

usage: test_hwsigctl.py HWSIGCTL
Prints one line per case and "cli: N passed, N failed"."""
import json
import os
import signal
import subprocess
import sys
import time

HWSIGCTL = sys.argv[1]


def doc_dir():
    """Where this build's messages say the documentation is installed
    (HWSIG_DOC_DIR in the CMake cache beside hwsigctl)."""
    cache = os.path.join(os.path.dirname(os.path.abspath(HWSIGCTL)), "CMakeCache.txt")
    with open(cache) as f:
        for line in f:
            if line.startswith("HWSIG_DOC_DIR:"):
                return line.split("=", 1)[1].strip()
    raise AssertionError(f"no HWSIG_DOC_DIR in {cache}")
# hwsigctl stat exits 70 on an interval that names an id and scope twice or
# both as a value and as unavailable (checked in the binary for every line).
os.environ["HWSIG_CHECK_INTERVALS"] = "1"
# Hermetic: these cases measure this process's own sampling, never a
# hwsigd running on this host (HWSIG_SOCKET, default /run/hwsig/hwsigd.sock):
# unless the caller set one, a path in a private directory no daemon listens
# on (0755: hwsigctl run as nobody below gets ENOENT there, not EACCES).
if not os.environ.get("HWSIG_SOCKET"):
    import atexit
    import shutil
    import tempfile
    _hermetic = tempfile.mkdtemp(prefix="hwsig-tests.")
    os.chmod(_hermetic, 0o755)
    atexit.register(shutil.rmtree, _hermetic, True)
    os.environ["HWSIG_SOCKET"] = os.path.join(_hermetic, "no-hwsigd.sock")
results = []


def run(args, timeout=60):
    p = subprocess.run([HWSIGCTL] + args, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def case(name):
    def wrap(fn):
        try:
            fn()
            results.append((name, None))
        except AssertionError as e:
            results.append((name, str(e) or "assertion failed"))
        except Exception as e:  # a crash of the test itself is a failure too
            results.append((name, f"{type(e).__name__}: {e}"))
        return fn
    return wrap


def expect_usage_error(args, needle):
    rc, out, err = run(args)
    assert rc == 2, f"{args}: exit {rc}, want 2 (stderr: {err.strip()})"
    assert needle in err, f"{args}: stderr lacks {needle!r}: {err.strip()}"
    assert "--help" in err, f"{args}: no hint to --help"


@case("help has examples")
def _():
    rc, out, _ = run(["stat", "--help"])
    assert rc == 0 and "examples:" in out and "--interval" in out, out
    rc, out, _ = run(["--help"])
    assert rc == 0 and "stat" in out


@case("bad options are refused with a clear message")
def _():
    expect_usage_error(["stat", "--interval", "0"], "--interval must be")
    expect_usage_error(["stat", "--interval", "-1"], "--interval must be")
    expect_usage_error(["stat", "--interval", "abc"], "interval")
    expect_usage_error(["stat", "--interval", "nan"], "--interval must be")
    expect_usage_error(["stat", "--count", "0"], "--count must be")
    expect_usage_error(["stat", "--duration", "-3"], "--duration must be")
    expect_usage_error(["stat", "--format", "xml"], "--format must be")
    expect_usage_error(["stat", "--bogus"], "bogus")
    # A negative count is refused, not wrapped to "forever".
    expect_usage_error(["stat", "--count", "-1"], "--count must be at least 1")
    # Stray words are named, wherever they stand among the options.
    expect_usage_error(["stat", "-c", "1", "extra"], "unexpected argument 'extra'")
    expect_usage_error(["stat", "-c1", "extra", "-i", "0.1"], "unexpected argument 'extra'")
    expect_usage_error(["stat", "--count=1", "one", "two"], "unexpected argument 'one'")
    expect_usage_error(["vms", "extra"], "unexpected argument 'extra'")
    rc, _, err = run(["frobnicate"])
    assert rc == 2 and "unknown command" in err, err


@case("unknown --vm is an error naming the VM")
def _():
    rc, _, err = run(["stat", "--vm", "no-such-vm-xyz", "--count", "1", "--interval", "0.1", "--no-bpf"])
    assert rc == 1 and "no-such-vm-xyz" in err, (rc, err)


def consistent(obj):
    """obj, after asserting what derive guarantees of every interval (and the
    summary): no (id, scope) with two values, two notes, or a value and a
    note."""
    values, notes = set(), set()
    for m in obj.get("metrics", []):
        key = (m["id"], m["scope"])
        assert key not in values, f"{key} has two values"
        values.add(key)
    for u in obj.get("unavailable", []):
        key = (u["id"], u["scope"])
        assert key not in notes, f"{key} is unavailable twice"
        notes.add(key)
    both = values & notes
    assert not both, f"both a value and unavailable: {sorted(both)}"
    return obj


def json_lines(out):
    """Every line of a --format json run, parsed and checked by consistent()."""
    return [consistent(json.loads(line)) for line in out.strip().split("\n")]


def metric_values(obj, mid):
    return [m for m in obj["metrics"] if m["id"] == mid]


@case("json: two lines with real procfs values and honest unavailable reasons")
def _():
    # A few reserved 2 MiB huge pages make mem.hugepage_utilization defined
    # (0 of 4 in use); restored afterwards.
    path = "/proc/sys/vm/nr_hugepages"
    before = open(path).read().strip() if os.path.exists(path) else None
    if before is not None and os.geteuid() == 0:
        open(path, "w").write("4\n")
    # mem.numa_remote_ratio needs the node counters to move in each
    # interval: the kernel folds its per-CPU NUMA counters into numastat
    # only every vm.stat_interval (1 s; seen: 0 for 0.9 s, then +2053), so
    # intervals are longer than that, and a child keeps faulting in fresh
    # pages meanwhile (an idle host might allocate none).
    alloc = subprocess.Popen([sys.executable, "-c",
                              "import time\nend = time.time() + 20\n"
                              "while time.time() < end:\n    b = bytearray(8 << 20)\n    b[::4096] = bytes(len(b[::4096]))\n    time.sleep(0.01)"])
    try:
        rc, out, err = run(["stat", "--count", "2", "--interval", "1.5", "--format", "json"])
    finally:
        alloc.kill()
        alloc.wait()
        if before is not None and os.geteuid() == 0:
            open(path, "w").write(before + "\n")
    assert rc == 0, f"exit {rc}: {err}"
    objs = json_lines(out)
    assert len(objs) == 2, f"{len(objs)} lines"
    for obj in objs:
        assert set(obj) >= {"timestamp", "interval_s", "metrics", "unavailable"}, obj.keys()
        assert abs(obj["interval_s"] - 1.5) < 0.25, obj["interval_s"]
        assert abs(obj["timestamp"] - time.time()) < 60
        for m in obj["metrics"]:
            assert set(m) >= {"id", "value", "unit", "scope", "source"}, m
            assert isinstance(m["value"], (int, float)), m
        for u in obj["unavailable"]:
            assert u["reason"], u
        for mid in ("sched.steal_ratio", "mem.numa_remote_ratio", "mem.numa_fallback_ratio", "mem.page_migrations_ps",
                    "psi.cpu_some_pct", "psi.memory_some_pct", "psi.io_some_pct"):
            vals = metric_values(obj, mid)
            assert vals, f"{mid} has no value: {[u for u in obj['unavailable'] if u['id'] == mid]}"
        steal = metric_values(obj, "sched.steal_ratio")
        assert any(m["scope"] == "system" and 0 <= m["value"] <= 1 for m in steal), steal
        if os.geteuid() == 0:
            hp = metric_values(obj, "mem.hugepage_utilization")
            assert any(m["scope"] == "hugepages:2048kB" and m["value"] == 0 for m in hp), hp
        ids = {m["id"] for m in obj["metrics"]} | {u["id"] for u in obj["unavailable"]}
        for mid in ("cpu.ipc", "io.iops_read", "sched.runq_wait_p50_us", "thermal.headroom_c"):
            assert mid in ids, f"{mid} neither measured nor unavailable"
        if not metric_values(obj, "cpu.ipc"):
            reasons = [u["reason"] for u in obj["unavailable"] if u["id"] == "cpu.ipc"]
            assert reasons and all(len(r) > 10 for r in reasons), reasons


@case("switched-off collectors are unavailable with that reason")
def _():
    rc, out, err = run(["stat", "--count", "1", "--interval", "0.2", "--format", "json",
                        "--no-bpf", "--no-pmu"])
    assert rc == 0, err
    obj = json_lines(out)[-1]
    reasons = {u["id"]: u["reason"] for u in obj["unavailable"]}
    assert "--no-bpf" in reasons.get("io.iops_read", ""), reasons.get("io.iops_read")
    assert "--no-bpf" in reasons.get("sched.runq_wait_p50_us", ""), reasons.get("sched.runq_wait_p50_us")
    assert "--no-pmu" in reasons.get("cpu.ipc", ""), reasons.get("cpu.ipc")


@case("table: grouped by layer, summary after several intervals")
def _():
    rc, out, err = run(["stat", "--count", "2", "--interval", "0.3", "--no-bpf"])
    assert rc == 0, err
    assert out.count("hwsig stat") == 3, out  # two intervals + summary
    assert "summary of 2 intervals" in out
    for layer in ("Memory/NUMA", "Scheduler", "Pressure", "Unavailable"):
        assert f"\n{layer}\n" in out, f"no {layer} group"


@case("--duration shorter than --interval: one interval of that length")
def _():
    t0 = time.monotonic()
    rc, out, err = run(["stat", "--duration", "0.3", "--interval", "1", "--no-bpf", "--format", "json"])
    took = time.monotonic() - t0
    assert rc == 0, err
    lines = json_lines(out)
    assert len(lines) == 1, out[:300]
    # 0.3 s asked; the sampler's own start-up and exit on a loaded machine
    # add well under a second, a full 1 s interval would show here.
    assert 0.25 <= lines[0]["interval_s"] < 0.6, lines[0]["interval_s"]
    assert took < 5, took


@case("a summary of one interval says 'interval'")
def _():
    # Interrupted as soon as the first interval is printed: exactly one
    # interval is done, whatever the machine's load.
    p = subprocess.Popen([HWSIGCTL, "stat", "--interval", "2", "--no-bpf"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline()
    assert "interval 1" in first, first
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=20)
    out = first + out
    assert p.returncode == 0, (p.returncode, err)
    assert "summary of 1 interval\n" in out or "summary of 1 interval " in out, out[-400:]
    assert "summary of 1 intervals" not in out, out[-400:]


@case("Ctrl-C prints the summary so far")
def _():
    p = subprocess.Popen([HWSIGCTL, "stat", "--interval", "0.2", "--format", "json", "--no-bpf"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 0, (p.returncode, err)
    lines = out.strip().split("\n")
    assert len(lines) >= 3, lines
    last = json_lines(out)[-1]
    assert last.get("summary") is True, lines[-1][:200]
    assert lines[-1].startswith('{"summary":true,"timestamp":'), lines[-1][:200]
    assert last["interval_s"] > 0.5, last["interval_s"]


@case("every subcommand: --help with examples, bad options refused")
def _():
    for cmd in (["stat"], ["vms"], ["kmod", "status"], ["hist"]):
        rc, out, err = run(cmd + ["--help"])
        assert rc == 0 and "examples:" in out, (cmd, rc, err)
    expect_usage_error(["vms", "--format", "xml"], "--format must be")
    expect_usage_error(["kmod", "status", "--interval", "1"],
                       "--interval is only for 'kmod start', not for 'kmod status'")
    expect_usage_error(["kmod", "info", "--last", "3"], "--last is only for 'kmod records', not for 'kmod info'")
    expect_usage_error(["kmod", "status", "--force"],
                       "--force is only for 'kmod start' and 'kmod stop', not for 'kmod status'")
    expect_usage_error(["kmod", "info", "-A"], "--per-cpu is only for 'kmod status'")
    expect_usage_error(["kmod", "stop", "--dry-run"], "--dry-run is only for 'kmod start'")
    expect_usage_error(["kmod", "start", "--ring-records", "100"], "--ring-records must be a power of two")
    expect_usage_error(["kmod", "start", "--interval", "100"], "--interval must be between")
    expect_usage_error(["kmod", "frob"], "unknown subcommand 'frob'")
    expect_usage_error(["hist"], "which histogram")
    expect_usage_error(["hist", "runq", "0"], "interval must be seconds > 0")
    # A pid that does not exist: an error naming it, not an empty trace.
    rc, out, err = run(["hist", "runq", "-p", "999999999", "1", "1"])
    assert rc == 1, (rc, out, err)
    assert "no process with pid 999999999" in err, err
    expect_usage_error(["hist", "bio", "-C"], "are for runq")


@case("kmod without the module: the error and a hint to load it")
def _():
    if os.path.isdir("/sys/module/hwsig"):
        return  # loaded here: nothing to check about its absence
    for sub in ("status", "records", "start", "stop", "info"):
        rc, out, err = run(["kmod", sub])
        assert rc == 1, (sub, rc, err)
        assert err.startswith(f"hwsigctl kmod {sub}: "), err
        assert err.count("\nhint: ") == 1, err
        # The error only: nothing about what would have been sampled.
        assert out == "", (sub, out)
    # The hint says why the running kernel has no module, from its
    # /lib/modules (a fake root: --root prefixes /proc and /lib/modules).
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp()
    try:
        os.makedirs(f"{tmp}/proc/sys/kernel")
        open(f"{tmp}/proc/sys/kernel/osrelease", "w").write("6.1.0-99-amd64\n")
        mods = f"{tmp}/lib/modules/6.1.0-99-amd64"
        os.makedirs(mods)

        def hint():
            rc, out, err = run(["kmod", "info", "--root", tmp])
            assert rc == 1, (rc, err)
            return err.splitlines()[-1]
        assert hint() == ("hint: kernel 6.1.0-99-amd64 has no hwsig.ko: DKMS cannot build it without the kernel's "
                          "headers (apt install linux-headers-6.1.0-99-amd64, then dkms autoinstall; "
                          f"{doc_dir()}/admin-guide.rst)"), hint()
        os.makedirs(f"{mods}/build")
        assert hint().startswith("hint: kernel 6.1.0-99-amd64 has no hwsig.ko ('dkms status hwsig' says why"), hint()
        open(f"{mods}/modules.dep", "w").write("kernel/fs/ext4/ext4.ko.xz:\nupdates/dkms/hwsig.ko.xz:\n")
        assert hint() == "hint: load the module first (modprobe hwsig, or insmod hwsig.ko)", hint()
    finally:
        shutil.rmtree(tmp)
    # --dry-run needs no module and shows the ring size asked for.
    rc, out, err = run(["kmod", "start", "--ring-records", "4096", "--dry-run"])
    assert rc == 0, (rc, err)
    assert "4096 records per CPU ring" in out, out
    rc, out, err = run(["kmod", "start", "--dry-run"])
    assert rc == 0 and "default 1024 records" in out, out


FAKE_GUEST = ("import ctypes, sys, time\n"
              "ctypes.CDLL(None).prctl(15, b'qemu-system-x86', 0, 0, 0)\n"
              "print('ready', flush=True)\n"
              "time.sleep(float(sys.argv[1]))\n")


def stat_guest_exits_after_first(name, args, first_done):
    """hwsigctl stat --vm NAME with a fake guest that exits once the first
    interval is printed (first_done(line) says when): the exit is mid-run
    whatever the machine's load. Returns (rc, out, err, guest pid)."""
    guest = subprocess.Popen([sys.executable, "-c", FAKE_GUEST, "60", "-name", f"guest={name}"],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert guest.stdout.readline().strip() == "ready"
        p = subprocess.Popen([HWSIGCTL, "stat", "--no-bpf", "--no-daemon", "--vm", name] + args,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out = ""
        for line in p.stdout:
            out += line
            if first_done(line):
                break
        guest.kill()
        guest.wait()
        rest, err = p.communicate(timeout=60)
        return p.returncode, out + rest, err, guest.pid
    finally:
        guest.kill()
        guest.wait()


@case("--vm of a VM that exits mid-run: one line saying it is gone, no values")
def _():
    rc, out, err, pid = stat_guest_exits_after_first("gone17", ["-i", "1", "-c", "3"], lambda l: l == "\n")
    assert rc == 0, (rc, err)
    blocks = out.split("hwsig stat  ")[1:]
    assert len(blocks) == 4, out
    gone = f"vm:gone17 is gone: its QEMU (pid {pid}) exited"
    assert gone not in blocks[0], blocks[0]
    for b in blocks[2:]:
        assert b.count(gone) == 1, b
        assert "vm:gone17" not in b.replace(gone, ""), b  # no values or notes for it
    assert "summary of 3 intervals" in blocks[3], blocks[3]
    # JSON: the same, as a field of the line.
    rc, out, err, pid = stat_guest_exits_after_first("gone17j", ["-i", "0.5", "-c", "3", "--format", "json"],
                                                     lambda l: True)
    assert rc == 0, (rc, err)
    lines = [json.loads(l) for l in out.splitlines()]
    assert len(lines) == 3, out
    assert "vm_gone" not in lines[0], lines[0]
    assert lines[2]["vm_gone"] == {"scope": "vm:gone17j",
                                   "reason": f"its QEMU (pid {pid}) exited"}, lines[2]
    for m in lines[2]["metrics"] + lines[2]["unavailable"]:
        assert m["scope"] != "vm:gone17j", m


@case("without root: one short reason for the BPF metrics, not libbpf's probe text")
def _():
    import shutil
    import tempfile
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        return  # needs root to drop to nobody
    tmp = tempfile.mkdtemp()
    try:
        os.chmod(tmp, 0o755)
        exe = os.path.join(tmp, "hwsigctl")
        shutil.copy(HWSIGCTL, exe)
        os.chmod(exe, 0o755)
        nobody = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", exe]
        p = subprocess.run(nobody + ["stat", "--no-daemon", "-i", "0.2", "-c", "1", "--format", "json"],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 0, (p.returncode, p.stderr)
        line = json.loads(p.stdout.splitlines()[0])
        why = {(u["id"], u["scope"]): u["reason"] for u in line["unavailable"]}
        for key in (("io.iops_read", "dev:*"), ("io.latency_p99_us", "dev:*"),
                    ("sched.runq_wait_p50_us", "system"), ("sched.involuntary_ctxsw_ps", "system")):
            assert why.get(key) == "needs root (CAP_BPF and CAP_PERFMON)", (key, why.get(key))
        assert ("io.iops_read", "system") not in why, why
        assert "RLIMIT_MEMLOCK" not in p.stdout and "libbpf" not in p.stdout, p.stdout[:500]
        p = subprocess.run(nobody + ["hist", "runq", "1", "1"], capture_output=True, text=True, timeout=60)
        assert p.returncode == 1, (p.returncode, p.stderr)
        assert p.stderr == "hwsigctl hist: needs root (CAP_BPF and CAP_PERFMON)\n", p.stderr
    finally:
        shutil.rmtree(tmp)


FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "unit", "fixtures",
                       "debian12-host")


def fixture_copy(hugepages=None, thresholds=None):
    """A copy of the debian12-host fixture tree (static: a quiet host), with
    a 2048 kB huge page pool of hugepages = (pages, free) and
    /etc/hwsig/thresholds.conf as given. (A static tree has no pressure:
    PSI is a rate of its totals.)"""
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp()
    root = os.path.join(tmp, "root")
    shutil.copytree(FIXTURE, root)
    if hugepages is not None:
        pool = os.path.join(root, "sys", "kernel", "mm", "hugepages", "hugepages-2048kB")
        for name, value in (("nr_hugepages", hugepages[0]), ("free_hugepages", hugepages[1]),
                            ("resv_hugepages", 0)):
            with open(os.path.join(pool, name), "w") as f:
                f.write(f"{value}\n")
        # /proc/meminfo's Hugetlb (every pool's pages x size) agrees, as on
        # a real kernel: at 0 kB hwsig does not read the pools.
        meminfo = os.path.join(root, "proc", "meminfo")
        with open(meminfo) as f:
            text = f.read()
        assert "\nHugetlb:               0 kB\n" in text, "fixture meminfo without Hugetlb: 0 kB"
        text = text.replace("\nHugetlb:               0 kB\n", f"\nHugetlb: {hugepages[0] * 2048} kB\n")
        with open(meminfo, "w") as f:
            f.write(text)
    if thresholds is not None:
        os.makedirs(os.path.join(root, "etc", "hwsig"))
        with open(os.path.join(root, "etc", "hwsig", "thresholds.conf"), "w") as f:
            f.write(thresholds)
    return tmp, root


def fixture_stat(root, *args):
    return run(["stat", "--no-daemon", "--no-bpf", "--no-pmu", "--root", root, "-i", "0.1", *args])


@case("verdicts: none in 20 intervals of a quiet (fixture) host; a full huge page pool gives one, in table and JSON")
def _():
    import shutil
    tmp, root = fixture_copy()
    try:
        rc, out, err = fixture_stat(root, "-c", "20")
        assert rc == 0, err
        assert out.count("hwsig stat  ") == 21, out[-500:]  # 20 intervals + summary
        assert "\n! " not in out, [l for l in out.splitlines() if l.startswith("! ")][:3]
        rc, out, err = fixture_stat(root, "-c", "20", "--format", "json")
        lines = [json.loads(l) for l in out.splitlines()]
        assert len(lines) == 20 and all(l["verdicts"] == [] for l in lines), out[-300:]
    finally:
        shutil.rmtree(tmp)
    tmp, root = fixture_copy(hugepages=(4, 0))
    try:
        rc, out, err = fixture_stat(root, "-c", "1")
        assert rc == 0, err
        assert "\n! mem.hugepage_utilization           100 %          hugepages:2048kB\n" in out, out
        assert "\n! huge pages 2048kB fully used: in use 100 %\n" in out, out
        rc, out, err = fixture_stat(root, "-c", "1", "--format", "json")
        v = json.loads(out.splitlines()[0])["verdicts"]
        assert v == [{"resource": "memory", "kind": "utilisation", "metric": "mem.hugepage_utilization",
                      "scope": "hugepages:2048kB", "value": 1, "threshold": 1,
                      "text": "huge pages 2048kB fully used: in use 100 %"}], v
    finally:
        shutil.rmtree(tmp)


@case("thresholds: <root>/etc/hwsig/thresholds.conf and --thresholds move the bar; a bad file is exit 2")
def _():
    import shutil
    # 3 of 4 pages in use: 75 %, under the default bar (100 %) and the file's.
    tmp, root = fixture_copy(hugepages=(4, 1), thresholds="mem.hugepage_used_pct = 80  # busy fleet\n")
    try:
        rc, out, err = fixture_stat(root, "-c", "1")
        assert rc == 0, err
        assert "\n! " not in out and "\n  mem.hugepage_utilization          75.0 %" in out, out  # 75 < 80: no mark
        other = os.path.join(tmp, "other.conf")
        with open(other, "w") as f:
            f.write("mem.hugepage_used_pct = 70\n")
        rc, out, err = fixture_stat(root, "-c", "1", "--thresholds", other)
        assert rc == 0 and "\n! mem.hugepage_utilization          75.0 %          hugepages:2048kB\n" in out, (err, out)
        assert "\n! huge pages 2048kB fully used: in use 75.0 %\n" in out, out
        with open(other, "w") as f:
            f.write("# mine\ncpu.psi_some_pct = 40\ncpu.psi_some = 3\n")
        rc, out, err = fixture_stat(root, "-c", "1", "--thresholds", other)
        assert rc == 2 and out == "", (rc, out)
        assert err == (f"hwsigctl stat: {other}:3: unknown key 'cpu.psi_some' "
                       f"(the keys are listed in {doc_dir()}/thresholds.rst)\n"), err
        rc, out, err = fixture_stat(root, "-c", "1", "--thresholds", os.path.join(tmp, "missing.conf"))
        assert rc == 2 and "cannot read thresholds file" in err and "No such file" in err, err
        with open(os.path.join(root, "etc", "hwsig", "thresholds.conf"), "w") as f:
            f.write("cpu.steal_pct = lots\n")
        rc, out, err = fixture_stat(root, "-c", "1")
        assert rc == 2 and err.count("\n") == 1, err
        assert "thresholds.conf:1: key 'cpu.steal_pct': 'lots' is not a number" in err, err
    finally:
        shutil.rmtree(tmp)


@case("table: unavailable reasons once at the start and in the summary, no colour when piped")
def _():
    rc, out, err = run(["stat", "--no-daemon", "--no-bpf", "-i", "0.2", "-c", "4"])
    assert rc == 0, err
    blocks = out.split("hwsig stat  ")[1:]
    assert len(blocks) == 5, out
    import re
    said = [len(re.findall(r"^  \d+ metrics: BPF collectors disabled \(--no-bpf\)$", b, re.M)) for b in blocks]
    assert said == [1, 0, 0, 0, 1], said
    assert "\033[" not in out
    for l in out.splitlines():
        assert len(l) <= 80, l
    rc, out, err = run(["stat", "--no-daemon", "--no-bpf", "-i", "0.2", "-c", "4", "-v"])
    blocks = out.split("hwsig stat  ")[1:]
    # -v: today's full per-scope list in every block.
    assert all("BPF collectors disabled (--no-bpf)" in b for b in blocks), out


@case("--compact: a header, then one line per interval")
def _():
    import shutil
    # A fixture host: on the live one, fake guests of tests running beside
    # this one come and go, and each change prints "Unavailable now" and
    # the header again.
    tmp, root = fixture_copy()
    try:
        rc, out, err = fixture_stat(root, "-c", "22", "--compact")
    finally:
        shutil.rmtree(tmp)
    assert rc == 0, err
    lines = out.splitlines()
    head = "time     steal rq-p99 psi-c psi-m psi-i      dram    iops io-p99 headr verdict"
    assert lines.count(head) == 3, out  # before intervals 1 and 21, and the summary's
    # Only the header and the lines on stdout: the notes go to stderr.
    assert all(l == head or l.startswith("summary ") or (l[2] == ":" and l[5] == ":") for l in lines), out
    assert err.startswith("Unavailable\n") and "BPF collectors disabled" in err, err[:300]
    data = [l for l in lines if len(l) > 8 and l[2] == ":" and l[5] == ":"]
    assert len(data) == 22, out
    assert lines[-1].startswith("summary "), lines[-1]
    assert all(len(l) <= 80 for l in lines), [l for l in lines if len(l) > 80]
    expect_usage_error(["stat", "--compact", "--format", "json"], "--compact is a table form")
    expect_usage_error(["stat", "--thresholds", ""], "--thresholds needs a file name")


@case("metrics: every id a fixture host's stat shows, and every family it exports, are listed")
def _():
    import shutil
    rc, out, err = run(["metrics", "--format", "json"])
    assert rc == 0, err
    listed = {json.loads(l)["id"]: json.loads(l) for l in out.splitlines()}
    assert len(listed) > 40 and listed["cpu.ipc"]["unit"] == "insn/cycle", list(listed)[:5]
    rc, table, _ = run(["metrics"])
    assert table.splitlines()[0].split() == ["ID", "UNIT", "LAYER", "SOURCE", "DEFINITION"], table[:200]
    assert len(table.splitlines()) == len(listed) + 1
    tmp, root = fixture_copy()
    try:
        rc, out, err = fixture_stat(root, "-c", "1", "--format", "json")
        assert rc == 0, err
        obj = json.loads(out.splitlines()[0])
        shown = {m["id"] for m in obj["metrics"]} | {u["id"] for u in obj["unavailable"]}
        assert shown and shown <= set(listed), sorted(shown - set(listed))
    finally:
        shutil.rmtree(tmp)
    rc, out, err = run(["metrics", "--prometheus", "-f", "json"])
    assert rc == 0, err
    families = {json.loads(l)["family"]: json.loads(l) for l in out.splitlines()}
    steal = families["hwsig_cpu_steal_seconds_total"]
    assert steal["type"] == "counter" and steal["series"] == "stat.steal" and "sched.steal_ratio" in steal["ids"], steal
    assert families["hwsig_build_info"]["help"] == "The hwsig version exporting these metrics.", families["hwsig_build_info"]
    expect_usage_error(["metrics", "--format", "xml"], "--format must be")
    expect_usage_error(["metrics", "extra"], "extra")


for name, failure in results:
    print(f"cli: {'PASS' if failure is None else 'FAIL'} {name}" + (f": {failure}" if failure else ""))
failed = sum(1 for _, f in results if f)
print(f"cli: {len(results) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
