#!/usr/bin/env python3
"""make test beside a running hwsigd: the tests that read hwsigd (hwsigctl
stat/hist through HWSIG_SOCKET, default /run/hwsig/hwsigd.sock) are
hermetic, and leave the system's daemon alone.

The decoy: a hwsigd answering on /run/hwsig/hwsigd.sock. If one runs (a
system hwsigd), it is used as is: never started, stopped or signalled here.
Else one is started from the build as the unit would run it (the default
socket, /metrics on 127.0.0.1:9863, or a free port if something else holds
9863; dumps in a temp dir; --bpf sched --pmu off), and stopped, with all it
made, on every exit path.

Then, with HWSIG_SOCKET unset as a shell on such a host has it (each entry
point makes its own private socket path), these must pass: the bpf tier's
hwsigctl hist/stat cases (tests/bpf/run "[cli]"), the cli.hwsigctl test
(tests/cli/test_hwsigctl.py) and the daemon tests that read hist/stat
through a daemon of their own, or none (test_shared_collectors, test_dump).
After them the decoy is untouched: the same pid still answering on its own
socket (the same inode), /metrics still served, its dump dir unchanged,
every BPF program it held still held; and no BPF program is left loaded
that no process holds. Needs root. Prints "test_beside_system: N passed, N failed"."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

# What the caller gave, before daemon_harness sets a private default.
CALLER_SOCKET = os.environ.get("HWSIG_SOCKET")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import (BUILD, HWSIGCTL, HWSIGD, TOP, Notify, Results, bpf_programs_of,  # noqa: E402
                            free_port, request_socket)

SOCK = "/run/hwsig/hwsigd.sock"
RUN_DIR = os.path.dirname(SOCK)
PORT = 9863
r = Results("test_beside_system")


class Stop(Exception):
    pass


def on_signal(signo, _frame):
    raise Stop(signal.Signals(signo).name)


def status(path):
    """(version, pid) of the hwsigd answering on path, or None."""
    try:
        data = request_socket(path, "status", timeout=5, raw=True)
    except OSError:
        return None
    f = data.decode(errors="replace").split("\t")
    if len(f) < 3 or f[0] != "hwsigd":
        return None
    return f[1], int(f[2])


def port_free(port):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def listen_ports(pid):
    """TCP ports pid listens on (ss -ltnp)."""
    out = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True).stdout
    ports = []
    for line in out.splitlines():
        if f"pid={pid}," in line:
            m = re.search(r":(\d+)\s", line.split()[3] + " ")
            if m:
                ports.append(int(m.group(1)))
    return ports


def scrape(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as resp:
            return resp.read().decode(errors="replace")
    except OSError:
        return ""


def dump_dir_of(pid):
    """A running hwsigd's dump-dir: its command line, its config file, the default."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().decode(errors="replace").split("\0")
    except OSError:
        argv = []
    config = "/etc/hwsig/hwsigd.conf"
    for i, a in enumerate(argv):
        for key in ("--dump-dir", "--config"):
            value = a[len(key) + 1:] if a.startswith(key + "=") else \
                (argv[i + 1] if a == key and i + 1 < len(argv) else None)
            if value is None:
                continue
            if key == "--dump-dir":
                return value
            config = value
    try:
        with open(config) as f:
            for line in f:
                m = re.match(r"\s*dump-dir\s*=\s*(\S+)", line)
                if m:
                    return m.group(1)
    except OSError:
        pass
    return "/var/lib/hwsig/dumps"


def listing(d):
    """Every file under d with its size and mtime (None: no such directory)."""
    if not os.path.isdir(d):
        return None
    out = []
    for root, _dirs, files in os.walk(d):
        for name in files:
            p = os.path.join(root, name)
            try:
                st = os.lstat(p)
                out.append((os.path.relpath(p, d), st.st_size, st.st_mtime_ns))
            except OSError:
                pass
    return sorted(out)


def held_program_ids():
    """Ids of the BPF programs some process holds (prog or link fds)."""
    ids = set()
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            ids |= bpf_programs_of(pid)
    return ids


def loaded_program_ids():
    if not shutil.which("bpftool"):
        return None
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True).stdout
    try:
        return {p["id"]: p.get("name", "") for p in json.loads(out or "[]")}
    except ValueError:
        return None


