# Hostile and heavy HTTP clients against a running hwsigd (python3 stdlib).
# Not a test of its own (not executable): tests/daemon/test_http_faults.sh
# starts the daemon and runs this with --port/--pid/--interval; every line
# printed is "ok - ...", "not ok - ..." or a "# ..." comment.
#
# What counts as an acceptable answer, and why:
#   malformed request / header over 64 KiB: a 4xx or 5xx status line, or the
#     connection closed (or reset) without one: the server owes a broken
#     client nothing but must not act on the request. A 2xx/3xx (it acted on
#     garbage) is not acceptable, nor is the socket still open after 10 s
#     (the daemon's idle timeout is 5 s: a parser that waits for more input
#     must still be bounded by it, like a slowloris; an answer that took
#     that long is printed as such).
#   unknown path: exactly 404. Method other than GET/HEAD: 405 or 501.
#   HEAD /metrics: 200 and no body.
#   200 concurrent scrapers: a complete 200 (body ends in a newline and holds
#     hwsig_snapshots_total), a 503, or a connection refused/reset/closed
#     before any status line (the daemon shedding connections over its limit;
#     the scraper retries at its next interval). A timeout (no complete answer
#     in 20 s), a truncated body or another status is not acceptable. And the
#     daemon must not starve anyone: at least 95% of the scraper threads get
#     a complete 200 during the storm.
#   slowloris (half requests never finished): the daemon keeps serving a
#     normal GET while they are open, and closes them itself (an idle
#     timeout) within --slowloris-wait seconds.
#   drip slowloris: --drip clients (more than the daemon's connection limit
#     of 64) each send one more header byte every 2 s, which an idle timeout
#     alone never ends. A normal GET meanwhile must be answered within 10 s:
#     a 200, or refused/closed at once (over the limit: the scraper sees a
#     failed scrape, not a hung one). Hanging is not acceptable: it is how a
#     handful of sockets would blind the monitor.
# Throughout: the process stays alive, its RSS after everything is within
# --rss-bound-mb of before, and it keeps sampling: hwsig_snapshots_total
# advances by elapsed/interval, missing at most --missed-max intervals.
import argparse
import http.client
import os
import select
import socket
import sys
import threading
import time

HOST = "127.0.0.1"

args = None
results = {"ok": 0, "not_ok": 0}


def ok(msg):
    results["ok"] += 1
    print(f"ok - {msg}", flush=True)


def not_ok(msg):
    results["not_ok"] += 1
    print(f"not ok - {msg}", flush=True)


def check(cond, msg):
    (ok if cond else not_ok)(msg)
    return cond


def note(msg):
    print(f"# {msg}", flush=True)


