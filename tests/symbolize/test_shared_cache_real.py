#!/usr/bin/env python3
"""Conversions sharing one cache download each file once from the real debuginfod.

  1. build.sh and record.sh (as test_symbolize.py): stripped programs, their
     debug info split off, and 4 recordings (the programs built here, in
     name order; when fewer than 4 could be built, a program is recorded
     again into another file);
  2. serve_debuginfod.sh: the real debuginfod (elfutils) on 127.0.0.1 over
     the .debug files and stripped executables, but for nopie.debug (so
     that its request is answered 404); its log (-v) has one line per
     request answered;
  3. conv talks to the server through a relay on 127.0.0.1 that holds each
     request back 1 s and then passes it on (the server answers in a
     millisecond: without the relay the runs would hardly overlap);
     reference: each recording converted alone with a cache of its own
     (`conv -q --stats S --debuginfod URL --cache-dir C -o OUT FILE`);
  4. 8 conversions at once (each recording twice) on one empty cache: all
     exit 0, outputs byte-identical to the recording's reference, and the
     server's log shows exactly one request per (build-id, kind) that the
     references asked for (200 and 404 alike: negative answers are shared
     too), no other; no temp file and no half-written entry in the cache;
  5. the same on a new empty cache with 2 of the 8 killed with SIGKILL at
     random moments (seeded; printed) while they may hold an entry's lock:
     the 6 others exit 0 with the same outputs, each (build-id, kind) is
     asked for at most once plus once per killed run, and no temp file is
     left (the next holder of a killed holder's lock removes its file).

Everything runs in a private network namespace (unshare -n) when the
kernel allows it, since debuginfod 0.188 listens on every interface.

usage: test_shared_cache_real.py CONV OUTDIR
Exit 77 when perf cannot record here or a tool is missing.
"""
import collections
import http.server
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
sys.dont_write_bytecode = True
import test_symbolize as ts  # noqa: E402

RUNS = 8
KILLED = 2
RECORDINGS = 4
HOLD_S = 1.0  # each answer held back this long by the relay, so that the runs overlap


class Relay(http.server.BaseHTTPRequestHandler):
    """Holds each request back HOLD_S, then passes it to the real debuginfod and its
    answer back (status and body): on loopback the server answers in a millisecond,
    before a second conversion could even ask, and nothing would test that they wait
    for each other. The server still answers and logs every request."""
    upstream = None

    def do_GET(self):
        time.sleep(HOLD_S)
        try:
            with urllib.request.urlopen(self.upstream + self.path, timeout=ts.HANG) as r:
                code, body = r.status, r.read()
        except urllib.error.HTTPError as e:
            code, body = e.code, e.read()
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def relay(upstream):
    Relay.upstream = upstream
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Relay)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, "http://127.0.0.1:%d" % srv.server_address[1]


def temps(cache):
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(cache) for f in fs if f.startswith(".conv-"))


def main():
    conv, outdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    where = ts.enter_netns()
    out = os.path.join(outdir, "run")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    ts.note("network: " + where)
    for tool, pkg in [("perf", "linux-perf"), ("gcc", "gcc"), ("objcopy", "binutils"),
                      ("debuginfod", "debuginfod")]:
        if not shutil.which(tool):
            ts.cannot_run("%s is not installed (Debian package %s)" % (tool, pkg))
    why = ts.perf_can_record(out)
    if why:
        ts.cannot_run(why)

    # 1. programs and recordings
    p = ts.sh([os.path.join(HERE, "build.sh"), out])
    if not ts.check("build.sh builds, strips and splits the programs", p.returncode == 0,
                    p.stderr.decode(errors="replace")[-1500:]):
        ts.finish()
    built = sorted(n for n in ts.HOT if n in ts.pr.buildids(out))
    if not ts.check("at least one program was built", built, built):
        ts.finish()
    why = ts.record(out, built)
    if not ts.check("record.sh records them", why is None, why):
        ts.finish()
    # nopie's debug info is not served: its request gets a 404, a negative answer to share
    hidden = "nopie" if "nopie" in built[:RECORDINGS] else None
    if hidden:
        os.remove(os.path.join(out, "debuginfod-root", "debug", hidden + ".debug"))
        with open(os.path.join(out, "buildids")) as f:
            keep = [l for l in f if l.split()[0] != hidden]
        with open(os.path.join(out, "buildids"), "w") as f:
            f.writelines(keep)  # what serve_debuginfod.sh waits for
    datas = [os.path.join(out, n + ".data") for n in built[:RECORDINGS]]
    for i in range(len(datas), RECORDINGS):
        n = built[i % len(built)]
        extra = os.path.join(out, "%s-%d.data" % (n, i))
        r = ts.sh(["perf", "record", "-N", "-q", "-e", "cpu-clock:u", "-F", "2000", "-g", "-o", extra,
                   "--", os.path.join(out, "bin", n)])
        if not ts.check("%s recorded again as a recording of its own" % n, r.returncode == 0,
                        r.stderr.decode(errors="replace")[-300:]):
            ts.finish()
        datas.append(extra)
    ts.note("recordings: " + ", ".join(os.path.basename(d) for d in datas))

    # 2. the real debuginfod
    server, url, lines = ts.start_debuginfod(out)
    if not ts.check("debuginfod serves every file by build-id", url, lines[-1] if not url else ""):
        ts.finish()
    log = os.path.join(out, "debuginfod.log")
    rsrv, rurl = relay(url)
    try:
        run_all(conv, out, url, rurl, log, datas, hidden)
    finally:
        rsrv.shutdown()
        ts.stop_server(server)
    ts.finish()


