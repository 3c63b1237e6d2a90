#!/usr/bin/env python3
"""The converter on hostile inputs: the fuzz corpus and its regressions
(--part fixtures) and quipper's fuzzer crash inputs in the shared corpus
(--part corpus: ../shared/corpus/quipper-fuzz, or $CONV_CORPUS/quipper-fuzz;
exit 77, skipped, when absent) each end with a clean exit code (0, 2 or 3),
no sanitizer report, no hang.

usage: test_convert_hostile.py CONV WORKDIR [--part fixtures|corpus]
(without --part: both). WORKDIR is emptied first.
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("conv")
ap.add_argument("work")
ap.add_argument("--part", choices=("fixtures", "corpus"))
A = ap.parse_args()
CONV, WORK = A.conv, A.work
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.environ.get("CONV_CORPUS", os.path.join(os.path.dirname(REPO), "shared", "corpus"))
QUIPPER_FUZZ = os.path.join(CORPUS, "quipper-fuzz")
files = []
if A.part != "corpus":
    files += sorted(glob.glob(os.path.join(REPO, "tests", "fuzz", "corpus", "reader", "*")) +
                    glob.glob(os.path.join(REPO, "tests", "fuzz", "regressions", "*")))
if A.part != "fixtures":
    if os.path.isdir(QUIPPER_FUZZ):
        files += sorted(glob.glob(os.path.join(QUIPPER_FUZZ, "*")))
    elif A.part == "corpus":
        print("SKIP: corpus not found at %s (set CONV_CORPUS)\n0 passed, 0 failed, 1 skipped"
              % QUIPPER_FUZZ)
        sys.exit(77)
    else:
        print("SKIP corpus part: corpus not found at %s" % QUIPPER_FUZZ)
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
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
        print("FAIL %s: %s" % (os.path.relpath(f, os.path.dirname(REPO)), why))
print("%d passed, %d failed, 0 skipped" % (passed, failed))
sys.exit(1 if failed else 77 if not passed else 0)
