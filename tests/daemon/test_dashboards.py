#!/usr/bin/env python3
"""The Grafana dashboards of Documentation/grafana/ (Documentation/grafana.rst)
against the exporter and a real Prometheus. Grafana itself is not installed
here, so the test checks what Grafana would do with them:

Structure (no root): each file is a Grafana 10 dashboard (schemaVersion
>= 36, a uid, unique panel ids and, per dashboard, unique panel titles);
every panel but a row has a unit (fieldConfig.defaults.unit, one of the
Grafana unit ids the dashboards use) and the Prometheus data source
${datasource}, on the panel and on each target; the variables datasource
(type datasource, prometheus) and instance are defined, and every $var a
dashboard uses is defined or one of Grafana's own; the VM drill-down's
$vm is a label_values() query on a per-VM family.

Names (root: hwsigd runs): every PromQL target and variable query, with
the variables substituted ($__rate_interval 1m, $instance the escaped
address of the scrape target, $vm a VM of the run, $topn 5), names only
recording rules of Documentation/prometheus/rules.yml and families of
hwsigd's /metrics; matcher and by/on labels are labels of those families
here (without/ignoring labels may be any the family can carry, e.g. cpu
with per-cpu on). A family /metrics does not have here is allowed only in
a panel of HARDWARE_ABSENT below, and only if `hwsigctl metrics
--prometheus` lists it (the build can export it). A panel reading a family
that needs a hwsigd switch (vm-detail, per-vcpu, culprit-matrix,
resctrl) says "<switch> = true" in its description.

Data (root and BPF): hwsigd (its own socket, port and dump directory;
vm-detail, per-vcpu, culprit-matrix and resctrl on) beside fake QEMU
guests (two whose vCPU threads spin on the same CPU, one of them also
reading a loop device; two idle bench/fake_qemu guests), fio run as a VM
writing and reading the loop device, and a THP toucher; Prometheus 2.42
(its own directory and port, scrape and rule evaluation every second,
rules.yml loaded; classic histograms, as the rules read _bucket series)
scrapes it. Every target of every panel is then run through
/api/v1/query: each must return a finite value, except the panels of
HARDWARE_ABSENT, whose queries must only be valid (no API error), and
whose reason hwsigd itself gives in hwsig_unavailable. A "# " line per
target: dashboard, panel title, data yes/no (and why not), the query.
Without root the names and data parts are skipped (SKIP, counts nothing)."""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_harness import BUILD, HWSIGCTL, TOP, Daemon, Results, free_port  # noqa: E402

r = Results("test_dashboards")
GRAFANA = os.path.join(TOP, "Documentation", "grafana")
RULES = os.path.join(TOP, "Documentation", "prometheus", "rules.yml")
FAKE_QEMU = os.path.join(BUILD, "bench", "fake_qemu")
DASHBOARDS = ("hwsig-host.json", "hwsig-vm.json", "hwsig-neighbours.json")
VM = "victim"  # $vm: the guest that waits, is waited behind and reads a disk
TOPN = "5"
CPU = (os.cpu_count() or 1) - 1

