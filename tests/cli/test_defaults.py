#!/usr/bin/env python3
"""conv's defaults on a fresh recording, run as a new user would (issue 19 items 1, 3, 4).

usage: test_defaults.py CONV WORKDIR

Builds tests/cli/src (tramp_main.c calls its hot loop through libtramp.so,
in the main thread "tramp-main" and a worker "tramp-worker"; libtramp.so and
libc are only ever callers, so perf records no build-id for them) and records
it with `perf record -g` (again, up to 3 times, until the recording has such
frames and no build-id for libtramp.so). Then, all against perf on the same
recording:
  * names: the outermost function name of every frame in libtramp.so and
    libc.so.6, weighted by samples, equals perf script's (version suffixes
    @... dropped); --stats counts those frames under build_id_sources.path;
    the summary says where their build-ids came from;
  * another machine (hostname changed in a UTS namespace): those frames stay
    unnamed; with --buildid-from-disk conv and conv info both take the file
    (source "disk") and name them as perf does;
  * a file changed after the recording (rewritten in place, then replaced by
    another build): never named from the new file;
  * comm: the pprof label comm is the thread's comm (perf's), process the
    process's; samples per comm equal perf script's; conv --comm keeps
    exactly those; go tool pprof -tagfocus=comm=... finds them;
  * only CPU-time events become jdk.ExecutionSample: the sched_switch
    fixture gives none (its perf.* events only); cpu-clock + page-faults
    gives one per cpu-clock sample (jfr summary).
Prints ok/FAIL/SKIP lines and "N passed, M failed, K skipped"; exit 1 on a
failure, 77 when nothing could run.
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
sys.dont_write_bytecode = True
import pprofdec  # noqa: E402

CONV, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
FIXTURES = os.path.join(REPO, "tests", "fixtures")
passed = failed = skipped = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print("ok   " + name)
    else:
        failed += 1
        print("FAIL %s  -- %s" % (name, detail))
    sys.stdout.flush()
    return cond


def skip(name, why):
    global skipped
    skipped += 1
    print("SKIP %s: %s" % (name, why))


def sh(cmd, timeout=120, **kw):
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout, **kw)


def tail(b, n=300):
    return (b or b"").decode(errors="replace")[-n:].strip()


# ------------------------------------------------------------------ the program
def build(out_dir, variant=False):
    """libtramp.so and tramp in out_dir; variant: libtramp.so.new, a build with another build-id."""
    cc = shutil.which("gcc") or shutil.which("cc")
    flags = ["-O1", "-g", "-fno-omit-frame-pointer"]
    src = os.path.join(HERE, "src")
    if variant:
        r = sh([cc] + flags + ["-DTRAMP_VARIANT", "-shared", "-fPIC", "-o",
                               os.path.join(out_dir, "libtramp.so.new"), os.path.join(src, "tramp.c")])
        return "" if r.returncode == 0 else tail(r.stderr)
    r = sh([cc] + flags + ["-shared", "-fPIC", "-o", os.path.join(out_dir, "libtramp.so"),
                           os.path.join(src, "tramp.c")])
    if r.returncode:
        return tail(r.stderr)
    r = sh([cc] + flags + ["-o", os.path.join(out_dir, "tramp"), os.path.join(src, "tramp_main.c"),
                           "-L" + out_dir, "-ltramp", "-Wl,-rpath,$ORIGIN", "-lpthread"])
    return "" if r.returncode == 0 else tail(r.stderr)


def perf_samples(data):
    """[(comm, tid, [(dso basename, sym)] leaf first)] from perf script."""
    r = sh(["perf", "script", "-i", data, "-F", "comm,tid,ip,sym,dso"], timeout=300)
    out, cur = [], None
    for line in r.stdout.decode(errors="replace").split("\n"):
        if not line.strip():
            cur = None
            continue
        if not line.startswith(("\t", " ")) or cur is None and not line.startswith("\t"):
            m = re.match(r"^\s*(.*?)\s+(\d+)\s*$", line)
            if m:
                cur = (m.group(1), int(m.group(2)), [])
                out.append(cur)
            continue
        m = re.match(r"^\s+[0-9a-f]+\s+(.*)\s+\((.*)\)\s*$", line)
        if m and cur is not None:
            sym = re.sub(r"\+0x[0-9a-f]+$", "", m.group(1).strip())
            cur[2].append((os.path.basename(m.group(2)), sym))
    return out


def perf_names(samples, dso):
    """Counter of perf's names of frames in dso (one per frame, weighted by samples)."""
    c = collections.Counter()
    for _, _, frames in samples:
        for d, sym in frames:
            if d == dso and sym != "[unknown]":
                c[sym.split("@")[0]] += 1
    return c


