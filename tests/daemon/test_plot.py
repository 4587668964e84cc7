#!/usr/bin/env python3
"""hwsigctl plot: a real dump (hwsigd on this host, a fake QEMU guest whose
vCPU threads contend, SIGUSR1) plotted to SVG, the SVG rendered to a PNG
by headless Chromium, and the PNG's pixels checked: a frame per panel
where the SVG put it, the red trigger line at the trigger's x in every
panel, each series' colour inside its panels. Then the command's errors
and the label of a rule-triggered dump. One PNG is kept in out/plot/."""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

from daemon_harness import Daemon, Results, HWSIGCTL, FIXTURES, TOP, fixture_with_hugepages
from png_pixels import Png

r = Results("test_plot")
root = os.geteuid() == 0
SVG = "{http://www.w3.org/2000/svg}"
OUT = os.path.join(TOP, "out", "plot")
# The command's defaults (hwsigctl plot --help): those present are the panels.
DEFAULTS = ["cpu.ipc", "sched.runq_wait_p99_us", "psi.cpu_some_pct", "mem.imc_read_bps", "mem.imc_bps",
            "io.latency_p99_us", "vhost.queue_depth_p99"]
VM = "plot<&1"  # escaped in the SVG; a browser must still show it

# A process that looks like QEMU to VM discovery, with two 'CPU n/KVM'
# threads that spin and sleep so the scheduler collector sees it wait.
FAKE_GUEST = ("import ctypes, sys, threading, time\n"
              "libc = ctypes.CDLL(None)\n"
              "libc.prctl(15, b'qemu-system-x86', 0, 0, 0)\n"
              "named = threading.Barrier(3)\n"
              "def vcpu(n):\n"
              "    libc.prctl(15, f'CPU {n}/KVM'.encode(), 0, 0, 0)\n"
              "    named.wait()\n"
              "    while True:\n"
              "        t = time.monotonic()\n"
              "        while time.monotonic() - t < 0.003:\n"
              "            pass\n"
              "        time.sleep(0.002)\n"
              "for n in range(2):\n"
              "    threading.Thread(target=vcpu, args=(n,), daemon=True).start()\n"
              "named.wait()\n"
              "print('ready', flush=True)\n"
              "time.sleep(float(sys.argv[1]))\n")


def ctl(args, env=None, binary=False):
    return subprocess.run([HWSIGCTL] + args, env=env, capture_output=True, text=not binary, timeout=120)


def wait_for_file(directory, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        # hwsigd creates the directory with its first dump.
        files = [f for f in os.listdir(directory) if f.endswith(".hwsd")] if os.path.isdir(directory) else []
        if files:
            time.sleep(0.3)  # renamed into place whole: a short grace for the log line
            return os.path.join(directory, sorted(files)[-1])
        time.sleep(0.1)
    return None


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def screenshot(svg_path, png_path, width, height):
    """The SVG as Chromium draws it, at 1 CSS px = 1 device px."""
    profile = tempfile.mkdtemp(prefix="hwsig-plot-chromium-")
    try:
        p = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            "--force-device-scale-factor=1", f"--user-data-dir={profile}",
                            f"--window-size={width},{height}", f"--screenshot={png_path}",
                            "file://" + os.path.abspath(svg_path)],
                           capture_output=True, text=True, timeout=120)
        return p.returncode == 0 and os.path.exists(png_path), p.stderr[-400:]
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def parse_svg(path):
    """Panels (metric, frame box, series scopes and colours), the trigger
    line's x and span, the x of each '0 s' tick label, the legend."""
    doc = ET.parse(path).getroot()
    out = {"width": float(doc.get("width")), "height": float(doc.get("height")), "panels": [],
           "trigger": None, "zero_ticks": [], "legend": {}, "label": None}
    for el in doc:
        if el.tag == SVG + "g" and el.get("class") == "panel":
            panel = {"metric": el.get("data-metric"), "series": {}, "absent": None}
            for child in el:
                cls = child.get("class")
                if cls == "frame":
                    panel["frame"] = tuple(float(child.get(k)) for k in ("x", "y", "width", "height"))
                elif cls == "series":
                    panel["series"][child.get("data-scope")] = child.get("stroke") or child.get("fill")
                elif cls == "absent":
                    panel["absent"] = child.text
                elif child.tag == SVG + "text" and child.text == "0 s":
                    out["zero_ticks"].append(float(child.get("x")))
            out["panels"].append(panel)
        elif el.get("class") == "trigger":
            out["trigger"] = {k: float(el.get(k)) for k in ("x1", "x2", "y1", "y2")}
            out["trigger_colour"] = el.get("stroke")
        elif el.get("class") == "trigger-label":
            out["label"] = el.text
        elif el.get("class") == "legend":
            out["legend"][el.get("data-scope")] = el.get("stroke")
    return out


