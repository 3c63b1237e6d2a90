#!/usr/bin/env python3
"""conv's folded stacks against its pprof, on every recording we have.

For each tests/fixtures recording (--part fixtures) and every perf.data file
of the shared corpus (--part corpus: ../shared/corpus, or $CONV_CORPUS; exit
77, skipped, when absent), it converts once with `-F pprof,folded` (symbols
from local files, --offline) and once more with -n (frames left unnamed),
then rebuilds the folded stacks from the pprof with tests/tools/pprofdec.py,
an independent decoder: per sample its frames root first (a location's
inline functions as frames of their own, outermost first; a location
without lines as LIB+0xFILE_OFFSET, LIB being the file name or perf's
[kernel.kallsyms] for the kernel's map, "[unknown]" unmapped, as perf
names them), the
value of the CPU-time event (a clock event, else cycles) when it has
samples, else of the first event with samples (its <event>_samples column),
summed per distinct list of names. Checks:
  * the folded file holds exactly those stacks with exactly those counts, and
    nothing else (counts equal the pprof's per stack);
  * its lines are sorted by their frames (names as bytes, root first) and no
    stack repeats;
  * with --folded-value EVENT, the counts are EVENT's weighted column;
  * a second run gives a byte-identical file.

usage: test_folded.py CONV WORKDIR [--part fixtures|corpus]
Exit 1 on a failure, 77 (skipped) when nothing could be checked.
"""
import argparse
import collections
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
import pprofdec  # noqa: E402
import testlib as t  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("conv")
ap.add_argument("work")
ap.add_argument("--part", choices=("fixtures", "corpus"))
A = ap.parse_args()
CONV, WORK = A.conv, A.work
CORPUS = os.environ.get("CONV_CORPUS", os.path.join(os.path.dirname(REPO), "shared", "corpus"))
t.quiet_ok = True  # hundreds of checks in the corpus: failures only
skipped = 0  # recordings conv refuses as a whole


def sh(cmd, timeout=300):
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout)


def clean(name):
    return name.replace(";", ":").replace("\n", " ").replace("\r", " ")


def loc_frames(prof, lid):
    """A location's frame names, outermost first, as the folded stacks name them."""
    mid, addr, lines = prof["locs"][lid]
    named = [prof["funcs"][fid][0] for fid, _ in lines]
    if lines:
        m = prof["maps"].get(mid)
        out = []
        for n in reversed(named):
            out.append(n if n else unnamed(m, addr))
        return out
    return [unnamed(prof["maps"].get(mid), addr)]


def unnamed(m, addr):
    if not m:
        return "[unknown]"
    lib = os.path.basename(m["file"]) or m["file"] or "[unknown]"
    if m["file"].startswith("[kernel.kallsyms]"):
        lib = "[kernel.kallsyms]"  # the kernel's map is [kernel.kallsyms]_text
    if addr >= m["start"]:
        # (64-bit arithmetic, as the pprof's fields are: the kernel's offset may exceed its start)
        return "%s+0x%x" % (lib, (addr - m["start"] + m["offset"]) & 0xFFFFFFFFFFFFFFFF)
    return "%s+0x%x" % (lib, addr)


def expected(prof, col):
    cache = {}
    stacks = collections.Counter()
    for locs, values, _ in prof["samples"]:
        v = values[col]
        if v <= 0:
            continue
        names = []
        for lid in reversed(locs):
            if lid not in cache:
                cache[lid] = [clean(x) for x in loc_frames(prof, lid)]
            names += cache[lid]
        stacks[tuple(names)] += v
    return stacks


def read_folded(path):
    lines = open(path, "rb").read().decode("utf-8", "surrogateescape").splitlines()
    got, order = {}, []
    for ln in lines:
        stack, _, count = ln.rpartition(" ")
        key = tuple(stack.split(";"))
        order.append(key)
        got[key] = got.get(key, 0) + int(count)
    return got, order, len(lines)


def sort_key(stack):
    return [s.encode("utf-8", "surrogateescape") for s in stack]


CYCLES = ("cycles", "cpu-cycles", "ref-cycles")


def first_col(prof):
    """The <event>_samples column conv counts by default: the CPU-time event's when it has
    samples (a clock event, its periods in nanoseconds; else cycles), else the first event with
    samples. Off-CPU time is no event of the recording's."""
    def sampled(i):
        return sum(v[i] for _, v, _ in prof["samples"]) > 0
    ts = prof["types"]
    evs = [i for i in range(0, len(ts) - 1, 2) if ts[i][0].endswith("_samples") and ts[i][0] != "off_cpu_samples"]
    for pick in (lambda i: ts[i + 1][1] == "nanoseconds", lambda i: ts[i + 1][0] in CYCLES):
        for i in evs:
            if pick(i):
                return i if sampled(i) else next((j for j in evs if sampled(j)), 0)
    for i, (t, _) in enumerate(ts):
        if i % 2 == 0 and sampled(i):
            return i
    return 0


