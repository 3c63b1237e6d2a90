#!/usr/bin/env python3
"""conv diff BASE NEW (issue 36): what changed between two recordings.

usage: test_diff.py CONV WORKDIR

A C program built here (gcc -O1 -g -fno-omit-frame-pointer) runs K units of a
loop in extra() for each unit in steady(), and prints the CPU time of its thread
spent in each (CLOCK_THREAD_CPUTIME_ID around the calls). Built with K=1 it is
recorded twice (a.data, c.data), then rebuilt with K=4 at the same path, the
same binary name (b.data); `perf record -g --all-user`, so that the program's
own functions take every sample. extra's share is then about 50 % and 80 %, but
what it was is what the program measured. Their loops are multiplications in a
register: a loop of `sink += i` on a volatile took 50 % of an unchanged program's
time in one recording and 64 % in the next (the code's addresses differ between
runs, and with them how the CPU forwards the store to the next load). The two
alternate 5000 times, for a
random 40 000 to 120 000 iterations each (about 0.05 ms): a virtual machine's
stolen time is counted as the guest's CPU time, and in stretches of
milliseconds it falls on both alike (in 80 calls of 2.4 ms, an unchanged
program's extra took 36 % and 48 % in two recordings here); and calls of no
fixed length are never in step with the sampling clock (in 1600 calls of 0.12
ms, about the 4 kHz clock's period, one function took 60 % of the samples).
Checks:
  * a vs b: the report's top entry (--json) is extra, its NEW and BASE self
    shares within 3 points of the program's, beyond its noise bound;
    --fail-above 5 exits 5;
  * a vs c (the unchanged program again): no function beyond its noise bound,
    --fail-above 5 exits 0;
  * the folded diff's two columns equal `conv -F folded` of each side, per stack;
    with BASE "a.data,c.data" (merged), its column is a's plus c's;
  * the diff pprof (tests/tools/pprofdec.py) sums to NEW - BASE per stack, its
    BASE samples labelled pprof::base=true; `go tool pprof -top` reads it and
    names extra (skipped without go);
  * the pages (tests/views/diff_browser.py, headless Chromium, offline): what
    every flame graph page does, extra red in both views with both counts in
    its hover (a vs b), every frame in the noise colour (a vs c); screenshots
    WORKDIR/ab.png and ac.png;
  * different events (-e task-clock against the default) and different
    architectures (tests/fixtures/arm64/fp.data): exit 2, one line on stderr,
    nothing written; the text report says how it normalized;
  * the pprofs conv wrote of the recordings as inputs (both sides, or one of
    each): the report's entries, shares and noise bounds, the folded diff and
    the diff pprof per stack are the recordings' own; --fail-above exits 5
    and 0 as there; pprofs of different events or architectures (conv's
    "arch" comment) are refused as recordings are; -o naming an input's
    base is refused, the input unchanged;
  * the JFRs conv wrote as inputs (both sides, a recording against a JFR, a
    JFR against a pprof): JFR does not say which frames were inlined, so both
    sides compare inline level by level; the three give one report (on the
    functions conv named), extra's entry is a.data vs b.data's, the folded
    diff is the recordings' on every stack of named frames; samples/perf.data
    (inlined code) against its own JFR: nothing moved, the folded diff the
    recording's against itself; --fail-above exits 5 and 0 as on the
    recordings; JFRs of different events, and a JFR against the other
    architecture's, are refused in one line, nothing written.
Prints ok/FAIL lines and "N passed, M failed"; exit 77 without perf or gcc.
"""
import json
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import pprofdec  # noqa: E402
import testlib as t  # noqa: E402

