#!/usr/bin/env python3
"""Native histograms and gzip on /metrics (Documentation/prometheus.rst,
"Formats"), read by Debian's Prometheus 2.42 started here on loopback with
--enable-feature=native-histograms, which then asks for the protobuf format
first.

Fixture (no root): the protobuf exposition of the kvm-host fixture with the
synthetic series (render-prometheus-fixture --protobuf) served as a file:
the target is healthy, every histogram is ingested native (no _bucket or
_count series), and histogram_count() of each series equals the _count of
the 0.0.4 text of the same exposition.

hwsigd on a fixture root (no root): `curl --compressed` of /metrics, text
and protobuf, decompresses to exactly the plain body of the same snapshot,
with Content-Encoding: gzip and Vary: Accept-Encoding; without
Accept-Encoding the body comes plain.

Live (root and BPF): hwsigd --bpf sched --interval 8, scraped every second:
  - hwsig_runq_wait_seconds is native in Prometheus, the target healthy;
  - histogram_count() of it equals the _count of a text scrape of the same
    snapshot (the same hwsig_snapshots_total in both);
  - histogram_quantile(0.99, rate(hwsig_runq_wait_seconds[6s])) over a
    window holding exactly one snapshot change agrees within a factor of 2
    (one log2 bucket) with the p99 that hwsigctl shows for that interval:
    sched.runq_wait_p99_us of scope system in `hwsigctl replay --format
    json` of a `hwsigctl dump` of the daemon's history, which is stat's
    renderer over the very snapshots /metrics served (a live `hwsigctl
    stat` takes snapshots of its own, on other boundaries).
Without root or BPF the live part prints SKIP and counts nothing."""
import gzip
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

from daemon_harness import BUILD, FIXTURES, HWSIGCTL, HWSIGD, Results, free_port

r = Results("test_native_histograms")
HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(BUILD, "tests", "unit", "render-prometheus-fixture")
# What Prometheus 2.42 sends with --enable-feature=native-histograms.
ACCEPT_PROTOBUF = ("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited,"
                   "application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;"
                   "q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
CTYPE_PROTOBUF = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"
work = tempfile.mkdtemp(prefix="hwsig-native-")
procs = []


def spawn(args, log, **kw):
    p = subprocess.Popen(args, stdout=open(os.path.join(work, log), "w"), stderr=subprocess.STDOUT, **kw)
    procs.append(p)
    return p


def stop(p):
    if p.poll() is None:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


class Prometheus:
    """A Prometheus server with native histograms scraping one target every second."""

    def __init__(self, name, target_port):
        d = os.path.join(work, name)
        os.makedirs(d)
        with open(os.path.join(d, "prometheus.yml"), "w") as f:
            f.write("global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\n"
                    "scrape_configs:\n  - job_name: hwsig\n"
                    f"    static_configs: [{{targets: ['127.0.0.1:{target_port}']}}]\n")
        self.port = free_port()
        self.proc = spawn(["prometheus", f"--config.file={d}/prometheus.yml", f"--storage.tsdb.path={d}/tsdb",
                           f"--web.listen-address=127.0.0.1:{self.port}", "--enable-feature=native-histograms",
                           "--log.level=warn"], f"{name}.log")
        self.log = os.path.join(work, f"{name}.log")

    def api(self, path, **params):
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:
                return json.load(resp)["data"]
        except (OSError, ValueError, KeyError):
            return None

    def query(self, expr, at=None):
        """The result list of an instant query ([] when empty, None on error)."""
        data = self.api("query", query=expr, **({"time": f"{at:.3f}"} if at else {}))
        return None if data is None else data["result"]

    def target(self, timeout=30):
        """(health, lastError) of the one target once it has been scraped."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            data = self.api("targets")
            t = data["activeTargets"] if data else []
            if t and t[0]["health"] != "unknown":
                return t[0]["health"], t[0]["lastError"]
            time.sleep(0.5)
        return "none", "no scrape within %d s" % timeout

    def wait_for(self, expr, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            res = self.query(expr)
            if res:
                return res
            time.sleep(0.5)
        return []


def value(res):
    return float(res[0]["value"][1]) if res else None


def text_histograms(text):
    """{family: {labels-dict-as-tuple: _count}} of a 0.0.4 text's histograms."""
    families = set(re.findall(r"^# TYPE (\S+) histogram$", text, re.M))
    out = {f: {} for f in families}
    for line in text.splitlines():
        m = re.match(r"^(\w+)_count(?:\{(.*)\})? (\S+)$", line)
        if m and m.group(1) in families:
            labels = tuple(sorted((k, bytes(v, "utf-8").decode("unicode_escape"))
                                  for k, v in re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2) or "")))
            out[m.group(1)][labels] = float(m.group(3))
    return out


def fetch(url, headers):
    """(status, headers, body) of a GET with these request headers."""
    req = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.status, resp.headers, resp.read()


