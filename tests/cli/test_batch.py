#!/usr/bin/env python3
"""Archive reprocessing at scale: 200 recordings through `xargs -P 2` with one cache.

The README's recipe, run as written: a file list of 200 recordings (the
committed fixtures under 200 names, symbolic links in an archive folder),
`xargs -0 -P 2 -n 20` running `conv -q -o OUT/ --stats=REPORT.d/N.json
--cache-dir CACHE` per batch, then the --stats files gathered into one
report (JSON lines, one per recording). Checks: xargs exits 0; every
recording has its two outputs in OUT (named after it); the report has 200
lines, one per input, each exit_code 0 with the outputs listed; no temp
file is left in OUT or the cache.

usage: test_batch.py CONV WORKDIR
"""
import glob
import json
import os
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
archive, out, report, cache = (os.path.join(WORK, d) for d in ("archive", "out", "report.d", "cache"))
for d in (archive, out, report):
    os.makedirs(d)
fixtures = sorted(glob.glob(os.path.join(REPO, "tests", "fixtures", "*.data")))
inputs = []
for i in range(N):
    path = os.path.join(archive, "run%03d.data" % i)
    os.symlink(fixtures[i % len(fixtures)], path)
    inputs.append(path)
listing = os.path.join(WORK, "list")
with open(listing, "wb") as fh:
    fh.write(b"".join(p.encode() + b"\0" for p in inputs))
# the README's command, with this test's folders
script = ('exec "$0" -q --offline --cache-dir "$CACHE" -o "$OUT/" --stats="$REPORT/$$.json" "$@"')
env = dict(os.environ, CACHE=cache, OUT=out, REPORT=report, HOME=WORK)
with open(listing, "rb") as fh:
    r = subprocess.run(["xargs", "-0", "-P", "2", "-n", "20", "sh", "-c", script, CONV], stdin=fh,
                       capture_output=True, timeout=900, env=env)
t.check("xargs -0 -P 2 -n 20 runs every batch (exit 0)", r.returncode == 0, r.stderr.decode()[-400:])
lines = []
for f in sorted(glob.glob(os.path.join(report, "*.json"))):
    lines += open(f).read().splitlines()
with open(os.path.join(WORK, "report.jsonl"), "w") as fh:
    fh.write("".join(l + "\n" for l in lines))
recs = [json.loads(l) for l in lines]
t.check("one report: %d records, one per recording" % len(recs),
        sorted(r["input"] for r in recs) == sorted(inputs), len(recs))
t.check("every record: exit_code 0, two outputs", all(r["exit_code"] == 0 and len(r["outputs"]) == 2 for r in recs),
        [r for r in recs if r["exit_code"] or len(r["outputs"]) != 2][:2])
names = sorted(os.listdir(out))
want = sorted("run%03d%s" % (i, e) for i in range(N) for e in (".pb.gz", ".jfr"))
t.check("every recording's outputs in OUT, named after it", names == want, sorted(set(names) ^ set(want))[:4])
left = [f for f in names if ".tmp." in f]
for root, _, files in os.walk(cache):
    left += [f for f in files if f.startswith(".conv-")]
t.check("no temp file left", not left, left)
t.finish()
