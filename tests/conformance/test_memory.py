#!/usr/bin/env python3
"""Conformance: memory grows with distinct stacks, not with samples: the same
conv binary, on the same recording inflated to ~10 MB and to ~100 MB (ten
times the samples, the same stacks), reaches about the same peak RSS, both
for `conv info` and for a conversion to pprof and JFR.

Usage:
    test_memory.py CONV SOURCE_PERF_DATA WORKDIR

SOURCE_PERF_DATA is a real file-mode perf.data (e.g. from `perf record -g`).
It is inflated with tests/tools/perfdata_inflate.py to ~10 MB and ~100 MB in
WORKDIR (its samples repeated, shifted in time: no new stack); `CONV info
--json FILE` and `CONV --pprof --jfr FILE` are run on each and their peak RSS
measured.

Checks (per size): the inflate tool succeeded, conv exits 0, and the sum of
`events[*].samples` in conv's JSON equals the number of SAMPLE records the
inflate tool wrote.  Then, for info and for the conversion: peak RSS of the
100 MB run <= 1.5 x the 10 MB run's peak RSS + 8 MB, i.e. 90 MB more input
may cost a few MB, not tens. Only figures of one run of this test are
compared: no absolute limit, which would measure the machine (the kernel's
transparent-huge-page setting, the C library, the sanitizer) rather than conv.

Transparent huge pages: with THP, RSS counts every 2 MiB region conv touched
in full, and whether a region gets a huge page depends on what memory the
kernel has free at that moment, so two runs of the same work can differ by
many MB. The measured runs therefore run with THP disabled for conv alone
(prctl PR_SET_THP_DISABLE, inherited through exec): RSS then counts the 4 KiB
pages conv touched, which is what grows if memory grows with samples. The
same four runs with the machine's THP setting are printed for information,
not checked. Where the prctl is not available the checks run under the
machine's setting (noted). Nothing is timed (wall times are printed only).

Peak RSS is conv's own ru_maxrss, from wait4().  A child forked from this
Python process would inherit Python's resident memory into its ru_maxrss
(Linux keeps the pre-exec high-water mark), so conv is launched from a
/bin/sh subshell instead, and this process makes itself a child subreaper
(prctl PR_SET_CHILD_SUBREAPER) so it can reap conv with wait4() and read its
rusage.  If that is unavailable it falls back to a direct fork (figures then
include a launcher floor of a few MB, noted in the output, the same in both
runs).

If CONV is built with AddressSanitizer (e.g. build/debug), ASan's quarantine
of freed memory (256 MB by default) makes RSS grow with the amount of work
even for a streaming reader, so unless ASAN_OPTIONS already sets
quarantine_size_mb the child runs with quarantine_size_mb=0 appended (a note
is printed).  A non-sanitized build gives the real figures.

Prints a table (file size, samples, peak RSS MB, wall seconds) and a final
line `N passed, M failed, 0 skipped`.  Exit 0 only if all checks pass.  The
inflated files are deleted afterwards.  If SOURCE_PERF_DATA is missing,
prints `SKIP: ...` and exits 77.

Python 3 standard library only.
"""

import ctypes
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
INFLATE = os.path.join(HERE, "..", "tools", "perfdata_inflate.py")

SIZES_MB = (10, 100)
RATIO = 1.5                  # rss(100MB) <= RATIO * rss(10MB) + SLACK_MB
SLACK_MB = 8.0
TIMEOUT_S = float(os.environ.get("CONV_TEST_TIMEOUT", "600"))  # a hang guard, not a limit

PR_SET_CHILD_SUBREAPER = 36
PR_SET_THP_DISABLE = 41


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
            print("PASS: %s" % what)
        else:
            self.failed += 1
            print("FAIL: %s%s" % (what, (" -- " + detail) if detail else ""))
        sys.stdout.flush()
        return ok


