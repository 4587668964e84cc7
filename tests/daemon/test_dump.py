#!/usr/bin/env python3
"""The flight recorder's dump (Documentation/dump-format.rst): a dump of the
daemon's history replays to exactly the JSON lines the daemon printed live
for the same intervals; --last bounds it; a failed write (unwritable
directory, full disk) says why, leaves nothing behind and leaves the daemon
sampling; no daemon, and damaged files, are refused with the file named."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

from daemon_harness import Daemon, Results, HWSIGCTL, FIXTURES, fixture_with_hugepages

r = Results("test_dump")
root = os.geteuid() == 0


def ctl(args, env):
    return subprocess.run([HWSIGCTL] + args, env=env, capture_output=True, text=True, timeout=60)


def live_lines(d):
    return [line for line in d.log_text().splitlines() if line.startswith("{")]


def replay_window(path, replayed, env):
    """replay --since/--until against the intervals' own JSON timestamps:
    a UTC time selects exactly the intervals ending after it (--until:
    starting before it); an offset
    from the trigger a tail or a head of the file; bad windows are refused."""
    ends = [json.loads(line)["timestamp"] for line in replayed]
    starts = [t - json.loads(line)["interval_s"] for line, t in zip(replayed, ends)]
    # Halfway between two interval ends in the middle of the file, to the
    # millisecond: clear of both by far more than the clocks' difference.
    k = len(ends) // 2
    cut = round((ends[k - 1] + ends[k]) / 2, 3)
    utc = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(int(cut))) + f"{cut - int(cut):.3f}"[1:]
    want = [line for line, t in zip(replayed, ends) if t > cut]
    for since in (utc, utc[11:], utc.replace(" ", "T") + "Z"):
        p = ctl(["replay", path, "--format", "json", "--since", since], env)
        r.check(f"replay --since '{since}': the {len(want)} intervals ending after it, as the whole file "
                "prints them", p.returncode == 0 and p.stdout.splitlines() == want,
                f"{len(p.stdout.splitlines())} lines; {p.stderr.strip()}")
    head = [line for line, t in zip(replayed, starts) if t < cut]
    p = ctl(["replay", path, "--format", "json", "--until", utc], env)
    r.check(f"replay --until '{utc}': the {len(head)} intervals starting before it",
            p.returncode == 0 and p.stdout.splitlines() == head, f"{len(p.stdout.splitlines())} lines")
    p = ctl(["replay", path, "--format", "json", "--since", "-1.2s"], env)
    tail = p.stdout.splitlines()
    r.check("replay --since -1.2s: the last two or three intervals (0.5 s each; the trigger is the last snapshot)",
            p.returncode == 0 and 2 <= len(tail) <= 3 and tail == replayed[-len(tail):], p.stderr.strip())
    p = ctl(["replay", path, "--format", "json", "--until", "-1.2s"], env)
    lead = p.stdout.splitlines()
    r.check("replay --until -1.2s: a head of the file, the last two (or three) intervals left out",
            p.returncode == 0 and len(replayed) - 3 <= len(lead) <= len(replayed) - 2 and
            lead == replayed[:len(lead)], f"{len(lead)} of {len(replayed)}; {p.stderr.strip()}")
    p = ctl(["replay", path, "--compact", "--since", "-1.2s"], env)
    r.check("replay --compact --since: the header and one line per selected interval",
            p.returncode == 0 and len(p.stdout.splitlines()) == len(tail) + 1, p.stdout[-300:])
    for args, code, said in ((["--since", "soon"], 2, "'soon' is neither an offset from the trigger"),
                             (["--since", "90"], 2, "'90' is neither"),
                             (["--since", "+1s", "--until", "-1s"], 2, "--since must come before --until"),
                             (["--since", "+1h"], 1, "no interval of " + path + " lies in that window: it covers"),
                             (["--ticks", "--since", "-1s"], 2, "not with --info or --ticks")):
        p = ctl(["replay", path] + args, env)
        r.check(f"replay {' '.join(args)}: exit {code}, says '{said}'",
                p.returncode == code and said in p.stderr and not p.stdout, p.stderr.strip())


def golden_and_failures():
    if not r.check("root (BPF collectors, a tmpfs for the full disk)", root):
        return
    work = tempfile.mkdtemp(prefix="hwsig-dump-test-")
    d = Daemon(["--pmu", "perf", "--interval", "0.5", "--print-intervals"])
    try:
        r.check("hwsigd ready", d.ready(60), d.log_text()[-300:])
        time.sleep(4)
        env = dict(os.environ, HWSIG_SOCKET=d.socket)
        path = os.path.join(work, "all.hwsd")
        p = ctl(["dump", "-o", path], env)
        r.check("dump of the whole history: exit 0, says what it wrote", p.returncode == 0 and
                f"{path} written" in p.stderr, p.stderr.strip())
        live = live_lines(d)
        p = ctl(["replay", path, "--format", "json"], env)
        replayed = p.stdout.splitlines()
        # The live lines printed before the dump are the dump's intervals
        # (the daemon may have printed one more since).
        same = [line for line in replayed if line in live]
        r.check("replay --format json: every line identical to one hwsigd printed live (>= 6 intervals)",
                p.returncode == 0 and len(replayed) >= 6 and len(same) == len(replayed),
                f"{len(same)} of {len(replayed)} identical, {len(live)} live")
        ids = {m["id"] for line in replayed for m in json.loads(line)["metrics"]}
        r.check("... with BPF histogram percentiles and rates in them",
                {"sched.runq_wait_p50_us", "sched.involuntary_ctxsw_ps"} <= ids, str(sorted(ids))[:200])
        p = ctl(["replay", path], env)
        r.check("replay as tables: one per interval", p.returncode == 0 and
                p.stdout.count("interval ") >= len(replayed), p.stderr.strip())
        p = ctl(["replay", path, "--info"], env)
        facts = dict(line.split("\t", 1) for line in p.stdout.splitlines() if "\t" in line)
        r.check("replay --info: version, trigger and host facts", facts.get("format") == "2" and
                facts.get("trigger") == "request" and facts.get("kernel", "").startswith(os.uname().release) and
                facts.get("catalog_version") == "3" and facts.get("interval_s") == "0.5", str(facts))
        # The request's snapshot: the newest when the dump was asked, on
        # the monotonic clock (this process's is the same clock).
        trig = int(facts.get("triggered_mono_ns", "0"))
        r.check("replay --info: triggered_mono_ns within the last 2 s of this run's monotonic clock",
                0 < time.monotonic_ns() - trig < 2_000_000_000, f"{trig} vs {time.monotonic_ns()}")
        plan = [line.split("\t") for line in p.stdout.splitlines() if line.startswith("pmu_plan\t")]
        cycles = [f for f in plan if len(f) == 5 and f[1] == "pmu.cycles"]
        # This host's answer for cycles, whichever it is: opened or refused
        # with an errno, or unavailable with a reason.
        r.check("replay --info: the PMU plan says what happened to pmu.cycles",
                len(cycles) == 1 and (cycles[0][4] == "planned, opens" or
                                      cycles[0][4].startswith("planned, refused E") or
                                      cycles[0][4].startswith("unavailable: ")), str(plan)[:300])
        if not os.path.exists("/sys/module/hwsig"):
            r.check("replay --info: no module here, the dump says so in one line",
                    facts.get("rings") == "none: hwsig.ko is not loaded: no ring records", facts.get("rings"))
            p = ctl(["replay", path, "--ticks"], env)
            r.check("replay --ticks of a dump without rings: exit 1, names the file and why",
                    p.returncode == 1 and p.stderr.strip() == f"hwsigctl replay: {path} holds no ring records for "
                    "--ticks: hwsig.ko is not loaded: no ring records", p.stderr.strip())
        p = ctl(["replay", path, "--cpu", "0"], env)
        r.check("replay --cpu without --ticks: usage error", p.returncode == 2 and "--cpu is for --ticks" in p.stderr,
                p.stderr.strip())

        replay_window(path, replayed, env)

        short = os.path.join(work, "last.hwsd")
        p = ctl(["dump", "--last", "1s", "-o", short], env)
        q = ctl(["replay", short, "--format", "json"], env)
        n = len(q.stdout.splitlines())
        r.check("dump --last 1s at 0.5 s: two or three intervals", p.returncode == 0 and 2 <= n <= 3,
                f"{n} intervals; {p.stderr.strip()} {q.stderr.strip()}")

        p = ctl(["replay", short, "--compact"], env)
        head = "time     steal rq-p99 psi-c psi-m psi-i      dram    iops io-p99 headr verdict"
        lines = p.stdout.splitlines()
        r.check("replay --compact: the header, then one line per interval; notes on stderr",
                p.returncode == 0 and lines[:1] == [head] and len(lines) == n + 1 and
                all(l[2] == ":" and l[5] == ":" for l in lines[1:]) and "Unavailable" not in p.stdout,
                p.stdout[-400:] + p.stderr[-200:])
        p = ctl(["replay", short, "--compact", "--format", "json"], env)
        r.check("replay --compact --format json: usage error", p.returncode == 2 and
                "--compact is a table form" in p.stderr, p.stderr.strip())

        p = ctl(["dump", "--last", "soon", "-o", short], env)
        r.check("dump --last soon: usage error (exit 2) naming the value", p.returncode == 2 and
                "'soon' is not a duration" in p.stderr, p.stderr.strip())
        p = ctl(["dump", "--last", "99999999h", "-o", short], env)
        r.check("dump --last 99999999h: refused (exit 2), not wrapped into a short window",
                p.returncode == 2 and "'99999999h' is longer than any clock can count" in p.stderr,
                p.stderr.strip())
        # A client asking the daemon itself for more than 2^64 ns gets all
        # of the history, as without a span, not a wrapped one.
        counts = {}
        for ask in ("dump", "dump 1e12"):
            path_ask = os.path.join(work, ask.replace(" ", "_") + ".hwsd")
            with open(path_ask, "wb") as f:
                f.write(d.request(ask, timeout=30, raw=True))
            q = ctl(["replay", path_ask, "--format", "json"], env)
            counts[ask] = len(q.stdout.splitlines()) if q.returncode == 0 else -1
        r.check("dump 1e12 over the socket: the whole history, as 'dump' (not one snapshot)",
                counts["dump 1e12"] >= 2 and abs(counts["dump 1e12"] - counts["dump"]) <= 1, str(counts))

        p = ctl(["dump", "-o", "/proc/hwsig.hwsd"], env)
        r.check("an unwritable place: exit 1 with the reason", p.returncode == 1 and
                "/proc/hwsig.hwsd" in p.stderr, p.stderr.strip())

        full = os.path.join(work, "full")
        os.mkdir(full)
        if r.check("a 16 KiB tmpfs for the full disk", subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", full]).returncode == 0):
            try:
                with open(os.path.join(full, "filler"), "wb") as f:
                    try:
                        f.write(b"x" * 65536)
                    except OSError:
                        pass
                p = ctl(["dump", "-o", os.path.join(full, "d.hwsd")], env)
                left = sorted(os.listdir(full))
                r.check("a full disk: exit 1, 'No space left on device', nothing left behind",
                        p.returncode == 1 and "No space left on device" in p.stderr and left == ["filler"],
                        f"{p.stderr.strip()}; left {left}")
            finally:
                subprocess.run(["umount", full])
        before = d.request("status")
        time.sleep(1.2)
        n1 = len(live_lines(d))
        time.sleep(1.1)
        r.check("the daemon keeps sampling after the failed dumps", d.proc.poll() is None and
                len(live_lines(d)) >= n1 + 2 and before.startswith("hwsigd\t"), f"{n1} -> {len(live_lines(d))}")
    finally:
        d.stop()
        d.close()


def encode_truncated():
    """A real dump (from the fixture host) cut short by a quarter."""
    d = Daemon(["--root", os.path.join(FIXTURES, "debian12-host"),
                "--pmu", "off", "--bpf", "none", "--interval", "0.05"])
    try:
        d.ready(20)
        time.sleep(0.5)
        env = dict(os.environ, HWSIG_SOCKET=d.socket)
        path = os.path.join(tempfile.mkdtemp(prefix="hwsig-dump-test-"), "whole.hwsd")
        ctl(["dump", "-o", path], env)
        data = open(path, "rb").read()
        return data[: len(data) * 3 // 4]
    finally:
        d.stop()
        d.close()


def no_daemon_and_bad_files():
    work = tempfile.mkdtemp(prefix="hwsig-dump-test-")
    env = dict(os.environ, HWSIG_SOCKET=os.path.join(work, "nobody.sock"))
    p = ctl(["dump", "-o", os.path.join(work, "x.hwsd")], env)
    if not os.path.exists("/sys/module/hwsig"):
        # Without a daemon the rings alone would do (tests/vm/case-dump-rings);
        # without the module either, there is nothing to dump.
        r.check("dump without hwsigd and without hwsig.ko: exit 1, says both, no file", p.returncode == 1 and
                "nothing to dump: no hwsigd answers" in p.stderr and "hwsig.ko is not loaded" in p.stderr and
                not os.path.exists(os.path.join(work, "x.hwsd")), p.stderr.strip())
    def zstd_of(data, piped=False):
        if piped:  # from a pipe: a frame without its content size (hwsig writes those too)
            return subprocess.run(["zstd", "-c", "-q"], input=data, capture_output=True).stdout
        src = os.path.join(work, "plain")
        with open(src, "wb") as f:
            f.write(data)
        return subprocess.run(["zstd", "-c", "-q", src], capture_output=True).stdout

    cases = {
        "empty": (b"", "empty file"),
        "text": (b"hello\n", "no zstd frame"),
        "gzip": (subprocess.run(["gzip", "-c"], input=b"hwsig-dump\t1\nend\n", capture_output=True).stdout,
                 "no zstd frame"),
        "piped-zstd": (zstd_of(b"{}\n", piped=True), "a zstd file, but not hwsig's"),
        "other-zstd": (zstd_of(b"{}\n"), "a zstd file, but not hwsig's"),
        "future": (zstd_of(b"hwsig-dump\t7\nend\n"), "newer than this hwsigctl reads"),
        "truncated": (encode_truncated(), "truncated"),
    }
    for name, (data, says) in cases.items():
        path = os.path.join(work, name + ".hwsd")
        with open(path, "wb") as f:
            f.write(data)
        p = ctl(["replay", path], env)
        r.check(f"replay of the {name} file: exit 1, one line naming the file and '{says}'",
                p.returncode == 1 and p.stderr.count("\n") == 1 and path in p.stderr and says in p.stderr,
                p.stderr.strip())
    p = ctl(["replay", os.path.join(work, "missing.hwsd")], env)
    r.check("replay of a missing file: exit 1, No such file", p.returncode == 1 and
            "No such file or directory" in p.stderr, p.stderr.strip())
    p = ctl(["replay"], env)
    r.check("replay without a file: usage error (exit 2)", p.returncode == 2, p.stderr.strip())


def metric(body, name):
    for line in body.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return None


def sigusr1():
    """SIGUSR1 writes a dump into dump-dir; retention keeps dump-keep."""
    dumps = tempfile.mkdtemp(prefix="hwsig-dump-dir-")
    d = Daemon(["--root", os.path.join(FIXTURES, "debian12-host"), "--pmu", "off", "--bpf", "none",
                "--interval", "0.05", "--dump-dir", dumps + "/sub", "--dump-keep", "2"])
    try:
        r.check("hwsigd ready (fixture host)", d.ready(20), d.log_text()[-300:])
        time.sleep(0.5)
        for _ in range(3):
            d.proc.send_signal(signal.SIGUSR1)
            time.sleep(0.6)
        files = sorted(os.listdir(dumps + "/sub"))
        body = d.scrape()
        r.check("three SIGUSR1: dump-dir created, dump-keep 2 newest kept, hwsig_dumps_total 3",
                len(files) == 2 and all(f.endswith("-SIGUSR1.hwsd") for f in files) and
                metric(body, 'hwsig_dumps_total{trigger="SIGUSR1"}') == 3 and
                "dump retention: deleted" in d.log_text(), f"{files}; {d.log_text()[-300:]}")
        p = ctl(["replay", os.path.join(dumps, "sub", files[-1]), "--info"], os.environ)
        r.check("a SIGUSR1 dump says its trigger and replays", p.returncode == 0 and
                "trigger\tSIGUSR1" in p.stdout, p.stderr.strip())
        info = dict(line.split("\t", 1) for line in p.stdout.splitlines() if "\t" in line)
        r.check("a SIGUSR1 dump: triggered_mono_ns is its newest snapshot's time",
                info.get("triggered_mono_ns") is not None and
                info.get("triggered_mono_ns") == info.get("last_snapshot_mono_ns"), str(info)[:300])
    finally:
        d.stop()
        d.close()
    d = Daemon(["--root", os.path.join(FIXTURES, "debian12-host"), "--pmu", "off", "--bpf", "none",
                "--interval", "0.05", "--dump-dir", "/proc/hwsig-dumps"])
    try:
        r.check("hwsigd ready (dump-dir unwritable)", d.ready(20), d.log_text()[-300:])
        time.sleep(0.5)  # /metrics answers from the first interval on
        before = metric(d.scrape(), "hwsig_snapshots_total")
        d.proc.send_signal(signal.SIGUSR1)
        time.sleep(1.0)
        body = d.scrape()
        r.check("SIGUSR1 into an unwritable dump-dir: logged with the reason, counted, sampling goes on",
                metric(body, 'hwsig_dump_failures_total{trigger="SIGUSR1"}') == 1 and
                metric(body, 'hwsig_dumps_total{trigger="SIGUSR1"}') == 0 and
                "dump failed, sampling goes on" in d.log_text() and d.proc.poll() is None and
                metric(body, "hwsig_snapshots_total") > before + 5, d.log_text()[-300:])
    finally:
        d.stop()
        d.close()


def rules():
    """dump-rule: the fixture's huge page pool (3 of 4 pages used, 0.75)
    passes '> 0.5 for 3'; its PSI (static totals: 0 %) passes '>= 0'."""
    dumps = tempfile.mkdtemp(prefix="hwsig-dump-dir-")
    root = fixture_with_hugepages(4, 1)
    d = Daemon(["--root", root, "--pmu", "off", "--bpf", "none",
                "--interval", "0.05", "--dump-dir", dumps, "--dump-gap", "600",
                "--dump-rule", "mem.hugepage_utilization{hugepages:2048kB} > 0.5 for 3", "--dump-rule", "psi.io_some_pct{system} >= 0",
                "--dump-rule", "mem.hugepage_utilization{hugepages:2048kB} > 0.8"])
    try:
        r.check("hwsigd ready (three rules)", d.ready(20), d.log_text()[-300:])
        time.sleep(1.5)
        body = d.scrape()
        files = os.listdir(dumps)
        log = d.log_text()
        r.check("the rules that hold fire once each (hysteresis); one dump, the second within dump-gap is skipped; "
                "the rule that never holds does not fire",
                metric(body, 'hwsig_dumps_total{trigger="rule"}') == 1 and
                metric(body, 'hwsig_dumps_skipped_total{trigger="rule"}') == 1 and len(files) == 1 and
                files[0].endswith("-rule.hwsd") and log.count("fired") == 2 and
                "dump rule 'mem.hugepage_utilization{hugepages:2048kB} > 0.8' fired" not in log, f"{files}; {log[-500:]}")
        if files:
            p = ctl(["replay", os.path.join(dumps, files[0]), "--info"], os.environ)
            info = dict(line.split("\t", 1) for line in p.stdout.splitlines() if "\t" in line)
            # The history is copied right after the snapshot that fired the
            # rule: that snapshot is the dump's newest.
            r.check("a rule's dump: triggered_mono_ns is the snapshot that fired it (the dump's newest)",
                    p.returncode == 0 and info.get("trigger") == "rule" and
                    info.get("triggered_mono_ns") is not None and
                    info.get("triggered_mono_ns") == info.get("last_snapshot_mono_ns"), str(info)[:300])
    finally:
        d.stop()
        d.close()
        shutil.rmtree(os.path.dirname(root), ignore_errors=True)
    p = subprocess.run([os.path.join(os.path.dirname(HWSIGCTL), "hwsigd"), "--config", "/dev/null",
                        "--dump-rule", "psi.cpu_some_pct >> 20"], capture_output=True, text=True, timeout=30)
    r.check("a rule that does not parse: exit 2, the rule and the column named",
            p.returncode == 2 and p.stderr.strip() ==
            "hwsigd: dump-rule 'psi.cpu_some_pct >> 20': column 19: expected a number", p.stderr.strip())


golden_and_failures()
sigusr1()
rules()
no_daemon_and_bad_files()
raise SystemExit(r.finish())
