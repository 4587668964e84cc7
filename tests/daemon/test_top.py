#!/usr/bin/env python3
"""hwsigctl top against ground truth and as a person uses it. Fake guests
(processes named like QEMU, -name guest=NAME, one thread 'CPU 0/KVM' that
spins pinned to one CPU):
  vm aggressor    victim and an aggressor VM spinning on the same CPU, 20
                  rounds: the aggressor is the victim's top culprit, and its
                  verdict names it, in at least 19; the victim's vCPU wait
                  within 10% of its thread's /proc schedstat over the run
  host aggressor  a plain process spinning on the victim's CPU: named as
                  host processes, never as a VM, in at least 19 of 20
  quiet           the victim alone: no verdict on any line in 20 rounds
  io aggressor    fio run as a VM (its binary named like QEMU, -name
                  guest=NAME, --thread) reading the victim's disk (a loop
                  device) while the victim VM reads it too: the aggressor's
                  share of the disk's requests, from stat's vm:NAME/dev:DISK
                  rates, within 2% of fio's own count's share
  daemon          with hwsigd running, top reads it (loads no BPF program
                  of its own) and still names the aggressor, and the CPU
                  of the waits behind it
  tmux            the interactive view at 160 columns: the table, < > and r
                  move and reverse the sort, q quits with exit 0 and the
                  terminal's modes given back
  many VMs        30 idle fake guests of 8 vCPUs (bench/fake_qemu): in a pane
                  of 20 lines exactly as many VM rows as fit, in sort order,
                  and a line counting the others; '/' filters, Esc clears;
                  piped, --filter shows exactly the matching guests and
                  --rows N the first N and how many more
Needs root (BPF), tmux, fio and bench/fake_qemu (tests/daemon/run builds it)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import BUILD, HWSIGCTL, Daemon, Results, bpf_programs_of  # noqa: E402

r = Results("test_top")
CPU = (os.cpu_count() or 1) - 1
ROUNDS = 20

FAKE_GUEST = ("import ctypes, os, sys, threading, time\n"
              "libc = ctypes.CDLL(None)\n"
              "libc.prctl(15, b'qemu-system-x86', 0, 0, 0)\n"
              "cpu = int(sys.argv[1])\n"
              "named = threading.Barrier(2)\n"
              "tid = []\n"
              "def vcpu():\n"
              "    libc.prctl(15, b'CPU 0/KVM', 0, 0, 0)\n"
              "    os.sched_setaffinity(0, {cpu})\n"
              "    tid.append(threading.get_native_id())\n"
              "    named.wait()\n"
              "    while True:\n"
              "        pass\n"
              "threading.Thread(target=vcpu, daemon=True).start()\n"
              "named.wait()\n"
              "print(tid[0], flush=True)\n"
              "time.sleep(600)\n")

HOST_SPINNER = ("import ctypes, os\n"
                "ctypes.CDLL(None).prctl(15, b'batch-job', 0, 0, 0)\n"
                "os.sched_setaffinity(0, {%d})\n"
                "while True:\n"
                "    pass\n")


class Guest:
    def __init__(self, name):
        self.name = name
        self.proc = subprocess.Popen([sys.executable, "-c", FAKE_GUEST, str(CPU), "-name", f"guest={name}"],
                                     stdout=subprocess.PIPE, text=True)
        self.tid = int(self.proc.stdout.readline())

    def run_delay_ns(self):
        with open(f"/proc/{self.proc.pid}/task/{self.tid}/schedstat") as f:
            return int(f.read().split()[1])

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def host_spinner():
    return subprocess.Popen([sys.executable, "-c", HOST_SPINNER % CPU])


def top_json(rounds, env=None, extra=()):
    """(JSON objects of `rounds` refreshes at 0.5 s, stderr)."""
    p = subprocess.run([HWSIGCTL, "top", "-i", "0.5", "-c", str(rounds), "--format", "json", *extra],
                       capture_output=True, text=True, timeout=120, env=env)
    r.check("top exits 0", p.returncode == 0, p.stderr[-300:])
    out = []
    for line in p.stdout.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            r.check("every line of --format json is JSON", False, line[:200])
    return out, p.stderr


def row(obj, name):
    for x in obj["rows"]:
        if x["name"] == name:
            return x
    return None


def vm_aggressor():
    victim, aggressor = Guest("victim"), Guest("batch7")
    try:
        time.sleep(0.5)
        t0, d0 = time.monotonic(), victim.run_delay_ns()
        rounds, _ = top_json(ROUNDS, extra=["--no-daemon"])
        t1, d1 = time.monotonic(), victim.run_delay_ns()
    finally:
        victim.stop()
        aggressor.stop()
    r.check(f"vm aggressor: {ROUNDS} rounds", len(rounds) == ROUNDS, str(len(rounds)))
    named = sum(1 for o in rounds if (row(o, "victim") or {}).get("culprit") == "vm:batch7")
    said = sum(1 for o in rounds if "waits behind vm:batch7" in ((row(o, "victim") or {}).get("verdict") or ""))
    r.check("vm aggressor: the aggressor is the victim's top culprit in >= 19 of 20 rounds", named >= 19,
            f"{named} of {len(rounds)}")
    r.check("vm aggressor: the victim's verdict names it in >= 19 of 20 rounds", said >= 19,
            f"{said} of {len(rounds)}")
    # Both vCPU threads are pinned to CPU: every wait behind batch7 was
    # there, and the verdict says so.
    where = sum(1 for o in rounds
                if f"waits behind vm:batch7 on CPU {CPU} (" in ((row(o, "victim") or {}).get("verdict") or "")
                and (row(o, "victim") or {}).get("on_cpus") == str(CPU))
    r.check(f"vm aggressor: the verdict says on CPU {CPU}, where it waited behind batch7", where == said,
            f"{where} of {said}: {[(row(o, 'victim') or {}).get('verdict') for o in rounds[:2]]}")
    waits = [row(o, "victim")["vcpu_wait_ratio"] for o in rounds
             if row(o, "victim") and row(o, "victim")["vcpu_wait_ratio"] is not None]
    truth = (d1 - d0) / ((t1 - t0) * 1e9)
    mean = sum(waits) / len(waits) if waits else -1
    r.check("vm aggressor: the victim's vCPU wait within 10% of its schedstat", abs(mean - truth) <= 0.10 * truth,
            f"top {mean:.4f}, schedstat {truth:.4f} over {len(waits)} rounds")
    share = [row(o, "victim")["culprit_share"] or 0 for o in rounds if row(o, "victim")]
    r.check("vm aggressor: the aggressor's share of the victim's wait >= 90% on average",
            sum(share) / max(1, len(share)) >= 0.9, str(share[:5]))


def host_aggressor():
    victim, spinner = Guest("victim"), host_spinner()
    try:
        time.sleep(0.5)
        rounds, _ = top_json(ROUNDS, extra=["--no-daemon"])
    finally:
        victim.stop()
        spinner.kill()
        spinner.wait()
    culprits = [(row(o, "victim") or {}).get("culprit") for o in rounds]
    r.check("host aggressor: named as host processes in >= 19 of 20 rounds",
            culprits.count("host:other") >= 19, str(culprits))
    r.check("host aggressor: never named as a VM", not any(c and c.startswith("vm:") for c in culprits),
            str(culprits))
    said = sum(1 for o in rounds if "waits behind host processes" in ((row(o, "victim") or {}).get("verdict") or ""))
    r.check("host aggressor: the verdict says host processes in >= 19 of 20 rounds", said >= 19, str(said))


def quiet():
    victim = Guest("victim")
    try:
        time.sleep(0.5)
        rounds, _ = top_json(ROUNDS, extra=["--no-daemon"])
    finally:
        victim.stop()
    verdicts = [(x["name"], x["verdict"]) for o in rounds for x in o["rows"] if x["verdict"]]
    r.check("quiet: 20 rounds, the victim in each", len(rounds) == ROUNDS and all(row(o, "victim") for o in rounds))
    r.check("quiet: no verdict on any line in 20 rounds", not verdicts, str(verdicts[:3]))


VICTIM_READER = ("import ctypes, mmap, os, random, sys, time\n"
                 "libc = ctypes.CDLL(None)\n"
                 "libc.prctl(15, b'qemu-system-x86', 0, 0, 0)\n"
                 "fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)\n"
                 "buf = mmap.mmap(-1, 4096)\n"
                 "size = os.lseek(fd, 0, os.SEEK_END) // 4096\n"
                 "print('ready', flush=True)\n"
                 "sys.stdin.readline()\n"
                 "n = 0\n"
                 "end = time.monotonic() + float(sys.argv[2])\n"
                 "while time.monotonic() < end:\n"
                 "    os.preadv(fd, [buf], random.randrange(size) * 4096)\n"
                 "    n += 1\n"
                 "print(n, flush=True)\n"
                 "sys.stdin.readline()\n")


def io_aggressor():
    work = tempfile.mkdtemp(prefix="hwsig-top-io-")
    image = os.path.join(work, "disk.img")
    with open(image, "wb") as f:
        f.truncate(256 << 20)
    dev = subprocess.run(["losetup", "-f", "--show", image], capture_output=True, text=True).stdout.strip()
    if not r.check("io aggressor: a loop device", dev.startswith("/dev/loop"), dev):
        return
    disk = os.path.basename(dev)
    qemu_fio = os.path.join(work, "qemu-system-x86_64")
    os.symlink(shutil.which("fio"), qemu_fio)
    victim = subprocess.Popen([sys.executable, "-c", VICTIM_READER, dev, "6", "-name", "guest=store"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    stat = fio = None
    try:
        victim.stdout.readline()
        # Both VMs exist before stat's first VM scan; fio starts its I/O
        # 3 s later, after stat's first interval, and the run covers it.
        fio = subprocess.Popen([qemu_fio, "-name", "guest=db2", "--thread", f"--filename={dev}",
                                "--rw=randread", "--bs=4k", "--direct=1", "--ioengine=psync", "--time_based",
                                "--startdelay=3", "--runtime=6", "--output-format=json"],
                               stdout=subprocess.PIPE, text=True)
        time.sleep(0.5)
        # To a file: a pipe nobody reads while fio runs would fill and
        # stall stat.
        stat_out = open(os.path.join(work, "stat.json"), "w+")
        stat = subprocess.Popen([HWSIGCTL, "stat", "--no-daemon", "-i", "0.5", "-d", "12", "--format", "json"],
                                stdout=stat_out, stderr=subprocess.PIPE, text=True)
        time.sleep(2.5)
        victim.stdin.write("go\n")
        victim.stdin.flush()
        fio_out, _ = fio.communicate(timeout=60)
        victim_ios = int(victim.stdout.readline())
        _, err = stat.communicate(timeout=60)
        stat_out.seek(0)
        out = stat_out.read()
        stat_out.close()
    finally:
        for p in (victim, fio, stat):
            if p and p.poll() is None:
                p.kill()
                p.wait()
        subprocess.run(["losetup", "-d", dev])
        shutil.rmtree(work, ignore_errors=True)
    fio_ios = json.loads(fio_out)["jobs"][0]["read"]["total_ios"]
    counted = {"vm:db2": 0.0, "vm:store": 0.0, "disk": 0.0}
    for line in out.splitlines():
        obj = json.loads(line)
        if obj.get("summary"):
            continue
        for m in obj["metrics"]:
            if m["id"] != "io.iops_read":
                continue
            if m["scope"] == f"vm:db2/dev:{disk}":
                counted["vm:db2"] += m["value"] * obj["interval_s"]
            elif m["scope"] == f"vm:store/dev:{disk}":
                counted["vm:store"] += m["value"] * obj["interval_s"]
            elif m["scope"] == f"dev:{disk}":
                counted["disk"] += m["value"] * obj["interval_s"]
    r.check("io aggressor: stat ran", stat.returncode == 0, err[-300:])
    r.check("io aggressor: the aggressor VM's requests within 2% of fio's count",
            abs(counted["vm:db2"] - fio_ios) <= 0.02 * fio_ios, f"stat {counted['vm:db2']:.0f}, fio {fio_ios}")
    r.check("io aggressor: the victim VM's within 2% of its own count",
            abs(counted["vm:store"] - victim_ios) <= 0.02 * victim_ios,
            f"stat {counted['vm:store']:.0f}, reader {victim_ios}")
    truth = fio_ios / (fio_ios + victim_ios)
    share = counted["vm:db2"] / counted["disk"] if counted["disk"] else -1
    r.check("io aggressor: its share of the disk's requests within 2% of fio's", abs(share - truth) <= 0.02,
            f"stat {share:.4f}, fio {truth:.4f} ({fio_ios} + {victim_ios} requests)")


def daemon():
    victim, aggressor = Guest("victim"), Guest("batch7")
    d = None
    try:
        d = Daemon(["--pmu", "perf", "--interval", "0.5"])
        if not r.check("daemon: hwsigd ready", d.ready(60), d.log_text()[-300:]):
            return
        env = dict(os.environ, HWSIG_SOCKET=d.socket)
        p = subprocess.Popen([HWSIGCTL, "top", "-i", "0.5", "-c", "8", "--format", "json"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(2.5)
        own = bpf_programs_of(p.pid)
        out, err = p.communicate(timeout=60)
        r.check("daemon: top exits 0", p.returncode == 0, err[-300:])
        r.check("daemon: top loads no BPF program of its own", not own, str(own))
        rounds = [json.loads(line) for line in out.splitlines() if line.strip()]
        named = sum(1 for o in rounds if (row(o, "victim") or {}).get("culprit") == "vm:batch7")
        r.check("daemon: the aggressor named from hwsigd's collectors", named >= len(rounds) - 1 and rounds,
                f"{named} of {len(rounds)}")
        # Where the waits were comes in hwsigd's snapshots (wire version 6).
        placed = sum(1 for o in rounds if (row(o, "victim") or {}).get("culprit") == "vm:batch7"
                     and (row(o, "victim") or {}).get("on_cpus") == str(CPU))
        r.check(f"daemon: the waits behind it placed on CPU {CPU} from hwsigd's snapshots", placed == named,
                f"{placed} of {named}: {[(row(o, 'victim') or {}).get('on_cpus') for o in rounds[:3]]}")
    finally:
        if d:
            d.stop()
            d.close()
        victim.stop()
        aggressor.stop()


class Tmux:
    def __init__(self, cmd, lines=30):
        self.sock = f"hwsig-top-{os.getpid()}"
        subprocess.run(["tmux", "-L", self.sock, "-f", "/dev/null", "new-session", "-d", "-x", "160", "-y", str(lines),
                        "-e", "TERM=xterm", "bash", "--norc", "-c", cmd], check=True)

    def capture(self):
        return subprocess.run(["tmux", "-L", self.sock, "capture-pane", "-p"], capture_output=True, text=True).stdout

    def keys(self, *keys):
        subprocess.run(["tmux", "-L", self.sock, "send-keys", *keys], check=True)

    def wait_for(self, text, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.capture()
            if text in screen:
                return screen
            time.sleep(0.2)
        return None

    def close(self):
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True)


def interactive():
    work = tempfile.mkdtemp(prefix="hwsig-top-")
    victim, aggressor = Guest("victim"), Guest("batch7")
    cmd = (f"stty -g > {work}/before; {HWSIGCTL} top --no-daemon -i 0.5; echo \"[exit $?]\"; "
           f"stty -g > {work}/after; sleep 600")
    tm = Tmux(cmd)
    try:
        screen = tm.wait_for("waits behind vm:batch7")
        r.check("tmux: the table is on the screen with the victim's verdict", screen is not None, tm.capture())
        screen = screen or ""
        lines = screen.splitlines()
        header = next((l for l in lines if l.startswith("VM ")), "")
        r.check("tmux: the header marks the sort column (WAIT%v)", "WAIT%v" in header, header)
        r.check("tmux: the host line first", len(lines) > 2 and lines[lines.index(header) + 1].startswith("host ")
                if header in lines else False, screen)
        r.check("tmux: the keys are said at the bottom", "keys: < > sort column  r reverse  / filter  q quit" in screen)
        r.check("tmux: nothing wider than the terminal", all(len(l) <= 160 for l in lines))
        tm.keys(">")
        screen = tm.wait_for("RUNQ99v", 5)
        r.check("tmux: '>' moves the sort to the next column", screen is not None and "sort RUNQ99" in screen,
                tm.capture())
        tm.keys("r")
        screen = tm.wait_for("RUNQ99^", 5)
        r.check("tmux: 'r' reverses it", screen is not None and "sort RUNQ99 ascending" in screen, tm.capture())
        tm.keys("<", "<")
        screen = tm.wait_for("VCPU^", 5) or tm.wait_for("CPUS^", 1)
        r.check("tmux: '<' moves back", screen is not None and "CPUS^" in screen, tm.capture())
        tm.keys("q")
        screen = tm.wait_for("[exit 0]", 10)
        r.check("tmux: 'q' quits with exit 0", screen is not None, tm.capture())
        time.sleep(0.5)
        before = open(f"{work}/before").read() if os.path.exists(f"{work}/before") else "?"
        after = open(f"{work}/after").read() if os.path.exists(f"{work}/after") else "!"
        r.check("tmux: the terminal's modes are given back", before == after, f"{before.strip()} / {after.strip()}")
    finally:
        tm.close()
        victim.stop()
        aggressor.stop()
        shutil.rmtree(work, ignore_errors=True)


FAKE_QEMU = os.path.join(BUILD, "bench", "fake_qemu")
MANY = 30
PANE_LINES = 20


def vm_rows(screen, prefix="big"):
    return [line.split()[0] for line in screen.splitlines() if line.startswith(prefix)]


def wait_rows(tm, want, timeout=5):
    """The screen once its VM rows are want, or as it is at the timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        screen = tm.capture()
        if vm_rows(screen) == want:
            return screen
        time.sleep(0.2)
    return tm.capture()