def fixture_part():
    if not os.access(TOOL, os.X_OK) and subprocess.run(
            ["cmake", "--build", BUILD, "--target", "render-prometheus-fixture"], capture_output=True).returncode:
        r.check("build render-prometheus-fixture", False, BUILD)
        return
    root = os.path.join(FIXTURES, "kvm-host")
    pb = os.path.join(work, "fixture.pb")
    with open(pb, "wb") as f:
        rc = subprocess.run([TOOL, "--root", root, "--synthetic", "--protobuf"], stdout=f).returncode
    text = subprocess.run([TOOL, "--root", root, "--synthetic"], capture_output=True, text=True).stdout
    expected = text_histograms(text)
    if not r.check("render the fixture as protobuf and as text", rc == 0 and len(expected) >= 5,
                   f"{len(expected)} histogram families"):
        return
    port = free_port()
    spawn(["python3", os.path.join(HERE, "serve_file.py"), str(port), pb, CTYPE_PROTOBUF], "serve_file.log")
    prom = Prometheus("prom-fixture", port)
    health, error = prom.target()
    r.check("Prometheus scrapes the protobuf exposition: target up, no scrape error", health == "up" and not error,
            f"health {health}, error '{error}'")
    prom.wait_for("hwsig_build_info")
    classic = prom.query('count({__name__=~"hwsig_.+_(bucket|count|sum)"})')
    r.check("every histogram ingested native: no _bucket, _count or _sum series", classic == [],
            f"classic series: {value(classic) if classic else 0}")
    compared, wrong = 0, []
    for family, series in sorted(expected.items()):
        got = {}
        for s in prom.query(f"histogram_count({family})") or []:
            labels = tuple(sorted((k, v) for k, v in s["metric"].items() if k not in ("job", "instance")))
            got[labels] = float(s["value"][1])
        compared += len(series)
        if got != series:
            wrong.append(f"{family}: Prometheus {got} text {series}")
    r.check(f"histogram_count() of every native series equals the text's _count ({compared} series)",
            compared >= 10 and not wrong, "; ".join(wrong)[:600])
    stop(prom.proc)


def gzip_part():
    d = os.path.join(work, "gzip")
    os.makedirs(d)
    port = free_port()
    daemon = spawn([HWSIGD, "--config", "/dev/null", "--root", os.path.join(FIXTURES, "kvm-host"),
                    "--listen", f"127.0.0.1:{port}", "--socket", os.path.join(d, "sock"), "--interval", "2",
                    "--pmu", "off", "--bpf", "none"], "hwsigd-gzip.log")
    url = f"http://127.0.0.1:{port}/metrics"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if fetch(url, {})[0] == 200:
                break
        except OSError:
            pass
        time.sleep(0.2)
    for name, accept in (("text", ""), ("protobuf", ACCEPT_PROTOBUF)):
        # Plain, curl --compressed, plain again: the same snapshot when the
        # two plain bodies are equal (one try in a few may straddle one).
        for _ in range(10):
            h = ["-H", f"Accept: {accept}"] if accept else []
            plain = subprocess.run(["curl", "-sf", *h, url], capture_output=True).stdout
            packed = subprocess.run(["curl", "-sf", "--compressed", "-D", os.path.join(d, "headers"), *h, url],
                                    capture_output=True).stdout
            again = subprocess.run(["curl", "-sf", *h, url], capture_output=True).stdout
            if plain == again:
                break
        with open(os.path.join(d, "headers")) as f:
            headers = f.read().lower()
        raw = fetch(url, {"Accept": accept, "Accept-Encoding": "gzip"} if accept else {"Accept-Encoding": "gzip"})
        r.check(f"{name}: curl --compressed gives exactly the plain body of the same snapshot",
                plain == again and len(plain) > 1000 and packed == plain,
                f"plain {len(plain)} B, decompressed {len(packed)} B, gzipped {len(raw[2])} B")
        r.check(f"{name}: Content-Encoding: gzip, Vary: Accept-Encoding, a gzip member half the size or less",
                "content-encoding: gzip" in headers and re.search(r"^vary:.*accept-encoding", headers, re.M)
                and raw[1].get("Content-Encoding") == "gzip" and raw[2][:2] == b"\x1f\x8b"
                and gzip.decompress(raw[2]) == plain and 2 * len(raw[2]) <= len(plain),
                headers.strip().replace("\n", " | "))
        status, hdrs, body = fetch(url, {"Accept": accept} if accept else {})
        r.check(f"{name}: no Accept-Encoding, no gzip", status == 200 and hdrs.get("Content-Encoding") is None
                and body[:2] != b"\x1f\x8b")
    stop(daemon)


