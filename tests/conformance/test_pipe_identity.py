#!/usr/bin/env python3
"""Objects without a recorded build-id, on the machine that recorded them (issue 31 What 1).

usage: test_pipe_identity.py CONV WORKDIR (emptied first)

perf writes no build-id table into pipe output, and a plain `go build` binary
has Go's own note, no GNU build-id. On the recording machine perf reads such an
object at its recorded path; conv does the same when the file there is the
mapped one (MMAP2 device, inode and generation, not written since the
recording). Everything is compared with perf on the same stream:

  * fp: tests/cli/src (tramp, frame pointers; libtramp.so linked with
    --build-id=none, so its identity can only be its path, and only ever a
    caller) recorded with `perf record -g -o -` into a file, converted from
    standard input (`conv - < FILE`): the leaf samples per user-space function
    (dso, name) equal `perf report --sort dso,sym -n`'s exactly, and the
    stacks (thread, kernel frame count, user function names) equal
    `perf script`'s for >= 99 % of the samples (tests/unwind/test_unwind.py's
    comparison); libtramp.so's frames are named.
  * dwarf: tests/unwind/src's uw_qsort + libuwcmp.so (no frame pointers;
    the library, where the hot leaf is, linked with --build-id=none, so its
    CFI too comes from the file identified by its path), `perf record -z
    --call-graph dwarf -o - | tee FILE | conv -` (a live pipe): no walk cut
    for want of CFI, leaf counts as above, and the unwound stacks equal perf
    script's for >= 99 % of the samples.
  * go: tests/symbolize/src/hot.go built by a plain `go build` (no -B: no
    GNU build-id), `perf record -g`: the leaf counts per function equal perf
    report's; conv info --mappings gives the binary the source "path" and no
    build-id; --stats counts its frames under build_id_sources.path; `conv
    -n` then `conv symbolize --buildid-from-disk` (a profile names no inode:
    the file at its path is taken on the user's word) names the leaves as
    perf report does. Skipped when go is not installed.
  * the fp recording again, after changes: under another hostname (a UTS
    namespace) nothing is read at a recorded path (build_id_sources path 0,
    the unresolved reason names -d DIR and --buildid-from-disk), and with
    --buildid-from-disk there the frames are named again (source disk);
    libtramp.so rewritten in place (same inode, newer mtime) and then
    replaced by a copy of the same bytes with the old mtime (a new inode
    only) is not used for it, while the unchanged tramp still is.

Each conversion runs with --offline under a timeout. Prints ok/FAIL lines and
"N passed, M failed"; exit 77 with "SKIP: why" when perf cannot record here.
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TESTS, "tools"))
sys.path.insert(0, os.path.join(TESTS, "unwind"))
sys.dont_write_bytecode = True
import pprofdec  # noqa: E402
import testlib as t  # noqa: E402
import test_unwind as tu  # noqa: E402  (perf_samples, conv_samples, compare, plt_namer)

CONV, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TIMEOUT = 300     # seconds: a run that takes longer is stuck
MATCH = 0.99      # share of samples whose stack must be perf's
MIN_SAMPLES = 100
TRIES = 3
skip, finish = t.skip, t.finish


def sh(cmd, timeout=TIMEOUT, **kw):
    kw.setdefault("stdin", subprocess.DEVNULL)
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, 124, e.stdout or b"", (e.stderr or b"") + b"\ntimed out")


def text(b):
    return (b or b"").decode("utf-8", "replace")


def tail(b, n=400):
    return text(b).strip()[-n:]


# ------------------------------------------------------------------ building
def build_c():
    """tramp + libtramp.so (frame pointers) and uw_qsort + libuwcmp.so (no frame pointers) in
    WORK, both libraries without a build-id; '' or why not."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if not cc:
        return "no C compiler"
    fp = ["-O1", "-g", "-fno-omit-frame-pointer"]
    cli, uw = os.path.join(TESTS, "cli", "src"), os.path.join(TESTS, "unwind", "src")
    nofp = ["-O2", "-g", "-fomit-frame-pointer", "-fno-inline", "-fasynchronous-unwind-tables"]
    steps = [
        [cc] + fp + ["-shared", "-fPIC", "-Wl,--build-id=none", "-o", os.path.join(WORK, "libtramp.so"),
                     os.path.join(cli, "tramp.c")],
        [cc] + fp + ["-o", os.path.join(WORK, "tramp"), os.path.join(cli, "tramp_main.c"), "-L" + WORK,
                     "-ltramp", "-Wl,-rpath,$ORIGIN", "-lpthread"],
        [cc] + nofp + ["-fPIC", "-shared", "-Wl,--build-id=none", "-Wl,-soname,libuwcmp.so", "-o",
                       os.path.join(WORK, "libuwcmp.so"),
                       os.path.join(uw, "libuwcmp.c")],
        [cc] + nofp + ["-fPIE", "-pie", "-o", os.path.join(WORK, "uw_qsort"), os.path.join(uw, "uw_qsort.c"),
                       "-L" + WORK, "-luwcmp", "-Wl,-rpath,$ORIGIN"],
    ]
    for cmd in steps:
        r = sh(cmd)
        if r.returncode:
            return "%s: %s" % (" ".join(cmd[-3:]), tail(r.stderr))
    for lib in ("libtramp.so", "libuwcmp.so"):
        r = sh(["readelf", "-n", os.path.join(WORK, lib)])
        if "Build ID" in text(r.stdout):
            return "%s got a build-id despite --build-id=none" % lib
    return ""


