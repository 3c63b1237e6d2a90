#!/usr/bin/env python3
"""conv against a debuginfod server that accepts connections and never answers (issue 31).

A program calls one function in each of 25 shared libraries of its own (built here,
stripped; their debug files kept aside), and is recorded system-wide with perf
(`perf record -a -g -N`), so conv has 25+ objects whose debug info only a server has
(the kernel's and other processes' objects come on top). The silent server is a socket
on 127.0.0.1 that listens and never accepts, reads or answers.

  * Silent server only, --timeout 3: the conversion ends within 5 s (a hang guard with
    margin: before, requests went 8 at a time and each round waited the whole timeout,
    12.1 s for 23 objects), exit 0; --stats lists the server under
    debuginfod.servers_given_up ("did not answer within 3 s"), the summary says
    "debuginfod URL did not answer within 3 s; not asked again", and each of our
    libraries perf saw samples in is an unresolved object whose reason names the server.
  * DEBUGINFOD_URLS="SILENT LIVE" (a fake_debuginfod.py serving the debug files): again
    within 5 s; only the silent one is given up; the live one was asked for each of our
    libraries' debug files and the folded output names the function of each library
    perf saw samples in (perf script -F dso on the same file says which).

usage: test_debuginfod_dead.py CONV WORKDIR. Exit 77 without perf or a C compiler, or
when perf cannot record here, or when fewer than 20 of the libraries got samples twice.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

CONV, WORK = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
import testlib as t  # noqa: E402
import perfrun  # noqa: E402

NLIB = 25
TIMEOUT_S = 3
LIMIT_S = 5.0

# the hot function is static: stripped, nothing but its debug file names it
LIB = r"""
static __attribute__((noinline)) unsigned deadsrv_fn_%02d(unsigned n)
{
	unsigned x = %du;
	for (unsigned i = 0; i < n; i++)
		x = x * 1103515245u + 12345u;
	return x;
}
unsigned deadsrv_entry_%02d(unsigned n) { return deadsrv_fn_%02d(n) + 1; }
"""
# each function runs for 40 ms of CPU time, whatever the machine's speed
MAIN = r"""
#include <stdio.h>
#include <time.h>
%s
static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
int main(void)
{
	unsigned (*fns[])(unsigned) = { %s };
	unsigned s = 0;
	for (unsigned i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		double t0 = cpu_s();
		while (cpu_s() - t0 < 0.04)
			s += fns[i](20000);
	}
	printf("%%u\n", s);
	return 0;
}
"""


def sh(cmd, timeout=120, **kw):
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout, **kw)


cc = shutil.which("cc") or shutil.which("gcc")
if not perfrun.perf_available() or not cc or not shutil.which("objcopy"):
    t.skip_all("needs perf, a C compiler and objcopy")
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
served = os.path.join(WORK, "served")
libdir = os.path.join(WORK, "lib")
os.makedirs(served)
os.makedirs(libdir)
names = ["deadsrv_fn_%02d" % i for i in range(NLIB)]
libs = {}  # library file name -> its function
for i in range(NLIB):
    src = os.path.join(WORK, "l%02d.c" % i)
    so = os.path.join(libdir, "libdeadsrv%02d.so" % i)
    with open(src, "w") as f:
        f.write(LIB % (i, i + 1, i, i))
    p = sh([cc, "-O1", "-g", "-fPIC", "-shared", "-fno-omit-frame-pointer", "-Wl,--build-id",
            "-o", so, src])
    if p.returncode:
        t.skip_all("cannot build a shared library: %s" % p.stderr.decode()[-200:])
    sh(["objcopy", "--only-keep-debug", so, os.path.join(served, "libdeadsrv%02d.debug" % i)])
    sh(["strip", "--strip-debug", "--strip-unneeded", so])
    libs[os.path.basename(so)] = names[i]
exe = os.path.join(WORK, "deadsrv")
with open(os.path.join(WORK, "main.c"), "w") as f:
    entries = [n.replace("_fn_", "_entry_") for n in names]
    f.write(MAIN % ("".join("unsigned %s(unsigned);\n" % n for n in entries), ", ".join(entries)))
p = sh([cc, "-O1", "-fno-omit-frame-pointer", "-o", exe, os.path.join(WORK, "main.c"), "-L" + libdir]
       + ["-ldeadsrv%02d" % i for i in range(NLIB)] + ["-Wl,-rpath," + libdir])
if p.returncode:
    t.skip_all("cannot link the program: %s" % p.stderr.decode()[-200:])

data = os.path.join(WORK, "dead.data")


def sampled_libs():
    """Our libraries perf script names as the DSO of a frame."""
    res, err = perfrun.run_perf(["script", "-F", "ip,dso"], data, 120)
    if err:
        t.skip_all("perf script cannot read the recording: %s" % err)
    out = res["out"]
    return {os.path.basename(m) for m in re.findall(r"\(([^)]*libdeadsrv\d\d\.so)\)", out)}


seen = set()
for attempt in range(2):
    p = sh(["perf", "record", "-a", "-g", "-N", "-q", "-F", "999", "-o", data, "--", exe],
           env=perfrun.perf_env())
    if p.returncode:
        t.skip_all("perf record -a failed: %s" % p.stderr.decode()[-200:])
    seen = sampled_libs()
    if len(seen) >= 20:
        break
if len(seen) < 20:
    t.skip_all("only %d of our %d libraries got samples, twice" % (len(seen), NLIB))

silent = socket.socket()
silent.bind(("127.0.0.1", 0))
silent.listen(256)  # the kernel completes connections; nothing ever reads or answers them
SILENT = "http://127.0.0.1:%d" % silent.getsockname()[1]
server, LIVE = t.fake_debuginfod(served, lifetime=300)
env = dict(os.environ)
env.pop("DEBUGINFOD_URLS", None)


def convert(tag, urls):
    """conv with --timeout 3 and the servers in DEBUGINFOD_URLS: (exit, stats, stderr, seconds)."""
    out = os.path.join(WORK, "out-" + tag)
    st = out + ".json"
    # -v: the summary, which a terminal would get
    args = [CONV, "-v", "--stats=" + st, "--folded", out + ".folded", "--timeout", str(TIMEOUT_S),
            "--cache-dir", os.path.join(WORK, "cache-" + tag), data]
    e = dict(env, DEBUGINFOD_URLS=" ".join(urls))
    t0 = time.monotonic()
    try:
        p = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120, env=e)
        rc, err = p.returncode, p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        rc, err = None, "timeout after 120 s"
    wall = time.monotonic() - t0
    d = None
    if os.path.exists(st):
        with open(st) as f:
            d = json.loads(f.readline())
    return rc, d, err, wall, out


def folded_names(out):
    with open(out + ".folded") as f:
        return set(re.findall(r"deadsrv_fn_\d\d", f.read()))


try:
    why = "did not answer within %d s" % TIMEOUT_S
    # ---- the silent server alone ----
    rc, d, err, wall, out = convert("silent", [SILENT])
    t.check("silent server: exit 0 with stats", rc == 0 and d is not None, "exit %s: %s" % (rc, err[-400:]))
    t.check("silent server, %d objects of ours, --timeout %d: done within %.0f s (%.1f s)"
            % (len(seen), TIMEOUT_S, LIMIT_S, wall), wall < LIMIT_S, "%.1f s" % wall)
    if d:
        down = d["debuginfod"].get("servers_given_up", [])
        t.check("silent server: --stats lists it as given up: %s" % down,
                [(s["url"], s["why"]) for s in down] == [(SILENT, why)], d["debuginfod"])
        t.check("silent server: nothing fetched", d["debuginfod"]["fetched"] == 0, d["debuginfod"])
        unres = {os.path.basename(u["path"]): u["reason"] for u in d.get("unresolved_objects", [])}
        ours = {k: v for k, v in unres.items() if k in seen}
        t.check("silent server: each of our %d sampled libraries is unresolved (%d)" % (len(seen), len(ours)),
                set(ours) == seen, sorted(seen - set(ours)))
        t.check("silent server: their reasons name the server and why",
                all(SILENT in r and why in r for r in ours.values()), sorted(set(ours.values()))[:3])
    line = "debuginfod  %s %s; not asked again" % (SILENT, why)
    t.check("silent server: the summary says '%s'" % line, line in err,
            [l for l in err.splitlines() if "debuginfod" in l][:4])

    # ---- the silent server first, a live one second ----
    before = t.server_stats(LIVE)["paths"]
    rc, d, err, wall, out = convert("both", [SILENT, LIVE])
    after = t.server_stats(LIVE)["paths"]
    t.check("silent + live: exit 0 with stats", rc == 0 and d is not None, "exit %s: %s" % (rc, err[-400:]))
    t.check("silent + live, --timeout %d: done within %.0f s (%.1f s)" % (TIMEOUT_S, LIMIT_S, wall),
            wall < LIMIT_S, "%.1f s" % wall)
    if d:
        down = d["debuginfod"].get("servers_given_up", [])
        t.check("silent + live: only the silent one is given up: %s" % down,
                [s["url"] for s in down] == [SILENT], down)
        t.check("silent + live: the debug files came from the live one (%d fetched)" % d["debuginfod"]["fetched"],
                d["debuginfod"]["fetched"] >= len(seen), d["debuginfod"])
    asked = {p for p, n in after.items() if p.endswith("/debuginfo") and n > before.get(p, 0)}
    t.check("silent + live: the live one was asked for %d debug files (>= %d)" % (len(asked), len(seen)),
            len(asked) >= len(seen), len(asked))
    if os.path.exists(out + ".folded"):
        named = folded_names(out)
        want = {libs[s] for s in seen}
        t.check("silent + live: the folded stacks name the function of each of our %d sampled libraries"
                % len(want), want <= named, sorted(want - named))
finally:
    t.stop(server)
    silent.close()
if not os.environ.get("CONV_KEEP_TMP"):
    shutil.rmtree(WORK, ignore_errors=True)
t.finish()
