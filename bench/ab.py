#!/usr/bin/env python3
"""Interleaved A/B timing of whole commands: bench/ab.py [-n RUNS] CMD_A CMD_B [CMD_C ...]

Runs the commands in turn, RUNS rounds (default 15), one warm-up round
first, and prints per command the minimum and median wall time, median
user+sys CPU and the largest peak RSS, and each command's median against
the first. Alternating rounds spread a slow phase of a shared machine (this
VM's host) over every command alike, which timing each command's runs in
a row does not. A measurement aid for comparing builds, not a test.
"""
import argparse
import os
import shlex
import statistics
import time


def run(cmd):
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        argv = shlex.split(cmd)
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"ab.py: {cmd!r} exited with {code}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=15)
    ap.add_argument("cmds", nargs="+")
    a = ap.parse_args()
    res = {c: [] for c in a.cmds}
    for c in a.cmds:
        run(c)
    for _ in range(a.n):
        for c in a.cmds:
            res[c].append(run(c))
    base = None
    for i, c in enumerate(a.cmds):
        w = sorted(r[0] for r in res[c])
        cpu = statistics.median(r[1] for r in res[c])
        rss = max(r[2] for r in res[c])
        med = statistics.median(w)
        if base is None:
            base = med
        print(f"[{chr(65 + i)}] min {w[0]:.3f} s  median {med:.3f} s  cpu {cpu:.3f} s  "
              f"rss {rss:.1f} MB  median/A {med / base:.3f}   {c}")


if __name__ == "__main__":
    main()
