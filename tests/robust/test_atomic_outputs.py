#!/usr/bin/env python3
"""Outputs are atomic: on any failure no partial output remains, an existing
output is left as it was, and the exit code says so.

usage: test_atomic_outputs.py CONV WORKDIR

Input: samples/perf.data (pprof about 2 kB, JFR about 14 kB). A reference
conversion in WORKDIR gives the expected bytes (conv's outputs are
byte-identical from run to run). Each case runs `CONV -q --offline
--stats=S ...` and checks: exit 4; a "conv: cannot write PATH: reason" line
for every output that failed; no `*.tmp.*` file left; an output that could
not be written is absent, or, if it existed before, has its old bytes; an
output that could be written has the reference bytes and is the only one
listed in --stats "outputs" (whose exit_code is 4). Cases:
  * the output directory does not exist (-o DIR/missing/out);
  * the output paths are directories (-o BASE where BASE.pb.gz and
    BASE.jfr are directories; --pprof DIR --jfr DIR);
  * a read-only directory (a tmpfs remounted read-only, with outputs from an
    earlier run in it; without mount rights: chmod 555 when not root,
    skipped when root);
  * disk full (a 256 kB tmpfs filled up, holding outputs from an earlier
    run): nothing fits; then room for the pprof only: the pprof is replaced,
    the JFR keeps its old bytes (skipped without mount rights); and that again
    with the race between the two writer threads decided for the JFR
    (tests/tools/slow_write.c, LD_PRELOAD, holds back the pprof's write() and
    pauses after each of the JFR's, so the JFR's temp file holds the space
    while the pprof is written);
  * RLIMIT_FSIZE (ulimit -f) with SIGXFSZ ignored in the child, so write()
    fails with EFBIG: 1 kB (nothing fits) and 8 kB (the pprof fits);
  * RLIMIT_FSIZE with SIGXFSZ at its default action, as a shell's `ulimit
    -f` leaves it: conv must still exit 4 and leave no temp file (it has to
    ignore SIGXFSZ itself; otherwise the kernel kills it in write());
  * --pprof into a read-only directory and --jfr into a writable one: found
    before the input is read, so neither is written, exit 4;
  * SIGKILL in the middle (an input inflated to 100 MB with
    tests/tools/perfdata_inflate.py, outputs from an earlier run in place):
    killed at 10/30/60/90 % of a whole run's time, and as soon as the
    pprof's and the JFR's temp file appear: each final name then holds
    either the old bytes or the complete new output, never a part. Temp
    files left by SIGKILL are reported (they cannot be removed by a killed
    process) and must not carry a final name.
Prints what it observed per case and `N passed, M failed, K skipped`.
Python 3 standard library only; mounts need root (skipped otherwise).
"""
import gzip
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import time

CONV, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
INPUT = os.path.join(REPO, "samples", "perf.data")
INFLATE = os.path.join(REPO, "tests", "tools", "perfdata_inflate.py")
TIMEOUT = 120
passed = failed = skipped = 0
OLD_PPROF = b"old pprof bytes\n" * 8
OLD_JFR = b"old jfr bytes\n" * 8


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    if not cond:
        print("FAIL " + name + "  -- %s" % (detail,))
    sys.stdout.flush()
    return cond


def skip(why):
    global skipped
    skipped += 1
    print("SKIP: " + why)


def run(args, preexec=None, timeout=TIMEOUT, env=None, stdout_to=None):
    """(exit code, stderr); stdout_to: a file that gets conv's standard output."""
    try:
        p = subprocess.run([CONV, "-q", "--offline"] + args, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                           preexec_fn=preexec, env=env)
        if stdout_to:
            with open(stdout_to, "wb") as f:
                f.write(p.stdout)
        return p.returncode, p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return None, "timeout"


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def temps(d):
    try:
        return sorted(n for n in os.listdir(d) if ".tmp." in n)
    except OSError:
        return []


def stats_doc(path):
    try:
        with open(path) as f:
            return json.loads(f.readline())
    except (OSError, ValueError):
        return None


