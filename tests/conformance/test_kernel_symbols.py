#!/usr/bin/env python3
"""Kernel frames get perf's names.

Records a kernel-heavy command (dd from /dev/zero) with perf on this
machine and compares conv's top functions (kernel symbols from /proc/kallsyms
of the running kernel, which is the recorded one) with
`perf report --sort sym --no-children`: every function perf names with at
least 2 samples has the same count in conv. Addresses perf prints as hex
(no symbol) and conv's [unknown] are left out.

usage: test_kernel_symbols.py CONV WORKDIR
"""
import json
import os
import re
import shutil
import subprocess
import sys

CONV, WORK = sys.argv[1], sys.argv[2]
passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else "  -- %s" % (detail,)))


def skip(why):
    print("SKIP: %s\n0 passed, 0 failed, 1 skipped" % why)
    sys.exit(0)


if not shutil.which("perf"):
    skip("perf is not installed")
os.makedirs(WORK, exist_ok=True)
data = os.path.join(WORK, "kernel.data")
p = subprocess.run(["perf", "record", "-N", "-q", "-e", "cpu-clock", "-F", "999", "-g", "-o", data,
                    "--", "dd", "if=/dev/zero", "of=/dev/null", "bs=64k", "count=100000"],
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   timeout=120)
if p.returncode:
    skip("perf record failed: %s" % p.stderr.decode(errors="replace")[-200:])
with open("/proc/kallsyms") as f:
    head = [next(f) for _ in range(3)]
if all(l.startswith("0000000000000000") for l in head):
    skip("/proc/kallsyms hides addresses here (kptr_restrict)")

r = subprocess.run(["perf", "report", "-f", "-i", data, "--stdio", "-n", "--sort", "sym",
                    "--no-children", "-g", "none"], stdin=subprocess.DEVNULL,
                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=120,
                   env=dict(os.environ, LC_ALL="C"))
perf = {}
for line in r.stdout.decode(errors="replace").splitlines():
    m = re.match(r"\s*[\d.]+%\s+(\d+)\s+\[(.)\]\s+(.*\S)\s*$", line)
    if m and m.group(2) == "k" and not m.group(3).startswith("0x"):
        perf[m.group(3)] = perf.get(m.group(3), 0) + int(m.group(1))
c = subprocess.run([CONV, "info", "--json", "--top", "200", "-q", data], stdin=subprocess.DEVNULL,
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
check("conv reads the recording", c.returncode == 0, c.stderr.decode()[-300:])
if c.returncode == 0:
    d = json.loads(c.stdout)
    conv = {e["name"]: e["samples"] for e in d["top_functions"]}
    check("perf named kernel functions (%d)" % len(perf), len(perf) >= 3, perf)
    diff = {k: (v, conv.get(k)) for k, v in perf.items() if v >= 2 and conv.get(k) != v}
    check("every kernel function perf names (>= 2 samples) has perf's count in conv", not diff,
          diff)
    check("kernel frames came from kallsyms",
          d["symbolization"]["sources"].get("kallsyms", 0) > 0, d["symbolization"]["sources"])
    top = max(perf, key=perf.get) if perf else None
    check("the hottest kernel function (%s) is conv's too" % top,
          top and d["top_functions"] and d["top_functions"][0]["name"] == top,
          d["top_functions"][:3])
shutil.rmtree(WORK, ignore_errors=True)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