_PMU = "no hardware PMU here (perf cycles: ENOENT)"
_RESCTRL = "no resctrl monitoring here (no /sys/fs/resctrl)"
_VHOST = "no vhost-net workers here (vhost_net not loaded, no tap)"
# (dashboard, panel title) -> (why it has no data here, the hwsig_unavailable
# metric in which hwsigd says so). Grafana.rst lists the same panels.
HARDWARE_ABSENT = {
    ("hwsig-host.json", "Average run delay per timeslice (schedstat)"):
        ("no /proc/schedstat (kernel without CONFIG_SCHEDSTATS)", "sched.runq_wait_avg_us"),
    ("hwsig-host.json", "Huge page utilization"): ("no huge page pool reserved (nr_hugepages 0)",
                                                   "mem.hugepage_utilization"),
    ("hwsig-host.json", "vhost ring stalls per VM"): (_VHOST, "vhost.ring_stalls_ps"),
    ("hwsig-host.json", "TX queue depth p99 per VM"): (_VHOST, "vhost.queue_depth_p99"),
    ("hwsig-host.json", "RX buffers posted p1 per VM"): (_VHOST, "vhost.rx_buffers_p1"),
    ("hwsig-host.json", "RX empty ratio per VM"): (_VHOST, "vhost.rx_empty_ratio"),
    ("hwsig-host.json", "IPC"): (_PMU, "cpu.ipc"),
    ("hwsig-host.json", "Stall ratio"): (_PMU, "cpu.stall_ratio"),
    ("hwsig-host.json", "Misses per 1000 instructions"): (_PMU, "cpu.llc_mpki"),
    ("hwsig-host.json", "LLC and branch miss ratio"): (_PMU, "cpu.llc_miss_ratio"),
    ("hwsig-host.json", "DRAM bandwidth per socket"): ("no uncore memory-controller PMU here", "mem.imc_read_bps"),
    ("hwsig-host.json", "LLC miss bandwidth"): (_PMU, "mem.llc_miss_bps"),
    ("hwsig-host.json", "PMU counting share (multiplexing)"): (_PMU, "cpu.ipc"),
    ("hwsig-host.json", "Memory bandwidth (resctrl MBM)"): (_RESCTRL, "mem.mbm_total_bps"),
    ("hwsig-host.json", "LLC occupancy (resctrl)"): (_RESCTRL, "mem.llc_occupancy_bytes"),
    ("hwsig-host.json", "Thermal headroom, hottest zone"): ("no thermal zone or hwmon sensor here",
                                                            "thermal.headroom_c"),
    ("hwsig-host.json", "Thermal headroom per zone"): ("no thermal zone or hwmon sensor here", "thermal.headroom_c"),
    ("hwsig-vm.json", "vhost ring stalls"): (_VHOST, "vhost.ring_stalls_ps"),
    ("hwsig-vm.json", "TX queue depth p99"): (_VHOST, "vhost.queue_depth_p99"),
    ("hwsig-vm.json", "RX buffers posted p1"): (_VHOST, "vhost.rx_buffers_p1"),
    ("hwsig-vm.json", "RX empty ratio"): (_VHOST, "vhost.rx_empty_ratio"),
    ("hwsig-vm.json", "IPC"): (_PMU, "cpu.ipc"),
    ("hwsig-vm.json", "LLC miss ratio"): (_PMU, "cpu.llc_miss_ratio"),
    ("hwsig-vm.json", "LLC miss bandwidth"): (_PMU, "mem.llc_miss_bps"),
    ("hwsig-vm.json", "Memory bandwidth (resctrl MBM)"): (_RESCTRL, "mem.mbm_total_bps"),
    ("hwsig-vm.json", "LLC occupancy (resctrl)"): (_RESCTRL, "mem.llc_occupancy_bytes"),
    ("hwsig-neighbours.json", "Top $topn VMs by LLC miss bandwidth"): (_PMU, "mem.llc_miss_bps"),
    ("hwsig-neighbours.json", "Top $topn VMs by memory bandwidth (resctrl MBM)"): (_RESCTRL, "mem.mbm_total_bps"),
    ("hwsig-neighbours.json", "Top $topn VMs by vhost ring stalls"): (_VHOST, "vhost.ring_stalls_ps"),
}

# The Grafana unit ids the dashboards may use (a typo shows as a raw suffix).
UNITS = {"s", "ms", "percentunit", "percent", "Bps", "bytes", "ops", "iops", "short", "none", "celsius"}
BUILTIN_VARS = {"__rate_interval", "__interval", "__interval_ms", "__range", "__range_s", "__field", "__data",
                "__series", "__value", "__url_time_range", "__from", "__to", "__dashboard", "__org", "__user",
                "__name", "__all", "__timeFilter"}
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
SWITCHES = ("vm-detail", "per-vcpu", "culprit-matrix", "per-queue", "resctrl")


# ---------------------------------------------------------------- dashboards
def panels_of(board):
    """Every panel, those nested in collapsed rows too."""
    for p in board.get("panels", []):
        yield p
        for q in p.get("panels", []) or []:
            yield q


