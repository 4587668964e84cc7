"""Shared by the daemon tier's Python tests: a hwsigd started with a
NOTIFY_SOCKET the test owns (systemd is not PID 1 here), its local socket
read the way hwsigctl reads it, and ok/not ok counting."""
import os
import signal
import socket
import subprocess
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("HWSIG_BUILD", os.path.join(TOP, "build"))
HWSIGD = os.path.join(BUILD, "hwsigd")
HWSIGCTL = os.path.join(BUILD, "hwsigctl")
FIXTURES = os.path.join(TOP, "tests", "unit", "fixtures")


def _hermetic_socket():
    """Hermetic: hwsigctl reads the hwsigd at HWSIG_SOCKET (default
    /run/hwsig/hwsigd.sock, where a system hwsigd may run). A test reads
    the daemon it started (env HWSIG_SOCKET=d.socket); anything else gets,
    unless the caller set one, a path in a private directory no daemon
    listens on (0755: hwsigctl as nobody gets ENOENT there, not EACCES)."""
    if os.environ.get("HWSIG_SOCKET"):
        return
    import atexit
    import shutil
    d = tempfile.mkdtemp(prefix="hwsig-tests.")
    os.chmod(d, 0o755)
    atexit.register(shutil.rmtree, d, True)
    os.environ["HWSIG_SOCKET"] = os.path.join(d, "no-hwsigd.sock")


_hermetic_socket()


class Results:
    def __init__(self, name):
        self.name, self.passed, self.failed = name, 0, 0

    def check(self, what, cond, detail=""):
        if cond:
            self.passed += 1
            print(f"ok - {what}" + (f" ({detail})" if detail else ""), flush=True)
        else:
            self.failed += 1
            print(f"not ok - {what}" + (f": {detail}" if detail else ""), flush=True)
        return cond

    def finish(self):
        print(f"{self.name}: {self.passed} passed, {self.failed} failed")
        return 0 if self.failed == 0 else 1


def fixture_with_hugepages(pages=4, free=1):
    """A copy of the debian12-host fixture tree (a temporary directory, left
    for the caller to remove) whose 2048 kB huge page pool has pages pages,
    free of them free: a steady gauge (mem.hugepage_utilization) for tests
    of rules on a static tree, where every rate (PSI included) is 0."""
    import shutil
    root = os.path.join(tempfile.mkdtemp(prefix="hwsig-fixture-"), "root")
    shutil.copytree(os.path.join(FIXTURES, "debian12-host"), root)
    pool = os.path.join(root, "sys", "kernel", "mm", "hugepages", "hugepages-2048kB")
    for name, value in (("nr_hugepages", pages), ("free_hugepages", free), ("resv_hugepages", 0)):
        with open(os.path.join(pool, name), "w") as f:
            f.write(f"{value}\n")
    # /proc/meminfo's Hugetlb (every pool's pages x size) agrees, as on a
    # real kernel: at 0 kB hwsig does not read the pools.
    meminfo = os.path.join(root, "proc", "meminfo")
    with open(meminfo) as f:
        text = f.read()
    assert "\nHugetlb:               0 kB\n" in text, "fixture meminfo without Hugetlb: 0 kB"
    with open(meminfo, "w") as f:
        f.write(text.replace("\nHugetlb:               0 kB\n", f"\nHugetlb: {pages * 2048} kB\n"))
    return root


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Notify:
    """The datagram socket systemd would own: collects sd_notify messages."""

    def __init__(self, directory):
        self.path = os.path.join(directory, "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        if os.path.exists(self.path):  # an earlier daemon's, in a reused directory
            os.unlink(self.path)
        self.sock.bind(self.path)
        self.messages = []

    def wait_for(self, word, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(word in m.split("\n") for m in self.messages):
                return True
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                self.messages.append(self.sock.recv(4096).decode())
            except socket.timeout:
                pass
        return any(word in m.split("\n") for m in self.messages)

    def count(self, word):
        self.sock.setblocking(False)
        try:
            while True:
                self.messages.append(self.sock.recv(4096).decode())
        except BlockingIOError:
            pass
        return sum(1 for m in self.messages if word in m.split("\n"))

    def close(self):
        self.sock.close()


def request_socket(path, what, timeout=10, raw=False):
    """The answer of the hwsigd on socket path to one request (it runs to
    the end of the connection): text, or bytes with raw (a dump)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(what.encode() + b"\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    return data if raw else data.decode()


class Daemon:
    """hwsigd in a temp directory; always stopped (SIGKILL at the latest)."""

    def __init__(self, args, env=None, directory=None, notify=True, config="/dev/null", socket_path=None):
        self.dir = directory or tempfile.mkdtemp(prefix="hwsigd-test-")
        self.socket = socket_path or os.path.join(self.dir, "hwsigd.sock")
        self.port = free_port()
        self.log_path = os.path.join(self.dir, f"log.{time.monotonic_ns()}")
        self.notify = Notify(self.dir) if notify else None  # one per directory at a time
        full_env = dict(os.environ)
        full_env.update(env or {})
        if self.notify:
            full_env["NOTIFY_SOCKET"] = self.notify.path
        self.args = [HWSIGD, "--config", config, "--listen", f"127.0.0.1:{self.port}",
                     "--socket", self.socket] + list(args)
        # Its own dump-dir too (the default is the system's /var/lib/hwsig/dumps).
        if not any(a == "--dump-dir" or a.startswith("--dump-dir=") for a in args):
            self.args += ["--dump-dir", os.path.join(self.dir, "dumps")]
        self.log = open(self.log_path, "w")
        if self.notify:
            # As systemd does beside NOTIFY_SOCKET: stderr is the journal's
            # stream, so hwsigd prefixes its lines with "<N>" priorities.
            st = os.fstat(self.log.fileno())
            full_env["JOURNAL_STREAM"] = f"{st.st_dev}:{st.st_ino}"
        self.proc = subprocess.Popen(self.args, env=full_env, stdout=self.log, stderr=self.log)

    def ready(self, timeout=30):
        return self.notify.wait_for("READY=1", timeout)

    def request(self, what, timeout=10, raw=False):
        """The daemon's answer to one request: text, or bytes with raw (a dump)."""
        return request_socket(self.socket, what, timeout, raw)

    def scrape(self, path="/metrics", timeout=10):
        import urllib.request
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=timeout) as r:
            return r.read().decode()

    def log_text(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def stop(self, sig=signal.SIGTERM, timeout=5):
        """Sends sig; returns (exit code or None, seconds it took)."""
        if self.proc.poll() is not None:
            return self.proc.returncode, 0.0
        start = time.monotonic()
        self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            rc = None
        return rc, time.monotonic() - start

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        if self.notify:
            self.notify.close()



def bpf_programs_of(pid):
    """Ids of the BPF programs a process holds (its prog and link fds)."""
    ids = set()
    fd_dir = f"/proc/{pid}/fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return ids
    for fd in fds:
        try:
            target = os.readlink(os.path.join(fd_dir, fd))
        except OSError:
            continue
        if target not in ("anon_inode:bpf-prog", "anon_inode:bpf_link"):
            continue
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    return ids


def wait_unloaded(ids, timeout=3.0):
    """The subset of ids still loaded after up to timeout seconds (the
    kernel frees a program shortly after its last reference goes)."""
    deadline = time.monotonic() + timeout
    while True:
        left = ids & loaded_program_ids()
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.1)


def loaded_program_ids():
    """Every BPF program id loaded on the host now (bpftool prog)."""
    import json
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True).stdout
    return {p["id"] for p in json.loads(out or "[]")}
