#!/usr/bin/env python3
"""Processes sharing one debuginfod cache download each file once.

A fake debuginfod on 127.0.0.1 serves the bundled sample's debug files,
each answer held back 1 s (fault delay:1, so that the runs overlap). Then:
  * 8 conversions of samples/perf.data at once, one empty cache shared by
    all: every one exits 0 with outputs byte-identical to a run with a cache
    of its own, and the server saw exactly one request per file (its
    /__stats); the cache holds no temp file;
  * the same again on a new empty cache, the answers held back 3 s, two of
    the runs killed with SIGKILL half a second in (while one of them may
    hold a file's lock): the six others still finish with the same outputs,
    and no file was asked for more than once plus once per killed run; no
    temp file is left (a killed holder's is removed by the next holder of
    that entry's lock).
The same against the real debuginfod: tests/symbolize/test_shared_cache_real.py.

usage: test_shared_cache.py CONV WORKDIR
"""
import os
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
DATA = os.path.join(REPO, "samples", "perf.data")


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
server, url = t.fake_debuginfod(os.path.join(REPO, "samples", "debug"), lifetime=600)
try:

    def start(tag, cache):
        home = os.path.join(WORK, "home-" + tag)
        os.makedirs(home, exist_ok=True)
        env = dict(os.environ, HOME=home)
        env.pop("DEBUGINFOD_URLS", None)
        return subprocess.Popen([CONV, "-q", "--debuginfod", url, "--cache-dir", cache, "-o",
                                 os.path.join(WORK, tag), DATA], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)

    def outputs(tag):
        return [open(os.path.join(WORK, tag + e), "rb").read() for e in (".pb.gz", ".jfr")]

    def requests():
        st = t.server_stats(url)
        return {p: n for p, n in st["paths"].items() if p.startswith("/buildid/")}

    def temps(cache):
        return [f for _, _, fs in os.walk(cache) for f in fs if f.startswith(".conv-")]

    p = start("ref", os.path.join(WORK, "cache-ref"))
    err = p.communicate(timeout=120)[1]
    if not t.check("a run with a cache of its own converts", p.returncode == 0, err[-300:]):
        sys.exit(1)
    ref = outputs("ref")
    ref_paths = requests()
    t.check("it fetched the sample's debug files (%d)" % len(ref_paths), ref_paths, ref_paths)

    for round_, (delay, kill) in enumerate(((1, 0), (3, 2))):
        t.server_get(url, "/__reset")
        t.server_get(url, "/__fault?id=*&kind=delay&arg=%d" % delay)
        cache = os.path.join(WORK, "shared-%d" % round_)
        procs = [start("r%d-%d" % (round_, i), cache) for i in range(8)]
        if kill:
            time.sleep(0.5)
            for pr in procs[:kill]:
                pr.send_signal(signal.SIGKILL)
        rcs = [(pr.wait(timeout=180), pr.stderr.read().decode(errors="replace")) for pr in procs]
        what = "8 runs at once%s" % (", %d killed with -9" % kill if kill else "")
        alive = rcs[kill:]
        t.check("%s: the others exit 0" % what, all(rc == 0 for rc, _ in alive), [e[-200:] for rc, e in alive if rc])
        t.check("%s: their outputs equal a run's with its own cache" % what,
                all(outputs("r%d-%d" % (round_, i)) == ref for i in range(kill, 8)))
        got = requests()
        t.check("%s: each file asked for %s (%s)" % (what, "once" if not kill else "at most %d times" % (1 + kill), got),
                set(got) == set(ref_paths) and all(1 <= n <= 1 + kill for n in got.values()) and
                (kill or all(n == 1 for n in got.values())), got)
        # a killed holder's temp file is removed by whoever takes the entry's lock next
        t.check("%s: no temp file in the cache" % what, not temps(cache), temps(cache))
    t.server_get(url, "/__fault?id=*&kind=none")
finally:
    t.stop(server)
t.finish()