def var_refs(text):
    """Names of the variables a string uses: $x, ${x}, ${x:fmt}, [[x]]."""
    names = set(re.findall(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:[.:][^}]*)?\}", text))
    names |= set(re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", text))
    names |= set(re.findall(r"\[\[([A-Za-z_][A-Za-z0-9_]*)(?::[^\]]*)?\]\]", text))
    return names


def var_query_text(v):
    q = v.get("query")
    return q.get("query", "") if isinstance(q, dict) else (q or "")


def structure(name, board):
    where = name
    r.check(f"{where}: schemaVersion >= 36 (Grafana 10 reads it as is)", board.get("schemaVersion", 0) >= 36,
            str(board.get("schemaVersion")))
    r.check(f"{where}: has a uid, a title and the hwsig tag",
            bool(board.get("uid")) and bool(board.get("title")) and "hwsig" in board.get("tags", []),
            f"uid {board.get('uid')!r}, title {board.get('title')!r}")
    panels = list(panels_of(board))
    ids = [p.get("id") for p in panels]
    dup = sorted({i for i in ids if ids.count(i) > 1 or i is None}, key=str)
    r.check(f"{where}: {len(panels)} panels, unique ids", panels and not dup,
            f"duplicate or missing: {dup}" if dup else "")
    data = [p for p in panels if p.get("type") != "row"]
    titles = [p.get("title", "") for p in data]
    dup = sorted({t for t in titles if titles.count(t) > 1 or not t})
    r.check(f"{where}: unique, non-empty panel titles", not dup, str(dup) if dup else "")
    bad = [f"{p.get('title')}: {p.get('fieldConfig', {}).get('defaults', {}).get('unit')!r}" for p in data
           if p.get("fieldConfig", {}).get("defaults", {}).get("unit") not in UNITS]
    r.check(f"{where}: every panel has a unit (fieldConfig.defaults.unit)", not bad, "; ".join(bad))
    bad = [p.get("title") for p in data
           if p.get("datasource") != DATASOURCE or not p.get("targets")
           or any(t.get("datasource") != DATASOURCE or not t.get("expr", "").strip() for t in p["targets"])]
    r.check(f"{where}: every panel and target queries ${{datasource}} (prometheus) with an expr", not bad,
            str(bad) if bad else "")
    bad = [p.get("title") for p in data if not p.get("gridPos") or not p.get("description")]
    r.check(f"{where}: every panel has a position and a description", not bad, str(bad) if bad else "")
    variables = {v.get("name"): v for v in board.get("templating", {}).get("list", [])}
    ds = variables.get("datasource", {})
    r.check(f"{where}: variable datasource of type datasource, plugin prometheus",
            ds.get("type") == "datasource" and ds.get("query") == "prometheus", json.dumps(ds)[:200] if ds else "none")
    inst = variables.get("instance", {})
    r.check(f"{where}: variable instance, a label_values query on the data source",
            inst.get("type") == "query" and inst.get("datasource") == DATASOURCE
            and re.match(r"label_values\(\s*hwsig_\w+.*,\s*instance\s*\)$", var_query_text(inst)),
            var_query_text(inst))
    used = set()
    texts = [board.get("title", ""), board.get("description", "")]
    for p in panels:
        texts += [p.get("title", ""), p.get("description", "")]
        texts += [t.get("expr", "") + " " + t.get("legendFormat", "") for t in p.get("targets", [])]
        texts += [link.get("url", "") + " " + link.get("title", "")
                  for link in p.get("fieldConfig", {}).get("defaults", {}).get("links", [])]
    for v in variables.values():
        texts.append(var_query_text(v))
        if isinstance(v.get("datasource"), dict):
            texts.append(v["datasource"].get("uid", ""))
    for t in texts:
        used |= var_refs(t)
    undefined = sorted(used - set(variables) - BUILTIN_VARS)
    r.check(f"{where}: every variable used is defined ({', '.join(sorted(used - BUILTIN_VARS))})",
            not undefined, f"undefined: {undefined}" if undefined else "")
    unused = sorted(set(variables) - used)
    r.check(f"{where}: every variable defined is used", not unused, f"unused: {unused}" if unused else "")
    if name == "hwsig-vm.json":
        vm = variables.get("vm", {})
        r.check(f"{where}: variable vm, label_values(<per-VM family>, vm)",
                vm.get("type") == "query" and vm.get("datasource") == DATASOURCE
                and re.match(r"label_values\(\s*hwsig_vm_\w+(\{[^}]*\})?\s*,\s*vm\s*\)$", var_query_text(vm)),
                var_query_text(vm))
    for key in HARDWARE_ABSENT:
        if key[0] == name:
            r.check(f"{where}: HARDWARE_ABSENT names a panel it has: {key[1]}", key[1] in titles)


def substitute(expr, instance_re):
    out = expr.replace("${__rate_interval}", "1m").replace("$__rate_interval", "1m")
    for var, value in (("instance", instance_re), ("vm", VM), ("topn", TOPN)):
        out = re.sub(r"\$\{" + var + r"(:[^}]*)?\}|\$" + var + r"\b|\[\[" + var + r"\]\]", lambda _: value, out)
    return out


def label_values_to_promql(q):
    """label_values(SELECTOR, LABEL) -> the PromQL that lists the values."""
    m = re.match(r"label_values\((.*),\s*(\w+)\s*\)$", q.strip())
    return f"group by ({m.group(2)}) ({m.group(1)})" if m else None


# ------------------------------------------------------------------- PromQL
TOKEN = re.compile(r"""\s+|(?P<str>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)|(?P<range>\[[^\]]*\])"""
                   r"""|(?P<num>0x[0-9a-fA-F]+|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"""
                   r"""|(?P<id>[A-Za-z_:][A-Za-z0-9_:]*)|(?P<op>=~|!~|!=|==|<=|>=|[-+*/%^=<>(){},])""")
GROUPING = {"by", "without", "on", "ignoring", "group_left", "group_right"}
KEYWORDS = {"and", "or", "unless", "bool", "offset", "atan2", "inf", "nan", "start", "end"}
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk",
                "topk", "quantile"}


