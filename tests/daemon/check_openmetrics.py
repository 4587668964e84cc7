#!/usr/bin/env python3
"""Structural check of an OpenMetrics 1.0 text exposition on stdin (what
promtool 2.42 cannot parse): one '# EOF' at the end; every family declared
once by TYPE (HELP, UNIT optional) before its samples, not interleaved with
another; sample names = family name + the suffixes its type allows; a UNIT
is the family name's suffix; label syntax and escapes; histogram buckets
ascending in le, cumulative, ending in +Inf equal to _count. Prints the
first problem and exits 1; silent and 0 when the text is sound."""
import math
import re
import sys

NAME = r'[a-zA-Z_:][a-zA-Z0-9_:]*'
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(r'^(' + NAME + r')(?:\{(' + LABEL + r'(?:,' + LABEL + r')*)?\})? (\S+)$')
SUFFIXES = {
    'counter': ['_total', '_created'],
    'gauge': [''],
    'info': ['_info'],
    'histogram': ['_bucket', '_sum', '_count', '_created'],
    'stateset': [''],
    'unknown': [''],
}


def number(s):
    if s in ('+Inf', 'Inf'):
        return math.inf
    if s == '-Inf':
        return -math.inf
    return float(s)


def labels_of(text):
    return re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', text or '')


def main():
    text = sys.stdin.read()
    if not text.endswith('# EOF\n'):
        return 'does not end in "# EOF\\n"'
    lines = text[:-1].split('\n')
    if lines.count('# EOF') != 1:
        return '"# EOF" more than once'
    families = {}
    done = set()
    current = None
    hist = {}  # (family, labels without le) -> [(le, count)]
    counts = {}
    for n, line in enumerate(lines[:-1], 1):
        m = re.match(r'^# (HELP|TYPE|UNIT) (' + NAME + r') ?(.*)$', line)
        if m:
            kind, fam, rest = m.groups()
            if fam != current:
                if fam in done or fam in families and fam != current:
                    return f'line {n}: family {fam} declared again or interleaved'
                if current:
                    done.add(current)
                current = fam
                families[fam] = {}
            if kind in families[fam]:
                return f'line {n}: second {kind} for {fam}'
            families[fam][kind] = rest
            if kind == 'TYPE' and rest not in SUFFIXES:
                return f'line {n}: unknown type {rest}'
            if kind == 'UNIT' and rest and not fam.endswith('_' + rest):
                return f'line {n}: unit {rest} is not the suffix of {fam}'
            if kind == 'TYPE' and rest == 'counter' and fam.endswith('_total'):
                return f'line {n}: counter family name {fam} ends in _total'
            continue
        if line.startswith('#'):
            return f'line {n}: stray comment {line!r}'
        m = SAMPLE.match(line)
        if not m:
            return f'line {n}: not a sample: {line!r}'
        name, labels, value = m.groups()
        if current is None or 'TYPE' not in families[current]:
            return f'line {n}: sample {name} before any TYPE'
        typ = families[current]['TYPE']
        suffix = name[len(current):] if name.startswith(current) else None
        if suffix not in SUFFIXES[typ]:
            return f'line {n}: sample {name} does not belong to {typ} family {current}'
        try:
            v = number(value)
        except ValueError:
            return f'line {n}: bad value {value!r}'
        pairs = labels_of(labels)
        if len({k for k, _ in pairs}) != len(pairs):
            return f'line {n}: repeated label name'
        if typ == 'histogram':
            rest = tuple((k, x) for k, x in pairs if k != 'le')
            if suffix == '_bucket':
                le = [x for k, x in pairs if k == 'le']
                if len(le) != 1:
                    return f'line {n}: bucket without one le'
                b = hist.setdefault((current, rest), [])
                if b and (number(le[0]) <= b[-1][0] or v < b[-1][1]):
                    return f'line {n}: buckets not ascending or not cumulative'
                b.append((number(le[0]), v))
            elif suffix == '_count':
                counts[(current, rest)] = v
    for key, b in hist.items():
        if not b or b[-1][0] != math.inf:
            return f'{key}: no +Inf bucket'
        if counts.get(key) != b[-1][1]:
            return f'{key}: _count {counts.get(key)} != +Inf bucket {b[-1][1]}'
    return None


if __name__ == '__main__':
    problem = main()
    if problem:
        print(problem)
        sys.exit(1)
