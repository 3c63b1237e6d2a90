#!/usr/bin/env python3
"""conv --merge OUT over the committed recordings against one conversion per input.

Inputs: samples/perf.data and fixtures of different shapes (file and pipe
mode, zstd, dwarf stacks, tracepoints and off-CPU time, system-wide,
several events), plus plain.data once more under another name (the same
pids in two inputs) and pipe-zstd.data through a pipe ('-'). Each is converted on its own (conv -n --pprof --jfr),
then all of them with --merge. Checks, with the independent decoder
(pprofdec) and the JDK's `jfr`:
- every merged sample has a `file` label naming one of the inputs, as given;
- per (file, labels, stack) the merged values equal the single-file
  profile's, by value type name (types of other inputs read 0);
- the mappings of the two copies of one recording stay two sets, none shared;
- `jfr summary`: per sample event type, the merged count is the sum of the
  single-file counts; every sampled thread of a single-file recording is in
  the merged one (`jfr print --json`), and the merged recording names as
  many threads as the single ones together, told apart as the JDK's parser
  does (tests/tools/JfrThreads.java: pool keys), so the copy's threads,
  whose tids are the original's, are threads of their own;
- `--merge-label host` and `--label K=V` (for the inputs after it) label
  the samples so; -o with --merge is a usage error (exit 1);
- `go tool pprof -raw` loads the merged profile (skipped without go).
Then with symbols, over the arm64 fixtures (their binaries and debug files
are committed, and several inputs share libc and ld.so) and samples/perf.data,
one of them again through a pipe:
- per (file, labels, stack by function names and lines) the merged values
  equal the single symbolized conversions', at -j 1 and -j 2 (same bytes);
- conv -v: with every input a file, no symbol file is opened a second time
  (each was asked every input's addresses at once, then shed), and the
  object table holds at most less than a run converting the same inputs on
  their own (-o DIR/), which keeps every file open for the next input.

usage: test_merge.py CONV WORKDIR
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import pprofdec  # noqa: E402
import testlib as t  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures",
                                "arm64"))
import a64sources  # noqa: E402

CONV, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FX = os.path.join(REPO, "tests", "fixtures")
NAMES = [os.path.join(REPO, "samples", "perf.data")] + [
    os.path.join(FX, n) for n in ("plain.data", "pipe.data", "pipe-zstd.data", "zstd.data", "dwarf.data",
                                  "multi.data", "tracepoint.data", "syswide.data", os.path.join("attr", "pipe-fork.data"))]
# the jdk types that describe the recording rather than its samples
INFO_TYPES = {"jdk.Metadata", "jdk.CheckPoint", "jdk.ActiveSetting", "jdk.OSInformation", "jdk.CPUInformation",
              "jdk.NativeLibrary"}

shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
os.chdir(WORK)
inputs = [n for n in NAMES if os.path.exists(n)]
# the same recording twice: its pids in two inputs
shutil.copyfile(os.path.join(FX, "plain.data"), "again.data")
inputs.append("again.data")
inputs.append("-")
with open(os.path.join(FX, "pipe-zstd.data"), "rb") as f:
    PIPED = f.read()


def run(argv, what):
    # '-' among the inputs: a pipe-mode recording through an actual pipe
    p = t.sh(argv, timeout=600, stdin=PIPED if "-" in argv else None)
    if p.returncode != 0:
        t.check(what, False, "exit %d: %s" % (p.returncode, t.text(p.stderr)[-2000:]))
        t.finish()
    return p


def stack_key(prof, ids):
    """A stack by what it names: each frame's mapping file, address and lines."""
    out = []
    for lid in ids:
        mid, addr, lines = prof["locs"][lid]
        mfile = prof["maps"][mid]["file"] if mid else ""
        out.append((mfile, addr, tuple((prof["funcs"][f][0], ln) for f, ln in lines)))
    return tuple(out)


def totals(prof, drop=()):
    """(labels without drop, stack) -> {type name: value} for the non-zero values."""
    out = collections.defaultdict(collections.Counter)
    for (ids, vals, lab), raw in zip(prof["samples"], prof["labels"]):
        lk = tuple(sorted((k, v) for k, v in lab.items() if k not in drop))
        for (ty, _), v in zip(prof["types"], vals):
            if v:
                out[(lk, stack_key(prof, ids))][ty] += v
    return out


def jfr_counts(path):
    p = t.sh(["jfr", "summary", path], timeout=300)
    counts = {}
    for line in t.text(p.stdout).splitlines():
        m = re.match(r"\s*(\S+)\s+(\d+)\s+\d+\s*$", line)
        if m and m.group(1) not in INFO_TYPES:
            counts[m.group(1)] = int(m.group(2))
    return p.returncode, counts


def jfr_threads(path):
    """The distinct sampled threads of the recording's sample events, as jfr prints them."""
    p = t.sh(["jfr", "print", "--json", path], timeout=300)
    seen = set()
    try:
        for ev in json.loads(t.text(p.stdout))["recording"]["events"]:
            th = ev["values"].get("sampledThread") or ev["values"].get("eventThread")
            if isinstance(th, dict):
                seen.add(json.dumps(th, sort_keys=True))
    except (ValueError, KeyError):
        return None
    return seen


