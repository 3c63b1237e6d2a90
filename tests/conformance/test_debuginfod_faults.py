#!/usr/bin/env python3
"""conv end to end against a hostile debuginfod: bad downloads are never used.

Builds a small program, keeps its debug info aside, strips the binary and
records it with perf (so conv must fetch debug info by build-id). A fake
server (tests/tools/fake_debuginfod.py) then answers with garbage, another
ELF, truncated bodies and errors. Each time conv must finish (exit 0), count
the failure, keep no cache file for that build-id and leave the hot function
unnamed; a good answer then names it, and a corrupted cache entry is removed
and not used.

Then the conversion itself (`conv -q --stats=S -o OUT --debuginfod URL
--cache-dir C FILE`), once per fault of the issue's list, each with a fresh
cache (the table printed at the end lists what was checked):
    connection refused (a port nothing listens on), a stalled body (headers
    then 60 s of nothing; --timeout 1: conv must give up before the stall
    ends), a slow body that keeps coming over 100 KiB/s (drip; must succeed
    although the whole transfer takes longer than --timeout), one under
    100 KiB/s (given up after --timeout, as the debuginfod client does), 404, 406, 500, 503, a dropped connection, a truncated body, a
    body that is not ELF, an ELF with another build-id, a huge file over the
    limit (Content-Length 10 GiB, and a body without a length, with
    --max-download 1M; and DEBUGINFOD_MAXSIZE below the real file: the
    server answers 406), a redirect loop, a good redirect, a slow answer.
For each: exit 0 with both outputs written; the --stats debuginfod counter
(errors, not_found or fetched); the server's request count for the
build-id (1, or bounded: no retry loop; a redirect loop stops at curl's
limit); nothing for the build-id in the cache and no temp file left; a
negative entry (KIND.missing) only after a 404; the object in --stats
unresolved_objects with its frames and a reason, and that reason names the
debuginfod failure (server, HTTP status or timeout) for every failure other
than 404. No run may hang (each has a 120 s timeout); how long a run takes
is not checked otherwise (the table prints it). Then: a 404 is not asked again on the next
run (negative cache), a 500 is; a good answer is cached and the next run
uses it without a request; cache entries that are junk, another build-id's
ELF, or the right ELF cut in half are removed and fetched again (online),
or removed and not used (offline).

The program's hot function must be named (or not) anywhere among conv info's
functions with self samples (--top 1000), not at a rank.

usage: test_debuginfod_faults.py CONV WORKDIR (emptied first). Exit 77
(skipped) without perf or a C compiler, or when perf cannot record here.
"""
import socket
import json
import os
import re
import shutil
import subprocess
import sys
import time

CONV, WORK = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
import testlib  # noqa: E402  (its fake server; this test keeps its own table of checks)
passed = failed = 0

SRC = r"""
#include <stdio.h>
__attribute__((noinline)) unsigned faulty_hot(unsigned n) {
	unsigned x = 1; for (unsigned i = 0; i < n; i++) x = x * 1103515245u + 12345u; return x; }
int main(void) { unsigned s = 0; for (int i = 0; i < 300; i++) s += faulty_hot(200000u + (unsigned)i); printf("%u\n", s); return 0; }
"""
# 20 000 enumerators make the debug info about 0.5 MB, so that a body coming faster than the
# 100 KiB/s floor still takes longer than --timeout 1
SRC += "enum faulty_pad { " + ", ".join("faulty_pad_%05d" % i for i in range(20000)) + " };\n"
SRC += "volatile enum faulty_pad faulty_pad_var;\n"


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else "  -- %s" % (detail,)))
    return cond


def sh(cmd, **kw):
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120, **kw)


if not shutil.which("perf") or not (shutil.which("cc") or shutil.which("gcc")):
    print("SKIP: needs perf and a C compiler\n0 passed, 0 failed, 1 skipped")
    sys.exit(77)
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
    sys.exit(77)
r = sh(["readelf", "-n", exe])
bid = [l.split("Build ID:")[1].strip() for l in r.stdout.decode().splitlines() if "Build ID:" in l][0]

server, url = testlib.fake_debuginfod(served, lifetime=300)
env = dict(os.environ, HOME=os.path.join(WORK, "home"), XDG_CACHE_HOME=os.path.join(WORK, "xdg"))
env.pop("DEBUGINFOD_URLS", None)
env["DEBUGINFOD_CACHE_PATH"] = os.path.join(WORK, "sys-cache")


def fault(kind, arg=""):
    testlib.server_get(url, "/__fault?id=%s&kind=%s&arg=%s" % (bid, kind, arg))