def tokens(expr):
    out, pos = [], 0
    while pos < len(expr):
        m = TOKEN.match(expr, pos)
        if not m:
            raise ValueError(f"cannot read PromQL at {expr[pos:pos + 20]!r}")
        pos = m.end()
        if m.lastgroup:
            out.append((m.lastgroup, m.group(m.lastgroup)))
    return out


def parse(expr):
    """(selectors, grouping): selectors a list of (metric, [matcher labels]);
    grouping a list of (keyword, [labels]) for by/without/on/ignoring/group_*."""
    t = tokens(expr)
    selectors, grouping = [], []
    i = 0

    def matchers(j):
        """Labels of the matchers from the '{' at j; (labels, name, index after '}')."""
        labels, name = [], None
        j += 1
        while j < len(t) and t[j][1] != "}":
            if t[j][0] == "id" and j + 2 < len(t) and t[j + 1][1] in ("=", "!=", "=~", "!~"):
                if t[j][1] == "__name__" and t[j + 1][1] == "=":
                    name = t[j + 2][1][1:-1]
                else:
                    labels.append(t[j][1])
                j += 3
            else:
                j += 1
        return labels, name, j + 1

    while i < len(t):
        kind, text = t[i]
        nxt = t[i + 1][1] if i + 1 < len(t) else None
        if kind == "id" and text in GROUPING and nxt == "(":
            j, labels = i + 2, []
            while j < len(t) and t[j][1] != ")":
                if t[j][0] == "id":
                    labels.append(t[j][1])
                j += 1
            grouping.append((text, labels))
            i = j + 1
        elif kind == "id" and (nxt == "(" or text in AGGREGATIONS):
            i += 1  # a function or an aggregation (sum by (x) (...))
        elif kind == "id" and text.lower() in KEYWORDS:
            i += 1
        elif kind == "id":
            if nxt == "{":
                labels, _, i = matchers(i + 1)
            else:
                labels, i = [], i + 1
            selectors.append((text, labels))
        elif text == "{":
            labels, name, i = matchers(i)
            selectors.append((name or "", labels))
        else:
            i += 1
    return selectors, grouping


