#!/usr/bin/env python3
"""Kernel frames get perf's names, sample for sample.

Records a kernel-heavy command (dd from /dev/zero) with perf on this machine
and converts it with conv (kernel symbols from /proc/kallsyms of the running
kernel, which is the recorded one). On that one recording:

  * per kernel function name, the samples whose leaf frame is that kernel
    function in conv's pprof output equal perf's self samples for it
    (`perf report --sort sym --no-children`, the [k] rows, perf also reading
    /proc/kallsyms: --ignore-vmlinux --kallsyms /proc/kallsyms). The whole
    dict is compared: names perf has and conv lacks, names conv has and perf
    lacks, and any count that differs all fail; ties reorder nothing since no
    order is compared;
  * the samples with a kernel leaf frame are as many in conv as in perf,
    named or not;
  * conv info --json says its kernel frames came from kallsyms.

A kernel leaf frame in conv's pprof is a location at a kernel address (the
upper half of the address space on x86_64 and arm64, where kernel text lives).

Nothing here depends on how many samples land where: if the recording has no
kernel sample it is made again (RECORD_TRIES in all), and if none has one the
test is skipped (exit 77), as it is when perf cannot record or kallsyms hides
its addresses.

usage: test_kernel_symbols.py CONV WORKDIR
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "symbolize"))
sys.dont_write_bytecode = True
import pprof_read  # noqa: E402

CONV, WORK0 = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
RECORD_TRIES = 3
HANG = 600  # seconds: a subprocess that takes longer is stuck, not slow
KERNEL_HALF = 1 << 63
passed = failed = 0

# ours alone, nothing an earlier run left: cleared every time. perf and conv get a HOME
# of their own in it (no ~/.debug build-id cache of earlier runs answers for either)
WORK = os.path.join(WORK0, "run")
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(os.path.join(WORK, "home"))
ENV = dict(os.environ, HOME=os.path.join(WORK, "home"), LC_ALL="C", PERF_PAGER="cat", PAGER="cat")
for k in ("DEBUGINFOD_URLS", "DEBUGINFOD_CACHE_PATH", "XDG_CACHE_HOME", "PERF_EXEC_PATH"):
    ENV.pop(k, None)


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else "  -- %s" % (detail,)))
    sys.stdout.flush()
    return cond


def skip(why):
    print("SKIP: %s\n%d passed, %d failed, 1 skipped" % (why, passed, failed))
    sys.exit(1 if failed else 77)


def run(cmd, **kw):
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=HANG, env=ENV, **kw)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, -999, e.stdout or b"", (e.stderr or b"") + b"TIMEOUT")


def perf_kernel(data):
    """({kernel function: self samples}, kernel samples perf left as an address), or None."""
    r = run(["perf", "report", "-f", "-i", data, "--stdio", "-n", "--sort", "sym", "--no-children",
             "-g", "none", "--ignore-vmlinux", "--kallsyms", "/proc/kallsyms"])
    if r.returncode:
        return None
    named, unnamed = collections.Counter(), 0
    for line in r.stdout.decode(errors="replace").splitlines():
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+\[(.)\]\s+(.*\S)\s*$", line)
        if not m or m.group(2) != "k":
            continue
        if re.match(r"^0x[0-9a-f]+$", m.group(3)):
            unnamed += int(m.group(1))
        else:
            named[m.group(3)] += int(m.group(1))
    return dict(named), unnamed


def conv_kernel(pb):
    """({kernel function: samples with it as the leaf}, kernel leaves without a name)."""
    prof = pprof_read.read(pb)
    named, unnamed = collections.Counter(), 0
    for locs, vals in prof["samples"]:
        if not locs:
            continue
        _, addr, names = prof["locations"][locs[0]]
        if addr < KERNEL_HALF:
            continue
        n = vals[0] if vals else 0
        if names and names[-1]:
            named[names[-1]] += n
        else:
            unnamed += n
    return dict(named), unnamed


if not shutil.which("perf"):
    skip("perf is not installed")
try:
    with open("/proc/kallsyms") as f:
        head = [next(f) for _ in range(3)]
except (OSError, StopIteration):
    skip("/proc/kallsyms is not readable")
if all(l.startswith("0000000000000000") for l in head):
    skip("/proc/kallsyms hides addresses here (kptr_restrict)")

data = os.path.join(WORK, "kernel.data")
perf = None
for attempt in range(1, RECORD_TRIES + 1):
    p = run(["perf", "record", "-N", "-q", "-e", "cpu-clock", "-F", "999", "-g", "-o", data,
             "--", "dd", "if=/dev/zero", "of=/dev/null", "bs=64k", "count=100000"])
    if p.returncode:
        skip("perf record failed: %s" % p.stderr.decode(errors="replace")[-200:])
    perf = perf_kernel(data)
    if perf is None:
        check("perf report reads the recording", False, data)
        break
    if sum(perf[0].values()) + perf[1]:
        break
    print("     recording %d has no kernel sample; recording again" % attempt)
else:
    skip("no kernel sample in %d recordings" % RECORD_TRIES)

if perf is not None:
    pnamed, punnamed = perf
    print("     perf: %d kernel samples in %d functions, %d at no symbol" % (
        sum(pnamed.values()) + punnamed, len(pnamed), punnamed))
    pb = os.path.join(WORK, "kernel.pb.gz")
    c = run([CONV, "-q", "--offline", "--pprof", pb, data])
    if check("conv converts the recording", c.returncode == 0, c.stderr.decode(errors="replace")[-300:]):
        cnamed, cunnamed = conv_kernel(pb)
        diff = {k: {"perf": pnamed.get(k), "conv": cnamed.get(k)}
                for k in set(pnamed) | set(cnamed) if pnamed.get(k) != cnamed.get(k)}
        check("every kernel function has perf's self samples in conv, and no other (%d functions)"
              % len(pnamed), not diff, diff)
        check("kernel samples: conv %d == perf %d (named or not)"
              % (sum(cnamed.values()) + cunnamed, sum(pnamed.values()) + punnamed),
              sum(cnamed.values()) + cunnamed == sum(pnamed.values()) + punnamed,
              {"conv unnamed": cunnamed, "perf unnamed": punnamed})
    c = run([CONV, "info", "--json", "--top", "1", "-q", "--offline", data])
    if check("conv info reads the recording", c.returncode == 0, c.stderr.decode(errors="replace")[-300:]):
        src = json.loads(c.stdout).get("symbolization", {}).get("sources", {})
        check("conv info: kernel frames came from kallsyms", src.get("kallsyms", 0) > 0, src)
shutil.rmtree(WORK, ignore_errors=True)
print("%d passed, %d failed, 0 skipped" % (passed, failed))
sys.exit(1 if failed else 0)
