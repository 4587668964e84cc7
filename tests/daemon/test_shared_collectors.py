#!/usr/bin/env python3
"""One set of in-kernel collectors per host: while hwsigd runs, two
`hwsigctl stat` load no BPF program of their own and show the same metric
ids as a stat that samples by itself; members of the socket's group read
without root, others are told why not; `hwsigctl kmod start|stop` refuse
while the daemon samples the module; a source that fails mid-run becomes
unavailable with its reason while the rest keeps working; `--resctrl` reads
through the daemon only when the daemon's resctrl is on."""
import grp
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import FIXTURES, HWSIGCTL, Daemon, Results, bpf_programs_of, loaded_program_ids  # noqa: E402

r = Results("test_shared_collectors")
root = os.geteuid() == 0


def stat_json(env, extra=(), count=2, interval=0.5):
    p = subprocess.run([HWSIGCTL, "stat", "--format", "json", "-c", str(count), "-i", str(interval)] + list(extra),
                       env=env, capture_output=True, text=True, timeout=60)
    lines = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    return p, lines


def ids_of(lines):
    ids = set()
    for obj in lines:
        ids |= {m["id"] for m in obj.get("metrics", [])}
        ids |= {u["id"] for u in obj.get("unavailable", [])}
    return ids


def valued_ids(lines):
    return {m["id"] for obj in lines for m in obj.get("metrics", [])}


