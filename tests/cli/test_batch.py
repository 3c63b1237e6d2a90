#!/usr/bin/env python3
"""Archive reprocessing at scale: 200 recordings through `xargs -P 2` with one cache.

The README's xargs recipe, run as written: its `xargs -r -d '\\n' -P
"$(nproc)" -n 20 sh -c 'exec conv ... --stats="$(mktemp ...)"'` and `cat`
lines (taken from README.md) run by sh in a batch folder whose files.txt
lists 200 recordings (the committed fixtures under 200 names, symbolic
links in an archive folder), with CACHE set and `conv` on PATH, then the
--stats files gathered into one report (JSON lines, one per recording).
Checks: xargs exits 0; every recording has its two outputs in out/ (named
after it); the report has 200 lines, one per input, each exit_code 0 with
the outputs listed; 10 stats files, one per shard; no temp file is left
in the batch folder or the cache.

usage: test_batch.py CONV WORKDIR
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import testlib as t  # noqa: E402

CONV, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
N = 200


if not shutil.which("xargs"):
    t.skip_all("no xargs")
shutil.rmtree(WORK, ignore_errors=True)
archive, batch, cache = (os.path.join(WORK, d) for d in ("archive", "batch", "cache"))
out, report = os.path.join(batch, "out"), os.path.join(batch, "stats.d")
for d in (archive, out, report):
    os.makedirs(d)
fixtures = sorted(glob.glob(os.path.join(REPO, "tests", "fixtures", "*.data")))
inputs = []
for i in range(N):
    path = os.path.join(archive, "run%03d.data" % i)
    os.symlink(fixtures[i % len(fixtures)], path)
    inputs.append(path)
with open(os.path.join(batch, "files.txt"), "w") as fh:
    fh.write("".join(p + "\n" for p in inputs))
readme = open(os.path.join(REPO, "README.md")).read()
block = [b for b in re.findall(r"```sh\n(.*?)```", readme, re.S) if "xargs " in b and "mktemp" in b]
cmds = [l for l in (block[0].splitlines() if len(block) == 1 else []) if l.startswith(("xargs ", "cat "))]
if not t.check("README.md shows the xargs recipe and its report line", len(cmds) == 2, block):
    t.finish()
bindir = os.path.join(WORK, "bin")
os.makedirs(bindir)
os.symlink(CONV, os.path.join(bindir, "conv"))
env = dict(os.environ, CACHE=cache, HOME=WORK, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
r = subprocess.run(["sh", "-c", cmds[0]], cwd=batch, capture_output=True, timeout=900, env=env)
t.check("the README's xargs line runs every batch (exit 0)", r.returncode == 0, r.stderr.decode()[-400:])
t.check("one stats file per shard of 20 (10)", len(glob.glob(os.path.join(report, "*.json"))) == N // 20,
        os.listdir(report))
r = subprocess.run(["sh", "-c", cmds[1]], cwd=batch, capture_output=True, timeout=60, env=env)
lines = open(os.path.join(batch, "report.jsonl")).read().splitlines()
recs = [json.loads(l) for l in lines]
t.check("one report: %d records, one per recording" % len(recs),
        sorted(r["input"] for r in recs) == sorted(inputs), len(recs))
t.check("every record: exit_code 0, two outputs", all(r["exit_code"] == 0 and len(r["outputs"]) == 2 for r in recs),
        [r for r in recs if r["exit_code"] or len(r["outputs"]) != 2][:2])
names = sorted(os.listdir(out))
want = sorted("run%03d%s" % (i, e) for i in range(N) for e in (".pb.gz", ".jfr"))
t.check("every recording's outputs in out/, named after it", names == want, sorted(set(names) ^ set(want))[:4])
left = [f for f in names + os.listdir(report) if ".tmp." in f]
for root, _, files in os.walk(cache):
    left += [f for f in files if f.startswith(".conv-")]
t.check("no temp file left", not left, left)
t.finish()
