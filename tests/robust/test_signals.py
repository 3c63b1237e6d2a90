#!/usr/bin/env python3
"""SIGTERM, SIGINT and SIGHUP at random points of a conversion leave nothing behind.

Input: samples/perf.data inflated to 40 MB (tests/tools/perfdata_inflate.py),
so that a run lasts long enough to be stopped in every phase, and converted
with its debug info on a fake debuginfod that drips it (2 KiB every 0.1 s:
downloads are in flight, temp files in the cache). One undisturbed run gives
the run's length T and the reference outputs. Then 50 runs (a fixed seed:
the same points every time) get SIGTERM (40), SIGINT (5) or SIGHUP (5) at a
random point in [0, T] after conv has started (its --stats temp file is
there), two runs at a time (each with a TMPDIR of its own). A run that
finishes before its signal (a loaded machine's runs vary) is checked, then
run again with the point at a quarter, a sixteenth and then 0 (as soon as
conv has started), so that every run is stopped whatever the machine's
speed: no check depends on how fast the machine is. Each run must:
  * exit 128 + the signal (or 0 when it finished first: counted);
  * leave no temp file: no `*.tmp.*` beside the outputs, no `.conv-*` in the
    cache, no conv-out.* or conv-events.* in TMPDIR;
  * leave each output absent or complete (the reference bytes);
  * leave a complete --stats file: every line JSON, the last one for the
    input, with exit_code 128 + N and the signal when killed, never a
    half-written line and no temp file of it.
Then the same for `conv symbolize` of that input's --no-symbolize pprof and
JFR outputs (10 runs each, SIGTERM at a random point of its undisturbed run,
again earlier when it finished first):
exit 143 or 0, no temp file, the output absent or the reference bytes, and a
complete --stats file.

usage: test_signals.py CONV WORKDIR
"""
import concurrent.futures
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import testlib as t  # noqa: E402

CONV, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
INFLATE = os.path.join(REPO, "tests", "tools", "perfdata_inflate.py")
RUNS = [signal.SIGTERM] * 40 + [signal.SIGINT] * 5 + [signal.SIGHUP] * 5
t.quiet_ok = True  # 300-odd checks: the failures are what to read


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
tmpdir, home = os.path.join(WORK, "tmp"), os.path.join(WORK, "home")
os.makedirs(tmpdir)
os.makedirs(home)
big = os.path.join(WORK, "big.data")
p = subprocess.run([sys.executable, INFLATE, "--size-mb", "40", os.path.join(REPO, "samples", "perf.data"), big],
                   capture_output=True, timeout=300)
if p.returncode:
    t.skip_all("inflating the input failed: %s" % p.stderr.decode()[-200:])