def hex_rgb(colour):
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def near(px, rgb, tol=24):
    return all(abs(a - b) <= tol for a, b in zip(px, rgb))


def check_png(png, svg):
    """The pixel checks; returns nothing, counts through r."""
    r.check("PNG is the SVG's size", (png.width, png.height) == (int(svg["width"]), int(svg["height"])),
            f"{png.width}x{png.height} vs {svg['width']}x{svg['height']}")
    red = hex_rgb(svg["trigger_colour"])
    tx = svg["trigger"]["x1"]
    dark = lambda px: max(px) < 0x70  # the frame stroke (#333333), antialiasing aside
    for panel in svg["panels"]:
        x, y, w, h = panel["frame"]
        name = panel["metric"]
        # Frame: its top and bottom rows dark across the width (the
        # trigger's columns aside), the rows 3 px outside it not. A series
        # at its panel's minimum is drawn over the bottom edge (2 px over
        # 1 px, dashed for some scopes), so on the frame's rows a coloured
        # pixel (a series, or its blend with the stroke) counts as the edge.
        cols = [c for c in range(int(x) + 3, int(x + w) - 3) if abs(c - tx) > 3]
        coloured = lambda px: max(px) - min(px) > 48
        def share(row, on_edge):
            return sum(on_edge(png.pixel(c, row)) for c in cols) / len(cols)
        edge = lambda px: dark(px) or coloured(px)
        top, bottom = int(y), int(y + h)
        shares = [share(top, edge), share(bottom, edge), share(top - 3, dark), share(bottom + 3, dark)]
        r.check(f"{name}: frame edges at rows {top} and {bottom} (the SVG's), not 3 px off",
                shares[0] > 0.95 and shares[1] > 0.95 and shares[2] < 0.5 and shares[3] < 0.5,
                "dark shares " + ", ".join(f"{s:.2f}" for s in shares))
        left_dark = sum(dark(png.pixel(int(x), row)) for row in range(top + 2, bottom - 2)) / (h - 4)
        r.check(f"{name}: frame's left edge at column {int(x)}", left_dark > 0.95, f"{left_dark:.2f}")
        # Trigger: in 12 rows spread over the frame, the red columns are
        # within 2 px of the line's x, and red is nowhere else in the row.
        rows = [int(y + h * (k + 0.5) / 12) for k in range(12)]
        bad = []
        for row in rows:
            reds = [c for c in range(int(x), int(x + w) + 1) if near(png.pixel(c, row), red, 40)]
            if not reds or any(abs(c - tx) > 2 for c in reds):
                bad.append((row, reds[:6]))
        r.check(f"{name}: the red trigger line at x {tx:g} (+-2 px) through the frame", not bad, str(bad[:3]))
        if panel["absent"]:
            continue
        for scope, colour in panel["series"].items():
            rgb = hex_rgb(colour)
            hits = sum(near(png.pixel(c, row), rgb, 16) for row in range(top + 1, bottom)
                       for c in range(int(x) + 1, int(x + w), 2))
            r.check(f"{name}: {scope} drawn in its colour {colour} inside the frame", hits >= 5, f"{hits} pixels")