def expect(name, rc, err, outdir, written=(), failed_paths=(), old=None, stats=None, want_rc=4):
    """Common checks. written: [(path, reference bytes)]; failed_paths: paths that must
    be named on stderr and be absent (or hold old[path])."""
    check(name + ": exit %d" % want_rc, rc == want_rc, "exit %s: %s" % (rc, err[-300:]))
    check(name + ": no sanitizer report", "Sanitizer" not in err and "runtime error" not in err, err[-400:])
    for d in sorted(set([outdir] + [os.path.dirname(p) for p, _ in written] +
                        [os.path.dirname(p) for p in failed_paths])):
        check(name + ": no temp file left in %s" % d, not temps(d), temps(d))
    for p in failed_paths:
        check(name + ": the message names %s" % p, ("cannot write %s:" % p) in err, err[-300:])
        want = (old or {}).get(p)
        got = read(p) if os.path.isfile(p) else None
        if want is None:
            check(name + ": no file at %s" % p, not os.path.isfile(p), "%s bytes" % (len(got or b""),))
        else:
            check(name + ": %s keeps its old bytes" % p, got == want,
                  "%s bytes, %s" % (len(got) if got is not None else None, (got or b"")[:16]))
    for p, ref in written:
        check(name + ": %s written in full" % p, read(p) == ref, "%s bytes vs %s" % (
            len(read(p) or b""), len(ref)))
    if stats:
        doc = stats_doc(stats)
        outs = {o["format"]: o["path"] for o in doc.get("outputs", [])} if doc else None
        want_fmts = sorted("pprof" if p.endswith(".pb.gz") else "jfr" for p, _ in written)
        check(name + ": --stats lists exactly the written outputs", outs is not None and
              sorted(outs) == want_fmts, "%s vs %s" % (outs, want_fmts))
        check(name + ": --stats exit_code %d" % want_rc, doc is not None and doc.get("exit_code") == want_rc,
              doc and doc.get("exit_code"))


def fsize_limit(nbytes, ignore_xfsz=True):
    def pre():
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
        if ignore_xfsz:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        else:
            signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
    return pre


def put_old(base):
    with open(base + ".pb.gz", "wb") as f:
        f.write(OLD_PPROF)
    with open(base + ".jfr", "wb") as f:
        f.write(OLD_JFR)
    return {base + ".pb.gz": OLD_PPROF, base + ".jfr": OLD_JFR}


def clean(d):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


