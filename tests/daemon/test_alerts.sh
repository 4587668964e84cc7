#!/bin/bash
# Documentation/prometheus/alerts.yml: promtool checks and tests it
# (alerts_test.yml), every alert has a test that fires and one that stays
# quiet, carries a severity, a summary, a description and a runbook_url
# naming a runbook page that ships (Documentation/runbooks/, listed in its
# index (test_docs parses it), with hwsigctl commands that
# exist), reads only series hwsigd exports or rules.yml records, and compares
# with the verdicts' default thresholds (thresholds.rst's table, which
# tests/unit/test_thresholds_doc.cpp holds to threshold_defs()). One ok/not
# ok each. Needs no build.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
dir=$top/Documentation/prometheus
alerts=$dir/alerts.yml

if ! command -v promtool >/dev/null; then
	not_ok "promtool not installed (apt-get install prometheus)"
	finish
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# quiet CMD...: run it, show its output only when it fails.
quiet() {
	local said
	said=$("$@" 2>&1) && return 0
	echo "$said" | head -30 | sed 's/^/    /' >&2
	return 1
}
check "promtool check rules alerts.yml" quiet promtool check rules "$alerts"
check "promtool test rules alerts_test.yml" quiet bash -c "cd '$dir' && promtool test rules alerts_test.yml"