if A.part == "corpus" and not os.path.isdir(CORPUS):
    t.skip_all("corpus not found at %s (set CONV_CORPUS)" % CORPUS)
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
files = []
if A.part != "corpus":
    files = sorted(glob.glob(os.path.join(REPO, "tests", "fixtures", "*.data")) +
                   glob.glob(os.path.join(REPO, "tests", "fixtures", "attr", "*.data")) +
                   [os.path.join(REPO, "samples", "perf.data")])
if A.part != "fixtures" and os.path.isdir(CORPUS):
    for f in sorted(glob.glob(os.path.join(CORPUS, "**", "*"), recursive=True)):
        if os.path.isfile(f) and not re.search(r"\.(buildids|txt|md)$", f):
            with open(f, "rb") as fh:
                if fh.read(8) in (b"PERFILE2", b"2ELIFREP", b"PERFFILE"):
                    files.append(f)

class Checks:
    """One recording's checks, made on a worker thread and counted (in the files' order) on the
    main one: testlib's counts are not for threads."""

    def __init__(self):
        self.results, self.stacks, self.refused = [], 0, False

    def check(self, name, cond, detail=""):
        self.results.append((name, bool(cond), detail))
        return bool(cond)


def compare_into(c, name, folded, prof, col):
    exp = expected(prof, col)
    got, order, nlines = read_folded(folded)
    c.check("%s: one line per distinct stack" % name, nlines == len(got), "%d lines, %d stacks" % (nlines, len(got)))
    c.check("%s: lines sorted by frames" % name, order == sorted(order, key=sort_key))
    missing = [k for k in exp if got.get(k) != exp[k]]
    extra = [k for k in got if k not in exp]
    ok = c.check("%s: counts equal the pprof's per stack (%d stacks, %d samples)" %
                 (name, len(exp), sum(exp.values())), not missing and not extra,
                 "%d differ or missing, %d extra; first: %r got %r want %r" %
                 (len(missing), len(extra), (missing or extra)[0] if missing or extra else None,
                  got.get((missing or extra or [None])[0]), exp.get((missing or extra or [None])[0])))
    return ok, len(exp)


def check_file(i, f):
    """The conversions of one recording and their checks (conv runs one after the other)."""
    c = Checks()
    name = os.path.relpath(f, os.path.dirname(REPO))
    for mode in ("symbols", "-n"):
        base = os.path.join(WORK, "o%d%s" % (i, mode))
        opts = ["-n"] if mode == "-n" else ["--offline", "-d", os.path.join(REPO, "samples", "debug")]
        r = sh([CONV, "-q"] + opts + ["-F", "pprof,folded", "-o", base, f])
        if r.returncode not in (0, 3):
            # a corpus file (fuzzer inputs) conv refuses as a whole: unreadable (exit 2), or no event
            # for the folded stacks to count (exit 4, said): nothing to compare. A committed fixture
            # must convert, and no input may crash conv.
            ours = not os.path.relpath(f, REPO).startswith("..")
            err = r.stderr.decode(errors="replace")
            if ours or not (r.returncode == 2 or (r.returncode == 4 and "no event to show" in err)):
                c.check("%s %s: conv converts it (exit 0 or 3)%s" % (name, mode, "" if ours else
                        ", or refuses it as unreadable (2) or without events (4)"),
                        False, "exit %d: %s" % (r.returncode, err[-300:]))
            else:
                c.refused = True
            break
        prof = pprofdec.read(base + ".pb.gz")
        col = first_col(prof)
        ok, n = compare_into(c, "%s %s" % (name, mode), base + ".folded", prof, col)
        if ok:
            c.stacks += n
        if mode == "symbols":
            r2 = sh([CONV, "-q"] + opts + ["--folded", base + ".again", f])
            c.check("%s: byte-identical on a second run" % name,
                    r2.returncode in (0, 3) and open(base + ".folded", "rb").read() == open(base + ".again", "rb").read())
            # the weighted column of each event with samples
            for k in range(0, len(prof["types"]), 2):
                ev = prof["types"][k][0]
                if not ev.endswith("_samples") or ev == "off_cpu_samples":
                    continue
                if sum(v[k] for _, v, _ in prof["samples"]) == 0:
                    continue
                out = base + ".w%d.folded" % k
                r3 = sh([CONV, "-q"] + opts + ["--folded", out, "--folded-value", ev[:-len("_samples")], f])
                if c.check("%s: --folded-value %s runs" % (name, ev[:-8]), r3.returncode in (0, 3), r3.stderr.decode()[-300:]):
                    compare_into(c, "%s --folded-value %s" % (name, ev[:-8]), out, prof, k + 1)
    return c


# Two recordings at a time: the test is conv runs one after another (~240 on the corpus, each
# ~0.25 s of CPU under ASan), and started first in the suite it overlaps the serial tests' tail.
stacks_checked = 0
with concurrent.futures.ThreadPoolExecutor(2) as ex:
    for c in ex.map(check_file, range(len(files)), files):
        for name, cond, detail in c.results:
            t.check(name, cond, detail)
        stacks_checked += c.stacks
        skipped += c.refused
if not files or t.passed + t.failed == 0:
    t.skip_all("no recording to check")
print("%d stacks checked; %d recordings refused as a whole" % (stacks_checked, skipped))
t.finish()
