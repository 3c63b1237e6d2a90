#!/usr/bin/env python3
"""Agreement between `addr2line -a -f -i`-style outputs, for symbench.sh.

    compare.py [--examples K] NAME=FILE NAME=FILE [NAME=FILE ...]

The first NAME=FILE is compared with each of the others; the others are also
compared with each other (a baseline: how much the reference tools agree
among themselves). Every FILE must come from a run with -a (each address on
its own line before its frames), which splits the output per address.

Normalization, so that only real differences count:
  - eu-addr2line's "f inlined at FILE:L:C in g" becomes "f";
  - a trailing ":COLUMN" (eu-addr2line) and " (discriminator N)" (GNU) are
    dropped; paths are os.path.normpath'ed ("/x/./Include" == "/x/Include");
  - "??", "??:0" and "??:?" mean unknown; a line "?" is 0.

Per address it reports: the function names of all frames equal (innermost
first), the inline depth equal, the file:line of all frames equal, and all
of these together; also the innermost frame's function and file:line alone.
"""
import os
import re
import sys

ADDR_RE = re.compile(r"^0x[0-9a-fA-F]+$")
DISC_RE = re.compile(r" \(discriminator \d+\)$")
COL_RE = re.compile(r"^(.*):(\d+|\?):(\d+)$")
LINE_RE = re.compile(r"^(.*):(\d+|\?)$")


def norm_func(s):
    s = s.strip()
    i = s.find(" inlined at ")
    if i >= 0:
        s = s[:i]
    return None if s in ("", "??") else s


def norm_loc(s):
    s = DISC_RE.sub("", s.strip())
    m = COL_RE.match(s) or LINE_RE.match(s)
    if not m:
        return (None if s in ("", "??") else os.path.normpath(s), 0)
    path, line = m.group(1), m.group(2)
    line = 0 if line == "?" else int(line)
    if path in ("", "??"):
        return (None, line)
    return (os.path.normpath(path), line)


def parse(path):
    res = {}
    order = []
    cur = None
    pending = None
    with open(path, errors="replace") as fp:
        for raw in fp:
            line = raw.rstrip("\n")
            if ADDR_RE.match(line):
                cur = int(line, 16)
                if cur not in res:
                    order.append(cur)
                res[cur] = []
                pending = None
                continue
            if cur is None:
                continue
            if pending is None:
                pending = norm_func(line)
            else:
                res[cur].append((pending, norm_loc(line)))
                pending = None
    return res, order


def fmt(frames):
    if not frames:
        return "(nothing)"
    return " <- ".join("%s @ %s:%d" % (f or "??", os.path.basename(l[0]) if l[0] else "??", l[1])
                       for f, l in frames)


def compare(na, a, nb, b, order, k):
    n = 0
    cnt = dict(funcs=0, depth=0, lines=0, all=0, inner_func=0, inner_line=0)
    examples = []
    for addr in order:
        if addr not in b:
            continue
        n += 1
        fa, fb = a[addr], b[addr]
        funcs = [f for f, _ in fa] == [f for f, _ in fb]
        depth = len(fa) == len(fb)
        lines = [l for _, l in fa] == [l for _, l in fb]
        inner_func = bool(fa) and bool(fb) and fa[0][0] == fb[0][0]
        inner_line = bool(fa) and bool(fb) and fa[0][1] == fb[0][1]
        cnt["funcs"] += funcs
        cnt["depth"] += depth
        cnt["lines"] += lines
        cnt["all"] += funcs and lines
        cnt["inner_func"] += inner_func
        cnt["inner_line"] += inner_line
        if not (funcs and lines) and len(examples) < k:
            examples.append((addr, fa, fb))
    pct = {key: (100.0 * v / n if n else 0.0) for key, v in cnt.items()}
    print("%s vs %s: %d addresses compared" % (na, nb, n))
    print("  all frames identical (function + file:line): %6.2f%%" % pct["all"])
    print("  function names per frame:                    %6.2f%%" % pct["funcs"])
    print("  inline depth:                                %6.2f%%" % pct["depth"])
    print("  file:line per frame:                         %6.2f%%" % pct["lines"])
    print("  innermost function / innermost file:line:    %6.2f%% / %6.2f%%"
          % (pct["inner_func"], pct["inner_line"]))
    for addr, fa, fb in examples:
        print("  0x%x" % addr)
        print("    %-6s %s" % (na[:6], fmt(fa)))
        print("    %-6s %s" % (nb[:6], fmt(fb)))
    return pct


def main():
    args = sys.argv[1:]
    k = 5
    if len(args) >= 2 and args[0] == "--examples":
        k = int(args[1])
        args = args[2:]
    if len(args) < 2:
        sys.exit(__doc__)
    outs = []
    for spec in args:
        name, _, path = spec.partition("=")
        if not os.path.exists(path):
            print("compare: %s: no output (%s), skipped" % (name, path))
            continue
        res, order = parse(path)
        outs.append((name, res, order))
    if not outs:
        return
    name0, res0, order0 = outs[0]
    for name, res, _ in outs[1:]:
        compare(name0, res0, name, res, order0, k)
        print()
    for i in range(1, len(outs)):
        for j in range(i + 1, len(outs)):
            compare(outs[i][0], outs[i][1], outs[j][0], outs[j][1], outs[i][2], min(k, 2))
            print()


if __name__ == "__main__":
    main()
