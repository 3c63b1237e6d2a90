#!/usr/bin/env python3
"""JIT frames are named as perf names them: a Java and a Python 3.12 run.

usage: test_jit.py CONV WORKDIR

For each runtime found here:

  java    JDK 17 or later `java` and `javac` on PATH. jit/JitWork.java (three hot
          methods, ~1.5 s so C1 and C2 compile them) runs with
          -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit
          -XX:+PreserveFramePointer; the JVM writes /tmp/perf-<pid>.map at exit.
  python  Python 3.12, from $CONV_PYTHON312, else `python3.12` on PATH, else
          /root/.pyenv/versions/3.12*/bin/python3.12 (each candidate is run to
          check it is 3.12; a pyenv shim that cannot run it is passed over).
          jit/jit_work.py (three tiny hot functions called millions of times,
          ~1 s) runs under `-X perf`; CPython writes /tmp/perf-<pid>.map while
          it runs, one "py::<qualname>:<file>" trampoline per code object.

the test records the run with
    perf record -N -q -e cpu-clock -F 999 -g -o WORKDIR/<name>.data -- CMD
(-F 9999 for Python, see below), takes perf's view of the JIT samples with
    perf report -f -i F --stdio -n --sort dso,sym --no-children -g none -t SEP
keeping the rows whose shared object is perf's JIT object, `[JIT] tid <pid>`
(older perf: `/tmp/perf-<pid>.map` or `perf-<pid>.map`), whose pid it takes
from that name (perf's `pid` sort key would give the thread, not the
process), and compares it with `CONV info --json --jit F`'s `jit_symbols`,
summed per (pid, name) on both sides (perf lists every symbol separately and
so does conv: a method compiled by C1 and again by C2 gives two rows of the
same name).

Checks per runtime: conv reads the file and loaded a JIT map; of all the JIT
leaf samples perf named, >= 99 % have the same (pid, name) in conv (the
agreement and every difference are printed, conv-only names too); each hot
method/function has exactly as many samples in conv as in perf (a recording
in which perf shows none for one of them is made again, up to 3 times; after
that the check is reported as skipped: where samples land is the workload's
luck, not conv's doing); conv's
processes.frames_jit is at least its JIT leaf count; with --jit-dir pointing
at a copy of the maps conv gives the same jit_symbols, and with --jit-dir
pointing at a directory without them it names nothing.

What counts as a cosmetic difference, and nothing else is normalized:
  - perf prints a symbol as "[.] NAME" padded with spaces to the column width
    (with -t the padding stays): the "[.] " and surrounding blanks are dropped.
    perf does not truncate or demangle perf-map names, nor add offsets with
    --sort sym, so NAME is otherwise compared byte for byte with conv's name.
  - a JIT sample perf cannot name (no map entry covers the IP) shows as
    "[.] 0x<address>": it is not a named sample and is left out of the
    agreement; a name conv gives such a sample is listed as conv-only.

Why -F 9999 for Python: CPython 3.12's trampoline is a handful of
instructions around the call into the interpreter, so a sample's leaf IP lands
in one only about 0.5 % of the time (the rest is in libpython). At 999 Hz a
1 s run gives ~5 such samples, too few to check each hot function; at 9999 Hz
it gives ~50. The Python 3.12 builds found here have no frame pointers, so the
trampolines rarely show up as callers either: leaf samples are what both
tools can be compared on.

At the end the /tmp/perf-<pid>.map files of the recorded processes (and only
those) and the recordings in WORKDIR are removed (kept with CONV_JIT_KEEP=1).
Prints ok/FAIL/SKIP lines and `N passed, M failed, K skipped`; exit 1 on failure.
Prints "SKIP: ..." and exits 77 (skipped) when perf cannot record here or no
runtime is found. WORKDIR is emptied first.
Python 3 standard library only.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

CONV, WORK = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "jit")
SEP = "\x1f"  # perf report -t: a separator no symbol name contains
passed = failed = skipped = 0
T0 = time.monotonic()


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else "  -- " + str(detail)))


def skip(name, why):
    global skipped
    skipped += 1
    print("SKIP %s: %s" % (name, why))


def sh(cmd, timeout=60, **kw):
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout, **kw)


def finish():
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped)
          + "  (%.1f s)" % (time.monotonic() - T0))
    sys.exit(1 if failed else 77 if not passed else 0)


# ---------------------------------------------------------------- runtimes
def find_java():
    java, javac = shutil.which("java"), shutil.which("javac")
    if not java or not javac:
        return None, "java/javac not on PATH"
    try:
        r = sh([java, "-version"], timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        return None, "java -version: %s" % e
    m = re.search(r'version "(\d+)(?:\.(\d+))?', r.stderr.decode(errors="replace"))
    major = int(m.group(1)) if m else 0
    if major == 1 and m.group(2):
        major = int(m.group(2))
    if major < 17:
        return None, "needs JDK 17 or later for -XX:+DumpPerfMapAtExit (found %s)" % (major or "?")
    return (java, javac), ""


def find_python312():
    cands = []
    if os.environ.get("CONV_PYTHON312"):
        cands.append(os.environ["CONV_PYTHON312"])
    if shutil.which("python3.12"):
        cands.append(shutil.which("python3.12"))
    cands += sorted(glob.glob("/root/.pyenv/versions/3.12*/bin/python3.12"), reverse=True)
    for c in cands:
        try:
            r = sh([c, "-c", "import sys; print(sys.version_info[:2] == (3, 12), sys.executable)"],
                   timeout=30)
        except (OSError, subprocess.SubprocessError):
            continue
        out = r.stdout.decode().split()
        if r.returncode == 0 and len(out) == 2 and out[0] == "True":
            return out[1], ""  # the real binary, not a shim in front of it
    return None, "no Python 3.12 ($CONV_PYTHON312, python3.12 on PATH, ~/.pyenv/versions/3.12*)"


# ---------------------------------------------------------------- perf's view
JIT_DSO = re.compile(r"^(?:\[JIT\] tid (\d+)|(?:/tmp/)?perf-(\d+)\.map)$")


def perf_jit_view(data):
    """{(pid, name): samples} for the JIT leaf samples perf names, and the count it could not name."""
    r = sh(["perf", "report", "-f", "-i", data, "--stdio", "-n", "--sort", "dso,sym",
            "--no-children", "-g", "none", "-t", SEP], timeout=120)
    if r.returncode:
        return None, r.stderr.decode(errors="replace")[-500:]
    named, unnamed = {}, 0
    for line in r.stdout.decode(errors="replace").splitlines():
        if line.startswith("#") or SEP not in line:
            continue
        f = line.split(SEP)
        if len(f) != 4:
            continue
        m = JIT_DSO.match(f[2].strip())
        if not m:
            continue
        pid = int(m.group(1) or m.group(2))
        n = int(f[1].strip())
        sym = f[3].strip()
        if sym.startswith("[.] "):
            sym = sym[4:].strip()
        if re.fullmatch(r"0x[0-9a-fA-F]+", sym):
            unnamed += n
            continue
        named[(pid, sym)] = named.get((pid, sym), 0) + n
    return named, unnamed


def perf_pids(data):
    """Every pid the recording saw (samples and task events): the processes this test started."""
    r = sh(["perf", "script", "-f", "-i", data, "--show-task-events", "-F", "pid", "-G"], timeout=120)
    pids = set()
    for line in r.stdout.decode(errors="replace").splitlines():
        m = re.match(r"\s*(\d+)", line)
        if m and int(m.group(1)) > 0:
            pids.add(int(m.group(1)))
    return pids


# ---------------------------------------------------------------- one runtime
ATTEMPTS = 3  # recordings per runtime until each hot function has a JIT leaf sample in perf's view


def run_one(name, cmd, freq, hot):
    data = os.path.join(WORK, name + ".data")
    for attempt in range(1, ATTEMPTS + 1):
        if os.path.exists(data):
            os.unlink(data)
        t = time.monotonic()
        p = sh(["perf", "record", "-N", "-q", "-e", "cpu-clock", "-F", str(freq), "-g", "-o", data, "--"]
               + cmd, timeout=60)
        t_rec = time.monotonic() - t
        if p.returncode or not os.path.exists(data):
            msg = p.stderr.decode(errors="replace").strip().splitlines()
            return "perf record failed: %s" % (msg[-1] if msg else p.returncode)
        pids = perf_pids(data)
        CREATED.update(pids)

        t = time.monotonic()
        perf, unnamed = perf_jit_view(data)
        t_perf = time.monotonic() - t
        if perf is None:
            break
        # the comparison below needs each hot function sampled; where a sample lands is the
        # workload's luck, not conv's doing: record again (bounded)
        missing = [h for h in hot if not any(h in k[1] for k in perf)]
        if not missing:
            break
        print("     %s: recording %d: perf has no JIT leaf sample of %s%s"
              % (name, attempt, ", ".join(missing), "; recording again" if attempt < ATTEMPTS else ""))
    check("%s: perf report reads the recording" % name, perf is not None, unnamed)
    if perf is None:
        return None

    t = time.monotonic()
    r = sh([CONV, "info", "--json", "--jit", data], timeout=120)
    t_conv = time.monotonic() - t
    try:
        info = json.loads(r.stdout) if r.returncode == 0 else None
    except ValueError:
        info = None
    check("%s: conv info --json --jit reads the recording" % name, info is not None,
          "exit %d: %s" % (r.returncode, r.stderr.decode(errors="replace")[-500:]))
    if info is None:
        return None
    rows = info.get("jit_symbols", [])
    conv = {}
    dsos = {}
    for s in rows:
        k = (s["pid"], s["name"])
        conv[k] = conv.get(k, 0) + s["samples"]
        dsos.setdefault(k, set()).add(s["dso"])
    procs = info.get("processes", {})
    print("     %s: record %.1f s, perf report %.1f s, conv %.1f s; pids %s; "
          "perf: %d named JIT samples in %d names (%d unnamed); conv: %d in %d names (%d rows), "
          "frames_jit %s, jit_maps_loaded %s, jit_entries %s"
          % (name, t_rec, t_perf, t_conv, sorted(pids), sum(perf.values()), len(perf), unnamed,
             sum(conv.values()), len(conv), len(rows), procs.get("frames_jit"),
             procs.get("jit_maps_loaded"), procs.get("jit_entries")))

    check("%s: conv loaded a JIT map" % name, (procs.get("jit_maps_loaded") or 0) >= 1
          and (procs.get("jit_entries") or 0) > 0, {k: v for k, v in procs.items() if "jit" in k})
    # conv's dso is perf's short name for the mapping (or [unknown]); the pid is the process's
    bad_dso = {k: sorted(v) for k, v in dsos.items()
               if any(d != "[JIT] tid %d" % k[0] and d != "[unknown]" for d in v)}
    check("%s: conv's JIT dso is `[JIT] tid <pid>`" % name, not bad_dso, bad_dso)

    total = sum(perf.values())
    agree = sum(min(n, conv.get(k, 0)) for k, n in perf.items())
    pct = 100.0 * agree / total if total else 0.0
    diffs = sorted(((k[0], k[1], perf.get(k, 0), conv.get(k, 0)) for k in set(perf) | set(conv)
                    if perf.get(k, 0) != conv.get(k, 0)), key=lambda d: -abs(d[2] - d[3]))
    print("     %s: agreement %d/%d = %.2f%%" % (name, agree, total, pct))
    for pid, sym, a, b in diffs[:30]:
        print("       differs: pid %d %r perf %d conv %d" % (pid, sym, a, b))
    if len(diffs) > 30:
        print("       ... %d more differences" % (len(diffs) - 30))
    check("%s: >= 99%% of perf's named JIT samples have the same name in conv (%.2f%%)" % (name, pct),
          total > 0 and agree * 100 >= 99 * total, "%d of %d" % (agree, total))

    for h in hot:
        pk = {k: n for k, n in perf.items() if h in k[1]}
        ck = {k: n for k, n in conv.items() if h in k[1]}
        if not pk:
            skip("%s: hot %s" % (name, h), "no JIT leaf sample in perf's view of %d recordings (conv has %d)"
                 % (ATTEMPTS, sum(ck.values())))
            continue
        check("%s: hot %s: perf %d, conv %d samples" % (name, h, sum(pk.values()), sum(ck.values())),
              pk == ck, {"perf": pk, "conv": ck})
    leaf = sum(conv.values())
    check("%s: frames_jit (%s) >= JIT leaf samples (%d)" % (name, procs.get("frames_jit"), leaf),
          (procs.get("frames_jit") or 0) >= leaf)

    # --jit-dir: the same maps copied elsewhere give the same answer; a directory without them, none
    jdir = os.path.join(WORK, name + "-jitdir")
    edir = os.path.join(WORK, name + "-empty")
    for d in (jdir, edir):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    for pid in pids:
        if os.path.exists("/tmp/perf-%d.map" % pid):
            shutil.copy("/tmp/perf-%d.map" % pid, jdir)
    got = {}
    for d in (jdir, edir):
        r = sh([CONV, "info", "--json", "--jit", "--jit-dir", d, data], timeout=120)
        try:
            got[d] = json.loads(r.stdout) if r.returncode == 0 else None
        except ValueError:
            got[d] = None
    key = lambda rs: sorted((x["pid"], x["dso"], x["name"], x["samples"]) for x in rs)
    check("%s: --jit-dir with a copy of the maps gives the same jit_symbols" % name,
          got[jdir] is not None and key(got[jdir].get("jit_symbols", [])) == key(rows),
          got[jdir] and len(got[jdir].get("jit_symbols", [])))
    check("%s: --jit-dir without maps names nothing" % name,
          got[edir] is not None and not got[edir].get("jit_symbols")
          and got[edir]["processes"].get("jit_maps_loaded") == 0,
          got[edir] and (got[edir].get("jit_symbols"), got[edir]["processes"].get("jit_maps_loaded")))
    for d in (jdir, edir):
        shutil.rmtree(d, ignore_errors=True)
    return None


CREATED = set()


def cleanup():
    if os.environ.get("CONV_JIT_KEEP") == "1":
        return
    for pid in sorted(CREATED):
        for f in ("/tmp/perf-%d.map" % pid,):
            try:
                os.unlink(f)
            except OSError:
                pass
    for f in glob.glob(os.path.join(WORK, "*.data")) + glob.glob(os.path.join(WORK, "*.data.old")) \
            + glob.glob(os.path.join(WORK, "*.class")):
        try:
            os.unlink(f)
        except OSError:
            pass


def main():
    if not shutil.which("perf"):
        print("SKIP: perf is not installed")
        print("0 passed, 0 failed, 1 skipped")
        sys.exit(77)
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    probe = os.path.join(WORK, "probe.data")
    p = sh(["perf", "record", "-N", "-q", "-e", "cpu-clock", "-o", probe, "--", "true"], timeout=30)
    if p.returncode:
        msg = p.stderr.decode(errors="replace").strip().splitlines()
        print("SKIP: perf cannot record here: %s" % (msg[-1] if msg else p.returncode))
        print("0 passed, 0 failed, 1 skipped")
        sys.exit(77)
    os.unlink(probe)

    runs = []
    jv, why = find_java()
    if jv:
        java, javac = jv
        r = sh([javac, "-d", WORK, os.path.join(SRC, "JitWork.java")], timeout=60)
        if r.returncode:
            check("java: javac JitWork.java", False, r.stderr.decode(errors="replace")[-500:])
        else:
            runs.append(("java", [java, "-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit",
                                  "-XX:+PreserveFramePointer", "-cp", WORK, "JitWork", "1500"], 999,
                         ["JitWork.hotAlphaMix(", "JitWork.hotBetaSqrt(", "JitWork.hotGammaArray("]))
    else:
        skip("java", why)
    py, why = find_python312()
    if py:
        runs.append(("python", [py, "-X", "perf", os.path.join(SRC, "jit_work.py"), "1.0"], 9999,
                     ["py::hot_alpha_add:", "py::hot_beta_xor:", "py::hot_gamma_mul:"]))
    else:
        skip("python", why)

    try:
        for name, cmd, freq, hot in runs:
            err = run_one(name, cmd, freq, hot)
            if err and not passed and not failed:
                print("SKIP: %s" % err)
                print("0 passed, 0 failed, 1 skipped")
                sys.exit(77)
            if err:
                check("%s: %s" % (name, err), False)
    finally:
        cleanup()
    finish()


main()
