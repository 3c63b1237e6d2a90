#!/usr/bin/env python3
"""Lists the longest functions of conv's C files (issue 33: none in
pipeline/, cli/, reader/ longer than about 100 lines unless a flat table or a
switch).

    scripts/funclen.py [-n N] [DIR...]      (default: pipeline cli reader)

A function is a top-level definition: a line that starts at column 0 with
an identifier, ends its declarator with ')' and is followed by a line that is
exactly '{'; it ends at the next line that is exactly '}'. That is the
layout the tree uses (checked by clang-format), so no C parser is needed.
Lines counted: from the declarator to the closing brace, both included.
"""
import os
import re
import sys

DECL = re.compile(r"^[A-Za-z_].*\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i] == "{" and i > 0:
            # the declarator may span lines: walk back to its first line
            j = i - 1
            while j > 0 and not DECL.match(lines[j]) and lines[j].startswith((" ", "\t")):
                j -= 1
            m = DECL.match(lines[j])
            k = i + 1
            while k < len(lines) and lines[k] != "}":
                k += 1
            if m and not lines[j].startswith(("struct ", "enum ", "union ")) or (m and "(" in lines[j]):
                yield m.group(1), j + 1, k - j + 1
            i = k
        i += 1


def main():
    args = sys.argv[1:]
    n = 10
    if args[:1] == ["-n"]:
        n = int(args[1])
        args = args[2:]
    dirs = args or ["pipeline", "cli", "reader"]
    rows = []
    for d in dirs:
        for root, _, files in os.walk(d):
            for name in sorted(files):
                if name.endswith(".c"):
                    p = os.path.join(root, name)
                    for fn, line, length in functions(p):
                        rows.append((length, f"{p}:{line}", fn))
    rows.sort(key=lambda r: (-r[0], r[1]))
    for length, where, fn in rows[:n]:
        print(f"{length:5d}  {fn}  {where}")


if __name__ == "__main__":
    main()