def build_go():
    """A plain `go build` of hot.go in a module of its own, no network: (path, '') or (None, why)."""
    go = shutil.which("go") or ("/usr/lib/go/bin/go" if os.access("/usr/lib/go/bin/go", os.X_OK) else None)
    if not go:
        return None, "go is not installed (golang-go)"
    d = os.path.join(WORK, "gomod")
    os.makedirs(d, exist_ok=True)
    shutil.copy(os.path.join(TESTS, "symbolize", "src", "hot.go"), os.path.join(d, "hot.go"))
    with open(os.path.join(d, "go.mod"), "w") as f:
        f.write("module hot\n\ngo 1.18\n")
    env = dict(os.environ, GOCACHE=os.path.join(WORK, "gocache"), GOPATH=os.path.join(WORK, "gopath"),
               GOFLAGS="-mod=mod", GOPROXY="off", GO111MODULE="on", CGO_ENABLED="0")
    exe = os.path.join(WORK, "gohot")
    r = sh([go, "build", "-o", exe, "."], cwd=d, env=env)
    if r.returncode:
        return None, "go build: %s" % tail(r.stderr)
    notes = text(sh(["readelf", "-n", exe]).stdout)
    if "GNU_BUILD_ID" in notes or "Build ID:" in notes:
        return None, "go build wrote a GNU build-id here: the case is not a plain build"
    return exe, ""


# ------------------------------------------------------------------ recording
PERF = ["perf", "record", "-q", "-e", "cpu-clock", "-F", "999"]


def record_file(args, out):
    """perf record ARGS -o - > out (pipe format in a file): '' or why not."""
    with open(out, "wb") as f:
        try:
            p = subprocess.run(PERF + args, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.PIPE,
                               timeout=TIMEOUT, cwd=WORK)
        except subprocess.TimeoutExpired:
            return "perf record timed out"
    return "" if p.returncode == 0 else "perf record: %s" % tail(p.stderr)


