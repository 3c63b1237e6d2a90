#!/usr/bin/env python3
"""Hostile profiles for `conv symbolize` (issue 32, cases 5, 6, 7 and 9).

usage: test_hostile_profiles.py CONV WORKDIR

Every input is made here:
  * JFR, a pool whose entries hold an array of elements of a struct with no
    fields (each element takes no bytes, the count alone decided the work):
    refused with a message naming the chunk and the element type, at two
    sizes (N and 4N entries), time linear;
  * JFR, values of types that are zero only deep down (a struct of 40
    fieldless structs, nested 5 deep: 40^5 visits per value when every field
    was walked) and of a type of 4000 fieldless fields and a long: read, time
    linear in the pool's size (N and 4N);
  * pprof string bombs: one string of 3.5 GiB (a 3.6 MB gzip), 96 MiB of empty
    strings: refused with the inflation error; 48 MiB of empty strings (under
    the inflation cap): refused for the tables they would need;
  * pprof with a function id 2^64-1 and a location to name: refused (new ids
    would wrap to the reserved 0), no output; location and mapping ids
    2^64-1 (nothing minted from them): the output is one `go tool pprof -raw`
    reads (skipped without go);
  * JFR whose Symbol, Class and Method keys reach 2^64-1: refused, no output;
    keys up to 2^63-1: the output is one `jfr summary` and `jfr print` read
    (skipped without jfr);
  * build-id strings with a NUL inside or a non-hex byte (a pprof mapping's
    build_id, a JFR remote frame's class and its jdk.NativeLibrary buildId):
    no request to a fake debuginfod for the cut build-id, no cache entry
    made for it, counted as bad_build_ids in --stats.
Every conv run is under a timeout, in a fresh child whose peak RSS
(RUSAGE_CHILDREN) must be under 10x the input's size + 100 MB. Times are
compared only between two sizes of one input: the larger's below 8x the
smaller's + 1 s.
"""
import gzip
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TESTS, "tools"))
sys.path.insert(0, os.path.join(TESTS, "jfr"))
import pprofdec  # noqa: E402
import testlib as t  # noqa: E402
import gen_remote_jfr as G  # noqa: E402

CONV, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TIMEOUT = float(os.environ.get("CONV_TEST_TIMEOUT", "0")) or 120.0
U64 = (1 << 64) - 1

MEASURE = r"""
import json, resource, subprocess, sys, time
argv, timeout = json.loads(sys.argv[1]), float(sys.argv[2])
t0 = time.monotonic()
try:
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    rc, err = p.returncode, p.stderr.decode("utf-8", "replace")
except subprocess.TimeoutExpired as e:
    rc, err = "timeout", (e.stderr or b"").decode("utf-8", "replace")
wall = time.monotonic() - t0
print(json.dumps({"rc": rc, "stderr": err, "wall": wall,
                  "maxrss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}))
"""


def run(args, size=None, name=""):
    """conv args in a fresh child: rc, stderr, wall, peak RSS; RSS checked against size."""
    p = subprocess.run([sys.executable, "-c", MEASURE, json.dumps([CONV] + args), str(TIMEOUT)],
                       stdout=subprocess.PIPE, timeout=TIMEOUT + 60)
    r = json.loads(p.stdout)
    t.check("%s: finishes within %.0f s" % (name, TIMEOUT), r["rc"] != "timeout", r["stderr"][-300:])
    t.check("%s: no sanitizer report" % name,
            "runtime error" not in r["stderr"] and "Sanitizer" not in r["stderr"], r["stderr"][-600:])
    if size is not None:
        limit = 10 * size / 1e6 + 100
        rss = r["maxrss_kb"] / 1024.0
        t.check("%s: peak RSS %.1f MB < 10 x %.2f MB + 100 MB" % (name, rss, size / 1e6), rss < limit,
                "%.1f MB" % rss)
    print("     %s: exit %s, %.2f s, %.1f MB" % (name, r["rc"], r["wall"], r["maxrss_kb"] / 1024.0))
    return r


