#!/usr/bin/env python3
"""hwsigd as a service: configuration errors, sd_notify READY only after
the collectors attached, the watchdog, SIGTERM (everything detached, exit 0
within 2 s), kill -9 and a clean restart, one daemon per socket, SIGHUP
(applied, or refused keeping the running configuration)."""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import (FIXTURES, HWSIGD, Daemon, Results, bpf_programs_of,  # noqa: E402
                            free_port, loaded_program_ids, wait_unloaded)

r = Results("test_lifecycle")
root = os.geteuid() == 0
FIXTURE = ["--root", os.path.join(FIXTURES, "debian12-host"), "--pmu", "off", "--bpf", "none"]


def bad_config():
    cases = [
        (["--interval", "0"], "interval: must be between 0.01 and 3600 seconds"),
        (["--listen", "localhost"], "listen: 'localhost' is not HOST:PORT"),
        (["--bpf", "sched,disk"], "bpf: unknown collector set 'disk'"),
        (["--history", "1"], "history: must be between 2 and 86400"),
        (["--pmu", "maybe"], "pmu: 'maybe' is not kmod, perf or off"),
        (["--socket", "relative.sock"], "socket: must be an absolute path"),
        (["--frobnicate"], "unrecognised option '--frobnicate'"),
    ]
    for args, want in cases:
        p = subprocess.run([HWSIGD, "--config", "/dev/null"] + args, capture_output=True, text=True, timeout=10)
        lines = p.stderr.strip().splitlines()
        r.check(f"hwsigd {' '.join(args)}: exit 2, one line naming the key", p.returncode == 2 and
                len(lines) == 1 and want in lines[0], f"exit {p.returncode}, stderr {p.stderr.strip()!r}")
    with tempfile.NamedTemporaryFile("w", suffix=".conf") as f:
        f.write("interval = 2\nlisten = 127.0.0.1:1\nsamples = 3\n")
        f.flush()
        p = subprocess.run([HWSIGD, "--config", f.name], capture_output=True, text=True, timeout=10)
        r.check("an unknown key in the file: exit 2 naming the file and the key",
                p.returncode == 2 and f.name in p.stderr and "'samples'" in p.stderr, p.stderr.strip())
    p = subprocess.run([HWSIGD, "--config", "/nonexistent/hwsigd.conf"], capture_output=True, text=True, timeout=10)
    r.check("a named configuration file that does not exist: exit 2", p.returncode == 2 and
            "No such file" in p.stderr, p.stderr.strip())
    with tempfile.TemporaryDirectory() as d:
        good, bad, again = (os.path.join(d, n) for n in ("good.conf", "bad.conf", "again.conf"))
        with open(good, "w") as f:
            f.write("interval = 5\nper-cpu = true\n")
        with open(bad, "w") as f:
            f.write("interval = fast\n")
        p = subprocess.run([HWSIGD, "--check-config", good, "--history", "60"], capture_output=True, text=True,
                           timeout=10)
        lines = p.stdout.splitlines()
        r.check("--check-config FILE: exit 0, every key's effective value, the command line over the file",
                p.returncode == 0 and lines[0].endswith("configuration " + good) and "interval = 5" in lines and
                "per-cpu = true" in lines and "history = 60" in lines and "listen = 127.0.0.1:9863" in lines and
                f"configuration {good} is valid" in p.stderr, p.stdout + p.stderr)
        with open(again, "w") as f:
            f.write(p.stdout)
        q = subprocess.run([HWSIGD, "--check-config", again], capture_output=True, text=True, timeout=10)
        r.check("--check-config's output is itself a valid file with the same values",
                q.returncode == 0 and q.stdout.splitlines()[1:] == lines[1:], q.stdout + q.stderr)
        p = subprocess.run([HWSIGD, "--check-config", bad], capture_output=True, text=True, timeout=10)
        r.check("--check-config of a bad file: exit 2, one line naming the file and the key, nothing on stdout",
                p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == 1 and bad in p.stderr and
                "'interval'" in p.stderr, p.stderr.strip())
        p = subprocess.run([HWSIGD, "--config", d], capture_output=True, text=True, timeout=10)
        r.check("a directory as --config: exit 2, not a run with the defaults", p.returncode == 2 and
                f"config {d}: is a directory" in p.stderr, p.stderr.strip())