def conv_names(prof, dso):
    """Counter of conv's outermost names of frames in mappings of dso; '' when unnamed."""
    c = collections.Counter()
    for ids, vals, _ in prof["samples"]:
        for lid in ids:
            mid, _, lines = prof["locs"][lid]
            m = prof["maps"].get(mid)
            if not m or os.path.basename(m["file"]) != dso:
                continue
            name = prof["funcs"][lines[-1][0]][0] if lines else ""
            c[name.split("@")[0]] += vals[0]
    return c


def convert(data, out, extra=(), prefix=()):
    """(pprof dict, stats dict, stderr) of `conv --offline -v`; (None, None, why) on failure."""
    stats = out + ".stats.json"
    for x in (out + ".pb.gz", out + ".jfr", stats):
        if os.path.exists(x):
            os.unlink(x)
    r = sh(list(prefix) + [CONV, "--offline", "-v", "--stats=" + stats, "-o", out] + list(extra) +
           [data])
    if r.returncode != 0 or not os.path.exists(out + ".pb.gz"):
        return None, None, "exit %d: %s" % (r.returncode, tail(r.stderr))
    with open(stats) as f:
        st = json.load(f)
    return pprofdec.read(out + ".pb.gz"), st, r.stderr.decode(errors="replace")


def record(d):
    """A recording with caller-only frames in libtramp.so, its build-id not recorded."""
    data = os.path.join(d, "rec.data")
    why = ""
    for _ in range(3):
        r = sh(["perf", "record", "-q", "-g", "-o", data, "--", os.path.join(d, "tramp"), "0.4"],
               cwd=d)
        if r.returncode:
            return None, "perf record: %s" % tail(r.stderr)
        bids = sh(["perf", "buildid-list", "-i", data]).stdout.decode(errors="replace")
        samples = perf_samples(data)
        comms = {c for c, _, _ in samples}
        if "libtramp.so" in bids:
            why = "perf recorded libtramp.so's build-id (a sample landed in it)"
        elif not perf_names(samples, "libtramp.so"):
            why = "no frame in libtramp.so"
        elif not {"tramp-main", "tramp-worker"} <= comms:
            why = "not both threads sampled: %s" % sorted(comms)
        else:
            return data, ""
    return None, why


# ------------------------------------------------------------------ checks
def check_names(data, samples):
    prof, st, err = convert(data, os.path.join(WORK, "here"))
    if not check("conversion on the recording machine", prof is not None, err):
        return None
    for dso in ("libtramp.so", "libc.so.6"):
        want, got = perf_names(samples, dso), conv_names(prof, dso)
        check("%s: frames named as perf names them (%d frames)" % (dso, sum(want.values())),
              got == want, "perf %s, conv %s" % (dict(want), dict(got)))
    bs = st.get("build_id_sources", {})
    check("--stats: frames of objects without a recorded build-id counted under path (%s)" % bs,
          bs.get("path", 0) >= sum(perf_names(samples, "libtramp.so").values()) > 0, bs)
    check("summary says where those build-ids came from", "recorded paths" in err, err[-400:])
    return prof


def check_elsewhere(data, samples):
    """The same recording seen from a machine with another hostname."""
    probe = sh(["unshare", "-u", "sh", "-c", "hostname conv-elsewhere && hostname"])
    if probe.returncode or b"conv-elsewhere" not in probe.stdout:
        skip("another machine", "no UTS namespace here: %s" % tail(probe.stderr))
        return
    pre = ["unshare", "-u", "sh", "-c", 'hostname conv-elsewhere && exec "$@"', "sh"]
    prof, st, err = convert(data, os.path.join(WORK, "elsewhere"), prefix=pre)
    if check("conversion under another hostname", prof is not None, err):
        got = conv_names(prof, "libtramp.so")
        check("another machine: libtramp.so frames not named from the local file",
              set(got) == {""}, dict(got))
        check("another machine: no build-id from a path",
              st.get("build_id_sources", {}).get("path", 1) == 0, st.get("build_id_sources"))
    prof, st, err = convert(data, os.path.join(WORK, "fromdisk"), ["--buildid-from-disk"],
                            prefix=pre)
    if check("--buildid-from-disk under another hostname", prof is not None, err):
        want = perf_names(samples, "libtramp.so")
        check("--buildid-from-disk: conv names libtramp.so's frames as perf does",
              conv_names(prof, "libtramp.so") == want, dict(conv_names(prof, "libtramp.so")))
        check("--buildid-from-disk: counted under disk",
              st.get("build_id_sources", {}).get("disk", 0) >= sum(want.values()) > 0,
              st.get("build_id_sources"))
    r = sh(pre + [CONV, "info", "--json", "--mappings", "--buildid-from-disk", data])
    try:
        maps = json.loads(r.stdout).get("mappings", [])
    except ValueError:
        maps = []
    srcs = {m.get("build_id_source") for m in maps if m.get("path", "").endswith("/libtramp.so")}
    check("conv info --buildid-from-disk takes libtramp.so's build-id from the file (%s)" % srcs,
          srcs == {"disk"}, tail(r.stderr))