def linear(name, small, big, factor=4):
    t.check("%s: time linear (%.2f s for %dx the %.2f s)" % (name, big["wall"], factor, small["wall"]),
            big["wall"] < 8 * small["wall"] + 1.0, "%.2f vs %.2f" % (big["wall"], small["wall"]))


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return len(data)


# ---- JFR ----

def jfr_file(defs, pools, events=b""):
    """One chunk: header | events | checkpoint(pools) | metadata."""
    cp = G.varint(0) + G.varint(0) + G.varint(0) + b"\x01" + G.varint(len(pools))
    for tid, entries in pools:
        cp += G.varint(tid) + G.varint(len(entries)) + b"".join(entries)
    checkpoint = G.record(1, cp)
    meta = G.Metadata().build(defs, 0, 1)
    cp_off = 68 + len(events)
    meta_off = cp_off + len(checkpoint)
    size = meta_off + len(meta)
    header = b"FLR\0" + struct.pack(">HHqqqqqqq", 2, 0, size, cp_off, meta_off, 0, 1, 0,
                                    1000000000) + b"\x00\x00\x00\x03"
    return header + events + checkpoint + meta


def cls(tid, name, fields):
    return (tid, name, None, False, (None, None), fields)


def zero_array_jfr(n):
    defs = G.type_defs(True) + [cls(300, "test.Empty", []),
                                cls(301, "test.Holder", [G.fld("items", 300, array=True)])]
    # each count within the checkpoint's bytes left (two at least an entry), as a reader checks it
    return jfr_file(defs, [(301, [G.varint(k) + G.varint(2 * (n - k)) for k in range(1, n + 1)])])


def deep_zero_jfr(n):
    defs = G.type_defs(True) + [cls(400, "test.Z0", [])]
    for d in range(1, 6):
        defs.append(cls(400 + d, "test.Z%d" % d, [G.fld("f%d" % i, 400 + d - 1) for i in range(40)]))
    defs.append(cls(420, "test.Wide", [G.fld("w%d" % i, 400) for i in range(4000)] +
                    [G.fld("x", G.T_LONG), G.fld("deep", 405)]))
    return jfr_file(defs, [(420, [G.varint(k) + G.varint(k) for k in range(1, n + 1)])])


def jfr_cases():
    sizes = {}
    runs = {}
    for n in (5000, 20000):
        path = os.path.join(WORK, "zero-array-%d.jfr" % n)
        sizes[n] = write(path, zero_array_jfr(n))
        r = runs[n] = run(["symbolize", "--offline", "-q", path], sizes[n], "jfr zero-size array x%d" % n)
        t.check("jfr zero-size array x%d: refused (exit 2)" % n, r["rc"] == 2, r["stderr"][-300:])
        t.check("jfr zero-size array x%d: the message names the chunk, the types and the reason" % n,
                "test.Empty" in r["stderr"] and "test.Holder" in r["stderr"] and "chunk at 0" in r["stderr"]
                and "take no bytes" in r["stderr"], r["stderr"][-300:])
        t.check("jfr zero-size array x%d: no output" % n,
                not os.path.exists(os.path.join(WORK, "zero-array-%d.symbolized.jfr" % n)))
    linear("jfr zero-size array", runs[5000], runs[20000])
    runs = {}
    for n in (5000, 20000):
        path = os.path.join(WORK, "deep-zero-%d.jfr" % n)
        size = write(path, deep_zero_jfr(n))
        r = runs[n] = run(["symbolize", "--offline", "-q", path], size, "jfr zero-size types x%d" % n)
        t.check("jfr zero-size types x%d: read (exit 0)" % n, r["rc"] == 0, r["stderr"][-300:])
    linear("jfr zero-size types", runs[5000], runs[20000])


# ---- pprof ----

pv = pprofdec.varint


def pint(num, v):
    return pv(num << 3) + pv(v)