def ready_after_attach():
    """READY=1 only once the BPF programs are loaded and attached."""
    if not r.check("root (BPF collectors need it)", root):
        return
    before = loaded_program_ids()
    d = Daemon(["--pmu", "off", "--bpf", "sched,block", "--interval", "0.5"])
    try:
        got = d.ready(60)
        held = bpf_programs_of(d.proc.pid)
        r.check("READY=1 arrives on the NOTIFY_SOCKET", got, d.log_text()[-300:])
        # sched: sched_switch (tp_btf); block: block_rq_complete and its
        # issue fallback, loaded and attached only when a disk needs it.
        r.check("at READY the sched and block programs are attached (held by hwsigd)", len(held) >= 3,
                f"{len(held)} program fds")
        r.check("MAINPID is hwsigd's pid", any(f"MAINPID={d.proc.pid}" in m for m in d.notify.messages))
        r.check("under journald (JOURNAL_STREAM is its stderr) log lines carry '<N>' priorities",
                "<6>hwsigd " in d.log_text(), d.log_text()[:300])
        rc, took = d.stop()
        r.check("SIGTERM: exit 0 within 2 s", rc == 0 and took < 2.0, f"exit {rc} after {took:.2f} s")
        r.check("STOPPING=1 sent", d.notify.count("STOPPING=1") == 1)
        left = wait_unloaded(held)
        r.check("after SIGTERM no program it loaded stays loaded", not left, f"left {sorted(left)}")
        r.check("the local socket file is removed", not os.path.exists(d.socket))
    finally:
        d.close()


def log_outside_journald():
    """Without journald (no JOURNAL_STREAM, or one naming another file),
    every log line starts with a UTC timestamp and its level's word; what
    cannot be measured is said at start, one line per reason."""
    work = tempfile.mkdtemp(prefix="hwsigd-log-test-")
    try:
        for env_extra, what in (({}, "no JOURNAL_STREAM"), ({"JOURNAL_STREAM": "1:1"}, "JOURNAL_STREAM of another file")):
            env = {k: v for k, v in os.environ.items() if k not in ("JOURNAL_STREAM", "NOTIFY_SOCKET")}
            env.update(env_extra)
            with open(os.path.join(work, "err"), "w+") as err:
                p = subprocess.Popen([HWSIGD, "--config", "/dev/null", "--listen", f"127.0.0.1:{free_port()}",
                                      "--socket", os.path.join(work, "s.sock"), "--dump-dir",
                                      os.path.join(work, "dumps"), "--bpf", "none", "--pmu", "off"],
                                     env=env, stdout=err, stderr=err)
                time.sleep(2.5)
                p.send_signal(signal.SIGTERM)
                rc = p.wait(timeout=10)
                err.seek(0)
                lines = err.read().splitlines()
            stamped = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (error|warning|info|debug): \S")
            r.check(f"{what}: every log line starts with a UTC timestamp and its level (exit {rc})",
                    rc == 0 and lines and all(stamped.match(l) for l in lines),
                    "; ".join(l for l in lines if not stamped.match(l))[:300] or str(lines[:2]))
            # --pmu off: one line says so, naming the metrics it keeps from,
            # at info (a choice, not a fault), with the reason's code.
            pmu = [l for l in lines if "cannot measure" in l and "cpu.ipc" in l]
            r.check(f"{what}: what cannot be measured is logged once per reason ({len(pmu)} line for cpu.ipc, "
                    "at info, code disabled)", len(pmu) == 1 and " info: cannot measure " in pmu[0] and
                    pmu[0].endswith("[disabled]"), "\n".join(l for l in lines if "cannot measure" in l)[:400])
    finally:
        shutil.rmtree(work, ignore_errors=True)


def watchdog():
    d = Daemon(FIXTURE + ["--interval", "1"], env={"WATCHDOG_USEC": "400000"})
    try:
        d.ready(20)
        time.sleep(2.0)
        n = d.notify.count("WATCHDOG=1")
        # every WATCHDOG_USEC/4 = 0.1 s: about 20 in 2 s, even with a 1 s interval
        r.check("WATCHDOG=1 every quarter of WATCHDOG_USEC, between snapshots too", n >= 10, f"{n} pings in 2 s")
    finally:
        d.stop()
        d.close()


def kill9_restart():
    """A killed daemon leaves its socket; the next one replaces it."""
    before = loaded_program_ids() if root else set()
    bpf = ["--bpf", "sched"] if root else ["--bpf", "none"]
    d1 = Daemon(["--pmu", "off", "--interval", "0.5"] + bpf)
    try:
        d1.ready(60)
        first = bpf_programs_of(d1.proc.pid)
        d1.stop(signal.SIGKILL)
        r.check("after kill -9 the socket file stays behind (stale)", os.path.exists(d1.socket))
        d2 = Daemon(["--pmu", "off", "--interval", "0.5"] + bpf, directory=d1.dir)
        try:
            r.check("a new hwsigd starts on the stale socket", d2.ready(60), d2.log_text()[-300:])
            r.check("it says it replaced the stale socket", "replacing the stale socket" in d2.log_text())
            status = d2.request("status")
            r.check("the socket answers the new daemon", status.startswith("hwsigd\t") and
                    f"\t{d2.proc.pid}\t" in status, status.strip())
            if root:
                second = bpf_programs_of(d2.proc.pid)
                gone = not wait_unloaded(first)
                now = loaded_program_ids() - before
                r.check("the killed daemon's programs are gone, one set loaded (not doubled)",
                        gone and len(second) == len(first) and now == second,
                        f"first {sorted(first)}, second {sorted(second)}, loaded since {sorted(now)}")
            d3 = Daemon(["--pmu", "off", "--bpf", "none"], directory=d1.dir, notify=False)
            rc = d3.proc.wait(20)
            r.check("a second daemon on a live socket refuses to start (exit 1, says why)",
                    rc == 1 and "another hwsigd serves it" in d3.log_text(), d3.log_text().strip())
            d3.close()
        finally:
            d2.stop()
            d2.close()
    finally:
        d1.close()