server, url = t.fake_debuginfod(os.path.join(REPO, "samples", "debug"), faults=("*=drip:0.1:2048",))
try:
    env = dict(os.environ, HOME=home, TMPDIR=tmpdir)
    env.pop("DEBUGINFOD_URLS", None)

    def run(d, sig=None, at=0.0, symbolize=None):
        os.makedirs(os.path.join(d, "tmp"), exist_ok=True)
        cache = os.path.join(d, "cache")
        cmd = [CONV, "-q", "--debuginfod", url, "--cache-dir", cache, "--stats=" + os.path.join(d, "st.json"),
               "-o", os.path.join(d, "out"), big]
        if symbolize:
            cmd = [CONV, "symbolize", "-q", "--debuginfod", url, "--cache-dir", cache,
                   "--stats=" + os.path.join(d, "st.json"), "-o", os.path.join(d, "out" + symbolize[1]),
                   symbolize[0]]
        pr = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              env=dict(env, TMPDIR=os.path.join(d, "tmp")))
        # times count from when conv runs its main (its --stats temp file exists): a signal before
        # the process has even started is the kernel's business, not conv's; and the undisturbed
        # run's length is measured the same way, so that the points fall inside a run on a fast
        # machine as on a slow one
        # (a bound against a conv that never gets there, not a speed limit)
        started = time.monotonic() + 120
        while pr.poll() is None and time.monotonic() < started and \
                not any(f.startswith("st.json.tmp.") for f in os.listdir(d)):
            time.sleep(0.005)
        t0 = time.monotonic()
        if sig is not None:
            time.sleep(at)
            pr.send_signal(sig)
        err = pr.communicate(timeout=300)[1]
        return pr.returncode, time.monotonic() - t0, err.decode(errors="replace")

    def run_until_stopped(name, sig, at, symbolize=None):
        """Runs with sig at `at`, then, while a run finishes before its signal, again in a new
        directory with the point at a quarter, a sixteenth, then 0 (as soon as conv has
        started): a loaded or slow machine cannot leave a run unstopped, and each attempt
        is checked. Returns [(directory, point, (rc, time, stderr))]."""
        attempts = []
        for k, a in enumerate((at, at / 4, at / 16, 0.0)):
            d = os.path.join(WORK, "%s.%d" % (name, k))
            attempts.append((d, a, run(d, sig, a, symbolize)))
            if attempts[-1][2][0] != 0:
                break
        return attempts

    def left_behind(d):
        left = [f for f in os.listdir(d) if ".tmp." in f]
        for root, _, files in os.walk(os.path.join(d, "cache")):
            left += [os.path.join(root, f) for f in files if f.startswith(".conv-")]
        return left + os.listdir(os.path.join(d, "tmp"))

    def stats_ok(name, d, inp, rc, sig, outs):
        """The input's one record: exit_code rc and the signal; or, for a signal that came
        after the input's record was written (its outputs complete, checked by the caller),
        the record of the finished input, exit_code 0, listing the outputs there are."""
        st = os.path.join(d, "st.json")
        lines = open(st).read().splitlines() if os.path.exists(st) else []
        try:
            recs = [json.loads(l) for l in lines]
        except ValueError as e:
            return t.check(name + ": --stats is whole JSON lines", False, e)
        ok = len(recs) == 1 and recs[0].get("input") == inp and (
            (recs[0].get("exit_code") == rc and (rc == 0 or recs[0].get("signal") == sig)) or
            (rc == 128 + sig and recs[0].get("exit_code") == 0 and "signal" not in recs[0] and
             sorted(o["path"] for o in recs[0].get("outputs", [])) == sorted(outs) and
             all(os.path.exists(o) for o in outs)))
        return t.check(name + ": --stats has the input's record, exit_code %d" % rc, ok, lines[-2:])

    def undisturbed(name, symbolize=None):
        """Three undisturbed runs, each into a new directory (a cold cache, as every signalled
        run has): (exit code, the shortest time, stderr, the first one's directory). Signal
        points drawn below the shortest fall inside a run however much runs vary."""
        times = []
        for k in range(3):
            rc, T, err = run(os.path.join(WORK, "%s%d" % (name, k)), symbolize=symbolize)
            if rc:
                break
            times.append(T)
        return rc, min(times) if times else 0.0, err, os.path.join(WORK, name + "0")

    rc, T, err, ref = undisturbed("ref")
    if not t.check("the undisturbed run converts (exit 0)", rc == 0, err[-300:]):
        sys.exit(1)
    ref_bytes = {k: open(os.path.join(ref, "out" + k), "rb").read() for k in (".pb.gz", ".jfr")}
    print("undisturbed run: %.2f s (the shortest of 3)" % T)
    rnd = random.Random(20261128)
    finished = unstopped = 0
    points = [rnd.uniform(0, T) for _ in RUNS]
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
    done = list(pool.map(lambda i: run_until_stopped("run%02d" % i, RUNS[i], points[i]), range(len(RUNS))))
    for i, sig in enumerate(RUNS):
        for d, at, (rc, _, err) in done[i]:
            name = "run %d (%s at %.2f s)" % (i, sig.name, at)
            if rc == 0:
                finished += 1
            else:
                t.check(name + ": exit %d" % (128 + sig), rc == 128 + sig, (rc, err[-200:]))
            left = left_behind(d)
            t.check(name + ": no temp file left", not left, left)
            for k, want in ref_bytes.items():
                path = os.path.join(d, "out" + k)
                t.check(name + ": out%s absent or complete" % k,
                        not os.path.exists(path) or open(path, "rb").read() == want,
                        os.path.getsize(path) if os.path.exists(path) else None)
            stats_ok(name, d, big, rc, sig, [os.path.join(d, "out" + k) for k in (".pb.gz", ".jfr")])
            shutil.rmtree(d, ignore_errors=True)
        unstopped += done[i][-1][2][0] == 0
    print("%d runs: %d finished before a signal (run again earlier)" % (len(RUNS), finished))
    t.check("every run was stopped by its signal (at its point, or earlier when it finished first)",
            not unstopped, unstopped)

    # conv symbolize of the --no-symbolize outputs
    nosym = os.path.join(WORK, "nosym")
    p = subprocess.run([CONV, "-q", "-n", "-o", nosym, big], stdin=subprocess.DEVNULL, capture_output=True,
                       env=env, timeout=300)
    t.check("the --no-symbolize conversion (exit 0)", p.returncode == 0, p.stderr[-300:])
    for ext in (".pb.gz", ".jfr"):
        inp = nosym + ext
        rc, T, err, sref = undisturbed("sref" + ext, symbolize=(inp, ext))
        if not t.check("conv symbolize %s undisturbed (exit 0)" % ext, rc == 0, err[-300:]):
            continue
        want = open(os.path.join(sref, "out" + ext), "rb").read()
        print("conv symbolize %s undisturbed: %.2f s (the shortest of 3)" % (ext, T))
        sfinished = unstopped = 0
        points = [rnd.uniform(0, T) for _ in range(10)]
        done = list(pool.map(lambda i: run_until_stopped("srun%02d" % i, signal.SIGTERM, points[i],
                                                         symbolize=(inp, ext)), range(10)))
        for i in range(10):
            for d, at, (rc, _, err) in done[i]:
                name = "symbolize %s run %d (SIGTERM at %.2f s)" % (ext, i, at)
                if rc:
                    t.check(name + ": exit 143", rc == 143, (rc, err[-200:]))
                else:
                    sfinished += 1
                left = left_behind(d)
                t.check(name + ": no temp file left", not left, left)
                path = os.path.join(d, "out" + ext)
                t.check(name + ": output absent or complete",
                        not os.path.exists(path) or open(path, "rb").read() == want,
                        os.path.getsize(path) if os.path.exists(path) else None)
                stats_ok(name, d, inp, rc, signal.SIGTERM, [path])
                shutil.rmtree(d, ignore_errors=True)
            unstopped += done[i][-1][2][0] == 0
        print("conv symbolize %s: 10 runs, %d finished before a signal (run again earlier)" % (ext, sfinished))
        t.check("conv symbolize %s: every run was stopped by its signal" % ext, not unstopped, unstopped)
finally:
    t.stop(server)
t.finish()