def plen(num, payload):
    return pv(num << 3 | 2) + pv(len(payload)) + payload


def pprof(mapping, loc, func, strings):
    """A profile of one sample, one mapping, one location (no lines), one function."""
    out = plen(1, pint(1, 1) + pint(2, 2))
    out += plen(2, plen(1, pv(loc["id"])) + plen(2, pv(1)))
    out += plen(3, b"".join(pint(k, v) for k, v in mapping))
    out += plen(4, b"".join(pint(k, v) for k, v in loc["fields"]))
    out += plen(5, b"".join(pint(k, v) for k, v in func))
    for s in strings:
        out += plen(6, s)
    return gzip.compress(out, 6)


def bomb_big_string(path, n):
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(path, "wb") as f:
        f.write(co.compress(plen(6, b"") + pv(6 << 3 | 2) + pv(n)))
        chunk = b"A" * (1 << 20)
        for _ in range(n >> 20):
            f.write(co.compress(chunk))
        f.write(co.flush())
    return os.path.getsize(path)


def bomb_empty_strings(path, n):
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = plen(6, b"") * (1 << 19)  # 1 MiB
    with open(path, "wb") as f:
        for _ in range(n >> 20):
            f.write(co.compress(chunk))
        f.write(co.flush())
    return os.path.getsize(path)


def pprof_bombs():
    for name, make, n, want in (("3.5 GiB string", bomb_big_string, 7 << 29, "inflates to more than"),
                                ("96 MiB of empty strings", bomb_empty_strings, 96 << 20, "inflates to more than"),
                                ("48 MiB of empty strings", bomb_empty_strings, 48 << 20, "tables would take")):
        path = os.path.join(WORK, "bomb.pb.gz")
        size = make(path, n)
        r = run(["symbolize", "--offline", "-q", path], size, "pprof bomb, %s (%d bytes)" % (name, size))
        t.check("pprof bomb, %s: refused (exit 2) with the error" % name,
                r["rc"] == 2 and want in r["stderr"], r["stderr"][-300:])
        t.check("pprof bomb, %s: no output" % name,
                not os.path.exists(os.path.join(WORK, "bomb.symbolized.pb.gz")))
        os.unlink(path)


SRC = r"""
__attribute__((noinline)) int hot(int x) { return x * 3 + 1; }
int main(int c, char **v) { (void)v; return hot(c); }
"""


