#!/usr/bin/env python3
"""The archive benchmark (issue 35): conv over many small recordings in one
run, against one conv process per file and one `perf report` per file.

  bench/archive_bench.py [-n ROUNDS] [--conv CONV] [--base CONV] ARCHIVE_DIR

ARCHIVE_DIR is bench/archive.sh's output (NNN-KIND.data and bin/). In
alternating rounds (default 3, one warm-up round first), each a whole
process timed from outside with its peak RSS (the largest single process):

  conv -j1      conv -q -j 1 -o OUT/ ALL            (one run, one worker)
  conv -j2      conv -q -j 2 -o OUT/ ALL            (one run, two workers)
  per process   one `conv -q -o OUT/ FILE` per file  (sh loop)
  perf report   one `perf report --stdio` per file (sh loop; children and
                call graphs, perf's default for a -g recording)

--base CONV adds `BASE -q -j 1 -o OUT/ ALL` (a build before the change).
--merge adds `conv -q -j N --merge OUT/all ALL` for N = 1, 2 (and the base's
-j 1 with --base), and their peak RSS against the largest single
conversion's (the per-process loop's largest process).
Prints median wall time per file, CPU, peak RSS and the ratios the issue
asks for: per-process / one-run and perf report / one-run. Not a test.
"""
import argparse
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ab  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--conv", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build",
                                                  "conv"))
    ap.add_argument("--base")
    ap.add_argument("--merge", action="store_true")
    ap.add_argument("archive")
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.archive, "*.data")))
    if not files:
        raise SystemExit("archive_bench.py: no *.data in %s (make one with bench/archive.sh)" % a.archive)
    conv = os.path.abspath(a.conv)
    work = tempfile.mkdtemp(prefix="archbench.")
    out = os.path.join(work, "out")
    os.makedirs(out)
    listing = os.path.join(work, "files")
    with open(listing, "w") as f:
        f.write("\n".join(files) + "\n")
    everything = " ".join(files)
    cmds = [
        ("conv -j1", "%s -q -j 1 -o %s/ %s" % (conv, out, everything)),
        ("conv -j2", "%s -q -j 2 -o %s/ %s" % (conv, out, everything)),
        ("per process", "sh -c 'while read f; do %s -q -o %s/ \"$f\" || exit 1; done < %s'" % (conv, out, listing)),
        ("perf report", "sh -c 'while read f; do perf report -i \"$f\" --stdio >/dev/null 2>&1 || exit 1; "
                        "done < %s'" % listing),
    ]
    if a.base:
        cmds.insert(1, ("base -j1", "%s -q -j 1 -o %s/ %s" % (os.path.abspath(a.base), out, everything)))
    merges = []
    if a.merge:
        merges = [("merge -j1", conv, 1), ("merge -j2", conv, 2)]
        if a.base:
            merges.append(("base merge -j1", os.path.abspath(a.base), 1))
        cmds += [(name, "%s -q -j %d --merge %s/all %s" % (c, j, out, everything)) for name, c, j in merges]
    cpu = subprocess.run(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"],
                         capture_output=True, text=True).stdout.strip()
    sizes = [os.path.getsize(f) for f in files]
    print("archive: %d recordings, %.1f MB (%.0f KB to %.0f KB); CPU:%s, %d cores" %
          (len(files), sum(sizes) / 1e6, min(sizes) / 1e3, max(sizes) / 1e3, " " + cpu, os.cpu_count()))
    res = {name: [] for name, _ in cmds}
    for _, c in cmds:
        ab.run(c)
    for _ in range(a.n):
        for name, c in cmds:
            res[name].append(ab.run(c))
    med = {name: statistics.median(r[0] for r in res[name]) for name, _ in cmds}
    for name, _ in cmds:
        w = [r[0] for r in res[name]]
        print("%-12s median %7.3f s = %7.2f ms/file  (min %.3f, max %.3f)  cpu %7.3f s  peak RSS %6.1f MB" %
              (name, med[name], 1000 * med[name] / len(files), min(w), max(w),
               statistics.median(r[1] for r in res[name]), max(r[2] for r in res[name])))
    for one in ("conv -j1", "conv -j2"):
        print("%s: per process / one run %.1fx (goal >= 5x), perf report / one run %.1fx (goal >= 15x)" %
              (one, med["per process"] / med[one], med["perf report"] / med[one]))
    if a.base:
        print("base -j1 / conv -j1 %.2fx" % (med["base -j1"] / med["conv -j1"]))
    single = max(r[2] for r in res["per process"])
    for name, _, _ in merges:
        print("%s: peak RSS %.1f MB / largest single conversion's %.1f MB = %.2fx (goal <= 1.5x)" %
              (name, max(r[2] for r in res[name]), single, max(r[2] for r in res[name]) / single))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
