#!/usr/bin/env python3
"""The unit tests and conv itself under valgrind (memcheck): no invalid
access, no use of uninitialised memory, no definite leak.

usage: valgrind_run.py CONV UNIT_TEST_DIR FIXTURES_DIR [WORKDIR]

CONV must be a build without sanitizers (valgrind and ASan do not mix; an
ASan binary makes the script exit 77, CTest's SKIP_RETURN_CODE, as does a
missing valgrind). Runs under
    valgrind --error-exitcode=99 --leak-check=full
             --errors-for-leak-kinds=definite --show-leak-kinds=definite
             --num-callers=30 --log-file=WORKDIR/NAME.vg
  * every unit test executable test_* in UNIT_TEST_DIR (the cmocka tests,
    and test_sample_cache over the repository's recordings;
    child processes they start -- the fake debuginfod server, the compiler
    -- are not traced), with PYTHON and CC as CTest gives them;
  * conv on every *.data in FIXTURES_DIR and FIXTURES_DIR/attr, and
    samples/perf.data: `-q --offline --stats=S -o OUT FILE` (both outputs,
    default -j: symbolizer threads), and `info --json --top 5 --offline`;
  * conv on damaged input: samples/perf.data cut in the middle of a record,
    and with data.size 0; pipe.data through standard input; zstd.data cut
    inside a COMPRESSED record; multi.data turned into a pipe stream (two
    HEADER_ATTR records: pipe mode with several events).
A run fails on valgrind's exit code 99 (its report is printed), on any
other non-zero exit of the program (except exit 3/... where expected), or
on a timeout (CONV_VALGRIND_TIMEOUT, default 900 s per run). Runs go
CONV_VALGRIND_JOBS at a time (default: 2). Prints a table (run, exit,
seconds, errors) and `N passed, M failed, K skipped`.
Python 3 standard library only.
"""
import concurrent.futures
import glob
import os
import re
import shutil
import struct
import subprocess
import sys
import time

if len(sys.argv) < 4:
    print(__doc__)
    sys.exit(2)
CONV, UNIT, FIX = (os.path.abspath(a) for a in sys.argv[1:4])
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORK = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else os.path.join(UNIT, "valgrind")
TIMEOUT = float(os.environ.get("CONV_VALGRIND_TIMEOUT", "900"))
JOBS = int(os.environ.get("CONV_VALGRIND_JOBS", "2"))
VG = ["valgrind", "--error-exitcode=99", "--leak-check=full", "--errors-for-leak-kinds=definite",
      "--show-leak-kinds=definite", "--num-callers=30", "--child-silent-after-fork=yes"]