def build_binary():
    src = os.path.join(WORK, "prog.c")
    exe = os.path.join(WORK, "prog")
    with open(src, "w") as f:
        f.write(SRC)
    if not shutil.which("gcc") or not shutil.which("nm"):
        return None
    p = subprocess.run(["gcc", "-g", "-O1", "-no-pie", "-Wl,--build-id", "-o", exe, src],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    if p.returncode:
        return None
    nm = subprocess.run(["nm", exe], stdout=subprocess.PIPE, timeout=60).stdout.decode()
    hot = [int(l.split()[0], 16) for l in nm.splitlines() if l.endswith(" hot")]
    bid = subprocess.run(["readelf", "-n", exe], stdout=subprocess.PIPE, timeout=60).stdout.decode()
    bid = [l.split()[-1] for l in bid.splitlines() if "Build ID" in l]
    return (exe, hot[0], bid[0]) if hot and bid else None


def pprof_ids(binary):
    exe, hot, bid = binary
    strings = [b"", b"samples", b"count", exe.encode(), bid.encode(), b"main"]

    def profile(map_id, loc_id, func_id):
        # the executable segment of the -no-pie program (file offset 0x1000 at 0x401000)
        m = [(1, map_id), (2, 0x401000), (3, 0x402000), (4, 0x1000), (5, 3), (6, 4)]
        loc = {"id": loc_id, "fields": [(1, loc_id), (2, map_id), (3, hot)]}
        return pprof(m, loc, [(1, func_id), (2, 5), (3, 5)], strings)

    path = os.path.join(WORK, "ids.pb.gz")
    out = os.path.join(WORK, "ids.symbolized.pb.gz")
    size = write(path, profile(1, 1, U64))
    r = run(["symbolize", "--offline", "-q", path], size, "pprof function id 2^64-1")
    t.check("pprof function id 2^64-1: refused (exit 2), the message says why",
            r["rc"] == 2 and "no room above it" in r["stderr"], r["stderr"][-300:])
    t.check("pprof function id 2^64-1: no output", not os.path.exists(out))
    go = shutil.which("go") or ("/usr/lib/go/bin/go" if os.path.exists("/usr/lib/go/bin/go") else None)
    for what, ids in (("location id", (1, U64, 7)), ("mapping id", (U64, 1, 7)),
                      ("function id 2^64-2", (1, 1, U64 - 1))):
        size = write(path, profile(*ids))
        if os.path.exists(out):
            os.unlink(out)
        r = run(["symbolize", "--offline", "-q", path], size, "pprof %s" % what)
        ok = t.check("pprof %s: written (exit 0)" % what, r["rc"] == 0 and os.path.exists(out),
                     r["stderr"][-300:])
        if ok:
            prof = pprofdec.read(out)
            names = [prof["funcs"][f][0] for f, _ in prof["locs"][ids[1]][2]] if ids[1] in prof["locs"] else []
            t.check("pprof %s: the location named hot, no function id 0" % what,
                    "hot" in names and 0 not in prof["funcs"], (names, sorted(prof["funcs"])))
        if ok and go:
            env = dict(os.environ, GOFLAGS="-mod=mod", GOPROXY="off", GOTOOLCHAIN="local",
                       GOCACHE=os.path.join(WORK, "gocache"))
            p = subprocess.run([go, "tool", "pprof", "-raw", out], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=300, env=env)
            text = p.stdout.decode("utf-8", "replace")
            t.check("pprof %s: go tool pprof -raw reads the output" % what,
                    p.returncode == 0 and "hot" in text and "malformed" not in text, text[-400:])
        elif ok:
            t.skip("pprof %s: go tool pprof -raw reads the output" % what, "no go")


class DescendingKeys(G.Keys):
    """Keys from TOP down: the largest key of every pool is TOP."""
    TOP = U64

    def __call__(self, value):
        if value not in self.map:
            self.map[value] = self.TOP - len(self.map)
        return self.map[value]


def remote_jfr(path, binary, top):
    exe, hot, _ = binary
    keys = G.Keys
    DescendingKeys.TOP = top
    G.Keys = DescendingKeys
    try:
        G.generate(path, [exe], [{"thread": 1, "time_ns": 1000, "frames": [[exe, hot]]}], conv_style=True)
    finally:
        G.Keys = keys
    return os.path.getsize(path)


def jfr_keys(binary):
    path = os.path.join(WORK, "keys.jfr")
    out = os.path.join(WORK, "keys.symbolized.jfr")
    size = remote_jfr(path, binary, U64)
    r = run(["symbolize", "--offline", "-q", path], size, "jfr pool keys up to 2^64-1")
    t.check("jfr pool keys up to 2^64-1: refused (exit 2), the message says why",
            r["rc"] == 2 and "no room above it" in r["stderr"], r["stderr"][-300:])
    t.check("jfr pool keys up to 2^64-1: no output", not os.path.exists(out))
    size = remote_jfr(path, binary, (1 << 63) - 1)
    r = run(["symbolize", "--offline", "-q", path], size, "jfr pool keys up to 2^63-1")
    ok = t.check("jfr pool keys up to 2^63-1: written (exit 0)", r["rc"] == 0 and os.path.exists(out),
                 r["stderr"][-300:])
    jfr = shutil.which("jfr")
    if not ok or not jfr:
        t.skip("jfr pool keys up to 2^63-1: jfr reads the output", "no jfr" if ok else "no output")
        return
    for sub in (["summary"], ["print", "--events", "jdk.ExecutionSample"]):
        p = subprocess.run([jfr] + sub + [out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
        text = p.stdout.decode("utf-8", "replace")
        t.check("jfr pool keys up to 2^63-1: jfr %s reads the output%s" % (
            sub[0], " (the frame named hot)" if sub[0] == "print" else ""),
            p.returncode == 0 and (sub[0] != "print" or "hot" in text), text[-400:])


# ---- build-ids with a NUL or a non-hex byte ----

def cut(bid, how):
    return bid[:8] + ("\0" if how == "nul" else "z") + bid[9:]


def bad_build_ids(binary):
    exe, hot, bid = binary
    serve = os.path.join(WORK, "serve")
    os.makedirs(serve, exist_ok=True)
    server, url = t.fake_debuginfod(serve)
    try:
        for how in ("nul", "non-hex"):
            bad = cut(bid, how)
            prefix = bid[:8]
            # pprof: a mapping of a file that is not here, its build_id the bad string
            strings = [b"", b"samples", b"count", b"/nonexistent/libgone.so", bad.encode(), b"main"]
            m = [(1, 1), (2, 0x400000), (3, 0x500000), (4, 0), (5, 3), (6, 4)]
            loc = {"id": 1, "fields": [(1, 1), (2, 1), (3, hot)]}
            path = os.path.join(WORK, "bid.pb.gz")
            # JFR: a remote frame whose class (and library buildId) is the bad string, same length
            jpath = os.path.join(WORK, "bid.jfr")
            remote_jfr(jpath, binary, 1 << 20)
            with open(jpath, "rb") as f:
                data = f.read()
            t.check("build-id %s: the JFR holds the build-id to spoil" % how, bid.encode() in data)
            write(jpath, data.replace(bid.encode(), bad.encode()))
            for kind, p, size in (("pprof mapping", path, write(path, pprof(m, loc, [(1, 1), (2, 5)], strings))),
                                  ("jfr remote frame", jpath, os.path.getsize(jpath))):
                cache = os.path.join(WORK, "cache-%s-%s" % (how, kind.split()[0]))
                shutil.rmtree(cache, ignore_errors=True)
                os.makedirs(cache)
                stats = os.path.join(WORK, "bid-stats.json")
                t.server_get(url, "/__reset")
                r = run(["symbolize", "--debuginfod", url, "--cache-dir", cache, "--stats=" + stats, "-q", p],
                        size, "build-id with a %s byte, %s" % (how, kind))
                t.check("build-id %s, %s: exit 0" % (how, kind), r["rc"] == 0, r["stderr"][-300:])
                paths = t.server_stats(url).get("paths", {})
                t.check("build-id %s, %s: no request for a cut build-id" % (how, kind),
                        not any(prefix in q for q in paths), sorted(paths))
                made = [d for d in os.listdir(cache) if d.startswith(prefix)]
                for root, dirs, _ in os.walk(cache):
                    made += [d for d in dirs if d.startswith(prefix)]
                t.check("build-id %s, %s: no cache entry for it" % (how, kind), not made, made)
                try:
                    with open(stats) as f:
                        doc = json.loads(f.read().splitlines()[0])
                except (OSError, ValueError, IndexError):
                    doc = {}
                t.check("build-id %s, %s: counted (bad_build_ids %s)" % (how, kind, doc.get("bad_build_ids")),
                        doc.get("bad_build_ids", 0) >= 1, doc)
    finally:
        t.stop(server)


def main():
    if os.path.isdir(WORK):
        shutil.rmtree(WORK)
    os.makedirs(WORK)
    jfr_cases()
    pprof_bombs()
    binary = build_binary()
    if not binary:
        for c in ("pprof ids", "jfr keys", "build-ids"):
            t.skip(c, "no gcc, nm or readelf")
    else:
        pprof_ids(binary)
        jfr_keys(binary)
        bad_build_ids(binary)
    t.finish()


main()