def sighup_cases():
    with tempfile.TemporaryDirectory() as tmp:
        conf = os.path.join(tmp, "hwsigd.conf")
        with open(conf, "w") as f:
            f.write("interval = 0.5\nhistory = 100\n")
        d = Daemon(FIXTURE, directory=tmp, config=conf)
        try:
            d.ready(20)
            r.check("the file's interval is used", "sampling every 0.5 s" in d.log_text(), d.log_text()[-200:])
            with open(conf, "w") as f:
                f.write("interval = 0.25\nhistory = 50\nsocket-group = adm\n")
            d.proc.send_signal(signal.SIGHUP)
            time.sleep(1.0)
            log = d.log_text()
            r.check("SIGHUP applies a new interval and history", "re-read (interval 0.25 s" in log and
                    "history 50" in log, log[-300:])
            r.check("SIGHUP says a changed socket group needs a restart", "'socket-group' changed" in log)
            r.check("RELOADING=1 then READY=1 again", d.notify.count("RELOADING=1") == 1 and
                    d.notify.count("READY=1") == 2)
            with open(conf, "w") as f:
                f.write("interval = fast\n")
            d.proc.send_signal(signal.SIGHUP)
            time.sleep(1.0)
            log = d.log_text()
            r.check("SIGHUP with a bad file keeps the running configuration and says why",
                    "<3>SIGHUP: keeping the running configuration:" in log and "interval" in log.splitlines()[-1],
                    log.splitlines()[-1])
            r.check("still running and answering after a bad reload", d.proc.poll() is None and
                    d.request("status").startswith("hwsigd\t"))
            r.check("still on the last good interval", "\t0.25\n" in d.request("status"), d.request("status"))
        finally:
            d.stop()
            d.close()


def fresh_snapshot_rate():
    """A reader asking in a loop gets the same snapshot within 10 ms,
    a fresh one after."""
    d = Daemon(FIXTURE + ["--interval", "1"])
    try:
        d.ready(20)
        a, b = d.request("snapshot"), d.request("snapshot")
        time.sleep(0.05)
        c = d.request("snapshot")
        stamp = lambda text: text.splitlines()[1]  # "time <mono> <real>"
        r.check("two snapshot requests within 10 ms share one snapshot, a later one is fresh",
                stamp(a) == stamp(b) and stamp(c) != stamp(a), f"{stamp(a)} / {stamp(b)} / {stamp(c)}")
    finally:
        d.stop()
        d.close()


def history():
    """The last N intervals, bounded, served over the local socket."""
    d = Daemon(FIXTURE + ["--interval", "0.05", "--history", "5"])
    try:
        d.ready(20)
        time.sleep(1.0)
        text = d.request("history")
        lines = text.splitlines()
        intervals = [line for line in lines if line.startswith("I\t")]
        r.check("history keeps exactly --history intervals (5) after 20", len(intervals) == 5 and
                lines[0] == "hwsig-history\t1" and lines[-1] == "end", f"{len(intervals)} intervals")
        psi = [line.split("\t") for line in lines if line.startswith("V\tpsi.cpu_some_pct\tsystem\t")]
        # PSI is the interval's share of its totals: the fixture's hold still.
        r.check("each kept interval has the fixture's PSI cpu some (0: its total holds still)", len(psi) == 5 and
                all(float(p[3]) == 0 for p in psi), str(psi[:2]))
        stamps = [int(line.split("\t")[1]) for line in intervals]
        # The schedule is absolute: a late snapshot is followed by a short
        # interval, so under load only the mean spacing is 50 ms.
        gaps = [b - a for a, b in zip(stamps, stamps[1:])]
        r.check("oldest first, 50 ms apart on average", all(g > 0 for g in gaps) and
                40e6 < sum(gaps) / len(gaps) < 200e6, str(gaps))
    finally:
        d.stop()
        d.close()


bad_config()
fresh_snapshot_rate()
history()
ready_after_attach()
log_outside_journald()
watchdog()
kill9_restart()
sighup_cases()
sys.exit(r.finish())