def server_stats():
    return testlib.server_stats(url)


def requests_for_bid():
    return sum(n for path, n in server_stats()["paths"].items() if bid in path)


def temp_files(cache):
    out = []
    for dirpath, _dirs, files in os.walk(cache):
        out += [os.path.join(dirpath, f) for f in files if f.startswith(".conv-") or ".tmp" in f]
    return out


def convert(cache, urls, *extra, env_extra=None, timeout=120):
    """The conversion: returns (exit, stats dict or None, stderr, seconds, outbase)."""
    out = os.path.join(WORK, "conv-out")
    st = out + ".json"
    for e in (".pb.gz", ".jfr", ".json"):
        if os.path.exists(out + e):
            os.unlink(out + e)
    args = [CONV, "-q", "--stats=" + st, "-o", out, "--cache-dir", cache]
    for u in urls:
        args += ["--debuginfod", u]
    e = dict(env, **(env_extra or {}))
    t0 = time.monotonic()
    try:
        p = subprocess.run(args + list(extra) + [data], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout, env=e)
        rc, err = p.returncode, p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        rc, err = None, "timeout after %ss" % timeout
    wall = time.monotonic() - t0
    d = None
    if os.path.exists(st):
        with open(st) as f:
            d = json.loads(f.readline())
    return rc, d, err, wall, out


def entry_of(d):
    return next((u for u in d.get("unresolved_objects", []) if u.get("build_id") == bid), None)


dead = socket.socket()
dead.bind(("127.0.0.1", 0))
DEAD_URL = "http://127.0.0.1:%d" % dead.getsockname()[1]
dead.close()

# label, fault, arg, urls (None: the fake server), extra args, env, counter, neg-cached,
# requests (min, max) for the build-id
STALL_S = 60  # the stalled body's silence; conv (--timeout 1) must give up long before
FAULTS = [
    ("connection refused", "none", "", [DEAD_URL], (), None, "errors", False, (0, 0)),
    ("stalled body", "stall", str(STALL_S), None, ("--timeout", "1"), None, "errors", False, (1, 1)),
    ("slow body, still coming", "drip", "0.08:16384", None, ("--timeout", "1"), None, "fetched", False,
     (1, 1)),
    ("slow body, 2.5 KiB/s", "drip", "0.4:1024", None, ("--timeout", "1"), None, "errors", False, (1, 1)),
    ("404", "404", "", None, (), None, "not_found", True, (1, 1)),
    ("406", "406", "", None, (), None, "errors", False, (1, 1)),
    ("500", "500", "", None, (), None, "errors", False, (1, 1)),
    ("503", "503", "", None, (), None, "errors", False, (1, 1)),
    ("connection dropped", "drop", "", None, (), None, "errors", False, (1, 2)),
    ("truncated body", "truncate", "", None, (), None, "errors", False, (1, 1)),
    ("body not ELF", "garbage", "", None, (), None, "errors", False, (1, 1)),
    ("ELF with another build-id", "wrong", "", None, (), None, "errors", False, (1, 1)),
    ("huge (10 GiB Content-Length)", "huge", "", None, ("--max-download", "1M"), None, "errors", False,
     (1, 1)),
    ("huge (no Content-Length)", "hugenolen", "", None, ("--max-download", "1M"), None, "errors", False,
     (1, 1)),
    ("zeros, no limit set", "hugenolen", "", None, (), None, "errors", False, (1, 1)),
    ("ELF then zeros (no Content-Length)", "hugeelf", "", None, ("--max-download", "1M"), None, "errors",
     False, (1, 1)),
    ("drip 2 B/s, deadline 3 s", "drip", "0.5:1", None, ("--symbolize-deadline", "3"), None, "errors", False,
     (1, 1)),
    ("no answer for 60 s, deadline 3 s", "delay", "60", None, ("--symbolize-deadline", "3"), None, "errors", False,
     (1, 1)),
    ("over DEBUGINFOD_MAXSIZE (406)", "none", "", None, (), {"DEBUGINFOD_MAXSIZE": "1000"}, "errors",
     False, (1, 1)),
    ("redirect loop", "redirect_loop", "", None, (), None, "errors", False, (1, 12)),
    ("1 MiB response header", "bighead", "", None, (), None, "errors", False, (1, 1)),
    ("good redirect", "redirect", "", None, (), None, "fetched", False, (2, 2)),  # + the target
    ("slow answer (0.5 s)", "delay", "0.5", None, (), None, "fetched", False, (1, 1)),
]