def host_dump(work):
    """A dump of this host with the fake guest, triggered by SIGUSR1."""
    guest = subprocess.Popen([sys.executable, "-c", FAKE_GUEST, "120", "-name", f"guest={VM}"],
                             stdout=subprocess.PIPE, text=True)
    dumps = os.path.join(work, "dumps")
    # Up before hwsigd: its first /proc scan finds the guest (the next
    # scan is seconds later).
    up = guest.stdout.readline().strip() == "ready"
    d = Daemon(["--pmu", "perf", "--interval", "0.5", "--dump-dir", dumps])
    try:
        r.check("fake guest up", up)
        r.check("hwsigd ready", d.ready(60), d.log_text()[-300:])
        time.sleep(6)
        d.proc.send_signal(signal.SIGUSR1)
        path = wait_for_file(dumps, 20)
        r.check("SIGUSR1 wrote a dump", path is not None, d.log_text()[-300:])
        return path
    finally:
        d.stop()
        d.close()
        guest.kill()
        guest.wait()


def plot_host(work, dump):
    svg_path = os.path.join(work, "incident.svg")
    p = ctl(["plot", dump, "-o", svg_path])
    r.check("plot: exit 0, says what it wrote", p.returncode == 0 and f"{svg_path} written" in p.stderr,
            p.stderr.strip())
    if p.returncode != 0:
        return
    svg = parse_svg(svg_path)
    # What the dump holds, through replay (the same derivation).
    import json
    lines = ctl(["replay", dump, "--format", "json"]).stdout.splitlines()
    present = {}
    for line in lines:
        for m in json.loads(line)["metrics"]:
            if not m["scope"].startswith(("cpu:", "vq:", "pid:")):
                present.setdefault(m["id"], set()).add(m["scope"])
    want = [m for m in DEFAULTS if m in present]
    got = [pn["metric"] for pn in svg["panels"]]
    r.check("the panels: the defaults with values in the dump, in order (at least run-queue p99 and PSI)",
            got == want and {"sched.runq_wait_p99_us", "psi.cpu_some_pct"} <= set(got), f"{got} vs {want}")
    runq = next((pn for pn in svg["panels"] if pn["metric"] == "sched.runq_wait_p99_us"), None)
    r.check(f"run-queue p99: a series for the host and one for vm:{VM}",
            runq is not None and {"system", "vm:" + VM} <= set(runq["series"]),
            str(runq and sorted(runq["series"])))
    r.check("every series scope has a legend entry in the same colour",
            all(svg["legend"].get(s) == c for pn in svg["panels"] for s, c in pn["series"].items()),
            str(svg["legend"]))
    t = svg["trigger"]
    frames = [pn["frame"] for pn in svg["panels"]]
    r.check("the trigger line: vertical, from above the first frame to the bottom of the last",
            t is not None and t["x1"] == t["x2"] and t["y1"] < frames[0][1] and
            abs(t["y2"] - (frames[-1][1] + frames[-1][3])) < 1, str(t))
    r.check("... at the '0 s' tick of every panel (the trigger is t = 0)",
            len(svg["zero_ticks"]) == len(frames) and all(abs(z - t["x1"]) <= 1 for z in svg["zero_ticks"]),
            f"{svg['zero_ticks']} vs {t['x1']}")
    r.check("... labelled SIGUSR1", svg["label"] == "SIGUSR1", str(svg["label"]))
    with open(svg_path) as f:
        text = f.read()
    r.check("the VM's name is escaped in the file", "vm:plot&lt;&amp;1" in text and "plot<&" not in text)

    png_path = os.path.join(work, "incident.png")
    if not r.check("chromium is installed (scripts/install-deps)", chromium() is not None):
        return
    ok, err = screenshot(svg_path, png_path, int(svg["width"]), int(svg["height"]))
    if not r.check("headless Chromium rendered the SVG to a PNG", ok, err):
        return
    os.makedirs(OUT, exist_ok=True)
    shutil.copy(png_path, os.path.join(OUT, "incident.png"))
    shutil.copy(svg_path, os.path.join(OUT, "incident.svg"))
    check_png(Png(png_path), svg)

    # Same dump, same bytes; -o - is the file's bytes.
    again = ctl(["plot", dump, "-o", "-"], binary=True)
    r.check("plot -o -: exit 0, the same bytes as the file (output is deterministic)",
            again.returncode == 0 and again.stdout == open(svg_path, "rb").read(), again.stderr[-200:])
    p = ctl(["plot", dump, "-o", "-", "--vm", VM, "--metrics", "sched.runq_wait_avg_us,vhost.ring_stalls_ps"])
    vm_svg = os.path.join(work, "vm.svg")
    with open(vm_svg, "w") as f:
        f.write(p.stdout)
    sv = parse_svg(vm_svg) if p.returncode == 0 else None
    r.check("--metrics chooses the panels in its order; --vm keeps the host and that VM",
            sv is not None and [pn["metric"] for pn in sv["panels"]] ==
            ["sched.runq_wait_avg_us", "vhost.ring_stalls_ps"] and
            set(sv["legend"]) <= {"system", "vm:" + VM} | {s for s in sv["legend"] if not s.startswith("vm:")},
            p.stderr.strip())
    absent = sv and sv["panels"][1]["absent"]
    r.check("a metric without values in the dump: a panel saying 'not in this dump'",
            bool(absent) and absent.startswith("not in this dump"), str(absent))


