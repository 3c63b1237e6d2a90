#!/usr/bin/env python3
"""An unsymbolized conv profile is resymbolized by google/pprof exactly as conv symbolizes,
and conv symbolize names a bare profile (as perf_to_profile writes them) as google/pprof does.

Builds the standalone google/pprof from Debian's golang-github-google-pprof-dev
(offline, GOPATH mode), builds a small program (-O2 -g, with an inlined
helper) and records it with `perf record -g`. conv writes it twice: with
symbols and with --no-symbolize. pprof -raw -symbolize=local:force, with
PPROF_BINARY_PATH laid out as <dir>/<build-id>/<name>, must give the same
function names (all inline levels) at every location of the program's
mapping as conv's own symbolized output (read with -symbolize=none).

The comparison is meant to cover inline frames: a recording whose leaf
samples in the program include no address where addr2line -i sees mixr
inlined (perf script's sym+off of each sample, through nm and addr2line, all
independent of conv) is made again, up to 3 times; after that the inline
check is reported as skipped. Where it is met, conv's names of the program's
locations must include mixr inside resym_hot.

Then conv symbolize: the --no-symbolize profile stripped to what perf_to_profile
writes (sample types, samples without labels, mappings with file name and
build-id and no flags, locations with an address only, no function; gzipped)
is named by `conv symbolize` (the binary at its recorded path, build-id
verified) with the same function names at every location of the program's
mapping as google/pprof -symbolize=local:force gives for the same bare file,
and its samples and values are the bare file's.

usage: test_pprof_resymbolize.py CONV WORKDIR (emptied first). Exit 77
(skipped) without go, a C compiler, perf or the pprof sources, or when perf
cannot record here.
"""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

CONV, WORK = sys.argv[1], os.path.abspath(sys.argv[2])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
sys.dont_write_bytecode = True
import pprofdec  # noqa: E402
ATTEMPTS = 3
passed = failed = skipped = 0

SRC = r"""
#include <stdio.h>
static inline __attribute__((always_inline)) unsigned mixr(unsigned x) { return x * 2654435761u ^ (x >> 13); }
__attribute__((noinline)) unsigned resym_hot(unsigned n) { unsigned x = n; for (unsigned i = 0; i < 4000000u; i++) x = mixr(x + i); return x; }
__attribute__((noinline)) unsigned resym_warm(unsigned n) { unsigned x = 1; for (unsigned i = 0; i < 1000000u; i++) x += (x << 3) ^ i ^ n; return x; }
int main(void) { unsigned s = 0; for (unsigned i = 0; i < 60; i++) s += resym_hot(i) + resym_warm(i); printf("%u\n", s); return 0; }
"""


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else "  -- %s" % (detail,)))
    return cond


def sh(cmd, env=None, cwd=None):
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=180, env=env, cwd=cwd)


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def field(num, wt, v):
    if wt == 0:
        return varint(num << 3) + varint(v)
    return varint(num << 3 | 2) + varint(len(v)) + v


def keep(msg, nums):
    """The fields of msg numbered in nums, re-encoded as they were (a length-delimited value as bytes)."""
    return b"".join(field(f, wt, v) for f, wt, v in pprofdec.fields(msg) if f in nums and wt in (0, 2))


def bare_profile(src, dst):
    """src stripped to what perf_to_profile writes: no labels, no flags, no functions, no comments."""
    data = gzip.decompress(open(src, "rb").read())
    out = b""
    for f, wt, v in pprofdec.fields(data):
        if f == 1 or f == 6 or f in (9, 10, 11, 12):       # sample types, strings, time, period
            out += field(f, wt, v)
        elif f == 2:                                         # sample: location ids and values only
            out += field(2, 2, keep(v, {1, 2}))
        elif f == 3:                                         # mapping: id, range, offset, file, build-id
            out += field(3, 2, keep(v, {1, 2, 3, 4, 5, 6}))
        elif f == 4:                                         # location: id, mapping, address
            out += field(4, 2, keep(v, {1, 2, 3}))
    with open(dst, "wb") as fh:
        fh.write(gzip.compress(out))


def skip(why):
    print("SKIP: %s\n0 passed, 0 failed, 1 skipped" % why)
    sys.exit(77)