def record_live(args, out, conv_args):
    """perf record ARGS -o - | tee out | CONV conv_args -: (conv's CompletedProcess, why)."""
    perf = subprocess.Popen(PERF + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=WORK)
    tee = subprocess.Popen(["tee", out], stdin=perf.stdout, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
    perf.stdout.close()
    try:
        conv = subprocess.run([CONV] + conv_args + ["-"], stdin=tee.stdout, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        for p in (perf, tee):
            p.kill()
        return None, "conv - on a live pipe timed out"
    finally:
        tee.stdout.close()
    perr = perf.stderr.read()
    perf.stderr.close()
    if perf.wait(timeout=TIMEOUT) or tee.wait(timeout=TIMEOUT):
        return None, "perf record | tee: %s" % tail(perr)
    return conv, ""


# ------------------------------------------------------------------ perf's and conv's views
REPORT = re.compile(r"^\s*[\d.]+%\s+(\d+)\s+(\S+)\s+\[(.)\]\s+(.*?)\s*$")
UNNAMED = re.compile(r"^(0x[0-9a-f]+|\[unknown\].*|)$")


def fname(name):
    """A function name as compared: symbol version dropped, unnamed ones [unknown], a PLT
    stub [plt] (perf names libc's IRELATIVE stubs `@plt`, conv `memcpy@plt`: how to name
    them is tests/symbolize's business)."""
    if (name or "").endswith("@plt"):
        return "[plt]"
    name = re.sub(r"@.*$", "", name or "")
    return "[unknown]" if UNNAMED.match(name) else name


def perf_leaves(data):
    """{(dso, function): samples} of user-space leaves in files (perf report), or None."""
    r = sh(["perf", "report", "-f", "-i", data, "--stdio", "--no-children", "-n", "-g", "none",
            "--sort", "dso,sym", "-q"], env=tu.perf_env(os.path.join(WORK, "perfhome")))
    if r.returncode:
        return None
    c = collections.Counter()
    for line in text(r.stdout).splitlines():
        m = REPORT.match(line)
        if m and m.group(3) == "." and not m.group(2).startswith("["):
            c[(m.group(2), fname(m.group(4)))] += int(m.group(1))
    return c


def conv_leaves(prof):
    """The same from conv's pprof: the leaf location's mapping and outermost function."""
    cols = [i for i, (ty, _) in enumerate(prof["types"]) if ty.endswith("_samples")] or [0]
    c = collections.Counter()
    for ids, vals, _ in prof["samples"]:
        if not ids:
            continue
        mid, _, lines = prof["locs"][ids[0]]
        m = prof["maps"].get(mid)
        dso = os.path.basename(m["file"]) if m else ""
        if not m or dso.startswith("[") or not m["file"].startswith("/"):
            continue
        name = prof["funcs"][lines[-1][0]][0] if lines else ""
        c[(dso, fname(name))] += sum(vals[i] for i in cols if i < len(vals))
    return c


def dso_names(prof, dso):
    """Counter of conv's outermost names of frames in mappings of dso; '' when unnamed."""
    c = collections.Counter()
    for ids, vals, _ in prof["samples"]:
        for lid in ids:
            mid, _, lines = prof["locs"][lid]
            m = prof["maps"].get(mid)
            if m and os.path.basename(m["file"]) == dso:
                c[prof["funcs"][lines[-1][0]][0] if lines else ""] += vals[0]
    return c


def convert(out, data=None, stdin_file=None, extra=(), prefix=()):
    """conv --offline on data (or - with stdin_file): (pprof, stats, stderr) or (None, None, why)."""
    pb, st = out + ".pb.gz", out + ".stats.json"
    for f in (pb, st):
        if os.path.exists(f):
            os.unlink(f)
    cmd = list(prefix) + [CONV, "--offline", "-v", "--pprof", pb, "--stats=" + st] + list(extra)
    if stdin_file:
        with open(stdin_file, "rb") as f:
            r = sh(cmd + ["-"], stdin=f)
    else:
        r = sh(cmd + [data])
    if r.returncode or not os.path.exists(pb):
        return None, None, "exit %d: %s" % (r.returncode, tail(r.stderr))
    with open(st) as f:
        stats = json.load(f)
    return pprofdec.read(pb), stats, text(r.stderr)


def check_leaves(label, data, prof, need):
    """Leaf samples per user-space function equal perf report's; need: functions perf must name."""
    want, got = perf_leaves(data), conv_leaves(prof)
    if not t.check("%s: perf report reads the stream" % label, want is not None):
        return
    named = {k[1] for k in want if k[1] != "[unknown]"}
    t.check("%s: perf names %s (the check is not empty)" % (label, ", ".join(need)), set(need) <= named,
            sorted(named))
    t.check("%s: leaf samples per user function equal perf report's (%d functions, %d samples)" % (
        label, len(want), sum(want.values())), got == want,
        "perf only %s; conv only %s" % (dict(want - got), dict(got - want)))


def check_stacks(label, data, pb, files):
    ref, notes = tu.perf_samples(data, os.path.join(WORK, "perfhome"))
    if not t.check("%s: perf script reads the stream" % label, ref is not None, notes):
        return
    got, problems = tu.conv_samples(pb)
    matched, total, lines = tu.compare(ref, got, namer=tu.plt_namer(files, False),
                                       ref_namer=tu.plt_namer(files, True))
    t.check("%s: stacks equal perf script's for >= %d %% of the samples (%s)" % (
        label, MATCH * 100, tu.share(matched, total)), total and matched >= MATCH * total,
        "\n     ".join([""] + lines))
    t.check("%s: conv's stacks are well formed" % label, not problems, problems[:3])


# ------------------------------------------------------------------ the cases
def case_fp(files):
    data = os.path.join(WORK, "fp.data")
    why = ""
    for _ in range(TRIES):
        why = record_file(["-g", "-o", "-", "--", os.path.join(WORK, "tramp"), "0.4"], data)
        if why:
            return None, why
        prof, st, err = convert(os.path.join(WORK, "fp"), stdin_file=data)
        if prof is None:
            t.check("fp: conv - < FILE converts the pipe recording", False, err)
            return None, ""
        if sum(v[0] for _, v, _ in prof["samples"]) >= MIN_SAMPLES:
            break
        why = "fewer than %d samples" % MIN_SAMPLES
    else:
        return None, why
    check_leaves("fp", data, prof, ["burn"])
    check_stacks("fp", data, os.path.join(WORK, "fp.pb.gz"), files)
    got = dso_names(prof, "libtramp.so")
    t.check("fp: libtramp.so (no build-id, caller only) is named: %s" % dict(got),
            got and "" not in got, dict(got))
    bs = st.get("build_id_sources", {})
    t.check("fp: --stats counts frames identified at their path (%s)" % bs,
            bs.get("path", 0) >= sum(got.values()) > 0, bs)
    return data, ""


def case_dwarf(files):
    data = os.path.join(WORK, "dwarf.data")
    out = os.path.join(WORK, "dwarf")
    why = ""
    for _ in range(TRIES):
        for f in (out + ".pb.gz", out + ".stats.json"):
            if os.path.exists(f):
                os.unlink(f)
        conv, why = record_live(["-z", "--call-graph", "dwarf", "-o", "-", "--",
                                 os.path.join(WORK, "uw_qsort"), "500"], data,
                                ["--offline", "-v", "--pprof", out + ".pb.gz", "--stats=" + out + ".stats.json"])
        if conv is None:
            return why
        if not t.check("dwarf: perf record -z --call-graph dwarf -o - | conv - converts", conv.returncode == 0,
                       tail(conv.stderr)):
            return ""
        prof = pprofdec.read(out + ".pb.gz")
        if sum(v[0] for _, v, _ in prof["samples"]) >= MIN_SAMPLES:
            break
        why = "fewer than %d samples" % MIN_SAMPLES
    else:
        return why
    with open(out + ".stats.json") as f:
        uw = json.load(f).get("unwind", {})
    cut = {k: n for k, n in uw.get("truncated", {}).items() if n}
    t.check("dwarf: no walk cut for want of CFI (cut: %s)" % cut,
            uw.get("samples", 0) > 0 and not any(k.startswith("no CFI") for k in cut), uw)
    check_leaves("dwarf", data, prof, ["uw_weight"])
    check_stacks("dwarf", data, out + ".pb.gz", files)
    return ""


def case_go():
    exe, why = build_go()
    if not exe:
        return why
    data = os.path.join(WORK, "go.data")
    p = sh(PERF + ["-g", "-o", data, "--", exe, "0.3"], cwd=WORK)
    if p.returncode:
        return "perf record: %s" % tail(p.stderr)
    prof, st, err = convert(os.path.join(WORK, "go"), data)
    if not t.check("go: conv converts the recording", prof is not None, err):
        return ""
    check_leaves("go", data, prof, ["main.goFib"])
    r = sh([CONV, "info", "--json", "--mappings", data])
    try:
        maps = [m for m in json.loads(r.stdout).get("mappings", []) if m.get("path") == exe]
    except ValueError:
        maps = []
    t.check("go: conv info --mappings: the binary's identity is its path, no build-id (%s)" % [
        (m.get("build_id"), m.get("build_id_source")) for m in maps],
        maps and all(m.get("build_id_source") == "path" and not m.get("build_id") for m in maps),
        tail(r.stderr))
    # a profile names no inode: conv symbolize --buildid-from-disk takes the file at its path
    raw, named = os.path.join(WORK, "go-n"), os.path.join(WORK, "go-n.symbolized.pb.gz")
    r1 = sh([CONV, "-q", "-n", "--pprof", raw + ".pb.gz", data])
    r2 = sh([CONV, "symbolize", "-q", "--offline", "--buildid-from-disk", "-o", named, raw + ".pb.gz"])
    if t.check("go: conv -n, then conv symbolize --buildid-from-disk", not r1.returncode and not r2.returncode,
               tail(r1.stderr) + tail(r2.stderr)):
        got, want = conv_leaves(pprofdec.read(named)), perf_leaves(data)
        t.check("go: conv symbolize --buildid-from-disk: leaf samples per function equal perf report's",
                got == want, "perf only %s; conv only %s" % (dict(want - got), dict(got - want)))
    frames = sum(dso_names(prof, "gohot").values())
    bs = st.get("build_id_sources", {})
    t.check("go: --stats counts its %d frames under build_id_sources.path (%s)" % (frames, bs),
            bs.get("path", 0) >= frames > 0, bs)
    return ""


def reason_of(st, suffix):
    return " ".join(u.get("reason", "") for u in st.get("unresolved_objects", [])
                    if u.get("path", "").endswith(suffix))


def case_elsewhere(data):
    probe = sh(["unshare", "-u", "sh", "-c", "hostname conv-elsewhere && hostname"])
    if probe.returncode or b"conv-elsewhere" not in probe.stdout:
        return "no UTS namespace here: %s" % tail(probe.stderr)
    pre = ["unshare", "-u", "sh", "-c", 'hostname conv-elsewhere && exec "$@"', "sh"]
    prof, st, err = convert(os.path.join(WORK, "elsewhere"), stdin_file=data, prefix=pre)
    if t.check("another hostname: conv converts", prof is not None, err):
        got = dso_names(prof, "libtramp.so")
        t.check("another hostname: libtramp.so not named from the local file", set(got) == {""}, dict(got))
        bs = st.get("build_id_sources", {})
        t.check("another hostname: nothing identified at a path (%s)" % bs,
                bs.get("path", 1) == 0 and bs.get("path_unverified", 1) == 0, bs)
        why = reason_of(st, "/libtramp.so")
        t.check("another hostname: the reason names -d DIR and --buildid-from-disk (%r)" % why,
                "-d DIR" in why and "--buildid-from-disk" in why, st.get("unresolved_objects"))
    prof, st, err = convert(os.path.join(WORK, "fromdisk"), stdin_file=data, extra=["--buildid-from-disk"],
                            prefix=pre)
    if t.check("another hostname, --buildid-from-disk: conv converts", prof is not None, err):
        got = dso_names(prof, "libtramp.so")
        t.check("--buildid-from-disk: libtramp.so named from the file (%s)" % dict(got),
                got and "" not in got, dict(got))
        t.check("--buildid-from-disk: counted under disk", st.get("build_id_sources", {}).get("disk", 0) > 0,
                st.get("build_id_sources"))
    return ""


def case_changed(data):
    lib = os.path.join(WORK, "libtramp.so")
    before = os.stat(lib)
    with open(lib, "rb") as f:
        image = f.read()
    with open(lib, "r+b") as f:  # the same bytes over the same inode: only the mtime is later
        f.write(image)
    os.utime(lib)
    prof, st, err = convert(os.path.join(WORK, "inplace"), stdin_file=data)
    if t.check("rewritten in place: conv converts", prof is not None, err):
        got = dso_names(prof, "libtramp.so")
        t.check("rewritten in place after the recording: libtramp.so not named from it", set(got) == {""},
                dict(got))
        why = reason_of(st, "/libtramp.so")
        t.check("rewritten in place: the reason says so and names -d DIR (%r)" % why,
                "written after the recording" in why and "-d DIR" in why, st.get("unresolved_objects"))
        t.check("rewritten in place: the unchanged tramp is still named",
                "burn" in dso_names(prof, "tramp"), dict(dso_names(prof, "tramp")))
    with open(lib + ".new", "wb") as f:  # a new inode with the same bytes and the old mtime
        f.write(image)
    os.utime(lib + ".new", ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(lib + ".new", lib)
    prof, st, err = convert(os.path.join(WORK, "replaced"), stdin_file=data)
    if t.check("replaced: conv converts", prof is not None, err):
        got = dso_names(prof, "libtramp.so")
        t.check("replaced by another inode (same bytes, old mtime): libtramp.so not named from it",
                set(got) == {""}, dict(got))


def main():
    if not shutil.which("perf"):
        t.skip_all("perf is not installed")
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(os.path.join(WORK, "perfhome"))
    why = build_c()
    if why:
        t.check("building the C workloads", False, why)
        finish()
    files = {n: os.path.join(WORK, n) for n in ("tramp", "libtramp.so", "uw_qsort", "libuwcmp.so")}
    data, why = case_fp(files)
    if data is None and why:
        t.skip_all("cannot record here: %s" % why)
    why = case_dwarf(files)
    if why:
        t.check("dwarf: a recording to compare", False, why)
    why = case_go()
    if why:
        skip("go", why)
    if data:
        why = case_elsewhere(data)
        if why:
            skip("another hostname", why)
        case_changed(data)
    finish()


if __name__ == "__main__":
    main()
