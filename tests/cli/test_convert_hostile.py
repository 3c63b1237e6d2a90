#!/usr/bin/env python3
"""The converter on hostile inputs: the fuzz corpus, its regressions and
quipper's fuzzer crash inputs (when ../shared is there) each end with a clean
exit code (0, 2 or 3), no sanitizer report, no hang.

usage: test_convert_hostile.py CONV WORKDIR
"""
import glob
import os
import subprocess
import sys

CONV, WORK = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
files = sorted(glob.glob(os.path.join(REPO, "tests", "fuzz", "corpus", "reader", "*")) +
               glob.glob(os.path.join(REPO, "tests", "fuzz", "regressions", "*")) +
               glob.glob(os.path.join(os.path.dirname(REPO), "shared", "corpus", "quipper-fuzz", "*")))
os.makedirs(WORK, exist_ok=True)
out = os.path.join(WORK, "out.pb.gz")
passed = failed = 0
for f in files:
    try:
        p = subprocess.run([CONV, "-q", "--offline", "--pprof", out, f], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=30)
        err = p.stderr.decode(errors="replace")
        ok = p.returncode in (0, 2, 3) and "runtime error" not in err and "Sanitizer" not in err
        why = "exit %d %s" % (p.returncode, err[-200:])
    except subprocess.TimeoutExpired:
        ok, why = False, "timeout"
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s: %s" % (os.path.relpath(f, REPO), why))
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