def run(what, argv, env, timeout, passed_line):
    """One of the tests, in its own process group (killed on any way out);
    its output indented. Passes when it exits 0 with its closing count."""
    start = time.monotonic()
    p = subprocess.Popen(argv, env=env, cwd=TOP, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except BaseException:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        p.wait()
        if not isinstance(sys.exc_info()[1], subprocess.TimeoutExpired):
            raise
        out, rc = f"(killed after {timeout} s)", None
    else:
        rc = p.returncode
    lines = out.splitlines()
    keep = [line for line in lines if line.startswith(("not ok", "FAIL", "cli: FAIL")) or "FAILED" in line]
    for line in (keep + lines[-6:])[-30:]:
        print("    " + line, flush=True)
    count = [line for line in lines if re.search(passed_line, line)]
    r.check(f"{what}: passes beside the decoy ({time.monotonic() - start:.0f} s)",
            rc == 0 and bool(count), f"exit {rc}; {count[-1] if count else 'no count'}")


def main():
    if not r.check("root (a daemon on /run/hwsig, BPF collectors)", os.geteuid() == 0):
        return
    work = tempfile.mkdtemp(prefix="hwsig-beside-")
    decoy = None           # our hwsigd (Popen), if we started one
    made_run_dir = False   # /run/hwsig was ours to remove
    log = None
    try:
        found = status(SOCK)
        if found:
            version, pid = found
            ports = listen_ports(pid)
            port = PORT if PORT in ports else (ports[0] if ports else None)
            dumps = dump_dir_of(pid)
            print(f"# a system hwsigd {version} (pid {pid}) answers on {SOCK}: it is the decoy, "
                  f"not started or stopped here (/metrics on {port}, dumps in {dumps})", flush=True)
        else:
            port = PORT if port_free(PORT) else free_port()
            if port != PORT:
                print(f"# port {PORT} is taken (not by a hwsigd on {SOCK}): the decoy listens on {port}",
                      flush=True)
            dumps = os.path.join(work, "dumps")
            os.makedirs(dumps)
            made_run_dir = not os.path.exists(RUN_DIR)
            if os.path.exists(SOCK):  # a socket left by a hwsigd that is gone
                os.unlink(SOCK)
            notify = Notify(work)
            log = open(os.path.join(work, "decoy.log"), "w")
            env = dict(os.environ, NOTIFY_SOCKET=notify.path)
            decoy = subprocess.Popen([HWSIGD, "--config", "/dev/null", "--socket", SOCK,
                                      "--listen", f"127.0.0.1:{port}", "--dump-dir", dumps,
                                      "--bpf", "sched", "--pmu", "off", "--interval", "1"],
                                     env=env, stdout=log, stderr=log, start_new_session=True)
            ready = notify.wait_for("READY=1", 60)
            notify.close()
            found = status(SOCK)
            up = ready and found is not None and found[1] == decoy.pid
            if not r.check(f"the decoy: {HWSIGD} on {SOCK}, /metrics on 127.0.0.1:{port}, dumps in {dumps}",
                           up, "" if up else open(log.name).read()[-500:]):
                return
            version, pid = found
            print(f"# no hwsigd answered on {SOCK}: started one from the build (pid {pid}) as the decoy",
                  flush=True)

        before = {
            "inode": os.stat(SOCK).st_ino,
            "dumps": listing(dumps),
            "programs": bpf_programs_of(pid),
            "loaded": loaded_program_ids(),
        }
        # (The first scrape waits for the first interval.)
        deadline = time.monotonic() + 15
        while port is not None and "hwsig_" not in scrape(port) and time.monotonic() < deadline:
            time.sleep(0.5)
        r.check("the decoy serves /metrics", port is not None and "hwsig_" in scrape(port), f"port {port}")

        # The decoy is what a plain hwsigctl on this host reads: the check
        # below means something.
        plain = {k: v for k, v in os.environ.items() if k != "HWSIG_SOCKET"}
        p = subprocess.run([HWSIGCTL, "hist", "runq", "1", "1"], env=plain, capture_output=True, text=True,
                           timeout=60)
        seen = p.returncode == 0 and f"through hwsigd at {SOCK}" in p.stdout
        r.check(f"without HWSIG_SOCKET hwsigctl hist reads the decoy (through hwsigd at {SOCK})",
                seen, "" if seen else (p.stdout + p.stderr)[-300:])

        # The tiers, as make test runs them: HWSIG_SOCKET as the caller has
        # it (unset in a shell; each entry point then makes its own).
        env = dict(plain)
        if CALLER_SOCKET:
            env["HWSIG_SOCKET"] = CALLER_SOCKET
        env["HWSIG_BUILD"] = BUILD
        asan = os.environ.get("HWSIG_BPF_BUILD", "build-asan")
        run('bpf tier: tests/bpf/run "[cli]" (hwsigctl hist and stat)', [os.path.join(TOP, "tests/bpf/run"), "[cli]"],
            plain, 330, r"^bpf-live: \d+ passed, 0 failed")
        ctl = os.path.join(TOP, asan, "hwsigctl")
        if not os.access(ctl, os.X_OK):
            ctl = HWSIGCTL
        run(f"cli.hwsigctl: tests/cli/test_hwsigctl.py {os.path.relpath(ctl, TOP)}",
            [sys.executable, os.path.join(TOP, "tests/cli/test_hwsigctl.py"), ctl], plain, 180,
            r"^cli: \d+ passed, 0 failed")
        for t in ("test_shared_collectors.py", "test_dump.py"):
            run(f"daemon tier: {t}", [sys.executable, os.path.join(TOP, "tests/daemon", t)], env, 180,
                r"^test_\w+: \d+ passed, 0 failed")

        # The decoy after them.
        alive = (decoy.poll() is None) if decoy else os.path.exists(f"/proc/{pid}")
        r.check(f"the decoy still runs (pid {pid})", alive)
        now = status(SOCK)
        r.check(f"{SOCK} still answers with the decoy's pid", now is not None and now[1] == pid, str(now))
        try:
            inode = os.stat(SOCK).st_ino
        except OSError:
            inode = None
        r.check(f"{SOCK} is still the decoy's (inode {before['inode']})", inode == before["inode"], str(inode))
        r.check("the decoy still serves /metrics", port is not None and "hwsig_" in scrape(port), f"port {port}")
        after = listing(dumps)
        r.check(f"its dump dir {dumps} unchanged ({len(after or [])} files)", after == before["dumps"],
                f"before {before['dumps']}, after {after}")
        # Every program it held is still attached. It may hold more: a
        # daemon watching the host loads the vCPU iterator once it sees a
        # guest, and the tests start fake QEMU guests on this host.
        progs = bpf_programs_of(pid)
        names = loaded_program_ids() or {}
        r.check(f"it still holds every BPF program it held ({len(before['programs'])}; now {len(progs)})",
                before["programs"] <= progs, f"before {sorted(before['programs'])}, after {sorted(progs)}")
        if progs - before["programs"]:
            print("# loaded by the decoy itself meanwhile: " +
                  ", ".join(f"{i} {names.get(i, '?')}" for i in sorted(progs - before["programs"])), flush=True)
        if before["loaded"] is not None:
            # Other tests may run at the same time: a new program some
            # process holds is theirs; one nobody holds was left behind.
            # (The kernel frees one shortly after its last reference.)
            deadline = time.monotonic() + 5
            while True:
                loaded = loaded_program_ids() or {}
                orphans = {i: n for i, n in loaded.items() if i not in before["loaded"]}
                if orphans:
                    held = held_program_ids()
                    orphans = {i: n for i, n in orphans.items() if i not in held}
                if not orphans or time.monotonic() > deadline:
                    break
                time.sleep(0.5)
            r.check(f"no BPF program left loaded that no process holds ({len(before['loaded'])} loaded before, "
                    f"{len(loaded)} after)", not orphans, str(orphans))
        else:
            print("# bpftool is missing: the check for BPF programs left loaded is not run", flush=True)
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):  # the cleanup runs to its end
            signal.signal(sig, signal.SIG_IGN)
        if decoy is not None:
            if decoy.poll() is None:
                decoy.send_signal(signal.SIGTERM)
                try:
                    decoy.wait(10)
                except subprocess.TimeoutExpired:
                    decoy.kill()
                    decoy.wait()
            if made_run_dir:
                shutil.rmtree(RUN_DIR, ignore_errors=True)
            elif os.path.exists(SOCK) and status(SOCK) is None:
                os.unlink(SOCK)
        if log:
            log.close()
        shutil.rmtree(work, ignore_errors=True)


signal.signal(signal.SIGTERM, on_signal)
signal.signal(signal.SIGINT, on_signal)
signal.signal(signal.SIGHUP, on_signal)
try:
    main()
except Stop as e:
    r.check(f"finished ({e}: the decoy stopped, its files removed)", False)
sys.exit(r.finish())