def one_copy():
    if not r.check("root (BPF collectors need it)", root):
        return
    before = loaded_program_ids()
    d = Daemon(["--pmu", "perf", "--interval", "1"])
    try:
        r.check("hwsigd ready", d.ready(60), d.log_text()[-300:])
        daemon_progs = bpf_programs_of(d.proc.pid)
        env = dict(os.environ, HWSIG_SOCKET=d.socket)
        stats = [subprocess.Popen([HWSIGCTL, "stat", "--format", "json", "-c", "4", "-i", "0.5"], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        time.sleep(1.2)
        during = loaded_program_ids() - before
        held_by_stats = set().union(*(bpf_programs_of(p.pid) for p in stats))
        outs = [p.communicate(timeout=60) for p in stats]
        # Programs loaded since the daemon started that it does not hold
        # belong to someone else on the host (another test run): the
        # stats' own fds are what tells whether they loaded a copy.
        r.check("daemon + two hwsigctl stat: one copy of each program (bpftool prog, fds of each process)",
                daemon_progs <= during and not held_by_stats and len(daemon_progs) >= 3,
                f"daemon holds {sorted(daemon_progs)}, loaded since start {sorted(during)}, "
                f"stats hold {sorted(held_by_stats)}")
        r.check("both stats ran to the end (exit 0)", all(p.returncode == 0 for p in stats),
                " | ".join(o[1].strip() for o in outs))
        via = [json.loads(line) for line in outs[0][0].splitlines() if line.startswith("{")]
        # the control: a stat that samples by itself loads its own copy
        own = subprocess.Popen([HWSIGCTL, "stat", "--format", "json", "-c", "6", "-i", "0.5", "--no-daemon"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # sched_switch, block_rq_complete and its issue fallback (loaded,
        # attached only when a disk needs it): 3 once both collectors are
        # up, which a loaded host may take a few seconds to reach.
        deadline = time.monotonic() + 10
        held_by_own = set()
        while time.monotonic() < deadline and own.poll() is None:
            time.sleep(0.5)
            held_by_own = bpf_programs_of(own.pid) or held_by_own
            if len(held_by_own) >= 3:
                break
        out, err = own.communicate(timeout=60)
        alone = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        r.check("the control: stat --no-daemon beside the daemon loads its own copy (the check can tell)",
                own.returncode == 0 and len(held_by_own) >= 3 and not (held_by_own & daemon_progs),
                f"holds {sorted(held_by_own)}; {err.strip()}")
        r.check("stat through hwsigd shows the same metric ids as stat alone",
                ids_of(via) == ids_of(alone) and len(ids_of(via)) > 20,
                f"only via daemon {sorted(ids_of(via) - ids_of(alone))}, only alone "
                f"{sorted(ids_of(alone) - ids_of(via))}")
        steady = {"sched.runq_wait_p50_us", "sched.involuntary_ctxsw_ps", "sched.steal_ratio", "psi.cpu_some_pct"}
        r.check("... with values for the scheduler and PSI ids in both", steady <= valued_ids(via) and
                steady <= valued_ids(alone), f"via {sorted(steady - valued_ids(via))} missing, alone "
                f"{sorted(steady - valued_ids(alone))} missing")
        # The history keeps snapshots and derives on request: histograms
        # (run-queue percentiles) and counter deltas must survive the
        # round trip through its compact store.
        text = d.request("history")
        intervals, cur = [], None
        for line in text.splitlines():
            f = line.split("\t")
            if f[0] == "I":
                cur = {"_s": float(f[2])}
                intervals.append(cur)
            elif f[0] == "V" and f[2] == "system":
                cur[f[1]] = float(f[3])
        # A quiet interval may have no run-queue wait at all: the rate
        # (a counter delta) is in every interval, a percentile in most.
        kept = [iv for iv in intervals if "sched.involuntary_ctxsw_ps" in iv]
        with_p50 = [iv for iv in intervals if "sched.runq_wait_p50_us" in iv]
        r.check("history derives every kept interval: involuntary switches/s in each, run-queue p50 in most",
                len(intervals) >= 3 and len(kept) == len(intervals) and 2 * len(with_p50) > len(intervals) and
                all(0.8 < iv["_s"] < 1.5 for iv in intervals[1:]), f"{len(kept)} of {len(intervals)}: {intervals[:2]}")
        p = subprocess.run([HWSIGCTL, "stat", "-c", "1", "-i", "0.2", "-v"], env=env, capture_output=True,
                           text=True, timeout=60)
        r.check("stat -v says where its snapshots come from", f"snapshots from hwsigd (pid {d.proc.pid})" in
                p.stderr, p.stderr.strip())
    finally:
        d.stop()
        d.close()


def disk_section(out, name):
    """The count hist -D printed for disk name, and its slot rows."""
    section = out.split(f"disk = {name}\n", 1)
    total, rows = 0, []
    if len(section) == 2:
        for line in section[1].splitlines():
            if line.startswith("disk = "):
                break
            parts = line.split(":")
            if len(parts) >= 2 and "->" in parts[0]:
                total += int(parts[1].split("|")[0])
                rows.append(line)
    return total, rows


def hist_through_daemon():
    """hist bio -D through the daemon counts a known number of O_DIRECT
    reads exactly, and loads nothing of its own."""
    if not r.check("root (loop device, BPF)", root):
        return
    tmp = tempfile.mkdtemp()
    img = os.path.join(tmp, "disk.img")
    with open(img, "wb") as f:
        f.truncate(64 << 20)
    loop = subprocess.run(["losetup", "--find", "--show", "--direct-io=on", img], capture_output=True,
                          text=True).stdout.strip()
    d = Daemon(["--pmu", "off", "--bpf", "block", "--interval", "1"])
    try:
        if not r.check("loop device attached", loop.startswith("/dev/loop"), loop):
            return
        r.check("hwsigd ready", d.ready(60), d.log_text()[-300:])
        env = dict(os.environ, HWSIG_SOCKET=d.socket)
        hist = subprocess.Popen([HWSIGCTL, "hist", "bio", "-D", "4", "1"], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        # -m beside it: hwsigd's microsecond slots, bounds printed in ms.
        hist_ms = subprocess.Popen([HWSIGCTL, "hist", "bio", "-D", "-m", "4", "1"], env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        reads = 1500
        subprocess.run(["dd", f"if={loop}", "of=/dev/null", "bs=4k", f"count={reads}", "iflag=direct"],
                       capture_output=True, check=True)
        held = bpf_programs_of(hist.pid)
        out, err = hist.communicate(timeout=30)
        out_ms, err_ms = hist_ms.communicate(timeout=30)
        name = os.path.basename(loop)
        total, _ = disk_section(out, name)
        r.check(f"hist bio -D through hwsigd: {name} counts exactly the {reads} reads", total == reads,
                f"counted {total}; stderr {err.strip()!r}")
        total_ms, rows_ms = disk_section(out_ms, name)
        r.check(f"hist bio -D -m through hwsigd: the same {reads} reads, not refused", total_ms == reads,
                f"counted {total_ms}; stderr {err_ms.strip()!r}")
        # The microsecond slot k prints as 2^k/1000 -> (2^(k+1)-1)/1000 ms.
        bounds = [tuple(float(x) for x in row.split(":")[0].split("->")) for row in rows_ms]
        want = [((2 ** k if k else 0) / 1000, (2 ** (k + 1) - 1) / 1000) for k in range(len(bounds))]
        r.check("... its rows are the microsecond slots with bounds in ms, under 'msecs'",
                bool(bounds) and bounds == want and "msecs" in out_ms, "\n".join(rows_ms[:4]))
        r.check("hist through hwsigd holds no BPF program of its own", not held, f"holds {sorted(held)}")
        snap = d.request("snapshot")
        r.check(f"the daemon reports dev:{name} while it exists", f"\tdev:{name}\t" in snap)
        # Detach, then remove the device itself (a detached loop device
        # stays; LOOP_CTL_REMOVE deletes it as hot-unplug would).
        rdev = os.stat(loop).st_rdev
        numbers = f"{os.major(rdev)}:{os.minor(rdev)}"
        subprocess.run(["losetup", "-d", loop])
        detached, loop = loop, ""
        import fcntl
        ctl = os.open("/dev/loop-control", os.O_RDWR)
        try:
            fcntl.ioctl(ctl, 0x4C81, int(name[4:]))  # LOOP_CTL_REMOVE
        except OSError as e:
            r.check(f"remove {detached}", False, str(e))
        finally:
            os.close(ctl)
        time.sleep(6.0)  # device names (and presence) are refreshed every 5 s
        snap = d.request("snapshot")
        r.check(f"{detached} removed under the daemon: its scope goes, the daemon carries on",
                f"\tdev:{name}\t" not in snap and d.proc.poll() is None and snap.endswith("end\n"))
        r.check(f"... and does not come back unnamed (dev:{numbers}) with stale counts",
                f"\tdev:{numbers}\t" not in snap)
        p = subprocess.run([HWSIGCTL, "hist", "runq", "-p", "1", "0.2", "1"], env=env, capture_output=True,
                           text=True, timeout=30)
        r.check("hist runq -p through hwsigd: refused with the way out (--no-daemon)", p.returncode == 1 and
                "--no-daemon" in p.stderr, p.stderr.strip())
    finally:
        d.stop()
        d.close()
        if loop.startswith("/dev/loop"):
            subprocess.run(["losetup", "-d", loop])
        shutil.rmtree(tmp)


def group_access():
    """A member of the socket group reads without root; a non-member is told."""
    if not r.check("root (to switch user for the test)", root):
        return
    group = "hwsig-test"
    created = False
    try:
        grp.getgrnam(group)
    except KeyError:
        subprocess.run(["groupadd", "--system", group], check=True)
        created = True
    # The socket in a directory hwsigd makes itself, as outside systemd
    # (the unit's RuntimeDirectory= makes /run/hwsig root:hwsig 0750).
    top = tempfile.mkdtemp(prefix="hwsigd-test-")
    d = Daemon(["--root", os.path.join(FIXTURES, "debian12-host"), "--pmu", "off", "--bpf", "none",
                "--socket-group", group, "--interval", "0.2"], directory=top,
               socket_path=os.path.join(top, "run", "hwsigd.sock"))
    os.chmod(d.dir, 0o755)
    try:
        d.ready(20)
        st = os.stat(d.socket)
        r.check("socket is 0660 root:" + group, (st.st_mode & 0o777) == 0o660 and
                st.st_gid == grp.getgrnam(group).gr_gid, oct(st.st_mode & 0o777))
        st = os.stat(os.path.dirname(d.socket))
        r.check("the directory hwsigd made for it is 0750 root:" + group + ", as the unit's",
                (st.st_mode & 0o777) == 0o750 and st.st_uid == 0 and st.st_gid == grp.getgrnam(group).gr_gid,
                oct(st.st_mode & 0o777))
        env = dict(os.environ, HWSIG_SOCKET=d.socket)
        gid = str(grp.getgrnam(group).gr_gid)
        member = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--groups=" + gid, HWSIGCTL,
                                 "stat", "--format", "json", "-c", "1", "-i", "0.3"], env=env, capture_output=True,
                                text=True, timeout=30)
        r.check("a member of the group (not root) reads through the daemon", member.returncode == 0 and
                '"metrics"' in member.stdout, member.stderr.strip())
        other = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", HWSIGCTL, "stat",
                                "-c", "1", "-i", "0.3"], env=env, capture_output=True, text=True, timeout=30)
        r.check("a non-member is told the socket is for root and the hwsig group (exit 1)",
                other.returncode == 1 and "hwsig group" in other.stderr, other.stderr.strip())
    finally:
        d.stop()
        d.close()
        shutil.rmtree(top, ignore_errors=True)
        if created:
            subprocess.run(["groupdel", group])


def kmod_refusal():
    """kmod start|stop ask the daemon first. A stand-in daemon socket that
    answers status as a hwsigd sampling hwsig.ko would."""
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "hwsigd.sock")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(8)
    owns = {"value": "1"}
    done = threading.Event()

    def serve():
        srv.settimeout(0.2)
        while not done.is_set():
            try:
                c, _ = srv.accept()
            except socket.timeout:
                continue
            try:
                c.settimeout(2)
                if c.recv(64).startswith(b"status"):  # hwsigctl's probe connects and closes
                    c.sendall(f"hwsigd\t0.1.0\t4242\t{owns['value']}\t1\n".encode())
            except OSError:
                pass
            c.close()

    t = threading.Thread(target=serve)
    t.start()
    env = dict(os.environ, HWSIG_SOCKET=path)
    try:
        for sub in ("start", "stop"):
            p = subprocess.run([HWSIGCTL, "kmod", sub], env=env, capture_output=True, text=True, timeout=30)
            r.check(f"kmod {sub} while hwsigd samples the module: refused (exit 1) with the reason",
                    p.returncode == 1 and "hwsigd (pid 4242) samples hwsig.ko" in p.stderr and "--force" in p.stderr,
                    p.stderr.strip())
            p = subprocess.run([HWSIGCTL, "kmod", sub, "--force"], env=env, capture_output=True, text=True,
                               timeout=30)
            r.check(f"kmod {sub} --force goes ahead (to the module itself)", "hwsigd" not in p.stderr and
                    ("hwsig.ko" in p.stderr or p.returncode == 0), p.stderr.strip())
        owns["value"] = "0"
        p = subprocess.run([HWSIGCTL, "kmod", "stop"], env=env, capture_output=True, text=True, timeout=30)
        r.check("kmod stop while the daemon does not use the module: not refused", "hwsigd" not in p.stderr and
                ("hwsig.ko" in p.stderr or p.returncode == 0), p.stderr.strip())
        p = subprocess.run([HWSIGCTL, "kmod", "status", "--force"], env=env, capture_output=True, text=True,
                           timeout=30)
        r.check("--force is only for start and stop", p.returncode == 2 and "--force is only for 'kmod start' and 'kmod stop'" in p.stderr,
                p.stderr.strip())
    finally:
        done.set()
        t.join()
        srv.close()
        shutil.rmtree(tmp)


def source_fails_mid_run():
    """A sensor tree removed under a running daemon: its metric becomes
    unavailable with the reason, the other sources keep their values."""
    tmp = tempfile.mkdtemp()
    tree = os.path.join(tmp, "host")
    shutil.copytree(os.path.join(FIXTURES, "debian12-host"), tree, symlinks=True)
    d = Daemon(["--root", tree, "--pmu", "off", "--bpf", "none", "--interval", "0.2"])
    try:
        d.ready(20)
        snap = d.request("snapshot")
        had_thermal = "\tthermal.headroom_c\t" in snap
        r.check("fixture has a thermal reading at first", had_thermal)
        for sub in ("sys/class/thermal", "sys/class/hwmon"):
            shutil.rmtree(os.path.join(tree, sub), ignore_errors=True)
        time.sleep(0.6)
        snap = d.request("snapshot")
        notes = [line for line in snap.splitlines() if line.startswith("U\tthermal.headroom_c")]
        r.check("after the sensors vanish: thermal.headroom_c unavailable with a reason",
                "\tthermal.headroom_c\t" not in snap.replace("U\tthermal.headroom_c", "") and notes and
                len(notes[0].split("\t")[3]) > 5, notes[0] if notes else snap[:200])
        r.check("... and the other sources keep working", "C\tstat.total\tsystem\t" in snap and
                d.proc.poll() is None)
        status = d.request("status")
        r.check("the daemon still runs and answers", status.startswith("hwsigd\t"))
    finally:
        d.stop()
        d.close()
        shutil.rmtree(tmp)


def resctrl_switch():
    """--resctrl reads through hwsigd only when the daemon's resctrl is on;
    else hwsigctl samples by itself (this host has no resctrl: each side's
    note says which source spoke)."""
    if not r.check("root (hwsigd's BPF collectors)", root):
        return
    for daemon_on in (False, True):
        d = Daemon(["--pmu", "off", "--bpf", "none", "--interval", "0.5", "--resctrl", str(daemon_on).lower()])
        try:
            r.check(f"hwsigd (resctrl = {str(daemon_on).lower()}) ready", d.ready(60), d.log_text()[-300:])
            env = dict(os.environ, HWSIG_SOCKET=d.socket)
            for wants in (False, True):
                p = subprocess.run([HWSIGCTL, "stat", "--format", "json", "-c", "1", "-v"] +
                                   (["--resctrl"] if wants else []),
                                   env=env, capture_output=True, text=True, timeout=60)
                lines = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
                notes = [u["reason"] for obj in lines for u in obj.get("unavailable", [])
                         if u["id"] == "mem.llc_occupancy_bytes" and u.get("scope") == "system"]
                via_daemon = "snapshots from hwsigd" in p.stderr
                # Read through the daemon unless --resctrl asks for what it does not do.
                expect_daemon = daemon_on or not wants
                on = daemon_on if via_daemon else wants
                said = notes[0] if notes else ""
                what = f"daemon resctrl {daemon_on}, stat {'--resctrl' if wants else 'without it'}"
                r.check(f"{what}: {'through hwsigd' if expect_daemon else 'samples by itself'}",
                        p.returncode == 0 and via_daemon == expect_daemon,
                        f"rc {p.returncode}; {p.stderr.strip()[:200]}")
                r.check(f"{what}: the note is the {'resctrl source' if on else 'opt-in'}'s",
                        said.startswith("resctrl monitoring is off") != on and said != "", said)
        finally:
            d.stop()


one_copy()
resctrl_switch()
hist_through_daemon()
group_access()
kmod_refusal()
source_fails_mid_run()
sys.exit(r.finish())
