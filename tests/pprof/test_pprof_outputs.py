#!/usr/bin/env python3
"""conv's pprof output, read by go tool pprof, on every recording we have.

For each tests/fixtures and tests/fixtures/attr recording (--part fixtures)
and every file of the shared corpus (--part corpus: ../shared/corpus, or
$CONV_CORPUS; quipper-fuzz left out; exit 77, skipped, when absent), it runs
`CONV -q --offline --pprof OUT FILE` and checks with `go tool pprof -raw
-symbolize=none` (HOME and PPROF_BINARY_PATH pinned to empty directories):
  * it reads the file (exit 0, nothing on stderr about errors);
  * per perf event, the sum of the <event>_samples column equals conv info's
    sample count;
  * every location with a mapping lies in [memory_start, memory_limit);
  * a second run gives byte-identical output;
  * for recordings perf reads, each mapping's build-id equals the one
    `perf buildid-list` gives for that path (where perf lists it).
The fixtures part also records `sleep 0.1` twice (perf record -N): the
profile's time (time_nanos, as go tool pprof prints it) is the wall clock of
the first sample as perf sees it: with CLOCK_DATA (-k monotonic) perf script's
`tod` of the first sample; without, the file's modification time less the
span between the first and the last sample of perf's header (what perf report
prints as "captured on", "time of first/last sample").

usage: test_pprof_outputs.py CONV WORKDIR [--part fixtures|corpus]
(without --part: both). WORKDIR is emptied first. Exit 1 on a failure, 77
(skipped) when go is missing or nothing could be checked.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("conv")
ap.add_argument("work")
ap.add_argument("--part", choices=("fixtures", "corpus"))
A = ap.parse_args()
CONV, WORK = A.conv, A.work
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.environ.get("CONV_CORPUS", os.path.join(os.path.dirname(REPO), "shared", "corpus"))
passed = failed = skipped = 0


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    if not cond:
        print("FAIL " + name + "  -- %s" % (detail,))
    return cond


def sh(cmd, env=None, timeout=120):
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout, env=env)


def skip_all(why):
    print("SKIP: %s\n0 passed, 0 failed, 1 skipped" % why)
    sys.exit(77)


go = shutil.which("go")
if not go:
    skip_all("go is not installed")
if A.part == "corpus" and not os.path.isdir(CORPUS):
    skip_all("corpus not found at %s (set CONV_CORPUS)" % CORPUS)
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
empty = os.path.join(WORK, "empty")
os.makedirs(empty)
genv = dict(os.environ, HOME=empty, PPROF_BINARY_PATH=empty, GOCACHE=os.path.join(WORK, "gocache"))

files = []
if A.part != "corpus":
    files = sorted(glob.glob(os.path.join(REPO, "tests", "fixtures", "*.data")) +
                   glob.glob(os.path.join(REPO, "tests", "fixtures", "attr", "*.data")))
if A.part == "fixtures":
    pass
elif os.path.isdir(CORPUS):
    for d in ("quipper", "perfparser", "linux-perf-data"):
        for f in sorted(glob.glob(os.path.join(CORPUS, d, "**", "*"), recursive=True)):
            if os.path.isfile(f) and not re.search(r"\.(buildids|txt|md)$", f):
                with open(f, "rb") as fh:
                    if fh.read(8) in (b"PERFILE2", b"2ELIFREP"):
                        files.append(f)
else:
    print("SKIP corpus part: no shared corpus at %s (fixtures only)" % CORPUS)
    skipped += 1
have_perf = shutil.which("perf") is not None

for i, f in enumerate(files):
    name = os.path.relpath(f, os.path.dirname(REPO))
    out = os.path.join(WORK, "out%d.pb.gz" % i)
    info = sh([CONV, "info", "--json", f])
    if info.returncode != 0:
        skipped += 1
        continue
    counts = {e["name"]: e["samples"] for e in json.loads(info.stdout)["events"]}
    order = [e["name"] for e in json.loads(info.stdout)["events"]]
    r = sh([CONV, "-q", "--offline", "--pprof", out, f])
    if not check("%s: conv writes pprof" % name, r.returncode == 0, r.stderr.decode()[-300:]):
        continue
    r2 = sh([CONV, "-q", "--offline", "--pprof", out + ".again", f])
    with open(out, "rb") as a, open(out + ".again", "rb") as b:
        check("%s: byte-identical on a second run" % name, r2.returncode == 0 and a.read() == b.read())
    p = sh([go, "tool", "pprof", "-raw", "-symbolize=none", out], env=genv)
    text = p.stdout.decode(errors="replace")
    if not check("%s: go tool pprof -raw reads it" % name, p.returncode == 0 and "Samples:" in text,
                 p.stderr.decode(errors="replace")[-300:]):
        continue
    lines = text.splitlines()
    s = lines.index("Samples:")
    header = lines[s + 1].split()
    sums = [0] * len(header)
    k = s + 2
    while k < len(lines) and lines[k] and not lines[k].startswith("Locations"):
        m = re.match(r"\s*(-?\d+(?:\s+-?\d+)*):", lines[k])
        if m:
            vals = [int(v) for v in m.group(1).split()]
            for j, v in enumerate(vals[:len(sums)]):
                sums[j] += v
        k += 1
    ok = True
    for ev_i, ev in enumerate(order):
        if 2 * ev_i < len(sums) and sums[2 * ev_i] != counts[ev]:
            ok = False
    check("%s: per-event sample counts equal conv info's (%s)" % (name, counts), ok,
          "pprof sums %s, header %s" % (sums, header))
    maps = {}
    mi = lines.index("Mappings") if "Mappings" in lines else len(lines)
    for l in lines[mi + 1:]:
        m = re.match(r"\s*(\d+): 0x([0-9a-f]+)/0x([0-9a-f]+)/0x([0-9a-f]+) (\S*)(?: ([0-9a-f]+))?", l)
        if m:
            maps[m.group(1)] = (int(m.group(2), 16), int(m.group(3), 16), m.group(5), m.group(6) or "")
    bad = []
    li = lines.index("Locations") if "Locations" in lines else mi
    for l in lines[li + 1:mi]:
        m = re.match(r"\s*\d+: 0x([0-9a-f]+) M=(\d+)", l)
        if m and m.group(2) in maps:
            a = int(m.group(1), 16)
            lo, hi = maps[m.group(2)][:2]
            if not lo <= a < hi:
                bad.append(l.strip())
    check("%s: every location lies in its mapping" % name, not bad, bad[:3])
    if have_perf:
        b = sh(["perf", "buildid-list", "-f", "-i", f])
        if b.returncode == 0:
            perf_ids = {}
            for l in b.stdout.decode(errors="replace").splitlines():
                parts = l.split(None, 1)
                if len(parts) == 2:
                    perf_ids.setdefault(parts[1].strip(), set()).add(parts[0])
            wrong = [(path, bid, sorted(perf_ids[path])) for _, _, path, bid in maps.values()
                     if bid and path in perf_ids and bid not in perf_ids[path]]
            check("%s: build-ids equal perf buildid-list's" % name, not wrong, wrong[:3])
    for x in (out, out + ".again"):
        os.unlink(x)

def pprof_time(path):
    """The profile's time as go tool pprof -raw prints it ("Time: 2026-11-25 15:38:43.862190947
    +0000 UTC", local time), in seconds since the epoch, and the line; (None, output) if absent."""
    p = sh([go, "tool", "pprof", "-raw", "-symbolize=none", path], env=genv)
    out = p.stdout.decode(errors="replace")
    m = re.search(r"^Time: (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(\.\d+)?", out, re.M)
    if not m:
        return None, out[:300] + p.stderr.decode(errors="replace")[-300:]
    return time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")) + float(m.group(2) or 0), \
        m.group(0)