def start(conv, out, url, tag, cache, data):
    env = ts.conv_env(out)
    return subprocess.Popen([conv, "-q", "--stats", os.path.join(out, tag + ".stats.json"), "--debuginfod", url,
                             "--cache-dir", cache, "-o", os.path.join(out, tag), data],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)


def outputs(out, tag):
    return [open(os.path.join(out, tag + e), "rb").read() for e in (".pb.gz", ".jfr")]


def asked(log, start_at, url):
    """{(build-id, kind): requests} answered by the server since log byte start_at."""
    return collections.Counter((b, k) for b, k, _ in ts.debuginfod_requests(log, start_at, url))


def run_all(conv, out, url, rurl, log, datas, hidden):
    # 3. each recording alone, with a cache of its own
    refs, wanted = [], collections.Counter()
    refs_at = ts.log_size(log)
    for i, data in enumerate(datas):
        at = ts.log_size(log)
        p = start(conv, out, rurl, "ref%d" % i, os.path.join(out, "cache-ref%d" % i), data)
        err = p.communicate(timeout=ts.HANG)[1].decode(errors="replace")
        if not ts.check("ref%d (%s) converts alone" % (i, os.path.basename(data)), p.returncode == 0, err[-300:]):
            return
        refs.append(outputs(out, "ref%d" % i))
        got = asked(log, at, url)
        ts.check("ref%d: one request per file it needs (%d)" % (i, len(got)),
                 got and all(n == 1 for n in got.values()), dict(got))
        wanted.update({k: 1 for k in got})
    wanted = set(wanted)
    ts.note("files the recordings need: %d (build-id, kind) pairs" % len(wanted))
    statuses = collections.Counter(st for _, _, st in ts.debuginfod_requests(log, refs_at, url))
    ts.check("the references were answered 200 and 404 (%s)" % dict(statuses),
             statuses["200"] >= 1 and (statuses["404"] >= 1) == bool(hidden), dict(statuses))

    # 4 and 5: 8 runs at once on one empty cache, then with 2 of them killed
    rng = random.Random(25)
    for rnd, kill in ((0, 0), (1, KILLED)):
        cache = os.path.join(out, "shared-%d" % rnd)
        at = ts.log_size(log)
        runs = [(i % len(datas), start(conv, out, rurl, "r%d-%d" % (rnd, i), cache, datas[i % len(datas)]))
                for i in range(RUNS)]
        t0 = time.time()
        victims = sorted(rng.sample(range(RUNS), kill))
        delays = [rng.uniform(0.2, 2.5) for _ in victims]
        for v, d in sorted(zip(victims, delays), key=lambda x: x[1]):
            time.sleep(max(0.0, t0 + d - time.time()))
            runs[v][1].send_signal(signal.SIGKILL)
        what = "%d runs at once on one cache%s" % (
            RUNS, ", runs %s killed with -9 after %s s" % (victims, ["%.2f" % d for d in delays]) if kill else "")
        rcs = {}
        for i, (_, p) in enumerate(runs):
            rcs[i] = (p.wait(timeout=ts.HANG), p.stderr.read().decode(errors="replace"))
        alive = [i for i in range(RUNS) if i not in victims]
        ts.check("%s: the others exit 0" % what, all(rcs[i][0] == 0 for i in alive),
                 {i: rcs[i][1][-200:] for i in alive if rcs[i][0]})
        same = [i for i in alive if rcs[i][0] == 0 and outputs(out, "r%d-%d" % (rnd, i)) == refs[runs[i][0]]]
        ts.check("%s: their outputs are byte-identical to the recording's run alone" % what,
                 same == alive, sorted(set(alive) - set(same)))
        got = asked(log, at, url)
        if kill:
            ok = set(got) == wanted and all(1 <= n <= 1 + kill for n in got.values())
            ts.check("%s: each file asked for at most %d times (%d files, %d requests)" % (
                what, 1 + kill, len(got), sum(got.values())), ok, dict(got))
        else:
            ok = set(got) == wanted and all(n == 1 for n in got.values())
            ts.check("%s: the server's log shows exactly one request per file (%d files, %d requests)" % (
                what, len(got), sum(got.values())), ok, dict(got))
        ts.check("%s: no temp file left in the cache" % what, not temps(cache), temps(cache))


if __name__ == "__main__":
    main()