def inlined_leaf_samples(data, binary):
    """How many leaf samples in binary lie where addr2line -i sees mixr inlined: perf
    script's sym+off, the symbol's address from nm, then addr2line."""
    syms = {}
    for l in sh(["nm", binary]).stdout.decode(errors="replace").splitlines():
        f = l.split()
        if len(f) == 3 and f[1] in "tT":
            syms[f[2]] = int(f[0], 16)
    r = sh(["perf", "script", "-i", data, "-G", "-F", "ip,sym,symoff,dso"])
    addrs = []
    for l in r.stdout.decode(errors="replace").splitlines():
        m = re.search(r"\s(\S+)\+0x([0-9a-f]+) \((\S+)\)\s*$", l)
        if m and m.group(3) == binary and m.group(1) in syms:
            addrs.append(syms[m.group(1)] + int(m.group(2), 16))
    if not addrs:
        return 0
    out = sh(["addr2line", "-i", "-f", "-a", "-e", binary] + ["0x%x" % a for a in sorted(set(addrs))])
    inl, cur = set(), None
    for l in out.stdout.decode(errors="replace").splitlines():
        if re.match(r"^0x[0-9a-f]+$", l):
            cur = int(l, 16)
        elif l == "mixr" and cur is not None:
            inl.add(cur)
    return sum(1 for a in addrs if a in inl)


go, cc = shutil.which("go"), shutil.which("cc") or shutil.which("gcc")
src_root = "/usr/share/gocode/src/github.com/google/pprof"
if not go or not cc or not shutil.which("perf"):
    skip("needs go, a C compiler and perf")
if not os.path.isdir(src_root):
    skip("golang-github-google-pprof-dev is not installed")
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
probe = os.path.join(WORK, "probe.data")
p = sh(["perf", "record", "-N", "-q", "-e", "cpu-clock:u", "-o", probe, "--", "true"])
if p.returncode:
    skip("perf cannot record here: %s" % p.stderr.decode(errors="replace")[-200:])
os.unlink(probe)
genv = dict(os.environ, GOPATH="/usr/share/gocode", GO111MODULE="off", GOFLAGS="",
            GOCACHE=os.path.join(WORK, "gocache"))
pprof = os.path.join(WORK, "pprof")
r = sh([go, "build", "-o", pprof, "github.com/google/pprof"], env=genv)
if not check("the standalone google/pprof builds offline from the Debian package", r.returncode == 0,
             r.stderr.decode()[-400:]):
    sys.exit(1)
binary = os.path.join(WORK, "resym")
with open(binary + ".c", "w") as f:
    f.write(SRC)
sh([cc, "-O2", "-g", "-fno-omit-frame-pointer", "-Wl,--build-id", "-o", binary, binary + ".c"])
data = os.path.join(WORK, "resym.data")
for attempt in range(1, ATTEMPTS + 1):
    p = sh(["perf", "record", "-N", "-q", "-e", "cpu-clock:u", "-F", "999", "-g", "-o", data, "--", binary])
    if not check("perf record of the program", p.returncode == 0, p.stderr.decode()[-200:]):
        sys.exit(1)
    n_inl = inlined_leaf_samples(data, binary)
    if n_inl:
        break
    print("     recording %d: no leaf sample where addr2line sees mixr inlined%s"
          % (attempt, "; recording again" if attempt < ATTEMPTS else ""))
bid = [l.split("Build ID:")[1].strip() for l in sh(["readelf", "-n", binary]).stdout.decode().splitlines()
       if "Build ID:" in l][0]
binpath = os.path.join(WORK, "binaries")
os.makedirs(os.path.join(binpath, bid))
shutil.copy(binary, os.path.join(binpath, bid, os.path.basename(binary)))
sym, raw = os.path.join(WORK, "sym.pb.gz"), os.path.join(WORK, "raw.pb.gz")
a = sh([CONV, "-q", "--offline", "--pprof", sym, data])
b = sh([CONV, "-q", "--offline", "--no-symbolize", "--pprof", raw, data])
check("conv writes both profiles", a.returncode == 0 and b.returncode == 0,
      (a.stderr + b.stderr).decode()[-300:])
empty = os.path.join(WORK, "empty")
os.makedirs(empty)
env = dict(os.environ, HOME=empty, PPROF_BINARY_PATH=binpath, PPROF_TMPDIR=empty)