def many_vms():
    names = [f"big{i:02d}" for i in range(MANY)]
    guests = []
    tm = None
    try:
        for name in names:
            guests.append(subprocess.Popen(["qemu-system-x86_64", "-name", f"guest={name}", "-smp", "8"],
                                           executable=FAKE_QEMU, stdin=subprocess.DEVNULL,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(0.5)
        # Piped: every guest unless told; --filter and --rows.
        base = [HWSIGCTL, "top", "--no-daemon", "--no-bpf", "-i", "0.2", "-c", "1", "-s", "VM", "--asc"]
        p = subprocess.run(base + ["--filter", "big0[0-4],big2*"], capture_output=True, text=True, timeout=60)
        want = [n for n in names if n[:4] == "big0" and n[4] in "01234" or n.startswith("big2")]
        r.check("many VMs: piped, --filter shows exactly the matching guests, sorted",
                p.returncode == 0 and vm_rows(p.stdout) == want, p.stdout + p.stderr)
        r.check("many VMs: the title counts the matches", f"{len(want)} of {MANY} VMs match 'big0[0-4],big2*'"
                in p.stdout, p.stdout.splitlines()[0] if p.stdout else p.stderr)
        p = subprocess.run(base + ["--rows", "3"], capture_output=True, text=True, timeout=60)
        r.check("many VMs: piped, --rows 3 shows the first 3 and counts the others",
                vm_rows(p.stdout) == names[:3] and f"{MANY - 3} more VMs not shown" in p.stdout, p.stdout)
        p = subprocess.run(base + ["--filter", "nothing*"], capture_output=True, text=True, timeout=60)
        r.check("many VMs: a filter matching nothing shows the host and says so",
                p.returncode == 0 and "\nhost " in p.stdout and "no VM matches 'nothing*'" in p.stdout
                and not vm_rows(p.stdout), p.stdout + p.stderr)
        p = subprocess.run(base + ["--filter", "big1*", "--rows", "2", "--format", "json"],
                           capture_output=True, text=True, timeout=60)
        rows = [x["name"] for x in json.loads(p.stdout.splitlines()[0])["rows"]] if p.stdout else []
        r.check("many VMs: JSON takes the filter, not the row limit",
                rows == ["host"] + [n for n in names if n.startswith("big1")], str(rows))

        # On a terminal of PANE_LINES lines: title, header, host, the VMs,
        # the count of the others, the keys, and the last line left free.
        tm = Tmux(f"{HWSIGCTL} top --no-daemon --no-bpf -i 0.5 -s VM --asc; sleep 600", lines=PANE_LINES)
        fit = PANE_LINES - 6
        screen = tm.wait_for("more VMs not shown") or ""
        r.check(f"many VMs: a pane of {PANE_LINES} lines shows {fit} VM rows, in sort order",
                vm_rows(screen) == names[:fit], screen)
        r.check(f"many VMs: and says {MANY - fit} more are not shown",
                f"{MANY - fit} more VMs not shown: / filters" in screen, screen)
        r.check("many VMs: the title stays on the screen", screen.startswith("hwsig top "), screen[:200])
        tm.keys("r")
        screen = wait_rows(tm, names[::-1][:fit])
        r.check("many VMs: 'r' shows the other end first", vm_rows(screen) == names[::-1][:fit], screen)
        tm.keys("r", "/")
        screen = tm.wait_for("filter (globs, comma-separated; Enter applies, Esc clears):", 5)
        r.check("many VMs: '/' asks for the filter at the bottom", screen is not None, tm.capture())
        tm.keys("-l", "big1*")
        tm.keys("Enter")
        screen = tm.wait_for("10 of 30 VMs match 'big1*'", 5) or tm.capture()
        r.check("many VMs: '/' big1* Enter shows exactly big10..big19",
                vm_rows(screen) == [n for n in names if n.startswith("big1")] and "more VMs" not in screen, screen)
        tm.keys("/")
        tm.keys("Escape")
        screen = tm.wait_for(f"{MANY} VMs  interval", 5) or tm.capture()
        r.check("many VMs: Esc clears the filter", vm_rows(screen) == names[:fit], screen)
        tm.keys("q")
    finally:
        if tm:
            tm.close()
        for g in guests:
            g.kill()
            g.wait()


def bad_input():
    for args, says in ((["--sort", "nope"], "no column 'nope' to sort by"),
                       (["-i", "0"], "--interval must be between"),
                       (["-c", "0"], "--count must be at least 1"),
                       (["--rows", "0"], "--rows must be at least 1"),
                       (["--rows", "-2"], "--rows must be at least 1"),
                       (["--filter", ""], "--filter needs VM names or globs"),
                       (["--filter", "web*,,db"], "--filter needs VM names or globs"),
                       (["--format", "xml"], "--format must be")):
        p = subprocess.run([HWSIGCTL, "top", *args], capture_output=True, text=True, timeout=30)
        r.check(f"top {' '.join(args)}: exit 2 and says why", p.returncode == 2 and says in p.stderr, p.stderr)


def main():
    if os.geteuid() != 0:
        r.check("runs as root (BPF)", False, "not root")
        return r.finish()
    for tool in ("tmux", "fio"):
        if not r.check(f"{tool} is installed (scripts/install-deps all)", shutil.which(tool)):
            return r.finish()
    if not r.check("bench/fake_qemu is built (tests/daemon/run)", os.access(FAKE_QEMU, os.X_OK), FAKE_QEMU):
        return r.finish()
    only = sys.argv[1:]  # case names (functions) to run; none: all
    if only:
        for name in only:
            globals()[name]()
        return r.finish()
    bad_input()
    many_vms()
    vm_aggressor()
    host_aggressor()
    quiet()
    io_aggressor()
    daemon()
    interactive()
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