# ----------------------------------------------------- what the exporter has
def exposition_labels(text):
    """{sample name: set of label names} of a 0.0.4 text."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?\s", line)
        if m:
            out.setdefault(m.group(1), set()).update(re.findall(r'(\w+)="', m.group(2) or ""))
    return out


def listing_labels():
    """{sample name: (labels, switch)} of every family `hwsigctl metrics --prometheus` lists."""
    p = subprocess.run([HWSIGCTL, "metrics", "--prometheus", "--format", "json"], capture_output=True, text=True)
    out = {}
    for line in p.stdout.splitlines():
        f = json.loads(line)
        labels = set(f["labels"])
        if f["type"] == "histogram":
            out[f["family"] + "_bucket"] = (labels | {"le"}, f["switch"])
            out[f["family"] + "_count"] = (labels, f["switch"])
            out[f["family"] + "_sum"] = (labels, f["switch"])
        else:
            out[f["family"]] = (labels, f["switch"])
    return out


def load_rules():
    import yaml
    with open(RULES) as f:
        doc = yaml.safe_load(f)
    return {rule["record"]: rule["expr"] for g in doc["groups"] for rule in g["rules"] if "record" in rule}


class Names:
    """Resolves the names a query reads to the families behind them."""

    def __init__(self, live, listed, rules):
        self.live, self.listed, self.rules = live, listed, rules
        self.rule_labels = {}

    def families(self, name, seen=()):
        """The exporter's sample names a name reads: itself, or a rule's inputs."""
        if name not in self.rules:
            return {name}
        out = set()
        for sel, _ in parse(self.rules[name])[0]:
            if sel and sel not in seen:
                out |= self.families(sel, seen + (name,))
        return out

    def labels(self, name, any_switch=False):
        """Label names a series of this name carries here (None: unknown
        name); with any_switch, also those a switch or hardware would add."""
        base = {"instance", "job"}
        if name in self.rules:
            key = (name, any_switch)
            if key not in self.rule_labels:
                expr = self.rules[name]
                sels, grouping = parse(expr)
                got = set()
                for sel, _ in sels:
                    got |= self.labels(sel, any_switch) or set()
                for kw, labels in grouping:
                    if kw == "without":
                        got -= set(labels)
                if "histogram_quantile" in expr:
                    got.discard("le")
                self.rule_labels[key] = got | base
            return self.rule_labels[key]
        if name not in self.live and name not in self.listed:
            return None
        got = set(self.live.get(name, set()))
        if any_switch or name not in self.live:  # not exported here: what it would carry
            got |= self.listed.get(name, (set(), ""))[0]
        return got | base

    def switches(self, name):
        return {self.listed[f][1] for f in self.families(name) if f in self.listed and self.listed[f][1]}


def name_problems(expr, names, description=None):
    """(problems, names not exported here, switches needed) of one query:
    every name is a rule or a family, every label one its series carry,
    and the description names the switches its families need."""
    try:
        sels, grouping = parse(expr)
    except ValueError as e:
        return [str(e)], set(), set()
    problems, missing = [], set()
    for sel, labels in sels:
        if not sel:
            problems.append("a selector without a metric name")
            continue
        if ":" in sel:
            if sel not in names.rules:
                problems.append(f"{sel}: no such recording rule in rules.yml")
                continue
        elif sel not in names.live and sel not in names.listed:
            problems.append(f"{sel}: no such family in /metrics or hwsigctl metrics --prometheus")
            continue
        if not any(f in names.live for f in names.families(sel)):
            missing.add(sel)
        have = names.labels(sel)
        for lab in labels:
            if lab not in have:
                problems.append(f"{sel} has no label {lab} (it has {', '.join(sorted(have))})")
    known = [sel for sel, _ in sels if sel and names.labels(sel) is not None]
    union = set().union(*(names.labels(sel) for sel in known))
    for kw, labels in grouping:
        for lab in labels:
            if kw in ("without", "ignoring"):
                ok = any(lab in (names.labels(f, any_switch=True) or set())
                         for sel in known for f in names.families(sel) | {sel})
            else:
                ok = lab in union
            if not ok:
                problems.append(f"{kw} ({lab}): no series of the query has it")
    need = set()
    if description is not None:
        for sel in known:
            need |= names.switches(sel)
        problems += [f"the description does not say '{s} = true'" for s in sorted(need)
                     if f"{s} = true" not in description]
    return problems, missing, need


def check_names(where, title, expr, names, absent, description=None):
    """name_problems() as a check; returns the names not exported here."""
    problems, missing, need = name_problems(expr, names, description)
    said = f" (switches: {', '.join(sorted(need))})" if need else ""
    r.check(f"{where}: '{title}' names only rules and families of the exporter, with their labels{said}",
            not problems, "; ".join(problems) + f" in {expr}" if problems else "")
    if missing and not absent:
        r.check(f"{where}: '{title}' reads only families hwsigd exports here", False,
                f"not exported: {', '.join(sorted(missing))} (add the panel to HARDWARE_ABSENT with a reason?)")
    return missing


def checker_catches(names):
    """The name check refuses what it is meant to refuse."""
    for what, expr, desc in (
            ("a family the exporter does not have", 'rate(hwsig_vm_nonexistent_total{vm="x"}[1m])', None),
            ("a recording rule rules.yml does not have", "vm:hwsig_nonexistent:rate1m", None),
            ("a label the family does not have", 'hwsig_vm_vcpus{device="sda"}', None),
            ("a label a rule's series do not have", 'instance:hwsig_cpu_busy:ratio_rate1m{vm="x"}', None),
            ("a by() label no series has", "sum by (culprit_vm) (hwsig_vm_vcpus)", None),
            ("a family needing a switch the description does not name",
             "rate(hwsig_vm_preempted_by_vm_total[1m])", "Preemptions by VM.")):
        problems, _, _ = name_problems(expr, names, desc)
        r.check(f"the name check refuses {what}", problems, expr)
    problems, missing, _ = name_problems("rate(hwsig_cpu_cycles_total[1m])", names)
    r.check("the name check tells a family this host does not export (PMU) from an unknown one",
            not problems and missing == {"hwsig_cpu_cycles_total"}, f"{problems} {missing}")


# ----------------------------------------------------------------- workload
FAKE_GUEST = ("import ctypes, mmap, os, random, sys, threading, time\n"
              "libc = ctypes.CDLL(None)\n"
              "libc.prctl(15, b'qemu-system-x86', 0, 0, 0)\n"
              "cpu, disk = int(sys.argv[1]), sys.argv[2]\n"
              "def vcpu():\n"
              "    libc.prctl(15, b'CPU 0/KVM', 0, 0, 0)\n"
              "    os.sched_setaffinity(0, {cpu})\n"
              "    while True:\n"
              "        pass\n"
              "threading.Thread(target=vcpu, daemon=True).start()\n"
              "if disk == '-':\n"
              "    time.sleep(3600)\n"
              "fd = os.open(disk, os.O_RDONLY | os.O_DIRECT)\n"
              "buf = mmap.mmap(-1, 4096)\n"
              "blocks = os.lseek(fd, 0, os.SEEK_END) // 4096\n"
              "while True:\n"
              "    os.preadv(fd, [buf], random.randrange(blocks) * 4096)\n"
              "    time.sleep(0.004)\n")
# Faults transparent huge pages (THP mode madvise or always) every half second.
THP_TOUCHER = ("import mmap, time\n"
               "while True:\n"
               "    m = mmap.mmap(-1, 32 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)\n"
               "    m.madvise(mmap.MADV_HUGEPAGE)\n"
               "    for off in range(0, 32 << 20, 1 << 21):\n"
               "        m[off] = 1\n"
               "    m.close()\n"
               "    time.sleep(0.5)\n")


class Workload:
    """Every process and the loop device of the run; close() ends them all."""

    def __init__(self, work):
        self.work, self.procs, self.loop = work, [], None

    def spawn(self, args, **kw):
        p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             **kw)
        self.procs.append(p)
        return p

    def start(self):
        image = os.path.join(self.work, "disk.img")
        with open(image, "wb") as f:
            f.truncate(128 << 20)
        self.loop = subprocess.run(["losetup", "-f", "--show", image], capture_output=True,
                                   text=True).stdout.strip() or None
        if not r.check("workload: a loop device", self.loop and self.loop.startswith("/dev/loop"), str(self.loop)):
            return False
        self.spawn([sys.executable, "-c", FAKE_GUEST, str(CPU), self.loop, "-name", f"guest={VM}"])
        self.spawn([sys.executable, "-c", FAKE_GUEST, str(CPU), "-", "-name", "guest=batch7"])
        for name in ("idle01", "idle02"):
            self.spawn(["qemu-system-x86_64", "-name", f"guest={name}", "-smp", "2"], executable=FAKE_QEMU)
        qemu_fio = os.path.join(self.work, "qemu-system-x86_64")
        os.symlink(shutil.which("fio"), qemu_fio)
        self.spawn([qemu_fio, "-name", "guest=db2", "--thread", f"--filename={self.loop}", "--rw=randrw",
                    "--bs=4k", "--direct=1", "--ioengine=psync", "--rate_iops=300", "--time_based",
                    "--runtime=600", f"--output={os.path.join(self.work, 'fio.out')}"])
        self.spawn([sys.executable, "-c", THP_TOUCHER])
        time.sleep(0.5)
        dead = [p.args[:3] for p in self.procs if p.poll() is not None]
        return r.check("workload: 2 spinning guests (one reading the loop device), 2 idle fake_qemu guests, "
                       "fio as guest db2, a THP toucher", not dead, f"exited: {dead}" if dead else "")

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        if self.loop:
            subprocess.run(["losetup", "-d", self.loop])
            self.loop = None


class Prometheus:
    def __init__(self, work, target_port):
        d = os.path.join(work, "prometheus")
        os.makedirs(d)
        with open(os.path.join(d, "prometheus.yml"), "w") as f:
            f.write("global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}\n"
                    f"rule_files: ['{RULES}']\n"
                    "scrape_configs:\n  - job_name: hwsig\n"
                    f"    static_configs: [{{targets: ['127.0.0.1:{target_port}']}}]\n")
        self.port = free_port()
        self.log = open(os.path.join(d, "log"), "w")
        self.proc = subprocess.Popen(["prometheus", f"--config.file={d}/prometheus.yml",
                                      f"--storage.tsdb.path={d}/tsdb", f"--web.listen-address=127.0.0.1:{self.port}",
                                      "--log.level=warn"], stdout=self.log, stderr=subprocess.STDOUT)

    def api(self, path, **params):
        """(data, None) or (None, error)."""
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}?" + urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                body = json.load(resp)
        except urllib.error.HTTPError as e:
            try:
                body = json.load(e)
            except ValueError:
                return None, f"HTTP {e.code}"
        except (OSError, ValueError) as e:
            return None, str(e)
        if body.get("status") != "success":
            return None, f"{body.get('errorType')}: {body.get('error')}"
        return body["data"], None

    def query(self, expr):
        """(result list, error)."""
        data, err = self.api("query", query=expr)
        return (data["result"], None) if data else (None, err)

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def finite_values(result):
    vals = []
    for s in result or []:
        v = s.get("value", [0, "NaN"])[1]
        try:
            f = float(v)
        except ValueError:
            continue
        if math.isfinite(f):
            vals.append(f)
    return vals


# --------------------------------------------------------------------- main
def live(boards, work):
    wl = Workload(work)
    d = prom = None
    try:
        if not wl.start():
            return
        for sub in ("hwsigd", "dumps"):
            os.makedirs(os.path.join(work, sub))
        d = Daemon(["--interval", "1", "--dump-dir", os.path.join(work, "dumps"), "--vm-detail", "true",
                    "--per-vcpu", "true", "--culprit-matrix", "true", "--resctrl", "true"],
                   directory=os.path.join(work, "hwsigd"))
        if not r.check("hwsigd ready", d.ready(60), d.log_text()[-300:]):
            return
        # Two snapshots in: every collector has had an interval.
        text, deadline = "", time.monotonic() + 20
        while time.monotonic() < deadline and not re.search(r'^hwsig_vm_wait_behind_vm_seconds_total\{vm="'
                                                            + VM + '"', text, re.M):
            time.sleep(0.5)
            try:
                text = d.scrape()
            except OSError:  # 503 until the first snapshot
                pass
        live_labels = exposition_labels(text)
        listed = listing_labels()
        rules = load_rules()
        r.check(f"/metrics: {len(live_labels)} sample names, the listing {len(listed)}, rules.yml {len(rules)} rules",
                len(live_labels) > 20 and len(listed) > 50 and len(rules) > 20)
        names = Names(live_labels, listed, rules)
        checker_catches(names)
        unavailable = set(re.findall(r'^hwsig_unavailable\{metric="([^"]+)"', text, re.M))
        instance = f"127.0.0.1:{d.port}"
        instance_re = re.escape(instance).replace("\\", "\\\\")

        # The names and labels, independent of data.
        targets = []  # (board, title, refId, expr)
        for name, board in boards.items():
            for p in panels_of(board):
                if p.get("type") == "row":
                    continue
                key = (name, p["title"])
                absent = key in HARDWARE_ABSENT
                for t in p.get("targets", []):
                    expr = substitute(t["expr"], instance_re)
                    missing = check_names(f"{name} [{t['refId']}]", p["title"], expr, names, absent,
                                          p.get("description", ""))
                    targets.append((name, p["title"], t["refId"], expr, absent, missing))
                if absent:
                    why, metric = HARDWARE_ABSENT[key]
                    r.check(f"{name}: '{p['title']}' is absent for a reason hwsigd gives: "
                            f"hwsig_unavailable{{metric=\"{metric}\"}}", metric in unavailable,
                            f"not in /metrics ({why})")
            for v in board["templating"]["list"]:
                q = var_query_text(v)
                if v.get("type") == "query":
                    check_names(name, f"variable {v['name']}", label_values_to_promql(substitute(q, instance_re))
                                or q, names, False)

        prom = Prometheus(work, d.port)
        deadline = time.monotonic() + 30
        up = None
        while time.monotonic() < deadline:
            res, _ = prom.query('up{job="hwsig"}')
            if res and res[0]["value"][1] == "1":
                up = time.monotonic()
                break
            time.sleep(0.5)
        if not r.check("Prometheus scrapes hwsigd (up == 1)", up is not None, f"see {prom.log.name}"):
            return
        # 1m windows hold enough samples after about 20 scrapes.
        time.sleep(max(0.0, up + 20 - time.monotonic()))
        _, err = prom.api("rules")
        r.check("Prometheus loaded rules.yml", err is None, str(err))

        for name, board in boards.items():
            for v in board["templating"]["list"]:
                if v.get("type") != "query":
                    continue
                q = label_values_to_promql(substitute(var_query_text(v), instance_re))
                res, err = prom.query(q)
                values = sorted({s["metric"].get(v["name"], "")
                                 for s in res or []})
                want = instance if v["name"] == "instance" else VM
                r.check(f"{name}: variable {v['name']} lists {want}", want in values, f"{q}: {values} {err or ''}")

        # Every target; those that should have data get up to 40 s more.
        answers = {}
        pending = list(range(len(targets)))
        deadline = time.monotonic() + 40
        while pending:
            for i in pending:
                answers[i] = prom.query(targets[i][3])
            pending = [i for i in pending if not targets[i][4] and not finite_values(answers[i][0])
                       and answers[i][1] is None]
            if not pending or time.monotonic() > deadline:
                break
            time.sleep(2)
        by_panel = {}
        for i, (name, title, ref, expr, absent, missing) in enumerate(targets):
            by_panel.setdefault((name, title), []).append((ref, expr, absent) + answers[i])
        for (name, title), rows in by_panel.items():
            absent = (name, title) in HARDWARE_ABSENT
            for ref, expr, _, res, err in rows:
                vals = finite_values(res)
                shown = f"{len(vals)} series, e.g. {vals[0]:.4g}" if vals else ("error" if err else "no data")
                if absent and not vals:
                    shown += f"; expected here: {HARDWARE_ABSENT[(name, title)][0]}"
                print(f"# {name} | {title} [{ref}] | data {'yes' if vals else 'no'} ({shown}) | {expr}")
                if absent:
                    r.check(f"{name}: '{title}' [{ref}] is a valid query (no data expected: "
                            f"{HARDWARE_ABSENT[(name, title)][0]})", err is None, str(err))
                else:
                    r.check(f"{name}: '{title}' [{ref}] returns data", err is None and vals,
                            f"{err or 'no finite value'}: {expr}")
    finally:
        if prom:
            prom.close()
        if d:
            d.stop()
            d.close()
        wl.close()


def main():
    boards = {}
    for name in DASHBOARDS:
        path = os.path.join(GRAFANA, name)
        try:
            with open(path) as f:
                boards[name] = json.load(f)
        except (OSError, ValueError) as e:
            r.check(f"{name} is JSON", False, str(e))
            continue
        structure(name, boards[name])
    with open(os.path.join(TOP, "Documentation", "grafana.rst")) as f:
        doc = " ".join(f.read().split())
    unlisted = sorted(title for _, title in HARDWARE_ABSENT if title not in doc)
    r.check("grafana.rst lists every panel of HARDWARE_ABSENT", not unlisted, str(unlisted) if unlisted else "")
    extra = sorted(set(os.listdir(GRAFANA)) - set(DASHBOARDS)) if os.path.isdir(GRAFANA) else []
    r.check("Documentation/grafana/ holds the three dashboards and nothing else", not extra,
            str(extra) if extra else "")
    if os.geteuid() != 0:
        print("SKIP: the names and data checks need root (hwsigd's BPF collectors)")
        return r.finish()
    missing = [t for t in ("prometheus", "fio", "losetup") if not shutil.which(t)]
    if not r.check("prometheus, fio and losetup are installed", not missing, str(missing) if missing else ""):
        return r.finish()
    if not r.check("bench/fake_qemu is built (tests/daemon/run)", os.access(FAKE_QEMU, os.X_OK), FAKE_QEMU):
        return r.finish()
    work = tempfile.mkdtemp(prefix="hwsig-dashboards-")
    try:
        live(boards, work)
    except Exception as e:  # noqa: BLE001 - counted, after the cleanup in live()
        import traceback
        traceback.print_exc()
        r.check("the live part runs to its end", False, repr(e))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return r.finish()


if __name__ == "__main__":
    sys.exit(main())