def alive():
    try:
        with open(f"/proc/{args.pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except OSError:
        return False


def rss_kb():
    try:
        with open(f"/proc/{args.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def raw(payload, timeout=10.0):
    """Send raw bytes; return ('status', code) | ('closed', None) |
    ('reset', None) | ('refused', None) | ('timeout', None); the time the
    answer took is in last_took[0]."""
    t0 = time.monotonic()
    try:
        return _raw(payload, timeout)
    finally:
        last_took[0] = time.monotonic() - t0


last_took = [0.0]


def _raw(payload, timeout):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        try:
            s.connect((HOST, args.port))
        except ConnectionRefusedError:
            return ("refused", None)
        try:
            s.sendall(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may answer and close before reading it all
        buf = b""
        deadline = time.monotonic() + timeout
        while b"\r\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return ("timeout", None)
            s.settimeout(left)
            try:
                chunk = s.recv(4096)
            except socket.timeout:
                return ("timeout", None)
            except ConnectionResetError:
                return ("reset", None) if not buf else ("closed", None)
            if not chunk:
                break
            buf += chunk
        line = buf.split(b"\r\n", 1)[0]
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(b"HTTP/") and parts[1].isdigit():
            return ("status", int(parts[1]))
        return ("closed", None) if not buf else ("garbage", line[:60])
    finally:
        s.close()


def request(method, path, timeout=10.0, headers=None, body=None):
    """(status, body bytes) of a well-formed request on a new connection."""
    c = http.client.HTTPConnection(HOST, args.port, timeout=timeout)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def metrics():
    status, body = request("GET", "/metrics")
    if status != 200:
        raise RuntimeError(f"GET /metrics: {status}")
    out = {}
    for line in body.decode("utf-8", "replace").splitlines():
        if not line or line.startswith("#"):
            continue
        name, _, value = line.rpartition(" ")
        try:
            out[name] = float(value)
        except ValueError:
            pass
    return out


def refused_or_error(outcome):
    kind, code = outcome
    if kind == "status":
        return 400 <= code <= 599
    return kind in ("closed", "reset")


def describe(outcome):
    kind, code = outcome
    what = f"{code}" if kind == "status" else kind
    if last_took[0] >= 1.0 and kind != "timeout":
        what += f" after {last_took[0]:.1f} s (only the idle timeout ended it)"
    return what


def malformed():
    cases = [
        ("garbage request line", b"GARBAGE\r\n\r\n"),
        ("method only", b"GET\r\n\r\n"),
        ("no path", b"GET  HTTP/1.1\r\nHost: x\r\n\r\n"),
        ("extra word in request line", b"GET /metrics HTTP/1.1 extra\r\nHost: x\r\n\r\n"),
        ("unknown HTTP version", b"GET /metrics HTTP/9.9\r\nHost: x\r\n\r\n"),
        ("not HTTP", b"GET /metrics FTP/1.0\r\n\r\n"),
        ("binary bytes", b"\x00\x01\x02\xfe\xff\x80\r\n\r\n"),
        ("header line without colon", b"GET /metrics HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n"),
        ("negative Content-Length", b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n"),
        ("non-numeric Content-Length", b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n"),
        ("request line of 70 KiB", b"GET /" + b"a" * (70 * 1024) + b" HTTP/1.1\r\nHost: x\r\n\r\n"),
    ]
    for name, payload in cases:
        out = raw(payload)
        check(refused_or_error(out) and alive(),
              f"malformed ({name}): answered {describe(out)} (4xx/5xx or closed), daemon alive")


def big_headers():
    one = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (65 * 1024 + 1) + b"\r\n\r\n"
    out = raw(one)
    check(refused_or_error(out) and alive(),
          f"one header of 65 KiB: answered {describe(out)} (4xx/5xx or closed), daemon alive")
    many = b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"".join(
        b"X-H%d: %s\r\n" % (i, b"b" * 60) for i in range(1200)) + b"\r\n"
    out = raw(many)
    check(refused_or_error(out) and alive(),
          f"1200 headers, {len(many) // 1024} KiB in all: answered {describe(out)} (4xx/5xx or closed), daemon alive")


def paths_and_methods():
    for path in ("/nope", "/metrics/x", "/metricsx"):
        status, _ = request("GET", path)
        check(status == 404, f"GET {path}: {status} (want 404)")
    for method in ("POST", "PUT", "DELETE", "PATCH", "BREW"):
        try:
            status, _ = request(method, "/metrics", body=b"", headers={"Content-Length": "0"})
        except (ConnectionError, http.client.HTTPException) as e:
            status = f"no answer ({type(e).__name__})"
        check(status in (405, 501), f"{method} /metrics: {status} (want 405 or 501)")
    c = http.client.HTTPConnection(HOST, args.port, timeout=10)
    try:
        c.request("HEAD", "/metrics")
        r = c.getresponse()
        body = r.read()
        check(r.status == 200 and body == b"", f"HEAD /metrics: {r.status}, {len(body)} body bytes (want 200, none)")
    finally:
        c.close()


def slowloris():
    n = args.slowloris
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.connect((HOST, args.port))
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            socks.append(s)
        except OSError:
            s.close()
    note(f"slowloris: {len(socks)} of {n} half requests sent and left open")
    try:
        t = time.monotonic()
        try:
            status, body = request("GET", "/metrics", timeout=5)
        except (OSError, http.client.HTTPException) as e:
            status, body = f"{type(e).__name__}", b""
        took = time.monotonic() - t
        check(status == 200 and took < 3,
              f"GET /metrics while {len(socks)} half requests are open: {status} in {took * 1000:.0f} ms (want 200 within 3 s)")
        # Wait for the daemon to close them (EOF or reset on each).
        t0 = time.monotonic()
        open_ = {s.fileno(): s for s in socks}
        closed_at = []
        while open_ and time.monotonic() - t0 < args.slowloris_wait:
            r, _, _ = select.select(list(open_.values()), [], [], 0.5)
            for s in r:
                try:
                    data = s.recv(4096)
                except OSError:
                    data = b""
                if not data or data.startswith(b"HTTP/"):
                    # closed, or an error status (e.g. 408) before closing
                    closed_at.append(time.monotonic() - t0)
                    del open_[s.fileno()]
        if closed_at:
            note(f"slowloris: daemon closed {len(closed_at)} after {min(closed_at):.1f}..{max(closed_at):.1f} s")
        check(not open_ and alive(),
              f"slowloris: the daemon closed all {len(socks)} half requests itself within {args.slowloris_wait} s "
              f"({len(open_)} still open)")
    finally:
        for s in socks:
            s.close()


def drip():
    n = args.drip
    socks = []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(2)
        try:
            s.connect((HOST, args.port))
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Drip: ")
            socks.append(s)
        except OSError:
            s.close()
    stop = threading.Event()

    def keep_dripping():
        while not stop.wait(2.0):
            for s in list(socks):
                try:
                    s.send(b"a")
                except OSError:
                    socks.remove(s)
                    s.close()

    t = threading.Thread(target=keep_dripping, daemon=True)
    t.start()
    try:
        time.sleep(1)
        t0 = time.monotonic()
        try:
            status, _ = request("GET", "/metrics", timeout=10)
        except (OSError, http.client.HTTPException) as e:
            status = type(e).__name__
        took = time.monotonic() - t0
        answered = status == 200 or status in ("ConnectionRefusedError", "ConnectionResetError",
                                               "RemoteDisconnected", 503)
        check(answered and took < 10 and alive(),
              f"drip slowloris: GET /metrics with {n} clients dripping a header byte every 2 s: "
              f"{status} after {took:.1f} s ({len(socks)} drip sockets still open; want an answer within 10 s)")
    finally:
        stop.set()
        t.join()
        for s in socks:
            s.close()


def drip_deadline():
    """One client that never goes idle (a header byte every second) is
    still closed: a request must arrive whole within the deadline (5 s)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(1)
    s.connect((HOST, args.port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Drip: ")
    t0 = time.monotonic()
    closed_after = None
    try:
        while time.monotonic() - t0 < 15:
            try:
                s.send(b"a")
                if s.recv(4096) == b"":
                    closed_after = time.monotonic() - t0
                    break
            except socket.timeout:
                continue
            except OSError:
                closed_after = time.monotonic() - t0
                break
    finally:
        s.close()
    check(closed_after is not None and closed_after < 8,
          f"drip deadline: a client sending a header byte every second is closed after "
          f"{closed_after if closed_after is None else round(closed_after, 1)} s (want < 8 s: deadline 5 s, checked every 1 s)")


def storm():
    n, dur = args.scrapers, args.storm_seconds
    outcomes = {}
    per_thread_ok = [0] * n
    lock = threading.Lock()
    start = time.monotonic()
    stop = start + dur
    bad = []

    def one(i):
        for _ in range(args.storm_max_requests):
            if time.monotonic() >= stop:
                break
            kind = None
            try:
                c = http.client.HTTPConnection(HOST, args.port, timeout=20)
                try:
                    c.request("GET", "/metrics")
                    r = c.getresponse()
                    body = r.read()
                    if r.status == 200:
                        if body.endswith(b"\n") and b"hwsig_snapshots_total" in body:
                            kind = "200"
                            per_thread_ok[i] += 1
                        else:
                            kind = "200 incomplete"
                    else:
                        kind = str(r.status)
                finally:
                    c.close()
            except ConnectionRefusedError:
                kind = "refused"
            except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected):
                kind = "reset/closed"
            except socket.timeout:
                kind = "timeout"
            except http.client.IncompleteRead:
                kind = "truncated"
            except Exception as e:  # noqa: BLE001 - classified and reported
                kind = f"error {type(e).__name__}"
            with lock:
                outcomes[kind] = outcomes.get(kind, 0) + 1
                if kind not in ("200", "503", "refused", "reset/closed") and len(bad) < 5:
                    bad.append(kind)

    peak = [rss_kb()]
    done = threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], rss_kb())
            done.wait(0.2)

    w = threading.Thread(target=watch, daemon=True)
    w.start()
    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.0, stop + 25 - time.monotonic()))
    hung = sum(t.is_alive() for t in threads)
    done.set()
    w.join()
    took = time.monotonic() - start
    total = sum(outcomes.values())
    note(f"storm: {n} threads, {total} requests in {took:.1f} s: "
         + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())))
    note(f"storm: daemon RSS peak {peak[0] / 1024:.1f} MB")
    acceptable = sum(v for k, v in outcomes.items() if k in ("200", "503", "refused", "reset/closed"))
    check(acceptable == total and hung == 0 and alive(),
          f"storm: every answer acceptable ({acceptable} of {total}; {hung} threads hung; unacceptable: {bad})")
    served = sum(1 for c in per_thread_ok if c > 0)
    check(served >= 0.95 * n, f"storm: {served} of {n} scraper threads got a complete 200 (want >= 95%)")


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--interval", type=float, default=1.0)
    p.add_argument("--scrapers", type=int, default=200)
    p.add_argument("--storm-seconds", type=float, default=10.0)
    p.add_argument("--storm-max-requests", type=int, default=200)
    p.add_argument("--slowloris", type=int, default=20)
    p.add_argument("--slowloris-wait", type=float, default=35.0)
    p.add_argument("--drip", type=int, default=70)
    p.add_argument("--rss-bound-mb", type=float, default=20.0)
    p.add_argument("--missed-max", type=int, default=2)
    p.add_argument("--skip", default="", help="comma-separated parts to skip (harness development)")
    args = p.parse_args()
    skip = set(args.skip.split(","))

    for _ in range(3):
        m0 = metrics()
    rss0 = rss_kb()
    s0, t0 = m0.get("hwsig_snapshots_total"), time.monotonic()
    note(f"before: RSS {rss0 / 1024:.1f} MB, hwsig_snapshots_total {s0}")

    parts = [("malformed", malformed), ("headers", big_headers), ("paths", paths_and_methods),
             ("slowloris", slowloris), ("drip", drip), ("drip-deadline", drip_deadline), ("storm", storm)]
    for name, fn in parts:
        if name in skip:
            continue
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - reported as a failure
            not_ok(f"{name}: {type(e).__name__}: {e}")
        if not alive():
            not_ok(f"daemon died during {name}")
            break

    if not check(alive(), "daemon alive after everything"):
        return
    try:
        t = time.monotonic()
        m1 = metrics()
        t1 = time.monotonic()
        check(t1 - t < 2, f"GET /metrics after everything: 200 in {(t1 - t) * 1000:.0f} ms")
    except Exception as e:  # noqa: BLE001
        not_ok(f"GET /metrics after everything: {e}")
        return
    rss1 = rss_kb()
    grow = (rss1 - rss0) / 1024
    check(grow <= args.rss_bound_mb,
          f"RSS before {rss0 / 1024:.1f} MB, after {rss1 / 1024:.1f} MB: {grow:+.1f} MB (bound +{args.rss_bound_mb:g} MB)")
    s1 = m1.get("hwsig_snapshots_total")
    if s0 is None or s1 is None:
        not_ok("hwsig_snapshots_total is exported")
        return
    # The two readings are each up to one interval old: +-1 interval of slack
    # on top of the stated number of missed intervals.
    expected = (t1 - t0) / args.interval
    got = s1 - s0
    missed = expected - got
    check(missed <= args.missed_max + 1 and got <= expected + 2,
          f"sampling on schedule: {got:.0f} snapshots in {t1 - t0:.1f} s at {args.interval:g} s "
          f"(expected {expected:.1f}; missed {max(0.0, missed):.1f}, bound {args.missed_max} + 1 for the readings)")
    lat = m1.get("hwsig_snapshot_lateness_seconds")
    latmax = m1.get("hwsig_snapshot_lateness_max_seconds")
    check(latmax is not None,
          f"jitter under load: hwsig_snapshot_lateness_seconds {lat}, hwsig_snapshot_lateness_max_seconds {latmax} "
          f"(reported, not bounded: missed intervals are what fails)")


if __name__ == "__main__":
    main()
    sys.exit(1 if results["not_ok"] else 0)