# lint WHAT [ALERTS_FILE]: one of the checks below, in Python (PyYAML).
lint() {
	python3 - "$top" "$1" "${2:-$alerts}" <<'EOF'
import glob, os, re, sys
import yaml

top, what, alerts_path = sys.argv[1:4]
doc = f"{top}/Documentation"
PREFIX = "file:///usr/share/doc/hwsig/html/runbooks/"
problems = []

text = open(alerts_path).read()
rules = [r for g in yaml.safe_load(text)["groups"] for r in g["rules"]]
alerts = [r for r in rules if "alert" in r]


def kebab(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


def seconds(d):
    n = 0
    for v, u in re.findall(r"(\d+)([smhd])", str(d)):
        n += int(v) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[u]
    return n


if what == "tested":
    # A test that fires: a non-empty exp_alerts. A quiet one: an empty
    # exp_alerts evaluated after for: (and the 1 m rate window) has passed,
    # so that "quiet" is not merely "still pending".
    tests = yaml.safe_load(open(f"{doc}/prometheus/alerts_test.yml"))["tests"]
    fires, calm = set(), set()
    for a in alerts:
        for t in tests:
            for c in t.get("alert_rule_test", []):
                if c["alertname"] != a["alert"]:
                    continue
                if c.get("exp_alerts"):
                    fires.add(a["alert"])
                elif seconds(c["eval_time"]) > seconds(a.get("for", "0s")) + 60:
                    calm.add(a["alert"])
    for a in alerts:
        if a["alert"] not in fires:
            problems.append(f"{a['alert']}: no test where it fires")
        if a["alert"] not in calm:
            problems.append(f"{a['alert']}: no test where it stays quiet past its for:")

elif what == "annotated":
    for a in alerts:
        if a.get("labels", {}).get("severity") not in ("critical", "warning", "info"):
            problems.append(f"{a['alert']}: severity is not critical, warning or info")
        for k in ("summary", "description", "runbook_url"):
            if not a.get("annotations", {}).get(k):
                problems.append(f"{a['alert']}: no {k} annotation")
    names = [a["alert"] for a in alerts]
    if len(set(names)) != len(names):
        problems.append("an alert name is used twice")

elif what == "runbooks":
    # runbook_url = the package's path of Documentation/runbooks/<kebab>.rst
    # rendered; every page has its alert and is listed in the index.
    pages = {os.path.basename(p)[:-4] for p in glob.glob(f"{doc}/runbooks/*.rst")} - {"index"}
    index = open(f"{doc}/runbooks/index.rst").read() if os.path.exists(f"{doc}/runbooks/index.rst") else ""
    if not index:
        problems.append("no Documentation/runbooks/index.rst")
    wanted = set()
    for a in alerts:
        name = kebab(a["alert"])
        wanted.add(name)
        url = a.get("annotations", {}).get("runbook_url", "")
        if url != f"{PREFIX}{name}.html":
            problems.append(f"{a['alert']}: runbook_url {url!r}, not {PREFIX}{name}.html")
        if name not in pages:
            problems.append(f"{a['alert']}: no Documentation/runbooks/{name}.rst")
        elif "``" + " ".join(a["expr"].split()) + "``" not in open(f"{doc}/runbooks/{name}.rst").read():
            problems.append(f"{a['alert']}: {name}.rst does not quote its expr as it is")
        if f"<{name}.html>" not in index:
            problems.append(f"{a['alert']}: runbooks/index.rst does not link {name}.html")
    for p in sorted(pages - wanted):
        problems.append(f"Documentation/runbooks/{p}.rst: no alert of that name")

elif what == "table":
    # prometheus.rst, "Alerts": one row per alert with its for: and severity.
    section = open(f"{doc}/prometheus.rst").read().split("\nAlerts\n------\n", 1)
    rows = {}
    if len(section) == 2:
        for row in re.findall(r'^   ("Hwsig.*)$', section[1], re.M):
            cells = next(__import__("csv").reader([row], skipinitialspace=True))
            rows[cells[0]] = cells
    for a in alerts:
        cells = rows.pop(a["alert"], None)
        if not cells:
            problems.append(f"{a['alert']}: no row in prometheus.rst's Alerts table")
        elif cells[3] != a.get("for", "none") or cells[4] != a["labels"].get("severity") \
                or cells[5] != f"``{kebab(a['alert'])}``":
            problems.append(f"{a['alert']}: its row says for {cells[3]}, {cells[4]}, {cells[5]}")
    for name in rows:
        problems.append(f"prometheus.rst's Alerts table has {name}, alerts.yml does not")

elif what == "commands":
    # Every `hwsigctl CMD [--opt]` a runbook shows is a command of
    # hwsigctl.rst's synopsis and every option one that page lists.
    ref = open(f"{doc}/hwsigctl.rst").read()
    cmds = set(re.findall(r"^    hwsigctl ([a-z]+)", ref, re.M))
    opts = set(re.findall(r"(--[a-z][a-z-]*)", ref))
    for p in sorted(glob.glob(f"{doc}/runbooks/*.rst")):
        for line in open(p):
            for m in re.finditer(r"hwsigctl ([a-z]+)([^`\n]*)", line):
                if m[1] not in cmds:
                    problems.append(f"{os.path.basename(p)}: hwsigctl {m[1]}: no such command")
                for o in re.findall(r"(--[a-z][a-z-]*)", m[2]):
                    if o not in opts:
                        problems.append(f"{os.path.basename(p)}: hwsigctl {m[1]} {o}: no such option")

elif what == "series":
    # Every series an expr reads: a family of prometheus.rst's budget table
    # (held to the exporter's registry by a unit test), a self metric of
    # hwsigd.rst, a record of rules.yml, or up.
    prom = open(f"{doc}/prometheus.rst").read()
    budget = prom.split(".. budget-table-begin", 1)[1].split(".. budget-table-end", 1)[0]
    known = set(re.findall(r'^   "(hwsig_[a-z0-9_]+)"', budget, re.M))
    known |= set(re.findall(r"``(hwsig_[a-z0-9_]+)", open(f"{doc}/hwsigd.rst").read()))
    records = {r["record"] for g in yaml.safe_load(open(f"{doc}/prometheus/rules.yml"))["groups"]
               for r in g["rules"]}
    for a in alerts:
        expr = re.sub(r'"[^"]*"', '""', a["expr"])  # label values are not names
        for n in re.findall(r"\b([a-z_:][a-zA-Z0-9_:]*)\s*(?=[\[{)\s]|$)", expr):
            if ":" in n:
                if n not in records:
                    problems.append(f"{a['alert']}: {n} is not a record of rules.yml")
            elif n.startswith("hwsig_"):
                family = re.sub(r"_(bucket|count|sum)$", "", n)
                if n not in known and family not in known:
                    problems.append(f"{a['alert']}: {n} is not a family hwsigd exports")

elif what == "thresholds":
    # The defaults and units of thresholds.rst's key table, by its columns.
    lines = open(f"{doc}/thresholds.rst").read().split("The keys\n", 1)[1].splitlines()
    border = next(i for i, l in enumerate(lines) if l.startswith("===="))
    cols = [(m.start(), m.end()) for m in re.finditer(r"=+", lines[border])]
    defaults = {}
    for l in lines[border + 3:]:
        if l.startswith("===="):
            break
        m = re.match(r"``([a-z_.0-9]+)``", l)
        if m:
            default = l[cols[1][0]:cols[2][0]].strip()
            unit = l[cols[2][0]:cols[3][0]].strip()
            defaults[m[1]] = (float(default), unit)
    if len(defaults) < 10:
        problems.append(f"thresholds.rst: only {len(defaults)} keys read from its table")
    # From the key's unit to the unit of the series the alert compares
    # (seconds, ratios 0..1, as the exporter and rules.yml have them).
    to_prom = {"ms": 1e-3, "%": 1e-2, "degC": 1, "descriptors": 1, "stalls/s": 1,
               "insn/cycle": 1, "MPKI": 1, "": 1}
    # "# threshold:" comments, in the order of the alerts.
    said = re.findall(r"^\s*# threshold:(.*)\n(?:\s*#.*\n)*\s*- alert: (\S+)", text, re.M)
    comments = {name: c for c, name in said}
    compared = re.compile(r"(?:==|!=|>=|<=|>|<)\s*(?:bool\s+)?([-+]?[0-9][0-9.eE+-]*)")
    for a in alerts:
        name = a["alert"]
        if name not in comments:
            problems.append(f"{name}: no '# threshold:' comment above it")
            continue
        keys = re.sub(r"\(.*\)", "", comments[name]).split()
        numbers = [float(x) for x in compared.findall(a["expr"])]
        if len(keys) != len(numbers):
            problems.append(f"{name}: '# threshold:' names {len(keys)}, the expr compares {len(numbers)} numbers")
            continue
        for k, got in zip(keys, numbers):
            if k == "-":
                continue
            key, _, div = k.partition("/")
            if key not in defaults:
                problems.append(f"{name}: {key} is not a key of thresholds.rst")
                continue
            value, unit = defaults[key]
            if unit not in to_prom:
                problems.append(f"{name}: {key}'s unit {unit!r} has no conversion here")
                continue
            want = value * to_prom[unit] / (float(div) if div else 1)
            if abs(got - want) > 1e-9 * max(1, abs(want)):
                problems.append(f"{name}: compares with {got:g}, {k} is {want:g} ({value:g} {unit})")
    if not problems:
        print(f"{len(alerts)} alerts, {sum(len(re.sub(r'[(].*[)]', '', c).split()) for c in comments.values())} numbers")

for p in problems:
    print("    " + p, file=sys.stderr)
sys.exit(1 if problems else 0)
EOF
}
check "every alert has a test that fires and one that stays quiet past its for:" lint tested
check "every alert has a severity, a summary, a description and a runbook_url" lint annotated
check "every runbook_url names a Documentation/runbooks page that quotes its expr and index.rst lists; every page an alert" lint runbooks
check "prometheus.rst's Alerts table has every alert, its for: and severity" lint table
check "the runbooks' hwsigctl commands and options exist (hwsigctl.rst)" lint commands
check "every series read is exported by hwsigd or recorded by rules.yml" lint series
if said=$(lint thresholds 2>&1); then
	ok "every threshold is its verdict key's default (thresholds.rst): $said"
else
	not_ok "a threshold differs from its verdict key's default"
	echo "$said" >&2
fi
# The comparison sees a wrong number: steal at 20% where cpu.steal_pct
# says 10.
sed '/alert: HwsigCpuSteal/,/for:/ s/> 0\.1$/> 0.2/' "$alerts" >"$tmp/wrong.yml"
check "a wrong threshold was planted in a copy" bash -c "! cmp -s '$alerts' '$tmp/wrong.yml'"
caught() {
	local said
	said=$(lint thresholds "$tmp/wrong.yml" 2>&1) && return 1
	grep -q "HwsigCpuSteal: compares with 0.2" <<<"$said"
}
check "alerts.yml with steal at 20% fails the threshold check" caught

# Every runbook parses without a docutils warning: test_docs checks every
# page of Documentation/, runbooks/ included.
finish
