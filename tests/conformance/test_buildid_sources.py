#!/usr/bin/env python3
"""Build-ids per mapping agree whatever perf recorded them with.

Records the test workload three times on this machine (perf record -g with
--buildid-mmap, plain, and pipe mode), reads each with
`conv info --json --mappings` (the pipe one with --buildid-from-disk, since
perf writes no build-ids into pipe output) and checks that every executable
mapping gets the same build-id in all three, that each came from the source
expected (MMAP2 inline / the file's table / disk), and that they equal what
the ELF files on disk carry.

usage: test_buildid_sources.py CONV WORKDIR (emptied first)
Prints "SKIP: ..." and exits 77 (skipped) when perf cannot record here.
"""
import json
import os
import shutil
import subprocess
import sys

CONV, WORK = sys.argv[1], os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(HERE), "fixtures", "src")
passed = failed = 0


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else "  -- " + str(detail)))


def sh(cmd, **kw):
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120, **kw)


if not shutil.which("perf"):
    print("SKIP: perf is not installed")
    print("0 passed, 0 failed, 1 skipped")
    sys.exit(77)
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
cc = shutil.which("clang") or shutil.which("gcc")
flags = ["-O2", "-g", "-fno-omit-frame-pointer"]
lib = os.path.join(WORK, "libwork.so")
exe = os.path.join(WORK, "workload")
r1 = sh([cc] + flags + ["-fPIC", "-shared", "-o", lib, os.path.join(SRC, "libwork.c")])
r2 = sh([cc] + flags + ["-o", exe, os.path.join(SRC, "workload.c"), "-L" + WORK, "-lwork",
                        "-Wl,-rpath," + WORK, "-pthread"])
if r1.returncode or r2.returncode:
    print("FAIL building the workload:", r1.stderr.decode(), r2.stderr.decode())
    sys.exit(1)

# plain: the build-id table; --buildid-all so that it lists every mapped DSO, not only those
# whose code took a leaf sample (under load the workload itself may take none)
rec = {"buildid-mmap": ["--buildid-mmap"], "plain": ["--buildid-all"], "pipe": None}
files = {}
for name, extra in rec.items():
    out = os.path.join(WORK, name + ".data")
    if os.path.exists(out):
        os.unlink(out)
    base = ["perf", "record", "-N", "-q", "-e", "cpu-clock", "-F", "500", "-g"]
    if extra is None:
        with open(out, "wb") as f:
            p = subprocess.run(base + ["-o", "-", "--", exe, "150"], stdin=subprocess.DEVNULL,
                               stdout=f, stderr=subprocess.PIPE, timeout=120)
    else:
        p = sh(base + extra + ["-o", out, "--", exe, "150"])
    if p.returncode:
        msg = p.stderr.decode(errors="replace").strip().splitlines()
        print("SKIP: perf record failed here: %s" % (msg[-1] if msg else p.returncode))
        print("0 passed, 0 failed, 1 skipped")
        sys.exit(77)
    files[name] = out


def mappings(path, disk):
    args = [CONV, "info", "--json", "--mappings"] + (["--buildid-from-disk"] if disk else [])
    p = sh(args + [path])
    if p.returncode:
        return None
    d = json.loads(p.stdout)
    return {(m["path"]): (m["build_id"], m["build_id_source"]) for m in d["mappings"]
            if m["path"].startswith("/") or m["path"].startswith("[kernel")}


got = {n: mappings(f, n == "pipe") for n, f in files.items()}
check("conv reads all three recordings", all(v is not None for v in got.values()))
if all(v is not None for v in got.values()):
    want_src = {"buildid-mmap": "mmap2", "plain": "build_id_table", "pipe": "disk"}
    for n, maps in got.items():
        # the kernel gets its id from the table only when it had samples; ld.so and the kernel
        # may lack one in 'plain' (perf lists only DSOs with samples): compare what is there
        user = {p: v for p, v in maps.items() if p in (exe, lib)}
        check("%s: the workload and its library have build-ids from %s" % (n, want_src[n]),
              len(user) == 2 and all(v[0] and v[1] == want_src[n] for v in user.values()),
              user)
    paths = set(got["buildid-mmap"]) | set(got["pipe"])
    diffs = []
    for p in sorted(paths):
        ids = {n: got[n].get(p, ("", ""))[0] for n in got}
        present = {v for v in ids.values() if v}
        if len(present) > 1:
            diffs.append((p, ids))
    check("no mapping has two different build-ids across the recordings", not diffs, diffs)
    common = set(got["buildid-mmap"]) & set(got["pipe"])
    check("buildid-mmap and pipe+disk give an id for the same mappings",
          all(bool(got["buildid-mmap"][p][0]) == bool(got["pipe"][p][0]) for p in common),
          {p: (got["buildid-mmap"][p], got["pipe"][p]) for p in common})
    # ids equal what the ELF notes on disk say (readelf is independent of conv)
    for path in (exe, lib):
        r = sh(["readelf", "-n", path])
        want = ""
        for line in r.stdout.decode().splitlines():
            if "Build ID:" in line:
                want = line.split("Build ID:")[1].strip()
        check("%s: build-id equals readelf's" % os.path.basename(path),
              want and all(got[n][path][0] == want for n in got), (want, got["plain"].get(path)))
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
