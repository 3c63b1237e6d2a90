#!/usr/bin/env python3
"""A debuginfod server's redirects are followed only to its own scheme, host and port.

A fake debuginfod on 127.0.0.1 serves the bundled sample's debug files and
binaries; a second listener on another port of 127.0.0.1 only counts the
connections made to it. The server answers the workload's requests (W)
with a 302 to that listener, libwork.so's (L) with a 302 to a path of its
own. conv converts the sample:
  * exit 0; no connection reached the listener;
  * W is unresolved, its reason naming where the redirect pointed ("redirected
    to http://127.0.0.1:PORT/... not followed"), each of its requests counted
    in --stats debuginfod.errors, and the server not given up;
  * L's frames are named: the folded output is that of a run where only W's
    files are missing (the server answering 404 for W).
An https server redirecting to http is refused by the same comparison
(dfd_same_origin: the schemes differ); test_debuginfod's test_same_origin
checks it, as a TLS server here would need a certificate conv trusts.

usage: test_debuginfod_redirect.py CONV WORKDIR
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import testlib as t  # noqa: E402

CONV, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(REPO, "samples", "perf.data")
DEBUG = os.path.join(REPO, "samples", "debug", ".build-id")

shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
serve = os.path.join(WORK, "served")
ids = []
for sub in sorted(os.listdir(DEBUG)):
    for f in sorted(os.listdir(os.path.join(DEBUG, sub))):
        if f.endswith(".debug"):
            hexid = sub + f[:-len(".debug")]
            os.makedirs(os.path.join(serve, hexid))
            shutil.copy(os.path.join(DEBUG, sub, f), os.path.join(serve, hexid, "debuginfo"))
            shutil.copy(os.path.join(DEBUG, sub, f[:-len(".debug")]), os.path.join(serve, hexid, "executable"))
            ids.append(hexid)
W = next(h for h in ids if h.startswith("85"))
L = next(h for h in ids if h.startswith("16"))


def conv(tag, url):
    out = os.path.join(WORK, "out-" + tag)
    os.makedirs(out)
    env = dict(os.environ, HOME=os.path.join(WORK, "home"))
    for k in ("DEBUGINFOD_URLS", "DEBUGINFOD_CACHE_PATH", "XDG_CACHE_HOME"):
        env.pop(k, None)
    p = subprocess.run([CONV, "-q", "--debuginfod", url, "--cache-dir", os.path.join(WORK, "cache-" + tag),
                        "--stats=" + out + "/s.json", "-F", "folded", "-o", out + "/p", DATA],
                       stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=120)
    st = json.loads(open(out + "/s.json").readline()) if os.path.exists(out + "/s.json") else {}
    folded = open(out + "/p.folded", "rb").read() if os.path.exists(out + "/p.folded") else b""
    return p.returncode, p.stderr.decode(errors="replace"), st, folded


def connections(sock):
    n = 0
    while True:
        try:
            c, _ = sock.accept()
        except BlockingIOError:
            return n
        c.close()
        n += 1


listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.bind(("127.0.0.1", 0))
listener.listen(64)
listener.setblocking(False)
port = listener.getsockname()[1]

server, url = t.fake_debuginfod(serve, lifetime=600)
try:
    # reference: W not found at all, L served directly
    t.server_get(url, "/__fault?id=%s&kind=404" % W)
    rc, err, st, ref = conv("ref", url)
    t.check("reference run (404 for W)", rc == 0 and ref, err[-300:])

    t.server_get(url, "/__reset")
    target = "http://127.0.0.1:%d/__file/{id}/{kind}" % port
    t.server_get(url, "/__fault?id=%s&kind=redirect_to&arg=%s" % (W, urllib.parse.quote(target, safe="")))
    t.server_get(url, "/__fault?id=%s&kind=redirect" % L)
    rc, err, st, folded = conv("redir", url)
    t.check("conv exits 0", rc == 0, err[-500:])
    n = connections(listener)
    t.check("no connection reached the listener on port %d" % port, n == 0, "%d connections" % n)
    reasons = {u["build_id"]: u.get("reason", "") for u in st.get("unresolved_objects", [])}
    want = "redirected to http://127.0.0.1:%d/__file/%s/" % (port, W)
    t.check("W unresolved, the reason says where the redirect pointed: %r" % reasons.get(W, "")[:160],
            W in reasons and want in reasons[W] and "not followed" in reasons[W], reasons)
    dfd = st.get("debuginfod", {})
    t.check("W's requests counted as errors, no server given up: %s" % json.dumps(dfd),
            dfd.get("errors", 0) >= 1 and not dfd.get("servers_given_up"), dfd)
    t.check("L named through its same-origin redirect (not unresolved)", L not in reasons, reasons)
    t.check("output as when only W's files are missing", folded == ref, "%d vs %d bytes" % (len(folded), len(ref)))
    paths = t.server_stats(url)["paths"]
    t.check("the server saw L's redirect targets asked for", paths.get("/__file/%s/debuginfo" % L) == 1, paths)
finally:
    t.stop(server)
    listener.close()
t.finish()