def check_replaced(d, data):
    """The library changed after the recording: never named from the changed file."""
    lib = os.path.join(d, "libtramp.so")
    with open(lib, "r+b") as f:  # the same bytes written over the same inode: a later mtime
        b = f.read()
        f.seek(0)
        f.write(b)
    os.utime(lib)
    prof, _, err = convert(data, os.path.join(WORK, "inplace"))
    if check("conversion after an in-place rewrite", prof is not None, err):
        got = conv_names(prof, "libtramp.so")
        check("rewritten in place after the recording: not named from it", set(got) == {""},
              dict(got))
    why = build(d, variant=True)
    if why:
        skip("replaced library", "cannot build the variant: %s" % why)
        return
    os.replace(lib + ".new", lib)
    prof, _, err = convert(data, os.path.join(WORK, "replaced"))
    if check("conversion after the library was replaced", prof is not None, err):
        got = conv_names(prof, "libtramp.so")
        check("replaced after the recording: not named from the new file", set(got) == {""},
              dict(got))


def check_comm(data, samples, prof):
    want = collections.Counter(c for c, _, _ in samples)
    got = collections.Counter()
    bad = []
    for _, vals, lab in prof["samples"]:
        got[lab.get("comm")] += vals[0]
        if lab.get("process") != "tramp-main":
            bad.append(lab)
    check("pprof comm label = the thread's comm, samples per comm equal perf's",
          got == want, "perf %s, conv %s" % (dict(want), dict(got)))
    check("pprof process label = the process's name", not bad, bad[:3])
    out = os.path.join(WORK, "worker")
    p2, _, err = convert(data, out, ["--comm", "tramp-worker"])
    if check("conv --comm tramp-worker", p2 is not None, err):
        n = sum(v[0] for _, v, _ in p2["samples"])
        check("--comm tramp-worker keeps perf's tramp-worker samples (%d)" % want["tramp-worker"],
              n == want["tramp-worker"] and
              all(l.get("comm") == "tramp-worker" for _, _, l in p2["samples"]), n)
    go = shutil.which("go")
    if not go:
        skip("go tool pprof -tagfocus", "go is not installed")
        return
    r = sh([go, "tool", "pprof", "-raw", "-tagfocus=comm=tramp-worker",
            os.path.join(WORK, "here.pb.gz")])
    text = r.stdout.decode(errors="replace")
    counts = [int(m.group(1)) for m in re.finditer(r"^\s+(\d+)\s+\d+: [\d ]+$", text, re.M)]
    check("go tool pprof -tagfocus=comm=tramp-worker selects its %d samples" % want["tramp-worker"],
          r.returncode == 0 and sum(counts) == want["tramp-worker"], "%s %s" % (sum(counts), tail(r.stderr)))


def jfr_counts(path):
    r = sh(["jfr", "summary", path])
    out = {}
    for line in r.stdout.decode(errors="replace").split("\n"):
        m = re.match(r"^\s+([\w.]+)\s+(\d+)\s+\d+\s*$", line)
        if m:
            out[m.group(1)] = int(m.group(2))
    return out


def check_execution_samples():
    if not shutil.which("jfr"):
        skip("jdk.ExecutionSample", "jfr is not installed")
        return
    for name, want in (("tracepoint.data", {"jdk.ExecutionSample": 0,
                                            "perf.Sched_sched_switch": 61}),
                       ("multi.data", {"jdk.ExecutionSample": 200, "perf.Page_faults": 10})):
        out = os.path.join(WORK, "fx-" + name)
        r = sh([CONV, "-q", "--offline", "-F", "jfr", "-o", out, os.path.join(FIXTURES, name)])
        if not check("%s converts" % name, r.returncode == 0, tail(r.stderr)):
            continue
        got = jfr_counts(out + ".jfr")
        check("%s: only CPU-time samples are jdk.ExecutionSample %s" % (name, want),
              all(got.get(k, 0) == v for k, v in want.items()), got)


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    check_execution_samples()
    if not shutil.which("perf") or not (shutil.which("gcc") or shutil.which("cc")):
        skip("live recording", "perf or a C compiler is missing")
    else:
        d = os.path.join(WORK, "prog")
        os.makedirs(d)
        why = build(d)
        data, why = (None, why) if why else record(d)
        if not data:
            skip("live recording", why)
        else:
            samples = perf_samples(data)
            prof = check_names(data, samples)
            if prof:
                check_comm(data, samples, prof)
            check_elsewhere(data, samples)
            check_replaced(d, data)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    if failed:
        return 1
    return 77 if not passed else 0


if __name__ == "__main__":
    sys.exit(main())