def main():
    vg = shutil.which("valgrind")
    if not vg:
        print("SKIP: valgrind is not installed (apt-get install valgrind)")
        return 77
    with open(CONV, "rb") as f:
        if b"__asan_init" in f.read():
            print("SKIP: %s is built with AddressSanitizer; valgrind needs a plain build" % CONV)
            return 77
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    runs = []  # (name, argv, stdin path or None, allowed exit codes, env)
    tenv = dict(os.environ)
    tenv.setdefault("PYTHON", sys.executable)
    tenv.setdefault("CC", shutil.which("cc") or "cc")
    # the unit tests that take operands: what CTest gives them
    unit_args = {"test_sample_cache": [os.path.join(REPO, "tests")]}
    for t in sorted(glob.glob(os.path.join(UNIT, "test_*"))):
        if os.access(t, os.X_OK) and os.path.isfile(t):
            name = os.path.basename(t)
            runs.append((name, [t] + unit_args.get(name, []), None, (0,), tenv))
    cenv = dict(os.environ, HOME=os.path.join(WORK, "home"), XDG_CACHE_HOME=os.path.join(WORK, "xdg"))
    cenv.pop("DEBUGINFOD_URLS", None)
    inputs = sorted(glob.glob(os.path.join(FIX, "*.data")) + glob.glob(os.path.join(FIX, "attr", "*.data")))
    sample = os.path.join(REPO, "samples", "perf.data")
    if os.path.isfile(sample):
        inputs.append(sample)
    for f in inputs:
        tag = os.path.relpath(f, os.path.dirname(FIX)).replace("/", "_")
        out = os.path.join(WORK, "out-" + tag)
        runs.append(("conv " + tag, [CONV, "-q", "--offline", "--stats=" + out + ".json", "-o", out, f],
                     None, (0,), cenv))
        runs.append(("conv info " + tag, [CONV, "info", "--json", "--top", "5", "--offline", f],
                     None, (0,), cenv))
    # damaged inputs
    dmg = os.path.join(WORK, "damaged")
    os.makedirs(dmg)
    if os.path.isfile(sample):
        d = bytearray(open(sample, "rb").read())
        do, ds = struct.unpack_from("<QQ", d, 40)
        cut = os.path.join(dmg, "cut.data")
        with open(cut, "wb") as f:
            f.write(d[:do + ds // 2 + 13])
        z = bytearray(d)
        struct.pack_into("<Q", z, 48, 0)
        ds0 = os.path.join(dmg, "datasize0.data")
        with open(ds0, "wb") as f:
            f.write(z[:do + ds])
        for name, f in (("cut in a record", cut), ("data.size 0", ds0)):
            o = os.path.join(dmg, re.sub(r"\W", "_", name))
            runs.append(("conv " + name, [CONV, "-q", "--offline", "--stats=" + o + ".json", "-o", o, f],
                         None, (0,), cenv))
            runs.append(("conv --strict " + name, [CONV, "-q", "--offline", "--strict", "-o", o + "s", f],
                         None, (3,), cenv))
    zf = os.path.join(FIX, "zstd.data")
    if os.path.isfile(zf):
        d = open(zf, "rb").read()
        zc = os.path.join(dmg, "zstd-cut.data")
        with open(zc, "wb") as f:
            f.write(d[:len(d) // 4])  # inside the first COMPRESSED record
        runs.append(("conv zstd cut", [CONV, "-q", "--offline", "-o", os.path.join(dmg, "zc"), zc],
                     None, (0,), cenv))
    mf = os.path.join(FIX, "multi.data")
    if os.path.isfile(mf):  # a pipe stream with two events (a HEADER_ATTR each)
        d = open(mf, "rb").read()
        attr_size, attrs_off, attrs_size, do, ds = struct.unpack_from("<5Q", d, 16)
        pipe = bytearray(b"PERFILE2" + struct.pack("<Q", 16))
        for i in range(attrs_size // attr_size):
            a = attrs_off + i * attr_size
            ids_off, ids_size = struct.unpack_from("<QQ", d, a + attr_size - 16)
            body = d[a:a + (struct.unpack_from("<I", d, a + 4)[0] or 64)] + d[ids_off:ids_off + ids_size]
            pipe += struct.pack("<IHH", 64, 0, 8 + len(body)) + body
        pipe += d[do:do + ds]
        mp = os.path.join(dmg, "multi-pipe.data")
        with open(mp, "wb") as f:
            f.write(pipe)
        runs.append(("conv multi.data as a pipe", [CONV, "-q", "--offline", "-o", os.path.join(dmg, "mp"), mp],
                     None, (0,), cenv))
    pf = os.path.join(FIX, "pipe.data")
    if os.path.isfile(pf):
        runs.append(("conv stdin pipe.data", [CONV, "-q", "--offline", "-o", os.path.join(dmg, "stdin"), "-"],
                     pf, (0,), cenv))

    def one(i, run):
        name, argv, stdin, ok_codes, env = run
        log = os.path.join(WORK, "%03d.vg" % i)
        t0 = time.monotonic()
        try:
            with open(stdin, "rb") if stdin else open(os.devnull, "rb") as fin:
                p = subprocess.run(VG + ["--log-file=" + log] + argv, stdin=fin, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, timeout=TIMEOUT, env=env)
            rc, out = p.returncode, (p.stdout + p.stderr).decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            rc, out = None, "timeout after %gs" % TIMEOUT
        wall = time.monotonic() - t0
        try:
            with open(log, encoding="utf-8", errors="replace") as f:
                report = f.read()
        except OSError:
            report = ""
        m = re.search(r"ERROR SUMMARY: (\d+) errors", report)
        errors = int(m.group(1)) if m else None
        leak = re.search(r"definitely lost: ([\d,]+) bytes", report)
        return name, rc, wall, errors, leak.group(1) if leak else "0", report, out, ok_codes

    t_all = time.monotonic()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, JOBS)) as ex:
        futs = [ex.submit(one, i, r) for i, r in enumerate(runs)]
        for fu in futs:
            results.append(fu.result())
    passed = failed = 0
    for name, rc, wall, errors, leak, report, out, ok_codes in results:
        good = rc in ok_codes and errors == 0
        if good:
            passed += 1
            continue
        failed += 1
        print("FAIL %s: exit %s, valgrind errors %s, definitely lost %s bytes" % (name, rc, errors, leak))
        body = [l for l in report.splitlines() if l.startswith("==")]
        print("\n".join(body[-80:]))
        if rc not in ok_codes and rc != 99:
            print(out[-1500:])
    print("\n%-40s %5s %8s %7s %10s" % ("run", "exit", "seconds", "errors", "def. lost"))
    for name, rc, wall, errors, leak, _r, _o, _c in results:
        print("%-40s %5s %8.1f %7s %10s" % (name[:40], rc, wall, errors, leak))
    print("\nvalgrind: %d runs in %.0f s (%d at a time)" % (len(results), time.monotonic() - t_all, JOBS))
    print("%d passed, %d failed, 0 skipped" % (passed, failed))
    if failed == 0:
        shutil.rmtree(WORK, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