def errors(work, dump):
    p = ctl(["plot", dump, "-o", os.path.join(work, "x.svg"), "--metrics", "sched.runq_wait_p99,psi.cpu_some_pct"])
    r.check("an unknown metric: exit 1, one line naming it and the close ids",
            p.returncode == 1 and p.stderr.count("\n") == 1 and "unknown metric 'sched.runq_wait_p99'" in p.stderr
            and "sched.runq_wait_p99_us" in p.stderr and not os.path.exists(os.path.join(work, "x.svg")),
            p.stderr.strip())
    p = ctl(["plot", dump, "-o", "/proc/hwsig-plot.svg"])
    r.check("an unwritable output: exit 1 with the path and reason", p.returncode == 1 and
            "/proc/hwsig-plot.svg" in p.stderr and p.stderr.count("\n") == 1, p.stderr.strip())
    empty = os.path.join(work, "empty.hwsd")
    open(empty, "w").close()
    p = ctl(["plot", empty, "-o", os.path.join(work, "e.svg")])
    r.check("an empty dump: exit 1, the reader's message naming the file", p.returncode == 1 and
            empty in p.stderr and "empty file" in p.stderr, p.stderr.strip())
    p = ctl(["plot", dump])
    r.check("no -o: usage error (exit 2)", p.returncode == 2 and "-o" in p.stderr, p.stderr.strip())
    p = ctl(["plot", dump, "-o", "-", "--vm", "nosuch"])
    r.check("--vm of a VM not in the dump: exit 1 naming it", p.returncode == 1 and "'nosuch'" in p.stderr,
            p.stderr.strip())


def rule_label(work):
    """A rule-triggered dump (the fixture host's huge page pool, 3 of 4
    pages used) is labelled with its trigger."""
    dumps = os.path.join(work, "rule-dumps")
    root = fixture_with_hugepages(4, 1)
    d = Daemon(["--root", root, "--pmu", "off", "--bpf", "none",
                "--interval", "0.05", "--dump-dir", dumps, "--dump-rule", "mem.hugepage_utilization{hugepages:2048kB} > 0.5 for 3"])
    try:
        r.check("hwsigd ready (fixture host, one rule)", d.ready(20), d.log_text()[-300:])
        path = wait_for_file(dumps, 10)
    finally:
        d.stop()
        d.close()
        shutil.rmtree(os.path.dirname(root), ignore_errors=True)
    if not r.check("the rule wrote a dump", path is not None):
        return
    info = dict(l.split("\t", 1) for l in ctl(["replay", path, "--info"]).stdout.splitlines() if "\t" in l)
    out = os.path.join(work, "rule.svg")
    p = ctl(["plot", path, "-o", out])
    svg = parse_svg(out) if p.returncode == 0 else {}
    # The dump's header says 'rule' (not which one) today: the label is
    # what the header says.
    r.check("the trigger's label is the dump's trigger (a rule)", p.returncode == 0 and
            svg["label"] == info.get("trigger") and svg["label"] == "rule",
            f"{svg.get('label')} vs {info.get('trigger')}; {p.stderr.strip()}")


work = tempfile.mkdtemp(prefix="hwsig-plot-test-")
if r.check("root (BPF collectors for the host dump)", root):
    dump = host_dump(work)
    if dump:
        plot_host(work, dump)
        errors(work, dump)
rule_label(work)
raise SystemExit(r.finish())