CONV, WORK = sys.argv[1], sys.argv[2]
FIXTURES = os.path.join(HERE, "..", "fixtures")
K_NEW = 4
PROG = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
/* a chain of multiplications in a register: its speed is the multiplier's, wherever the code is */
__attribute__((noinline)) void steady(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005ul + i;
	sink = x;
}
__attribute__((noinline)) void extra(unsigned long n, unsigned long k)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n * k; i++)
		x = x * 6364136223846793005ul + i;
	sink = x;
}
static long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
int main(void)
{
	long long in_steady = 0, in_extra = 0, t;
	unsigned long x = 88172645463325252ul;

	for (int r = 0; r < 5000; r++) {
		/* 40 000 to 120 000 iterations: calls of no fixed length, out of step with the sampling */
		unsigned long n;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		n = 40000 + x % 80000;
		t = cpu_ns();
		steady(n);
		in_steady += cpu_ns() - t;
		t = cpu_ns();
		extra(n, K);
		in_extra += cpu_ns() - t;
	}
	printf("%lld %lld\n", in_steady, in_extra);
	return 0;
}
"""

def tail(b):
    return t.text(b).strip().splitlines()[-1:] if b else ""


def build(k):
    src = os.path.join(WORK, "prog.c")
    with open(src, "w") as f:
        f.write(PROG)
    return t.sh(["gcc", "-O1", "-g", "-fno-omit-frame-pointer", "-DK=%d" % k, "-o", os.path.join(WORK, "prog"),
                 src])


SPENT = {}  # recording -> extra's share of the CPU time the program measured in steady and extra


def record(data, extra=()):
    r = t.sh(["perf", "record", "-q", "-g", "--all-user"] + list(extra) + ["-o", data, "--", "./prog"], cwd=WORK)
    if r.returncode:
        return "perf record: exit %d: %s" % (r.returncode, tail(r.stderr))
    steady, extra_ns = (int(v) for v in t.text(r.stdout).split()[-2:])
    SPENT[data] = extra_ns / float(steady + extra_ns)
    return ""


def conv(args, timeout=300):
    """conv ARGS offline (the subcommand, when one, first). --buildid-from-disk: perf records no
    build-id for libc here (its samples are all callers'), and with prog rebuilt since a.data, conv
    takes the files here for others than the recording's unless told they are (libc is)."""
    sub = args[:1] if args[:1] == ["diff"] else []
    return t.sh([CONV] + sub + ["--offline", "--buildid-from-disk"] + args[len(sub):], timeout=timeout,
                cwd=WORK)


def folded(path, ncols):
    """{stack: [values]} of a folded file with ncols values a line."""
    out = {}
    with open(path) as f:
        for line in f:
            words = line.rstrip("\n").rsplit(" ", ncols)
            out[words[0]] = [int(v) for v in words[1:]]
    return out


def pprof_by_stack(path):
    p = pprofdec.read(path)
    sums, base_labelled, base_neg = {}, True, True
    for locs, values, labels in p["samples"]:
        names = []
        for loc in reversed(locs):
            names += list(reversed(pprofdec.frame_names(p, loc)))
        key = ";".join(n.replace(";", ":") for n in names)
        sums[key] = sums.get(key, 0) + values[0]
        if values[0] < 0:
            base_labelled &= labels.get("pprof::base") == "true"
        if labels.get("pprof::base") == "true":
            base_neg &= values[0] <= 0
    return sums, base_labelled and base_neg


def entry(rep, name):
    return next((e for e in rep["functions"] if e["name"] == name), None)


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
if not shutil.which("perf") or not shutil.which("gcc"):
    t.skip_all("needs perf and gcc")
r = build(1)
if r.returncode:
    t.skip_all("gcc failed: %s" % tail(r.stderr))
A, B, C, D = (os.path.join(WORK, n) for n in ("a.data", "b.data", "c.data", "d.data"))
why = record(A) or record(C) or record(D, ["-e", "task-clock"])
if why:
    t.skip_all(why)
r = build(K_NEW)
if r.returncode:
    t.skip_all("gcc failed: %s" % tail(r.stderr))
why = record(B)
if why:
    t.skip_all(why)

# 1. the changed program: extra on top, its shares as the program spent them
r = conv(["diff", "--json", "-o", "ab", A, B])
rep = json.loads(t.text(r.stdout)) if r.returncode == 0 and r.stdout else None
t.check("a vs b: exit 0, JSON report", rep is not None, "exit %d: %s" % (r.returncode, tail(r.stderr)))
if rep:
    top = rep["functions"][0] if rep["functions"] else {}
    t.check("a vs b: the top entry is extra", top.get("name") == "extra",
            [e["name"] for e in rep["functions"][:3]])
    e = entry(rep, "extra")
    want_new, want_base = SPENT[B], SPENT[A]
    t.check("a vs b: extra's NEW self share within 3 points of the program's %.1f %%" % (100 * want_new),
            e and abs(e["self"]["new_value"] - want_new) < 0.03, e and e["self"])
    t.check("a vs b: extra's BASE self share within 3 points of the program's %.1f %%" % (100 * want_base),
            e and abs(e["self"]["base_value"] - want_base) < 0.03, e and e["self"])
    t.check("a vs b: extra grew beyond its noise bound",
            e and e["beyond_noise"] and e["self"]["change"] > e["self"]["noise"], e)
    t.check("a vs b: normalized by shares", rep["normalized"] == "shares", rep["normalized"])
# the text report on an 80-column terminal: numbers first, the name last
r = conv(["diff", "-o", "ab-text", A, B])
rows, wide = {}, []
for ln in t.text(r.stdout).splitlines():
    f = ln.split()
    if len(f) >= 9 and all(re.match(r"^[-+±]?[0-9.]+%?$", x) for x in f[:8]):
        cut = re.match(r"^\s*(?:\S+\s+){7}\S+", ln).end()
        name = ln[cut:].strip().lstrip("* ").strip()
        rows[name] = (f[:8], "*" in ln[cut:cut + 4])
        if cut + 4 > 80:
            wide.append(ln)
    elif len(ln.replace(A, "").replace(B, "")) > 80:
        wide.append(ln)
t.check("a vs b: the text report's columns fit 80 columns (names and paths aside)", rows and not wide,
        wide[:3])
x = rows.get("extra")
t.check("a vs b: the text report's row of extra is marked as beyond the noise, its NEW self share the JSON's",
        x is not None and x[1] and rep is not None and
        any(e["name"] == "extra" and abs(float(x[0][1].rstrip("%")) - 100 * e["self"]["new_value"]) < 0.06
            for e in rep["functions"]), x)
r = conv(["diff", "-q", "-o", "ab2", "--fail-above", "5", A, B])
t.check("a vs b: --fail-above 5 exits 5", r.returncode == 5, "exit %d: %s" % (r.returncode, tail(r.stderr)))

# 2. the unchanged program: nothing beyond the noise
r = conv(["diff", "--json", "-o", "ac", "--top", "100000", "--fail-above", "5", A, C])
rep = json.loads(t.text(r.stdout)) if r.stdout else None
t.check("a vs c: --fail-above 5 exits 0", r.returncode == 0, "exit %d: %s" % (r.returncode, tail(r.stderr)))
if rep:
    moved = [(e["name"], e["self"], e["total"]) for e in rep["functions"] if e["beyond_noise"]]
    t.check("a vs c: no function beyond its noise bound", not moved, moved[:3])
r = conv(["diff", "-o", "ac-text", A, C])
out = t.text(r.stdout)
t.check("a vs c: the text report says it compared shares and found nothing beyond the noise",
        "shares of each side's samples" in out and "nothing moved beyond the noise bound" in out, out[-400:])

# 3. the folded diff against each side converted alone
for side, data in (("base", A), ("new", B)):
    r = conv(["-q", "-F", "folded", "-o", "single-" + side, data])
    t.check("conv -F folded %s" % side, r.returncode == 0, tail(r.stderr))
fb = folded(os.path.join(WORK, "single-base.folded"), 1)
fn = folded(os.path.join(WORK, "single-new.folded"), 1)
fd = folded(os.path.join(WORK, "ab.folded"), 2)
want = {s: [fb.get(s, [0])[0], fn.get(s, [0])[0]] for s in set(fb) | set(fn)}
bad = [(s, fd.get(s), want[s]) for s in sorted(set(want) | set(fd)) if fd.get(s) != want.get(s)]
t.check("folded diff: 'stack BASE NEW' = each side's folded count, per stack (%d stacks)" % len(want),
        not bad and all(len(v) == 2 for v in fd.values()), bad[:3])

# 3b. several recordings on a side, merged as --merge merges them: BASE's column is their sum
r = conv(["-q", "-F", "folded", "-o", "single-c", C])
fc = folded(os.path.join(WORK, "single-c.folded"), 1)
r = conv(["diff", "--json", "-o", "acb", A + "," + C, B])
rep2 = json.loads(t.text(r.stdout)) if r.returncode == 0 and r.stdout else None
t.check("a,c vs b: exit 0, JSON report", rep2 is not None, "exit %d: %s" % (r.returncode, tail(r.stderr)))
fm = folded(os.path.join(WORK, "acb.folded"), 2) if rep2 else {}
want2 = {s: [fb.get(s, [0])[0] + fc.get(s, [0])[0], fn.get(s, [0])[0]] for s in set(fb) | set(fc) | set(fn)}
bad = [(s, fm.get(s), want2[s]) for s in sorted(set(want2) | set(fm)) if fm.get(s) != want2.get(s)]
t.check("a,c vs b: BASE's column = a's + c's folded count, per stack", rep2 and not bad, bad[:3])
t.check("a,c vs b: extra on top", rep2 and rep2["functions"] and rep2["functions"][0]["name"] == "extra",
        rep2 and [e["name"] for e in rep2["functions"][:3]])

# 4. the diff pprof: NEW - BASE per stack
sums, labelled = pprof_by_stack(os.path.join(WORK, "ab.pb.gz"))
want = {s: v[1] - v[0] for s, v in want.items() if v[1] != v[0]}
got = {s: v for s, v in sums.items() if v}
bad = [(s, got.get(s), want.get(s)) for s in sorted(set(want) | set(got)) if got.get(s) != want.get(s)]
t.check("diff pprof: values sum to NEW - BASE per stack (%d stacks)" % len(want), not bad, bad[:3])
t.check("diff pprof: BASE's samples negated and labelled pprof::base=true", labelled)
if shutil.which("go"):
    r = t.sh(["go", "tool", "pprof", "-top", os.path.join(WORK, "ab.pb.gz")], timeout=300)
    t.check("go tool pprof -top reads the diff pprof", r.returncode == 0 and "extra" in t.text(r.stdout),
            tail(r.stderr))
else:
    t.skip("go tool pprof -top reads the diff pprof", "no go")

# 5. what cannot be compared: one line, nothing written
def refused(what, base, new):
    out = os.path.join(WORK, "refused")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    r = conv(["diff", "-o", out + "/x", base, new])
    err = t.text(r.stderr).strip().splitlines()
    t.check("%s: exit 2, one line" % what, r.returncode == 2 and len(err) == 1, (r.returncode, err))
    t.check("%s: nothing written" % what, not os.listdir(out) and not r.stdout, os.listdir(out))


def fail_above(case, base, new, code):
    r = conv(["diff", "--fail-above", "5", "-o", os.path.join(WORK, "gate"), base, new])
    t.check("%s: --fail-above 5 exits %d" % (case, code), r.returncode == code,
            "exit %d: %s" % (r.returncode, tail(r.stderr)))


refused("different events", A, D)
refused("different architectures", A, os.path.join(FIXTURES, "arm64", "fp.data"))
# 6. the differential flame graphs in Chromium (tests/views/diff_browser.py)
paths = {}  # a path ending in extra -> [BASE, NEW] with what is below it
for stack, (vb, vn) in fd.items():
    fr = stack.split(";")
    for i, name in enumerate(fr):
        if name == "extra":
            v = paths.setdefault(";".join(fr[:i + 1]), [0, 0])
            v[0] += vb
            v[1] += vn
widest = max(paths.items(), key=lambda kv: kv[1][1])[1] if paths else [0, 0]
for case, page, args in (("a vs b", "ab", ["changed", "extra", str(widest[1]), str(widest[0])]),
                         ("a vs c", "ac", ["unchanged", "extra"])):
    png = os.path.join(WORK, page + ".png")
    r = t.sh([sys.executable, os.path.join(HERE, "..", "views", "diff_browser.py"),
              os.path.join(WORK, page + ".html"), png] + args, timeout=300)
    if r.returncode == 77:
        t.skip("%s: the page in Chromium" % case, t.text(r.stderr).strip())
        continue
    t.check("%s: the page in Chromium (%s)" % (case, args[0]), r.returncode == 0,
            t.text(r.stderr).strip()[-600:])
    for ln in t.text(r.stdout).splitlines():
        t.note(ln)

# 7. the page colours as the report bounds: by shares, and by counts with --normalize counts
#    (steady did the same work on both sides: its share shrank, its count did not change as much)
def look(e):
    tot = e["total"]
    return "grew" if tot["change"] > tot["noise"] else "shrank" if tot["change"] < -tot["noise"] else "same"


def report(args):
    r = conv(["diff", "--json", "--top", "100000"] + args + [A, B])
    return json.loads(t.text(r.stdout)) if r.returncode == 0 and r.stdout else None


reps = report(["-o", "ab-shares"])
repc = report(["--normalize", "counts", "-o", "ab-counts"])
t.check("a vs b --normalize counts: a report normalized by counts", repc and repc["normalized"] == "counts")
for case, page, unit, rp in (("shares", "ab-shares", "points", reps), ("counts", "ab-counts", "samples", repc)):
    want = [(n, look(entry(rp, n))) for n in ("extra", "steady") if rp and entry(rp, n)]
    t.note("%s: the report says %s" % (case, ", ".join("%s %s" % w for w in want)))
    r = t.sh([sys.executable, os.path.join(HERE, "..", "views", "diff_browser.py"),
              os.path.join(WORK, page + ".html"), os.path.join(WORK, page + "-looks.png"), "looks", unit] +
             ["%s=%s" % w for w in want], timeout=300)
    if r.returncode == 77:
        t.skip("%s: the page's colours are the report's" % case, t.text(r.stderr).strip())
        continue
    t.check("%s: the page's colours are the report's, its hover in %s" % (case, unit),
            len(want) == 2 and r.returncode == 0, t.text(r.stderr).strip()[-600:])

# 8. the pprofs conv wrote as inputs: the comparison is the recordings' own
for name, data in (("a", A), ("b", B), ("c", C), ("d", D)):
    r = conv(["-q", "--pprof", name + ".pb.gz", "--jfr", name + ".jfr", data])
    t.check("conv --pprof %s.pb.gz" % name, r.returncode == 0, tail(r.stderr))
PA, PB, PC, PD = (os.path.join(WORK, n + ".pb.gz") for n in "abcd")
SAME = ("functions", "base_samples", "new_samples", "normalized", "z")
r = conv(["diff", "--json", "-o", "pp-ref", A, B])
rep = json.loads(t.text(r.stdout)) if r.returncode == 0 and r.stdout else None
sums = pprof_by_stack(os.path.join(WORK, "pp-ref.pb.gz"))[0] if rep else None
fd = folded(os.path.join(WORK, "pp-ref.folded"), 2) if rep else None
for case, base, new in (("a.pb.gz vs b.pb.gz", PA, PB), ("a.data vs b.pb.gz", A, PB)):
    out = "pp-" + case.split()[0].replace(".", "-")
    r = conv(["diff", "--json", "-o", out, base, new])
    repp = json.loads(t.text(r.stdout)) if r.returncode == 0 and r.stdout else None
    t.check("%s: the report is a.data vs b.data's (%d entries)" % (case, len(rep["functions"]) if rep else 0),
            rep and repp and all(repp[k] == rep[k] for k in SAME),
            repp and [(k, str(repp[k])[:200], str(rep[k])[:200]) for k in SAME if repp[k] != rep[k]][:2] or
            tail(r.stderr))
    t.check("%s: the folded diff is a.data vs b.data's" % case,
            repp and folded(os.path.join(WORK, out + ".folded"), 2) == fd)
    t.check("%s: the diff pprof is a.data vs b.data's, per stack" % case,
            repp and pprof_by_stack(os.path.join(WORK, out + ".pb.gz"))[0] == sums)
before = open(PA, "rb").read()
r = conv(["diff", "-o", os.path.join(WORK, "a"), PA, PB])
t.check("-o naming a pprof input's base: exit 1 in one line, the input unchanged",
        r.returncode == 1 and len(t.text(r.stderr).strip().splitlines()) == 1 and open(PA, "rb").read() == before,
        (r.returncode, tail(r.stderr)))
fail_above("a.pb.gz vs b.pb.gz", PA, PB, 5)
fail_above("a.pb.gz vs c.pb.gz", PA, PC, 0)
# 9. the JFRs conv wrote as inputs. A side that is a JFR has no inline grouping, so both sides are compared
# level by level: the three cases give one report, whose entry for extra (inlined into nothing, inlining
# nothing) is a.data vs b.data's; the folded diff (inline levels as frames either way) is the recordings',
# on every stack whose frames conv named (JFR names an unnamed frame in a mapping by its address, not its
# offset in the file)
JA, JB, JC, JD = (os.path.join(WORK, n + ".jfr") for n in "abcd")


UNNAMED = r"(0x[0-9a-f]+|[^;]*\+0x[0-9a-f]+|<remote>[^;]*|\[[^;]*\])"


def named_stacks(fold):
    return {k: v for k, v in fold.items() if not re.search(r"(^|;)%s(;|$)" % UNNAMED, k)}


def named_entries(rp):
    """The report's entries by name, but for the frames conv could not name (they differ by how they are)."""
    return {e["name"]: e for e in rp["functions"] if not re.fullmatch(UNNAMED, e["name"])}


first = None
for case, base, new in (("a.jfr vs b.jfr", JA, JB), ("a.data vs b.jfr", A, JB), ("a.jfr vs b.pb.gz", JA, PB)):
    out = "jf-" + case.split()[0].replace(".", "-") + "-" + case.split()[-1].replace(".", "-")
    r = conv(["diff", "--json", "-o", out, base, new])
    repj = json.loads(t.text(r.stdout)) if r.returncode == 0 and r.stdout else None
    first = first or repj
    t.check("%s: exit 0, the report of a.jfr vs b.jfr on named functions" % case,
            repj and named_entries(repj) == named_entries(first) and
            all(repj[k] == first[k] for k in SAME if k != "functions"), tail(r.stderr))
    t.check("%s: extra's entry is a.data vs b.data's" % case,
            repj and rep and entry(repj, "extra") == entry(rep, "extra") and
            repj["functions"][0]["name"] == "extra", repj and entry(repj, "extra"))
    got = named_stacks(folded(os.path.join(WORK, out + ".folded"), 2)) if repj else None
    t.check("%s: the folded diff is a.data vs b.data's on named stacks (%d)" % (case, len(got or ())),
            got and got == named_stacks(fd),
            got and [(k, got.get(k), named_stacks(fd).get(k)) for k in sorted(set(got) | set(named_stacks(fd)))
                     if got.get(k) != named_stacks(fd).get(k)][:3])
# a recording with inlined code (samples/perf.data: scramble inlined into hash_block) against its own JFR,
# whose frames do not say which was inlined into which: compared frame by frame, nothing moved
SAMPLE = os.path.join(HERE, "..", "..", "samples")
r = conv(["-q", "-d", os.path.join(SAMPLE, "debug"), "--jfr", "sample.jfr", os.path.join(SAMPLE, "perf.data")])
t.check("conv --jfr of samples/perf.data", r.returncode == 0, tail(r.stderr))
r = conv(["diff", "--json", "-d", os.path.join(SAMPLE, "debug"), "-o", "jf-sample", os.path.join(SAMPLE, "perf.data"),
          os.path.join(WORK, "sample.jfr")])
repj = json.loads(t.text(r.stdout)) if r.returncode == 0 and r.stdout else None
moved = [e["name"] for e in repj["functions"] if e.get("beyond_noise")] if repj else None
t.check("samples/perf.data vs its JFR (inlined frames): exit 0, nothing beyond the noise, every change 0",
        repj and not moved and all(e["self"]["change"] == 0 and e["total"]["change"] == 0 for e in repj["functions"]),
        moved if repj else tail(r.stderr))
r2 = conv(["diff", "-d", os.path.join(SAMPLE, "debug"), "-o", "jf-sample-ref", os.path.join(SAMPLE, "perf.data"),
           os.path.join(SAMPLE, "perf.data")])
t.check("samples/perf.data vs its JFR: the folded diff is the recording against itself",
        repj and r2.returncode == 0 and folded(os.path.join(WORK, "jf-sample.folded"), 2) ==
        folded(os.path.join(WORK, "jf-sample-ref.folded"), 2))
fail_above("a.jfr vs b.jfr", JA, JB, 5)
fail_above("a.jfr vs c.jfr", JA, JC, 0)
r = conv(["-q", "--jfr", "arm64.jfr", "--pprof", "arm64.pb.gz", os.path.join(FIXTURES, "arm64", "fp.data")])
t.check("conv --jfr --pprof of tests/fixtures/arm64/fp.data", r.returncode == 0, tail(r.stderr))
for what, base, new in (("pprofs of different events", PA, PD),
                        ("a pprof of another architecture (conv's 'arch' comment)", PA,
                         os.path.join(WORK, "arm64.pb.gz")),
                        ("JFRs of different events", JA, JD),
                        ("a JFR of another architecture", JA, os.path.join(WORK, "arm64.jfr"))):
    refused(what, base, new)
t.finish()