def locations(path, mode, pp):
    r = sh([pp, "-raw", "-symbolize=" + mode, path], env=env)
    out = r.stdout.decode(errors="replace").splitlines()
    maps, locs = {}, {}
    if "Mappings" in out:
        for l in out[out.index("Mappings") + 1:]:
            m = re.match(r"\s*(\d+): 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ (\S+)", l)
            if m:
                maps[m.group(1)] = m.group(2)
    cur = None
    end = out.index("Mappings") if "Mappings" in out else len(out)
    start = out.index("Locations") + 1 if "Locations" in out else end
    for l in out[start:end]:
        m = re.match(r"\s*\d+: 0x([0-9a-f]+) M=(\d+)\s*(\S*)", l)
        if m:
            cur = (int(m.group(1), 16), m.group(2))
            locs[cur] = [m.group(3)] if m.group(3) else []
        elif cur and l.strip():
            locs[cur].append(l.split()[0])
    return r.returncode, maps, locs


rc1, maps1, conv_locs = locations(sym, "none", pprof)
rc2, maps2, pp_locs = locations(raw, "local:force", pprof)
check("pprof reads conv's symbolized and unsymbolized profiles", rc1 == 0 and rc2 == 0)
# with PPROF_BINARY_PATH set, pprof names the mapping after the binary it found
prog = "/" + os.path.basename(binary)
mine = {k: v for k, v in conv_locs.items() if maps1.get(k[1], "").endswith(prog)}
theirs = {k: v for k, v in pp_locs.items() if maps2.get(k[1], "").endswith(prog)}
check("the program's mapping has locations (%d)" % len(mine), mine, (maps1, list(conv_locs)[:3]))
diff = {hex(k[0]): (mine[k], theirs.get(k)) for k in mine if theirs.get(k) != mine[k]}
check("google/pprof -symbolize=local:force names every location as conv does", not diff,
      list(diff.items())[:5])
# conv symbolize on a bare profile, against google/pprof on the same file
bare, named = os.path.join(WORK, "bare.pb.gz"), os.path.join(WORK, "bare.symbolized.pb.gz")
bare_profile(raw, bare)
sfile = os.path.join(WORK, "symbolize.json")
r = sh([CONV, "symbolize", "-q", "--offline", "--stats=" + sfile, bare], env=env)
st = json.loads(open(sfile).readline()) if os.path.exists(sfile) else {}
check("conv symbolize names a bare profile (perf_to_profile's shape) from the local binary (%s of %s "
      "locations, %s from it)" % (st.get("named"), st.get("locations"), st.get("sources", {}).get("local")),
      r.returncode == 0 and os.path.exists(named) and st.get("sources", {}).get("local", 0) > 0,
      r.stderr.decode()[-300:])
rc3, maps3, bare_pp = locations(bare, "local:force", pprof)
rc4, maps4, bare_conv = locations(named, "none", pprof)
theirs = {k: v for k, v in bare_pp.items() if maps3.get(k[1], "").endswith(prog)}
ours = {k: v for k, v in bare_conv.items() if maps4.get(k[1], "").endswith(prog)}
diff = {hex(k[0]): (ours.get(k), theirs[k]) for k in theirs if ours.get(k) != theirs[k]}
check("conv symbolize names every location of the program as google/pprof -symbolize=local:force "
      "does (%d locations)" % len(theirs), rc3 == 0 and rc4 == 0 and theirs and not diff,
      list(diff.items())[:5])
pb, pn = pprofdec.read(bare), pprofdec.read(named)
check("conv symbolize keeps the bare profile's samples, values and addresses",
      [(v, [pb["locs"][x][1] for x in ids]) for ids, v, _ in pb["samples"]] ==
      [(v, [pn["locs"][x][1] for x in ids]) for ids, v, _ in pn["samples"]] and
      pb["maps"] == pn["maps"] and pb["types"] == pn["types"])
names = {n for v in mine.values() for n in v}
if n_inl:
    check("inline frames are there (mixr inside resym_hot; %d leaf samples addr2line sees inlined)" % n_inl,
          "mixr" in names and "resym_hot" in names, sorted(names))
else:
    skipped += 1
    print("SKIP inline frames: no leaf sample where addr2line sees mixr inlined in %d recordings" % ATTEMPTS)
shutil.rmtree(WORK, ignore_errors=True)
print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
sys.exit(1 if failed else 0)