class Tmpfs:
    """A small tmpfs mounted on a directory (root only); None when mount fails."""

    def __init__(self, path, size):
        self.path, self.ok = path, False
        os.makedirs(path, exist_ok=True)
        if os.geteuid() != 0 or not shutil.which("mount"):
            self.why = "not root" if os.geteuid() else "no mount command"
            return
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s,mode=0755" % size, "tmpfs", path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        self.ok = p.returncode == 0
        self.why = p.stderr.decode(errors="replace").strip()

    def remount(self, opts):
        return subprocess.run(["mount", "-o", "remount," + opts, self.path], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=30).returncode == 0

    def free(self):
        st = os.statvfs(self.path)
        return st.f_bavail * st.f_bsize

    def close(self):
        if self.ok:
            subprocess.run(["umount", self.path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=30)
            self.ok = False


def slow_write_shim():
    """Builds tests/tools/slow_write.c (an LD_PRELOAD shim that holds back
    write() on matching files) into WORK; its path, or None without a C compiler."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc") or shutil.which("clang")
    out = os.path.join(WORK, "slow_write.so")
    if not cc:
        return None
    p = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", out,
                        os.path.join(REPO, "tests", "tools", "slow_write.c"), "-ldl"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    return out if p.returncode == 0 else None


def fill(path, leave):
    """Fills the filesystem of path, then frees `leave` bytes."""
    filler = os.path.join(path, "filler")
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    chunk = b"\0" * 4096
    try:
        while os.write(fd, chunk) > 0:
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    size = os.path.getsize(filler)
    if leave:
        os.truncate(filler, max(0, size - leave))
    return filler


def main():
    if not os.path.isfile(INPUT):
        print("SKIP: %s is missing\n0 passed, 0 failed, 1 skipped" % INPUT)
        return 77
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    ref = os.path.join(WORK, "ref")
    rc, err = run(["-o", ref, INPUT])
    if not check("reference conversion", rc == 0, err):
        print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
        return 1
    REF_P, REF_J = read(ref + ".pb.gz"), read(ref + ".jfr")
    print("reference: pprof %d bytes, JFR %d bytes" % (len(REF_P), len(REF_J)))
    stats = os.path.join(WORK, "stats.json")

    # 1. the output directory does not exist
    d = os.path.join(WORK, "missing", "sub")
    rc, err = run(["--stats=" + stats, "-o", os.path.join(d, "out"), INPUT])
    expect("missing directory", rc, err, WORK, failed_paths=[d + "/out.pb.gz", d + "/out.jfr"], stats=stats)
    check("missing directory: not created", not os.path.exists(os.path.dirname(d)))

    # 2. the output paths are directories
    d = clean(os.path.join(WORK, "isdir"))
    for ext in (".pb.gz", ".jfr"):
        os.makedirs(os.path.join(d, "out" + ext))
        open(os.path.join(d, "out" + ext, "keep"), "w").close()
    rc, err = run(["--stats=" + stats, "-o", os.path.join(d, "out"), INPUT])
    expect("output is a directory (-o)", rc, err, d, failed_paths=[], stats=stats)
    for ext in (".pb.gz", ".jfr"):
        p = os.path.join(d, "out" + ext)
        check("output is a directory (-o): names %s" % p, ("cannot write %s:" % p) in err, err)
        check("output is a directory (-o): %s is still the directory" % p,
              os.path.isfile(os.path.join(p, "keep")) and os.listdir(p) == ["keep"], os.listdir(p))
    pd, jd = os.path.join(d, "out.pb.gz"), os.path.join(d, "out.jfr")
    rc, err = run(["--stats=" + stats, "--pprof", pd, "--jfr", jd, INPUT])
    expect("output is a directory (--pprof/--jfr)", rc, err, d, stats=stats)
    check("output is a directory (--pprof/--jfr): both named",
          ("cannot write %s:" % pd) in err and ("cannot write %s:" % jd) in err, err)

    # 3. read-only directory
    d = os.path.join(WORK, "ro")
    fs = Tmpfs(d, "256k")
    try:
        if fs.ok:
            base = os.path.join(d, "out")
            old = put_old(base)
            if fs.remount("ro"):
                rc, err = run(["--stats=" + stats, "-o", base, INPUT])
                expect("read-only directory", rc, err, d, failed_paths=list(old), old=old, stats=stats)
                # pprof into the read-only directory, JFR elsewhere: found before the
                # input is read, so the JFR is not written either
                jfr = os.path.join(WORK, "split.jfr")
                rc, err = run(["--stats=" + stats, "--pprof", base + ".pb.gz", "--jfr", jfr, INPUT])
                expect("pprof read-only, JFR writable", rc, err, d,
                       failed_paths=[base + ".pb.gz"], old=old, stats=stats)
                check("pprof read-only, JFR writable: no JFR written", not os.path.exists(jfr))
                print("read-only: %s" % " | ".join(l for l in err.splitlines()))
            else:
                skip("read-only directory: remount ro failed")
        elif os.geteuid() != 0:
            clean(d)
            base = os.path.join(d, "out")
            old = put_old(base)
            os.chmod(d, 0o555)
            rc, err = run(["--stats=" + stats, "-o", base, INPUT])
            os.chmod(d, 0o755)
            expect("read-only directory (chmod 555)", rc, err, d, failed_paths=list(old), old=old, stats=stats)
        else:
            skip("read-only directory: running as root and cannot mount a tmpfs (%s)" % fs.why)
    finally:
        fs.close()

    # 4. disk full
    d = os.path.join(WORK, "full")
    fs = Tmpfs(d, "256k")
    try:
        if fs.ok:
            base = os.path.join(d, "out")
            old = put_old(base)
            fill(d, 0)
            rc, err = run(["--stats=" + stats, "-o", base, INPUT])
            expect("disk full", rc, err, d, failed_paths=list(old), old=old, stats=stats)
            print("disk full: %s" % " | ".join(err.splitlines()))
            filler = os.path.join(d, "filler")
            os.truncate(filler, os.path.getsize(filler) - max(0, 8192 - fs.free()))
            rc, err = run(["--stats=" + stats, "-o", base, INPUT])
            expect("disk full, room for the pprof only", rc, err, d, written=[(base + ".pb.gz", REF_P)],
                   failed_paths=[base + ".jfr"], old=old, stats=stats)
            print("disk full, 8 kB free: %s" % " | ".join(err.splitlines()))
            # The same, with the race between the two writers decided for the
            # JFR: its write lands first and its temp file holds the space
            # while the pprof is written (as on a slower machine in CI); conv
            # must still end with the pprof written.
            shim = slow_write_shim()
            if shim:
                put_old(base)
                os.truncate(filler, os.path.getsize(filler) - max(0, 8192 - fs.free()))
                env = dict(os.environ, LD_PRELOAD=shim,
                           SLOW_WRITE_BEFORE=".pb.gz.tmp.", SLOW_WRITE_BEFORE_MS="300",
                           SLOW_WRITE_AFTER=".jfr.tmp.", SLOW_WRITE_AFTER_MS="1000",
                           ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
                rc, err = run(["--stats=" + stats, "-j", "2", "-o", base, INPUT], env=env)
                expect("disk full, room for the pprof only, the JFR writes first", rc, err, d,
                       written=[(base + ".pb.gz", REF_P)], failed_paths=[base + ".jfr"], old=old,
                       stats=stats)
                print("disk full, 8 kB free, the JFR holding its space: %s" % " | ".join(err.splitlines()))
            else:
                skip("disk full, the JFR writes first: cannot build tests/tools/slow_write.c")
        else:
            skip("disk full: cannot mount a tmpfs (%s)" % fs.why)
    finally:
        fs.close()

    # 5. RLIMIT_FSIZE, SIGXFSZ ignored: write() fails with EFBIG
    for limit, fits in ((1024, False), (8192, True)):
        d = clean(os.path.join(WORK, "fsize%d" % limit))
        base = os.path.join(d, "out")
        old = put_old(base)
        # the statistics go to a pipe, which the file size limit does not cover
        rc, err = run(["--stats", "-o", base, INPUT], preexec=fsize_limit(limit), stdout_to=stats)
        name = "RLIMIT_FSIZE %d (SIGXFSZ ignored)" % limit
        if fits:
            expect(name, rc, err, d, written=[(base + ".pb.gz", REF_P)], failed_paths=[base + ".jfr"],
                   old=old, stats=stats)
        else:
            expect(name, rc, err, d, failed_paths=list(old), old=old, stats=stats)
        print("%s: %s" % (name, " | ".join(err.splitlines())))

    # 6. RLIMIT_FSIZE with SIGXFSZ at its default action (a shell's ulimit -f)
    d = clean(os.path.join(WORK, "fsize-default"))
    base = os.path.join(d, "out")
    old = put_old(base)
    rc, err = run(["-o", base, INPUT], preexec=fsize_limit(8192, ignore_xfsz=False))
    print("RLIMIT_FSIZE 8192, SIGXFSZ default: exit %s%s, left: %s" % (
        rc, " (killed by signal %d)" % -rc if rc is not None and rc < 0 else "", sorted(os.listdir(d))))
    check("RLIMIT_FSIZE, SIGXFSZ default: conv is not killed by SIGXFSZ, exits 4", rc == 4,
          "exit %s (-%d = SIGXFSZ): conv should ignore SIGXFSZ so that write() fails with EFBIG"
          % (rc, signal.SIGXFSZ))
    check("RLIMIT_FSIZE, SIGXFSZ default: no temp file left", not temps(d), temps(d))
    check("RLIMIT_FSIZE, SIGXFSZ default: the JFR keeps its old bytes", read(base + ".jfr") == OLD_JFR)
    check("RLIMIT_FSIZE, SIGXFSZ default: the pprof is old or complete",
          read(base + ".pb.gz") in (OLD_PPROF, REF_P))

    # 7. SIGKILL in the middle
    sigkill()
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    if failed == 0:
        shutil.rmtree(WORK, ignore_errors=True)
    return 1 if failed else 0


def gzip_ok(data):
    try:
        gzip.decompress(data)
        return True
    except (OSError, EOFError, ValueError):
        return False


def sigkill():
    big = os.path.join(WORK, "big.data")
    p = subprocess.run([sys.executable, INFLATE, "--size-mb", "100", INPUT, big], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    if p.returncode:
        skip("SIGKILL: inflating the input failed: %s" % p.stderr.decode(errors="replace")[-200:])
        return
    ref = os.path.join(WORK, "bigref")
    t0 = time.monotonic()
    rc, err = run(["-o", ref, big])
    whole = time.monotonic() - t0
    if not check("SIGKILL: the inflated input converts", rc == 0, err[-300:]):
        return
    REF_P, REF_J = read(ref + ".pb.gz"), read(ref + ".jfr")
    print("SIGKILL: 100 MB input, whole run %.2f s, pprof %d bytes, JFR %d bytes"
          % (whole, len(REF_P), len(REF_J)))
    plans = [("at %d%% (%.2f s)" % (f * 100, f * whole), f * whole, None) for f in (0.1, 0.3, 0.6, 0.9)]
    plans += [("when the pprof temp file appears", None, ".pb.gz.tmp."),
              ("when the JFR temp file appears", None, ".jfr.tmp.")]
    leftovers = []
    for label, delay, watch in plans:
        d = clean(os.path.join(WORK, "kill"))
        base = os.path.join(d, "out")
        old = put_old(base)
        proc = subprocess.Popen([CONV, "-q", "--offline", "-o", base, big], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t0 = time.monotonic()
        seen = False
        while proc.poll() is None and time.monotonic() - t0 < TIMEOUT:
            if delay is not None and time.monotonic() - t0 >= delay:
                break
            if watch and any(watch in n for n in os.listdir(d)):
                seen = True
                break
            time.sleep(0.0005 if watch else 0.002)
        finished = proc.poll() is not None
        if not finished:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        at = time.monotonic() - t0
        names = sorted(os.listdir(d))
        tmp = [n for n in names if ".tmp." in n]
        leftovers += tmp
        pp, jj = read(base + ".pb.gz"), read(base + ".jfr")
        state = lambda got, new, oldb: ("old" if got == oldb else "new" if got == new else
                                        "MISSING" if got is None else "PARTIAL(%d bytes)" % len(got))
        print("  SIGKILL %-36s %s at %.2f s: pprof %s, JFR %s, temp files %s" % (
            label, "finished before the kill" if finished else "killed", at,
            state(pp, REF_P, old[base + ".pb.gz"]), state(jj, REF_J, old[base + ".jfr"]), tmp or "none"))
        if watch and not finished:
            check("SIGKILL %s: the temp file was seen" % label, seen)
        check("SIGKILL %s: the pprof is the old or the complete new one" % label, pp in (OLD_PPROF, REF_P),
              state(pp, REF_P, OLD_PPROF))
        check("SIGKILL %s: the JFR is the old or the complete new one" % label, jj in (OLD_JFR, REF_J),
              state(jj, REF_J, OLD_JFR))
        check("SIGKILL %s: temp files never carry a final name" % label,
              all(n not in ("out.pb.gz", "out.jfr") for n in tmp) and
              set(names) <= set(["out.pb.gz", "out.jfr"] + tmp), names)
        if pp == REF_P:
            check("SIGKILL %s: the new pprof is a whole gzip stream" % label, gzip_ok(pp))
    print("SIGKILL: temp files left behind by killed runs (expected: a killed process cannot "
          "remove them): %s" % (leftovers or "none"))
    os.unlink(big)


if __name__ == "__main__":
    sys.exit(main())