def set_subreaper():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def set_thp_disable(flag):
    """PR_SET_THP_DISABLE for this process and the children it starts from now
    on (kept across exec). True if the kernel took it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_THP_DISABLE, 1 if flag else 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def thp_setting():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return f.read().strip()
    except OSError:
        return "unknown"


def _wait_with_timeout(pid, timeout):
    """wait4() for pid with a timeout; kills it on timeout.
    Returns (status, rusage, timed_out)."""
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        wpid, status, ru = os.wait4(pid, os.WNOHANG)
        if wpid == pid:
            return status, ru, False
        if time.monotonic() > deadline:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            _, status, ru = os.wait4(pid, 0)
            return status, ru, True
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


def asan_env(conv):
    """If conv is built with AddressSanitizer, return an environment that
    turns off ASan's free-memory quarantine (256 MB by default, which would
    otherwise show up as RSS growing with the number of allocations), plus a
    note; else (None, None).  An explicit quarantine setting is respected."""
    try:
        with open(conv, "rb") as f:
            is_asan = b"__asan_init" in f.read()
    except OSError:
        return None, None
    if not is_asan:
        return None, None
    opts = os.environ.get("ASAN_OPTIONS", "")
    if "quarantine_size_mb" in opts:
        return None, ("note: conv is built with AddressSanitizer; using "
                      "ASAN_OPTIONS=%s as given" % opts)
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = (opts + ":" if opts else "") + "quarantine_size_mb=0"
    return env, ("note: conv is built with AddressSanitizer; running it with "
                 "ASAN_OPTIONS=%s (figures include ASan shadow memory; "
                 "a non-sanitized build is the real measure)" % env["ASAN_OPTIONS"])


def run_measured(argv, out_path, err_path, subreaper, env=None):
    """Run argv with stdout/stderr to files.  Returns dict with exit code,
    peak RSS (KiB), wall seconds, timed_out."""
    if env is None:
        env = os.environ
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        if not subreaper:
            t0 = time.monotonic()
            pid = os.fork()
            if pid == 0:
                try:
                    os.dup2(out.fileno(), 1)
                    os.dup2(err.fileno(), 2)
                    os.execve(argv[0], argv, env)
                finally:
                    os._exit(127)
            status, ru, timed_out = _wait_with_timeout(pid, TIMEOUT_S)
            wall = time.monotonic() - t0
        else:
            # sh (A) starts a subshell (B) in the background, reports B's
            # pid and exits; B waits for the go-pipe to close and then execs
            # conv.  B was forked from a small sh, so its ru_maxrss is conv's.
            pid_r, pid_w = os.pipe()
            go_r, go_w = os.pipe()
            script = ('{ read _ <&%(g)d; exec "$@" %(g)d<&-; } %(p)d>&- & '
                      'echo $! >&%(p)d' % {"g": go_r, "p": pid_w})
            try:
                a = subprocess.Popen(["/bin/sh", "-c", script, "sh"] + argv,
                                     stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=err, pass_fds=(pid_w, go_r),
                                     env=env)
                os.close(pid_w)
                pid_w = -1
                os.close(go_r)
                go_r = -1
                raw = b""
                while True:
                    chunk = os.read(pid_r, 64)
                    if not chunk:
                        break
                    raw += chunk
                a.wait()
                pid = int(raw.strip())
                t0 = time.monotonic()
                os.close(go_w)          # let B exec conv
                go_w = -1
                status, ru, timed_out = _wait_with_timeout(pid, TIMEOUT_S)
                wall = time.monotonic() - t0
            finally:
                for fd in (pid_r, pid_w, go_r, go_w):
                    if fd >= 0:
                        os.close(fd)
    if os.WIFEXITED(status):
        code = os.WEXITSTATUS(status)
    else:
        code = -os.WTERMSIG(status)
    return {"exit": code, "maxrss_kb": ru.ru_maxrss, "wall": wall,
            "timed_out": timed_out}


def inflate(source, out_path, size_mb):
    p = subprocess.run([sys.executable, INFLATE, "--size-mb", str(size_mb),
                        source, out_path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        return None, "exit %d: %s" % (p.returncode, p.stderr.strip())
    try:
        return json.loads(p.stdout), ""
    except ValueError:
        return None, "bad JSON from inflate tool: %r" % p.stdout[:200]


def sum_samples(doc):
    events = doc.get("events") if isinstance(doc, dict) else None
    if not isinstance(events, list):
        raise ValueError("no 'events' list in JSON (keys: %s)"
                         % (sorted(doc) if isinstance(doc, dict) else type(doc).__name__))
    total = 0
    for ev in events:
        n = ev.get("samples") if isinstance(ev, dict) else None
        if not isinstance(n, int):
            raise ValueError("event without integer 'samples': %r" % (ev,))
        total += n
    return total


def measure(res, conv, source, workdir, subreaper, env, made, inflated, tag, checked):
    """Inflates source to each size (once per test run: inflated holds what this
    run made) and measures conv info and the conversion on it: {size: row}.
    checked: the results are checks (else only printed)."""
    rows = {}

    def check(ok, what, detail=""):
        if checked:
            return res.check(ok, what, detail)
        if not ok:
            print("note (%s, not a check): %s%s" % (tag, what, (" -- " + detail) if detail else ""))
        return ok

    for size in SIZES_MB:
        path = os.path.join(workdir, "inflated-%dmb.perf.data" % size)
        out_path = path + ".info.json"
        err_path = path + ".info.err"
        made += [path, out_path, err_path]
        if size not in inflated:
            info, why = inflate(source, path, size)
            if not res.check(info is not None, "inflate source to ~%d MB" % size, why):
                continue
            inflated[size] = info
        info = inflated[size]
        want = info["samples"]
        r = run_measured([conv, "info", "--json", path], out_path, err_path,
                         subreaper, env)
        with open(err_path, "rb") as f:
            err_tail = f.read()[-400:].decode("utf-8", "replace").strip()
        ok = check(r["exit"] == 0 and not r["timed_out"],
                   "conv info --json exits 0 (%d MB)" % size,
                   "timed out after %gs" % TIMEOUT_S if r["timed_out"]
                   else "exit %d; stderr: %s" % (r["exit"], err_tail))
        got = None
        if ok:
            try:
                with open(out_path, "rb") as f:
                    got = sum_samples(json.loads(f.read().decode("utf-8")))
                check(got == want, "events[*].samples sum == %d (%d MB)" % (want, size),
                      "conv reports %d" % got)
            except (ValueError, UnicodeDecodeError) as e:
                check(False, "events[*].samples sum == %d (%d MB)" % (want, size),
                      "cannot read conv JSON: %s" % e)
        else:
            check(False, "events[*].samples sum == %d (%d MB)" % (want, size), "conv failed")
        rows[size] = {"bytes": info["bytes"], "samples": want, "got": got,
                      "rss_mb": r["maxrss_kb"] / 1024.0, "wall": r["wall"],
                      "ok": r["exit"] == 0 and not r["timed_out"]}
        # the conversion too: aggregates for pprof, every sample streamed to JFR
        pb, jfr = path + ".pb.gz", path + ".jfr"
        cout, cerr = path + ".conv.out", path + ".conv.err"
        made += [pb, jfr, cout, cerr]
        c = run_measured([conv, "-q", "--offline", "--no-symbolize", "--pprof", pb,
                          "--jfr", jfr, path], cout, cerr, subreaper, env)
        with open(cerr, "rb") as f:
            err_tail = f.read()[-400:].decode("utf-8", "replace").strip()
        cok = check(c["exit"] == 0 and not c["timed_out"] and os.path.exists(jfr) and
                    os.path.getsize(jfr) > 0,
                    "conv --pprof --jfr exits 0 (%d MB)" % size,
                    "exit %d; stderr: %s" % (c["exit"], err_tail))
        rows[size].update({"conv_rss_mb": c["maxrss_kb"] / 1024.0, "conv_wall": c["wall"],
                           "conv_ok": cok,
                           "jfr_mb": os.path.getsize(jfr) / 1e6 if cok else 0})

    small, big = rows.get(SIZES_MB[0]), rows.get(SIZES_MB[-1])
    for what, key, okkey in (("conv info", "rss_mb", "ok"), ("conversion", "conv_rss_mb", "conv_ok")):
        if big and small and big[okkey] and small[okkey]:
            lim = RATIO * small[key] + SLACK_MB
            check(big[key] <= lim,
                  "%s (%s): peak RSS of the %d MB run (%.1f MB) <= %g x the %d MB run's (%.1f MB) "
                  "+ %g MB = %.1f MB" % (what, tag, SIZES_MB[-1], big[key], RATIO, SIZES_MB[0],
                                         small[key], SLACK_MB, lim),
                  "%.1f MB" % big[key])
        else:
            check(False, "%s (%s): peak RSS growth bounded (%d MB vs %d MB run)"
                  % (what, tag, SIZES_MB[-1], SIZES_MB[0]), "missing a successful run")

    print()
    print("%s:" % tag)
    print("%-10s %12s %12s %14s %8s %18s %8s" % ("file MB", "samples", "conv says",
                                                 "info RSS MB", "wall s", "conversion RSS MB",
                                                 "wall s"))
    for size in SIZES_MB:
        r = rows.get(size)
        if r:
            print("%-10.1f %12d %12s %14.1f %8.2f %18.1f %8.2f"
                  % (r["bytes"] / 1048576.0, r["samples"],
                     "-" if r["got"] is None else str(r["got"]),
                     r["rss_mb"], r["wall"], r.get("conv_rss_mb", 0), r.get("conv_wall", 0)))
    print()
    return rows


def main(argv):
    if len(argv) != 4:
        print("usage: %s CONV SOURCE_PERF_DATA WORKDIR" % os.path.basename(argv[0]),
              file=sys.stderr)
        return 2
    conv, source, workdir = argv[1], argv[2], argv[3]
    if not os.path.isfile(source):
        print("SKIP: source perf.data %r not found" % source)
        print("0 passed, 0 failed, 1 skipped")
        return 77

    res = Results()
    conv = os.path.abspath(conv)
    if not (os.path.isfile(conv) and os.access(conv, os.X_OK)):
        res.check(False, "conv binary exists", "%s is not an executable file" % conv)
        print("%d passed, %d failed, 0 skipped" % (res.passed, res.failed))
        return 1

    os.makedirs(workdir, exist_ok=True)
    subreaper = set_subreaper()
    if not subreaper:
        print("note: PR_SET_CHILD_SUBREAPER unavailable; RSS figures include "
              "the Python launcher's resident memory")

    env, note = asan_env(conv)
    if note:
        print(note)

    made, inflated = [], {}
    try:
        thp = thp_setting()
        if set_thp_disable(True):
            measure(res, conv, source, workdir, subreaper, env, made, inflated,
                    "THP disabled for conv", checked=True)
            set_thp_disable(False)
            measure(res, conv, source, workdir, subreaper, env, made, inflated,
                    "THP as this machine has it: %s" % thp, checked=False)
        else:
            print("note: PR_SET_THP_DISABLE unavailable: measured with this machine's THP "
                  "setting (%s)" % thp)
            measure(res, conv, source, workdir, subreaper, env, made, inflated,
                    "THP as this machine has it: %s" % thp, checked=True)
    finally:
        set_thp_disable(False)
        for p in sorted(set(made)):
            try:
                os.unlink(p)
            except OSError:
                pass

    print("%d passed, %d failed, 0 skipped" % (res.passed, res.failed))
    return 0 if res.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