def live_part():
    if os.geteuid() != 0:
        print("SKIP: live native histogram checks need root (BPF sched)")
        return
    d = os.path.join(work, "live")
    os.makedirs(d)
    port = free_port()
    sock = os.path.join(d, "sock")
    daemon = spawn([HWSIGD, "--config", "/dev/null", "--listen", f"127.0.0.1:{port}", "--socket", sock,
                    "--interval", "8", "--pmu", "off", "--bpf", "sched"], "hwsigd-live.log")
    url = f"http://127.0.0.1:{port}/metrics"
    text = ""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and "\nhwsig_runq_wait_seconds_count " not in text:
        time.sleep(0.5)
        try:
            text = fetch(url, {})[2].decode()
        except OSError:
            if daemon.poll() is not None:
                break
    if "\nhwsig_runq_wait_seconds_count " not in text:
        with open(os.path.join(work, "hwsigd-live.log")) as f:
            log = f.read().strip().replace("\n", " | ")
        print(f"SKIP: hwsigd --bpf sched exports no run-queue histogram here ({log[-300:]})")
        stop(daemon)
        return
    prom = Prometheus("prom-live", port)
    health, error = prom.target()
    r.check("Prometheus scrapes hwsigd: target up, no scrape error", health == "up" and not error,
            f"health {health}, error '{error}'")
    native = prom.wait_for("histogram_count(hwsig_runq_wait_seconds)")
    classic = prom.query("hwsig_runq_wait_seconds_count")
    r.check("hwsig_runq_wait_seconds ingested native (histogram_count() answers, no _count series)",
            bool(native) and classic == [], f"native {value(native)}, classic {classic}")

    # Counts of one snapshot: a text scrape, then Prometheus's latest
    # sample once it has scraped again, compared when both carry the same
    # hwsig_snapshots_total.
    detail = "no two reads of the same snapshot"
    for _ in range(6):
        t = fetch(url, {})[2].decode()
        snap = re.search(r"^hwsig_snapshots_total (\S+)$", t, re.M)
        count = re.search(r"^hwsig_runq_wait_seconds_count (\S+)$", t, re.M)
        time.sleep(1.5)
        now = time.time()
        p_snap = value(prom.query("hwsig_snapshots_total", now))
        p_count = value(prom.query("histogram_count(hwsig_runq_wait_seconds)", now))
        if snap and count and p_snap == float(snap.group(1)):
            detail = f"snapshot {p_snap:.0f}: native {p_count}, text _count {count.group(1)}"
            break
    r.check("histogram_count() of the native series equals the classic _count of the same snapshot",
            detail.startswith("snapshot") and p_count == float(count.group(1)), detail)

    # A snapshot change Prometheus has samples on both sides of, 3 s in.
    deadline = time.monotonic() + 40
    change = None
    while time.monotonic() < deadline and change is None:
        res = prom.query("hwsig_snapshots_total[40s]")
        vals = res[0]["values"] if res else []
        for (t0, v0), (t1, v1) in zip(vals, vals[1:]):
            if v1 != v0 and vals[0][0] < t1 - 3 and t1 + 3.5 < time.time():
                change = (t1, float(v0), float(v1))
        time.sleep(1)
    if not r.check("Prometheus saw a snapshot change with 3 s of samples on each side", change is not None):
        stop(prom.proc)
        stop(daemon)
        return
    t1 = change[0]
    q = value(prom.query("histogram_quantile(0.99, rate(hwsig_runq_wait_seconds[6s]))", t1 + 3))
    dump = os.path.join(d, "history.hwsd")
    env = dict(os.environ, HWSIG_SOCKET=sock)
    subprocess.run([HWSIGCTL, "dump", "-o", dump], env=env, capture_output=True)
    replay = subprocess.run([HWSIGCTL, "replay", dump, "--format", "json"], env=env, capture_output=True,
                            text=True).stdout.splitlines()
    # The interval that ends with the snapshot Prometheus first saw at t1:
    # the last one to end before t1 (each ends when its snapshot is taken,
    # and /metrics serves it right after).
    ends = [json.loads(line) for line in replay if line.startswith("{")]
    before = [iv for iv in ends if "timestamp" in iv and iv["timestamp"] <= t1 + 0.2]
    stat, lag = None, -1.0
    if before:
        iv = max(before, key=lambda x: x["timestamp"])
        lag = t1 - iv["timestamp"]
        for m in iv["metrics"]:
            if m["id"] == "sched.runq_wait_p99_us" and m["scope"] == "system":
                stat = m["value"]
    detail = f"Prometheus {q * 1e6:.1f} us" if q is not None else "Prometheus: no answer"
    detail += f", hwsigctl {stat} us" if stat is not None else ", hwsigctl: no p99 for that interval"
    if before:
        detail += f" (interval ending {lag:.2f} s before the scrape that saw it, {len(ends)} replayed)"
    r.check("histogram_quantile(0.99) of the native series within a factor of 2 of hwsigctl's p99, same interval",
            q is not None and stat is not None and stat > 0 and 0.5 <= q * 1e6 / stat <= 2 and 0 <= lag < 2.5,
            detail)
    stop(prom.proc)
    stop(daemon)


try:
    missing = [t for t in ("prometheus", "curl") if not shutil.which(t)]
    if missing:
        r.check(f"{' and '.join(missing)} installed (scripts/install-deps)", False)
    else:
        fixture_part()
        gzip_part()
        live_part()
finally:
    for p in procs:
        stop(p)
    shutil.rmtree(work, ignore_errors=True)
raise SystemExit(r.finish())
