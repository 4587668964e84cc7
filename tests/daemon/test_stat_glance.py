#!/usr/bin/env python3
"""hwsigctl stat as a person sees it: in tmux at 80 columns, the pane
captured and read. Checks the alignment of the value column, human units,
that each unavailable reason is said once (and again in the summary), that
nothing is wider than 80 columns, colour on the terminal only, and that
verdicts appear and disappear with workloads that saturate a resource:
  quiet       20 intervals with nothing started here: no verdict
  cpu         spinners, twice the CPU count plus two: "CPU saturated"
  disk        fio random reads of 1 MiB at depth 64 with O_DIRECT: a disk
              verdict (4 KiB reads on a fast virtio disk stay near 10 ms p99)
  memory      a memory cgroup (v2 where its controller is there, else v1)
              whose limit is far below a file read over and over: "memory
              saturated" (PSI memory)
Each verdict must be gone 30 s after its workload stops (PSI's avg10 decays
over ~25 s from 100%). Needs root (the BPF block collector), tmux, fio.
The host must be otherwise quiet: a busy host fails the quiet phase (and
says what it saw), it is not skipped."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import HWSIGCTL, Results  # noqa: E402

r = Results("test_stat_glance")
NPROC = os.cpu_count() or 1
HEAD = re.compile(r"^hwsig stat  (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)  (.*) \(([0-9.]+) s\)$")
# '!' or ' ', then id, value, unit, scope (the table's columns).
VALUE = re.compile(r"^[! ] (\S+) +(-|-?[0-9][0-9.,e+-]*) (\S*) +(\S+)$")


class Tmux:
    serial = 0

    def __init__(self, cmd, env=None):
        Tmux.serial += 1
        self.sock = f"hwsig-glance-{os.getpid()}-{Tmux.serial}"
        # The history limit must be set before the pane exists.
        self.conf = tempfile.NamedTemporaryFile("w", suffix=".conf")
        self.conf.write("set-option -g history-limit 200000\n")
        self.conf.flush()
        envs = []
        for k, v in (env or {}).items():
            envs += ["-e", f"{k}={v}"]
        subprocess.run(["tmux", "-L", self.sock, "-f", self.conf.name, "new-session", "-d", "-x", "80", "-y", "40",
                        *envs, "bash", "--norc", "-c", cmd + "; echo '[exit '$?']'; sleep 600"], check=True)

    def capture(self, *flags):
        return subprocess.run(["tmux", "-L", self.sock, "capture-pane", "-p", "-S", "-", "-E", "-", *flags],
                              capture_output=True, text=True, check=True).stdout

    def wait_for(self, text, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.capture("-J"):
                return True
            time.sleep(0.5)
        return False

    def close(self):
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True)
        self.conf.close()


def blocks_of(text):
    """[(end time epoch, title, lines)] of the table blocks in a capture."""
    out = []
    for line in text.split("\n"):
        if line.startswith("^C"):  # the terminal's echo of Ctrl-C, before the summary
            line = line[2:]
        m = HEAD.match(line)
        if m:
            t = time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S"))
            out.append((t, m.group(2), []))
        elif out:
            out[-1][2].append(line)
    return out


def verdicts_in(lines):
    return [l[2:] for l in lines if l.startswith("! ") and not VALUE.match(l)]


def spin():
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 * NPROC + 2)]


def stop(procs):
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def memory_cgroup(limit):
    """A cgroup limited to limit bytes: (its directory, its procs file)."""
    name = f"hwsig-glance-{os.getpid()}"
    v2 = "/sys/fs/cgroup"
    for root in (v2, "/sys/fs/cgroup/unified"):
        ctl = os.path.join(root, "cgroup.controllers")
        if os.path.exists(ctl) and "memory" in open(ctl).read().split():
            d = os.path.join(root, name)
            os.mkdir(d)
            open(os.path.join(d, "memory.max"), "w").write(str(limit))
            return d, os.path.join(d, "cgroup.procs")
    d = os.path.join("/sys/fs/cgroup/memory", name)  # cgroup v1 (hybrid hierarchy)
    os.mkdir(d)
    open(os.path.join(d, "memory.limit_in_bytes"), "w").write(str(limit))
    return d, os.path.join(d, "cgroup.procs")


def phase_blocks(blocks, start, end):
    """Blocks whose whole interval lies in [start, end] (wall clock, 1 s granularity)."""
    return [b for b in blocks if b[0] - 1 >= int(start) and b[0] <= end]


def main():
    if os.geteuid() != 0:
        r.check("runs as root (the BPF block collector)", False, "not root")
        return r.finish()
    for tool in ("tmux", "fio"):
        if not r.check(f"{tool} is installed (scripts/install-deps all)", shutil.which(tool)):
            return r.finish()
    work = tempfile.mkdtemp(prefix="hwsig-glance-", dir="/var/tmp")
    data = os.path.join(work, "data")
    # The disk phase's file and the memory phase's, written before the run.
    subprocess.run(["dd", "if=/dev/urandom", f"of={data}", "bs=1M", "count=512", "status=none"], check=True)
    os.sync()
    tm = Tmux(f"{HWSIGCTL} stat --no-daemon -i 1 -d 200", env={"HWSIG_CHECK_INTERVALS": "1", "TERM": "xterm"})
    marks = {}
    procs = []
    cg = None
    try:
        r.check("the first table is on the screen", tm.wait_for("interval 1 (", 30))
        marks["quiet"] = (time.time(), time.time() + 21)
        time.sleep(22)
        start = time.time()
        procs = spin()
        time.sleep(10)
        stop(procs)
        marks["cpu"] = (start + 3, time.time())
        marks["cpu after"] = (time.time() + 30, time.time() + 33)
        time.sleep(34)
        start = time.time()
        fio = subprocess.Popen(["fio", "--name=glance", f"--filename={data}", "--rw=randread", "--bs=1m",
                                "--iodepth=64", "--ioengine=libaio", "--direct=1", "--time_based",
                                "--runtime=12", "--output=/dev/null"])
        fio.wait()
        marks["disk"] = (start + 3, time.time())
        marks["disk after"] = (time.time() + 30, time.time() + 33)
        time.sleep(34)
        cg, cg_procs = memory_cgroup(64 << 20)
        # In the cgroup: two readers of the 512 MiB file, page by page,
        # over and over, through a 64 MiB limit: readahead keeps evicting
        # pages before they are used, their refaults are thrashing (PSI
        # memory stalls; no swap needed). The file's pages cached by earlier
        # phases are dropped first, else they stay charged to the cgroup
        # that read them. (With MADV_RANDOM there are faults but hardly any
        # stall: measured.)
        start = time.time()
        readers = [subprocess.Popen(["bash", "-c", f"echo $$ > {cg_procs}; exec python3 -c '"
                                     "import mmap,os,time\n"
                                     f"fd=os.open(\"{data}\",os.O_RDONLY)\n"
                                     "os.posix_fadvise(fd,0,0,os.POSIX_FADV_DONTNEED)\n"
                                     "m=mmap.mmap(fd,0,prot=mmap.PROT_READ)\n"
                                     "end=time.time()+20\n"
                                     "while time.time()<end:\n"
                                     "  for o in range(0,len(m),4096): m[o]\n'"]) for _ in range(2)]
        for p in readers:
            p.wait()
        # PSI's avg10 needs a few seconds to climb past 10%.
        marks["memory"] = (start + 8, time.time())
        marks["memory after"] = (time.time() + 30, time.time() + 33)
        time.sleep(34)
        # The run ends by itself (-d 200) or here.
        subprocess.run(["tmux", "-L", tm.sock, "send-keys", "C-c"])
        r.check("Ctrl-C prints the summary", tm.wait_for("summary of", 20))
        time.sleep(1)
        judge(tm, marks)
    finally:
        stop(procs)
        tm.close()
        if cg:
            for _ in range(20):
                try:
                    os.rmdir(cg)
                    break
                except OSError:
                    time.sleep(0.2)
        shutil.rmtree(work, ignore_errors=True)
    colour()
    return r.finish()


def judge(tm, marks):
    plain = tm.capture()
    joined = tm.capture("-J")
    blocks = blocks_of(joined)
    r.check("the run printed its blocks", len(blocks) > 60, f"{len(blocks)} blocks")
    wide = [l for l in joined.split("\n") if len(l) > 80]
    r.check("no line wider than 80 columns (the pane wrapped none)", not wide, "\n".join(wide[:3]))
    # The value column: every number ends at column 39.
    misaligned = []
    units = set()
    for _, _, lines in blocks:
        for l in lines:
            m = VALUE.match(l)
            if m:
                units.add(m.group(3))
                if l[39] == " " or l[40] != " ":
                    misaligned.append(l)
    r.check("values right-aligned at one column", not misaligned, "\n".join(misaligned[:3]))
    human = {"", "%", "B", "KiB", "MiB", "GiB", "B/s", "KiB/s", "MiB/s", "GiB/s", "ns", "µs", "ms", "s", "°C",
             "pages/s", "req/s", "switches/s", "stalls/s", "desc", "insn/cycle", "MPKI"}
    r.check("human units only (no 'ratio', 'us', 'degC')", "%" in units and units <= human, sorted(units - human))
    # Unavailable reasons: the whole list in interval 1 and in the summary;
    # between them only "Unavailable now" (changes), never the same line twice in a row.
    sections = [b for b in blocks if any(l == "Unavailable" for l in b[2])]
    r.check("the unavailable list is printed at the start and in the summary only",
            [b[1] for b in sections] == ["interval 1", sections[-1][1]] and sections[-1][1].startswith("summary"),
            [b[1] for b in sections])
    # A change is said when it happens (a reason that changes mid-run), so
    # a line may come back; what must not happen is the same news every
    # interval: no line in two blocks in a row, and few blocks with news.
    news = []
    for _, title, lines in blocks[1:-1]:
        said = []
        if "Unavailable now" in lines:
            for l in lines[lines.index("Unavailable now") + 1:]:
                if not l.startswith("  "):
                    break
                said.append(l)
        news.append((title, said))
    repeated = [(a[0], l) for a, b in zip(news, news[1:]) for l in a[1] if l in b[1]]
    with_news = [(t, said) for t, said in news if said]
    r.check("unavailable news not repeated from one interval to the next, and rare",
            not repeated and len(with_news) <= len(blocks) // 10, f"{repeated[:2]}; {with_news[:4]}")
    by_phase = {name: phase_blocks(blocks, *span) for name, span in marks.items()}

    def with_verdict(name, prefix):
        return [b for b in by_phase[name] if any(v.startswith(prefix) for v in verdicts_in(b[2]))]

    quiet = [(b[1], verdicts_in(b[2])) for b in by_phase["quiet"] if verdicts_in(b[2])]
    r.check("no verdict in 20 quiet intervals", len(by_phase["quiet"]) >= 19 and not quiet,
            f"{len(by_phase['quiet'])} intervals; {quiet[:3]}")
    for name, prefixes in (("cpu", ("CPU saturated",)), ("disk", ("disk ", "I/O saturated")),
                           ("memory", ("memory saturated",))):
        hits = [b for p in prefixes for b in with_verdict(name, p)]
        seen = sorted({v for b in by_phase[name] for v in verdicts_in(b[2])})
        r.check(f"{name} workload: its verdict in most of its intervals",
                len(hits) >= max(1, len(by_phase[name]) // 2),
                f"{len(hits)} of {len(by_phase[name])}; {[s for s in seen if s.startswith(prefixes)][:2] or seen[:2]}")
        after = [b for p in prefixes for b in with_verdict(name + " after", p)]
        r.check(f"{name} verdict gone 30 s after the workload", by_phase[name + " after"] and not after,
                f"{len(by_phase[name + ' after'])} intervals, {len(after)} with it")
    marked = [l for b in blocks for l in b[2] if l.startswith("! ") and VALUE.match(l)]
    r.check("values past a threshold are marked '!'", marked, f"{len(marked)} marked")


def colour():
    """On a terminal: ANSI colour; with NO_COLOR set: none."""
    for env, want in (({"TERM": "xterm"}, True), ({"TERM": "xterm", "NO_COLOR": "1"}, False)):
        tm = Tmux(f"{HWSIGCTL} stat --no-daemon --no-bpf -i 0.3 -c 1", env=env)
        try:
            tm.wait_for("[exit", 20)
            text = tm.capture("-e")
            r.check(f"colour {'on' if want else 'off'} with {env}", ("\033[" in text) == want,
                    text[:200].encode("unicode_escape").decode())
        finally:
            tm.close()
    out = subprocess.run([HWSIGCTL, "stat", "--no-daemon", "--no-bpf", "-i", "0.3", "-c", "1"],
                         capture_output=True, text=True).stdout
    r.check("no colour when piped", "\033[" not in out and "hwsig stat" in out)


if __name__ == "__main__":
    sys.exit(main())