# one conversion per input
single = {}
for i, f in enumerate(inputs):
    base = "single%02d" % i
    run([CONV, "-q", "-n", "--pprof", base + ".pb.gz", "--jfr", base + ".jfr", f], "convert %s" % f)
    single[f] = base
# all of them into one
run([CONV, "-q", "-n", "--merge", "all", "-F", "pprof,jfr,folded"] + inputs, "convert --merge")
t.check("merge writes all.pb.gz, all.jfr and all.folded",
        all(os.path.exists("all" + s) for s in (".pb.gz", ".jfr", ".folded")))

# the inputs side by side or one after the other: the same merged bytes
for j in ("1", "3"):
    run([CONV, "-q", "-n", "-j", j, "--merge", "all-j" + j, "-F", "pprof,jfr,folded"] + inputs, "--merge -j " + j)
same = [all(open("all" + s, "rb").read() == open("all-j%s%s" % (j, s), "rb").read()
            for s in (".pb.gz", ".jfr", ".folded")) for j in ("1", "3")]
t.check("--merge at -j 1, -j 3 and the default -j: the same bytes", all(same), same)

merged = pprofdec.read("all.pb.gz")
files = [lab.get("file") for _, _, lab in merged["samples"]]
t.check("every merged sample has a file label naming an input", all(f in single for f in files),
        [f for f in files if f not in single][:3])
t.check("every input with samples has samples in the merged profile",
        set(files) == {f for f in inputs if pprofdec.read(single[f] + ".pb.gz")["samples"]},
        set(inputs) - set(files))

mtot = totals(merged)
want = collections.defaultdict(collections.Counter)
for f in inputs:
    for (lk, stk), vals in totals(pprofdec.read(single[f] + ".pb.gz")).items():
        want[(tuple(sorted(lk + (("file", f),))), stk)] += vals
diff = [k for k in set(mtot) | set(want) if mtot.get(k) != want.get(k)]
t.check("per (file, labels, stack) the merged values are the single-file ones (%d keys)" % len(want),
        not diff, [(k[0], mtot.get(k), want.get(k)) for k in diff[:2]])
for ty in sorted({ty for v in want.values() for ty in v}):
    t.check("total of %s is the sum over the inputs" % ty,
            sum(v[ty] for v in mtot.values()) == sum(v[ty] for v in want.values()))

# the two copies of plain.data: their samples on two disjoint sets of mappings
maps_of = collections.defaultdict(set)
for ids, _, lab in merged["samples"]:
    for lid in ids:
        if merged["locs"][lid][0]:
            maps_of[lab.get("file")].add(merged["locs"][lid][0])
plain = os.path.join(FX, "plain.data")
t.check("a recording given twice keeps two sets of mappings (same pids, two processes)",
        maps_of["again.data"] and maps_of[plain] and not maps_of["again.data"] & maps_of[plain],
        (len(maps_of["again.data"]), len(maps_of[plain])))
pids = collections.defaultdict(set)
for _, _, lab in merged["samples"]:
    if "pid" in lab:
        pids[lab.get("file")].add(lab["pid"])
t.check("and the same pids, told apart by their file label", pids["again.data"] == pids[plain] != set())

if shutil.which("jfr"):
    rc, mc = jfr_counts("all.jfr")
    t.check("jfr summary reads the merged recording", rc == 0 and mc, rc)
    sums = collections.Counter()
    for f in inputs:
        _, c = jfr_counts(single[f] + ".jfr")
        sums.update(c)
    t.check("jfr summary: each sample event type's count is the sum over the inputs",
            {k: v for k, v in mc.items() if v} == {k: v for k, v in sums.items() if v}, (mc, dict(sums)))
    mt = jfr_threads("all.jfr")
    st = [jfr_threads(single[f] + ".jfr") for f in inputs]
    if mt is None or any(s is None for s in st):
        t.skip("threads of the merged recording", "jfr print --json gave no events")
    else:
        t.check("jfr print: the merged recording's threads include every input's",
                all(s <= mt for s in st), [len(s - mt) for s in st])
    if shutil.which("java"):
        p = t.sh(["java", os.path.join(REPO, "tests", "tools", "JfrThreads.java"), "all.jfr"] +
                 [single[f] + ".jfr" for f in inputs], timeout=300)
        n = dict(line.split("\t") for line in t.text(p.stdout).splitlines() if "\t" in line)
        total = sum(int(n.get(single[f] + ".jfr", -1)) for f in inputs)
        t.check("JDK parser: the merged recording has as many threads as the inputs together (%s)" % total,
                p.returncode == 0 and int(n.get("all.jfr", -2)) == total, (n.get("all.jfr"), total, t.text(p.stderr)[-300:]))
    else:
        t.skip("threads by pool key", "no java here")
else:
    t.skip("jfr summary counts", "no jfr (JDK) here")

# the other labels
run([CONV, "-q", "-n", "--merge", "host", "-F", "pprof", "--merge-label", "host", inputs[0],
     "--label", "env=ci", "again.data"], "convert --merge-label host --label env=ci")
