#!/usr/bin/env python3
"""conv end to end against a hostile debuginfod: bad downloads are never used.

Builds a small program, keeps its debug info aside, strips the binary and
records it with perf (so conv must fetch debug info by build-id). A fake
server (tests/tools/fake_debuginfod.py) then answers with garbage, another
ELF, truncated bodies and errors. Each time conv must finish (exit 0), count
the failure, keep no cache file for that build-id and leave the hot function
unnamed; a good answer then names it, and a corrupted cache entry is removed
and not used.

usage: test_debuginfod_faults.py CONV WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys
import time

CONV, WORK = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(os.path.dirname(HERE), "tools", "fake_debuginfod.py")
passed = failed = 0

SRC = r"""
#include <stdio.h>
__attribute__((noinline)) unsigned faulty_hot(unsigned n) {
	unsigned x = 1; for (unsigned i = 0; i < n; i++) x = x * 1103515245u + 12345u; return x; }
int main(void) { unsigned s = 0; for (int i = 0; i < 300; i++) s += faulty_hot(200000u + (unsigned)i); printf("%u\n", s); return 0; }
"""


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else "  -- %s" % (detail,)))


def sh(cmd, **kw):
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120, **kw)


if not shutil.which("perf") or not (shutil.which("cc") or shutil.which("gcc")):
    print("SKIP: needs perf and a C compiler\n0 passed, 0 failed, 1 skipped")
    sys.exit(0)
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
src = os.path.join(WORK, "faulty.c")
exe = os.path.join(WORK, "faulty")
served = os.path.join(WORK, "served")
os.makedirs(served)
with open(src, "w") as f:
    f.write(SRC)
cc = shutil.which("cc") or shutil.which("gcc")
sh([cc, "-O2", "-g", "-fno-omit-frame-pointer", "-Wl,--build-id", "-o", exe, src])
sh(["objcopy", "--only-keep-debug", exe, os.path.join(served, "faulty.debug")])
sh(["strip", "--strip-all", exe])
# another ELF, for the "wrong file" answer
sh([cc, "-g", "-o", os.path.join(served, "other"), "-x", "c", "-"], input=None) \
    if False else shutil.copy("/bin/true", os.path.join(served, "other"))
data = os.path.join(WORK, "faulty.data")
p = sh(["perf", "record", "-N", "-q", "-e", "cpu-clock:u", "-F", "999", "-o", data, "--", exe])
if p.returncode:
    print("SKIP: perf record failed: %s\n0 passed, 0 failed, 1 skipped" % p.stderr.decode()[-200:])
    sys.exit(0)
r = sh(["readelf", "-n", exe])
bid = [l.split("Build ID:")[1].strip() for l in r.stdout.decode().splitlines() if "Build ID:" in l][0]

server = subprocess.Popen([sys.executable, FAKE, "--dir", served, "--lifetime", "120",
                           "--exit-on-stdin-eof", "--port-file", os.path.join(WORK, "port")],
                          stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(100):
    if os.path.exists(os.path.join(WORK, "port")) and open(os.path.join(WORK, "port")).read().strip():
        break
    time.sleep(0.05)
port = open(os.path.join(WORK, "port")).read().split()[-1]
url = "http://127.0.0.1:%s" % port
env = dict(os.environ, HOME=os.path.join(WORK, "home"), XDG_CACHE_HOME=os.path.join(WORK, "xdg"))
env.pop("DEBUGINFOD_URLS", None)
env["DEBUGINFOD_CACHE_PATH"] = os.path.join(WORK, "sys-cache")


def fault(kind):
    import urllib.request
    urllib.request.urlopen("%s/__fault?id=%s&kind=%s" % (url, bid, kind), timeout=5).read()


def conv(cache, *extra):
    args = [CONV, "info", "--json", "--top", "5", "--cache-dir", cache, "-q"] + list(extra) + [data]
    p = subprocess.run(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120, env=env)
    d = json.loads(p.stdout) if p.returncode == 0 else None
    return p.returncode, d, p.stderr.decode(errors="replace")


def named(d):
    return any(e["name"] == "faulty_hot" for e in d["top_functions"])


try:
    for kind in ("garbage", "wrong", "truncate", "500", "drop", "404"):
        cache = os.path.join(WORK, "cache-" + kind)
        fault(kind)
        rc, d, err = conv(cache, "--debuginfod", url)
        ok = rc == 0 and d is not None
        check("%s: conv finishes (exit 0)" % kind, ok, err[-300:])
        if not ok:
            continue
        dfd = d["symbolization"]["debuginfod"]
        counted = dfd["errors"] >= 1 if kind != "404" else dfd["not_found"] >= 1
        check("%s: counted (%s)" % (kind, dfd), counted and dfd["fetched"] == 0)
        check("%s: nothing cached for the build-id" % kind,
              not os.path.exists(os.path.join(cache, bid, "debuginfo")))
        check("%s: the hot function stays unnamed" % kind, not named(d), d["top_functions"][:2])
        check("%s: the object is listed as not found" % kind,
              any(m["build_id"] == bid for m in d["symbolization"]["not_found"]))
    fault("none")
    cache = os.path.join(WORK, "cache-good")
    rc, d, err = conv(cache, "--debuginfod", url)
    check("a good answer names the hot function", rc == 0 and named(d),
          d["top_functions"][:2] if d else err[-300:])
    check("... and is cached", os.path.getsize(os.path.join(cache, bid, "debuginfo")) > 0)
    # corrupt the cached file: --offline must not use it, and must remove it
    with open(os.path.join(cache, bid, "debuginfo"), "wb") as f:
        f.write(b"\x7fELF" + b"\0" * 100)
    rc, d, err = conv(cache, "--offline")
    check("a corrupted cache entry is not used (offline)", rc == 0 and not named(d),
          d["top_functions"][:2] if d else err[-300:])
    check("... and is removed", not os.path.exists(os.path.join(cache, bid, "debuginfo")))
finally:
    server.stdin.close()
    server.wait(timeout=10)
shutil.rmtree(WORK, ignore_errors=True)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