def conv(cache, *extra):
    args = [CONV, "info", "--json", "--top", "1000", "--cache-dir", cache, "-q"] + list(extra) + [data]
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

    # ---- the conversion, fault by fault ----
    table = []
    reasons = {}
    received = {}
    walls = {}
    for label, kind, arg, urls, extra, env_extra, counter, negative, (rmin, rmax) in FAULTS:
        fault(kind, arg)
        before = requests_for_bid()
        cache = os.path.join(WORK, "conv-cache-" + kind)
        shutil.rmtree(cache, ignore_errors=True)
        rc, d, err, wall, out = convert(cache, urls or [url], *extra, env_extra=env_extra)
        n = requests_for_bid() - before
        name = "convert, %s" % label
        seen = []
        ok = check(name + ": exit 0", rc == 0 and d is not None, "exit %s: %s" % (rc, err[-300:]))
        seen.append("exit 0" if ok else "EXIT %s" % rc)
        if not ok:
            table.append((label, wall, n, "; ".join(seen)))
            continue
        check(name + ": both outputs written", os.path.getsize(out + ".pb.gz") > 0 and
              os.path.getsize(out + ".jfr") > 0)
        dfd = d["debuginfod"]
        received[label] = dfd.get("bytes", 0)
        walls[label] = wall
        good = counter == "fetched"
        ok = check(name + ": counted as %s (%s)" % (counter, dfd), dfd.get(counter, 0) >= 1 and
                   (good or dfd["fetched"] == 0), dfd)
        seen.append("%s=%d" % (counter, dfd.get(counter, 0)))
        ok = check(name + ": %d..%d requests for the build-id (no retry loop)" % (rmin, rmax),
                   rmin <= n <= rmax, n)
        seen.append("%d req" % n)
        # whatever the server does, the conversion ends by its deadline (given, or the default 300 s) + 5 s,
        # and a rejected download received (so wrote to the cache) under 1 MB; with --max-download 1M, at
        # most that plus the one libcurl write (16 KiB) that crossed it and was not written
        deadline = float(extra[extra.index("--symbolize-deadline") + 1]) if "--symbolize-deadline" in extra else 300
        check(name + ": done within the deadline + 5 s (%.1f s)" % wall, wall < deadline + 5, wall)
        if not good:
            cap = (1 << 20) + 16384 if "--max-download" in extra else 10 ** 6 - 1
            check(name + ": the rejected download received %d bytes, at most %d" % (dfd.get("bytes", 0), cap),
                  dfd.get("bytes", 0) <= cap, dfd)
        if kind == "stall":  # --timeout is about silence: the stall is given up on, not waited out
            check(name + ": given up before the server's %d s stall ended" % STALL_S, wall < STALL_S,
                  "%.1f s" % wall)
        if kind == "drip" and good:  # --timeout is about silence, not the whole transfer
            check(name + ": took longer than --timeout 1 and still succeeded", wall > 1.5, "%.1f s" % wall)
        left = temp_files(cache)
        check(name + ": no temp file left in the cache", not left, left)
        files = [k for k in ("debuginfo", "executable") if os.path.exists(os.path.join(cache, bid, k))]
        if good:
            check(name + ": the verified file is cached", files == ["debuginfo"] or "debuginfo" in files, files)
            check(name + ": frames named by debuginfod", d["sources"]["debuginfod"] > 0, d["sources"])
            seen.append("cached, named")
        else:
            check(name + ": nothing cached for the build-id", not files, files)
            missing = os.path.exists(os.path.join(cache, bid, "debuginfo.missing"))
            check(name + ": negative entry %s" % ("written" if negative else "not written"),
                  missing == negative, sorted(os.listdir(os.path.join(cache, bid)))
                  if os.path.isdir(os.path.join(cache, bid)) else "no directory")
            seen.append("not cached" + (", .missing" if missing else ""))
            check(name + ": no frame named by debuginfod", d["sources"]["debuginfod"] == 0, d["sources"])
            u = entry_of(d)
            if check(name + ": listed in unresolved_objects with frames and a reason",
                     u is not None and u.get("frames", 0) > 0 and u.get("reason"), d["unresolved_objects"][:3]):
                reasons[label] = u["reason"]
                seen.append("unresolved: %s" % u["reason"][:40])
                if kind != "404":
                    check(name + ": the reason names the debuginfod failure",
                          re.search(r"debuginfod|HTTP|timeout|timed out|refused|too large|limit|build-id differs"
                                    r"|not an ELF|redirect", u["reason"], re.I) and
                          u["reason"] != reasons.get("404", ""), u["reason"])
        table.append((label, wall, n, "; ".join(seen)))

    check("convert, zeros, no limit set: stopped at the first bytes (%s bytes received, under 1 MB)"
          % received.get("zeros, no limit set"), 0 < received.get("zeros, no limit set", 1 << 30) < (1 << 20))
    check("convert, slow body, 2.5 KiB/s: given up within --timeout 1 + 5 s (%.1f s), the reason says why"
          % walls.get("slow body, 2.5 KiB/s", -1), 0 < walls.get("slow body, 2.5 KiB/s", 99) < 6 and
          "KiB/s" in reasons.get("slow body, 2.5 KiB/s", ""), reasons.get("slow body, 2.5 KiB/s"))
    for dl in ("drip 2 B/s, deadline 3 s", "no answer for 60 s, deadline 3 s"):
        check("convert, %s: done within the deadline + 5 s (%.1f s), the reason names the deadline"
              % (dl, walls.get(dl, -1)), 0 < walls.get(dl, 99) < 8 and "deadline" in reasons.get(dl, ""),
              reasons.get(dl))
    check("convert, 1 MiB response header: the reason says so, not libcurl's \"Out of memory\"",
          "response header too large" in reasons.get("1 MiB response header", ""),
          reasons.get("1 MiB response header"))

    # next runs: a 404 is remembered, a 500 is not; a good file is used from the cache
    for kind, remembered in (("404", True), ("500", False)):
        fault(kind)
        cache = os.path.join(WORK, "conv-cache-" + kind)
        before = requests_for_bid()
        rc, d, err, wall, out = convert(cache, [url])
        n = requests_for_bid() - before
        check("convert, %s again: %s" % (kind, "answered from the negative cache (no request)" if remembered
                                         else "asked again (not negative-cached)"),
              rc == 0 and (n == 0) == remembered, "exit %s, %d requests" % (rc, n))
    fault("none")
    cache = os.path.join(WORK, "conv-cache-redirect")
    before = requests_for_bid()
    rc, d, err, wall, out = convert(cache, [url])
    check("convert, cached answer used without a request",
          rc == 0 and requests_for_bid() == before and d["debuginfod"]["cache_hits"] >= 1 and
          d["sources"]["debuginfod"] > 0, (rc, d and d["debuginfod"]))
    # corrupted cache entries: removed, then fetched again (online) or not used (offline)
    good_bytes = open(os.path.join(cache, bid, "debuginfo"), "rb").read()
    corruptions = [("junk", b"this is not an ELF file\n" * 10),
                   ("another build-id's ELF", open(os.path.join(served, "other"), "rb").read()),
                   ("the right ELF cut in half", good_bytes[:len(good_bytes) // 2])]
    for what, body in corruptions:
        for mode in ("online", "offline"):
            with open(os.path.join(cache, bid, "debuginfo"), "wb") as f:
                f.write(body)
            before = requests_for_bid()
            # offline: the server configured the other way ($DEBUGINFOD_URLS), as
            # --offline with --debuginfod is a usage error
            if mode == "online":
                rc, d, err, wall, out = convert(cache, [url])
            else:
                rc, d, err, wall, out = convert(cache, [], "--offline", env_extra={"DEBUGINFOD_URLS": url})
            n = requests_for_bid() - before
            now = open(os.path.join(cache, bid, "debuginfo"), "rb").read() \
                if os.path.exists(os.path.join(cache, bid, "debuginfo")) else None
            if mode == "online":
                check("cache entry %s (online): removed, fetched again, frames named" % what,
                      rc == 0 and n == 1 and now == good_bytes and d["sources"]["debuginfod"] > 0,
                      "exit %s, %d requests, entry %s, %s" % (rc, n, "good" if now == good_bytes else
                                                              "BAD" if now else "gone", d and d["sources"]))
            else:
                check("cache entry %s (offline): removed, not used, exit 0" % what,
                      rc == 0 and n == 0 and now is None and d["sources"]["debuginfod"] == 0,
                      "exit %s, %d requests, entry %s" % (rc, n, "still there" if now else "gone"))
                with open(os.path.join(cache, bid, "debuginfo"), "wb") as f:
                    f.write(good_bytes)
    print("\n%-32s %6s %5s  %s" % ("fault (conversion)", "sec", "req", "observed"))
    for label, wall, n, seen in table:
        print("%-32s %6.1f %5d  %s" % (label, wall, n, seen))
    print()
finally:
    testlib.stop(server)
shutil.rmtree(WORK, ignore_errors=True)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