def perf_header(path):
    """perf report --header-only: {"first": s, "last": s} (time of first/last sample)."""
    r = sh(["perf", "report", "--header-only", "-i", path])
    h = {}
    for k in ("first", "last"):
        m = re.search(r"^# time of %s sample : (\d+\.\d+)" % k, r.stdout.decode(errors="replace"), re.M)
        if m:
            h[k] = float(m.group(1))
    return h


# time_nanos, recorded live: compared with perf's own view of the same recording. perf
# prints times to the microsecond, go tool pprof to the nanosecond: they agree within 1 ms
# (within 1.5 s should this go print whole seconds only).
def close(got, want, line):
    return got is not None and abs(got - want) < (0.001 if "." in line.split()[2] else 1.5)


if have_perf and A.part != "corpus":
    import time
    # with CLOCK_DATA (perf record -k): the wall clock of the first sample, perf script's tod
    km = os.path.join(WORK, "clock.data")
    r = sh(["perf", "record", "-N", "-q", "-k", "monotonic", "-e", "cpu-clock", "-o", km, "--",
            "sleep", "0.1"])
    if r.returncode == 0:
        out = os.path.join(WORK, "clock.pb.gz")
        sh([CONV, "-q", "--offline", "--pprof", out, km])
        got, line = pprof_time(out)
        ps = sh(["perf", "script", "-i", km, "-F", "tod"])
        tods = [l.strip() for l in ps.stdout.decode(errors="replace").splitlines() if l.strip()]
        want = None
        if ps.returncode == 0 and tods:
            m = re.match(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)(\.\d+)?", min(tods))
            if m:
                want = time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")) + float(m.group(2) or 0)
        if want is None:
            skip_one = "perf script -F tod gives no time of day here"
            print("SKIP time_nanos with CLOCK_DATA: %s" % skip_one)
            skipped += 1
        else:
            check("time_nanos with CLOCK_DATA is perf script's tod of the first sample (%s; perf %s)"
                  % (line, min(tods)), close(got, want, line), line)
        os.unlink(km)
    else:
        print("SKIP time_nanos: perf record failed: %s" % r.stderr.decode(errors="replace")[-200:])
        skipped += 1
    # without CLOCK_DATA, sample times count from boot: the wall clock comes from the file's
    # modification time (perf rewrites the header when recording ends) less the span of the
    # samples, as perf report's "captured on" does, not from 1970 plus the uptime
    nk = os.path.join(WORK, "noclock.data")
    r = sh(["perf", "record", "-N", "-q", "-e", "cpu-clock", "-o", nk, "--", "sleep", "0.1"])
    if r.returncode == 0:
        out = os.path.join(WORK, "noclock.pb.gz")
        sh([CONV, "-q", "--offline", "--pprof", out, nk])
        got, line = pprof_time(out)
        h = perf_header(nk)
        ps = sh(["perf", "script", "-i", nk, "-F", "time"])
        if ps.returncode == 0 and not ps.stdout.strip():
            # sleep's few hundred microseconds of CPU time may give cpu-clock no sample: perf's
            # header then says 0.000000 and there is no time to compare
            print("SKIP time_nanos without CLOCK_DATA: the recording has no sample")
            skipped += 1
        elif "first" in h and "last" in h:
            want = os.stat(nk).st_mtime - (h["last"] - h["first"])
            check("time_nanos without CLOCK_DATA is the file's time less perf's first-to-last sample "
                  "span (%s; want %s)" % (line, time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(want))),
                  close(got, want, line), line)
        else:
            print("SKIP time_nanos without CLOCK_DATA: perf report --header-only shows no sample times")
            skipped += 1
        os.unlink(nk)

print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
sys.exit(1 if failed else 77 if not passed else 0)
