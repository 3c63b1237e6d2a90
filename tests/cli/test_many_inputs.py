#!/usr/bin/env python3
"""Many inputs in one run equal each input converted alone (issue 35).

Every committed recording (tests/**/*.data, samples/perf.data) and, when
../shared/corpus is there, every file of it, each under a
name of its own (symbolic links in WORKDIR/in, so that outputs cannot
collide), with the symbol sources the fixtures bring (samples/debug, the
arm64 guests' bin/ and debug/ folders: -d each). Each is converted alone
(`conv -o single/NAME`), then all of them in one run (`conv -o DIR/`) at
-j 1 and -j 2, and with --object-cache 1 (every object closed again as soon
as it is let go of: the least-recently-used eviction on every put). Checked:
every pprof and JFR of a many-input run is byte for byte the single
conversion's; the --stats records come in input order and equal the single
runs' (but for the output paths); the exit code is the worst single one;
stderr (no -v) is the same at -j 1 and -j 2; and `-v` says the inputs shared
objects (more reused than opened).

usage: test_many_inputs.py CONV WORKDIR
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
import testlib as t  # noqa: E402

CONV, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
ENV = dict(os.environ, HOME=os.path.join(WORK, "home"), LC_ALL="C")
for k in ("DEBUGINFOD_URLS", "DEBUGINFOD_CACHE_PATH"):
    ENV.pop(k, None)


def run(args, timeout=600):
    return subprocess.run([CONV, *args], stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout,
                          env=ENV)


def sources():
    opts = ["--offline", "-d", os.path.join(REPO, "samples", "debug")]
    for root in sorted(glob.glob(os.path.join(REPO, "tests", "fixtures", "arm64", "**", "bin"), recursive=True) +
                       glob.glob(os.path.join(REPO, "tests", "fixtures", "arm64", "**", "debug"), recursive=True)):
        for d, _, files in sorted(os.walk(root)):
            if files:
                opts += ["-d", d]
    return opts


def records(path):
    """The --stats records, output paths left out: [(input, record)]."""
    out = []
    for line in open(path):
        r = json.loads(line)
        for o in r.get("outputs", []):
            o.pop("path", None)
        out.append((r["input"], r))
    return out


def outputs(folder):
    return {f: open(os.path.join(folder, f), "rb").read() for f in sorted(os.listdir(folder))
            if f.endswith((".pb.gz", ".jfr"))}


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(os.path.join(WORK, "home"))
found = sorted(set(glob.glob(os.path.join(REPO, "tests", "**", "*.data"), recursive=True) +
                   [os.path.join(REPO, "samples", "perf.data")]))
# the shared corpus too when it is beside the repository (other projects' recordings, fuzzer finds)
corpus = os.path.join(os.path.dirname(REPO), "shared", "corpus")
if os.path.isdir(corpus):
    found += sorted(os.path.join(d, f) for d, _, fs in os.walk(corpus) for f in fs
                    if not f.endswith((".md", ".txt", ".json")) and ".expected" not in f)
else:
    t.note("no ../shared/corpus: the committed recordings only")
found = [f for f in found if os.path.getsize(f) > 0]
if len(found) < 10:
    t.skip_all("only %d recordings found" % len(found))
indir = os.path.join(WORK, "in")
os.makedirs(indir)
inputs = []
for i, f in enumerate(found):
    name = os.path.join(indir, "%03d-%s" % (i, os.path.basename(f)))
    os.symlink(f, name)
    inputs.append(name)
opts = sources()

single = os.path.join(WORK, "single")
os.makedirs(single)
worst, singles = 0, []
for f in inputs:
    st = os.path.join(WORK, "single.stats")
    r = run(["-q", *opts, "-o", single + "/", "--stats=" + st, f])  # named as in a many-input run
    worst = max(worst, r.returncode)
    singles += records(st) if os.path.exists(st) else [(f, None)]
want = outputs(single)
t.check("the single conversions wrote outputs (%d files of %d inputs)" % (len(want), len(inputs)),
        len(want) >= len(inputs), len(want))

stderrs = {}
for label, extra in (("-j 1", ["-j", "1"]), ("-j 2", ["-j", "2"]),
                     ("-j 2 --object-cache 1", ["-j", "2", "--object-cache", "1"])):
    out = os.path.join(WORK, "many-" + label.replace(" ", "").replace("-", ""))
    os.makedirs(out)
    stats = os.path.join(WORK, "stats-%s.json" % label.replace(" ", ""))
    r = run([*opts, *extra, "-o", out + "/", "--stats=" + stats, *inputs])
    err = t.text(r.stderr)
    stderrs[label] = err
    t.check("%s: the exit code is the worst single one (%d)" % (label, worst), r.returncode == worst,
            (r.returncode, err[-400:]))
    got = outputs(out)
    bad = sorted(k for k in want if got.get(k) != want[k])
    t.check("%s: each of the %d outputs is the single conversion's, byte for byte" % (label, len(want)),
            not bad and set(got) == set(want), {"differ": bad[:5], "extra": sorted(set(got) - set(want))[:5]})
    recs = records(stats) if os.path.exists(stats) else []
    t.check("%s: the --stats records are the single runs', in input order (%d)" % (label, len(recs)),
            recs == singles, [(a[0], b[0]) for a, b in zip(recs, singles) if a != b][:3])
    # -v again for its last line: the summaries it adds carry times, unlike the run above
    v = t.text(run(["-v", *opts, *extra, "-o", out + "/", *inputs]).stderr)
    m = re.search(r"objects (\d+) opened, (\d+) reused, (\d+) closed", v)
    err = v
    if label == "-j 2 --object-cache 1":
        t.check("%s: every object closed again when let go of (-v: %s)" % (label, m and m.group(0)),
                m is not None and int(m.group(3)) > 0, err[-300:])
    else:
        t.check("%s: the inputs shared their objects (-v: %s)" % (label, m and m.group(0)),
                m is not None and int(m.group(2)) > int(m.group(1)) > 0, err[-300:])
t.check("stderr is the same at -j 1 and -j 2", stderrs["-j 1"] == stderrs["-j 2"],
        (stderrs["-j 1"][-300:], stderrs["-j 2"][-300:]))
t.finish()