hp = pprofdec.read("host.pb.gz")
labs = [lab for _, _, lab in hp["samples"]]
t.check("--merge-label host: each sample has a host label and no file label",
        labs and all("host" in lab and "file" not in lab for lab in labs))
first = [lab for lab in labs if lab.get("env") is None]
after = [lab for lab in labs if lab.get("env") == "ci"]
t.check("--label env=ci labels the inputs after it only", first and after and len(first) + len(after) == len(labs))
p = t.sh([CONV, "-q", "-n", "--merge", "x", "-o", "y", inputs[0]])
t.check("-o with --merge is a usage error (exit 1)", p.returncode == 1 and b"-o" in p.stderr, p.returncode)
p = t.sh([CONV, "-q", "-n", "--label", "env=ci", inputs[0]])
t.check("--label K=V without --merge is a usage error (exit 1)", p.returncode == 1, p.returncode)

if shutil.which("go"):
    env = dict(os.environ, GOFLAGS="-mod=mod", GOTOOLCHAIN="local")
    p = t.sh(["go", "tool", "pprof", "-raw", "all.pb.gz"], timeout=300, env=env)
    t.check("go tool pprof -raw loads the merged profile", p.returncode == 0 and b"Samples:" in p.stdout,
            t.text(p.stderr)[-500:])
else:
    t.skip("go tool pprof -raw", "no go here")


def held(stderr):
    """conv -v's line of a run over several inputs: (opened again after shedding, bytes held at most)."""
    m = re.search(r"(\d+) opened again after shedding, ([\d.]+) (B|kB|MB|GB) held at most", t.text(stderr))
    if not m:
        return None
    return int(m.group(1)), float(m.group(2)) * {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}[m.group(3)]


# with symbols: the arm64 fixtures share libc and ld.so; samples/perf.data has its debug files
A64 = os.path.join(FX, "arm64")
SYM_IN = [os.path.join(A64, n) for n in ("fp.data", "cpp.data", "qsort.data", "signal.data")] + \
    [os.path.join(REPO, "samples", "perf.data")]
if all(os.path.exists(f) for f in SYM_IN):
    opts = a64sources.conv_options(A64, WORK) + ["-d", os.path.join(REPO, "samples", "debug")]
    shutil.copyfile(SYM_IN[0], "fp-again.data")
    files_in = SYM_IN + ["fp-again.data"]
    ssingle = {}
    for i, f in enumerate(files_in):
        run([CONV, "-q"] + opts + ["--pprof", "sym%02d.pb.gz" % i, f], "convert %s with symbols" % f)
        ssingle[f] = "sym%02d.pb.gz" % i
    with open(SYM_IN[0], "rb") as f:
        PIPED = f.read()  # run() pipes it in for '-'
    ssingle["-"] = ssingle[SYM_IN[0]]
    for j in ("1", "2"):
        run([CONV, "-q", "-j", j] + opts + ["--merge", "sym-j" + j, "-F", "pprof,jfr"] + files_in + ["-"],
            "--merge with symbols -j " + j)
    t.check("--merge with symbols at -j 1 and -j 2: the same bytes",
            all(open("sym-j1" + x, "rb").read() == open("sym-j2" + x, "rb").read()
                for x in (".pb.gz", ".jfr")))
    smerged = pprofdec.read("sym-j1.pb.gz")
    named = sum(1 for _, _, lines in smerged["locs"].values()
                if any(smerged["funcs"][fn][0] for fn, _ in lines))
    want = collections.defaultdict(collections.Counter)
    for f in files_in + ["-"]:
        for (lk, stk), vals in totals(pprofdec.read(ssingle[f])).items():
            want[(tuple(sorted(lk + (("file", f),))), stk)] += vals
    mtot = totals(smerged)
    diff = [k for k in set(mtot) | set(want) if mtot.get(k) != want.get(k)]
    t.check("with symbols: per (file, labels, stack of names and lines) the merged values are the single "
            "conversions' (%d keys, %d named locations)" % (len(want), named),
            named > 0 and not diff, [(k[0], mtot.get(k), want.get(k)) for k in diff[:2]])
    # every input a file: each symbol file opened once, shed after; against the same inputs on their own
    pm = run([CONV, "-v", "-j", "1"] + opts + ["--merge", "symv", "-F", "pprof"] + files_in, "--merge -v")
    os.makedirs("each", exist_ok=True)
    pe = run([CONV, "-v", "-j", "1"] + opts + ["-F", "pprof", "-o", "each/"] + files_in, "-o each/ -v")
    hm, he = held(pm.stderr), held(pe.stderr)
    t.check("--merge -v: no symbol file opened again (%s)" % (hm,), hm is not None and hm[0] == 0,
            t.text(pm.stderr)[-400:])
    t.check("--merge holds at most less of the objects than a run keeping them for the next input "
            "(%s vs %s bytes)" % (hm and hm[1], he and he[1]), hm and he and hm[1] < he[1],
            t.text(pe.stderr)[-400:])
else:
    t.skip("--merge with symbols", "the arm64 fixtures are not here")
t.finish()
