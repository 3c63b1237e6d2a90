#!/usr/bin/env python3
"""conv's command line (cli/cmd_convert.c), end to end on the real binary.

usage: test_cli_convert.py CONV WORKDIR

Recordings (in WORKDIR/run, made here when perf can record and a C compiler
is there; otherwise the committed samples and fixtures stand in and the
checks that need a recording of our own are skipped):
  wl.data     tests/fixtures/src workload built into WORKDIR (own build-id),
              perf record -g: 2 processes (fork+exec), worker threads
  two.data    `timeout 0.3 sha256sum /dev/zero & timeout 0.3 md5sum /dev/zero`:
              several pids and comms (sh, timeout, sha256sum, md5sum)
  nobid.data  the workload recorded with perf record -B (no build-ids; taken
              from the files, which are the mapped ones on this machine)
  moved.data  a second build of the workload whose binary is moved away after
              recording (for -d/--debug-dir, --cache-dir, --debuginfod)
  jit.data    Python running machine code from an anonymous executable
              mapping, plus a perf-PID.map for it (for --jit-dir)
  tests/fixtures: multi.data (--event), pipe.data and pipe-zstd.data (stdin
              in pipe mode), fg.data/plain.data/zstd.data (globs, -o DIR)

What is checked (ok/FAIL line per check):
  * every option `conv --help` lists is used by some check here, and conv.1
    documents each; -h fits in 40 lines; --version;
  * outputs: default input perf.data, -o BASE, -o DIR (one input, several
    inputs, created), quoted globs expanded by conv, a glob matching nothing,
    -F/--format, --pprof/--jfr PATH and '-' (gzip magic, "FLR\\0" on stdout),
    stdin ('-') in file mode and pipe mode, --stats to stdout and to a file
    with every key and consistent numbers (frames add up, samples_total is the
    sum of samples, outputs' bytes are the file sizes, processes/threads are
    perf's), pprof labels (default, --no-labels, --label cpu: per-pid and
    per-cpu sums equal perf's), --jfr-chunk-size (jfr summary), -j 1 == -j 2
    byte for byte, --full-signatures (the same on C code), -n, -k, --jit-dir,
    --buildid-from-disk, -d, --cache-dir, --debuginfod against
    tests/tools/fake_debuginfod.py on 127.0.0.1 and --offline keeping conv
    away from it, --timeout giving up on a server that stalls for longer than
    any run may take;
  * exit codes 0, 1 (usage errors), 2 (unreadable inputs), 3 (--strict on a
    truncated recording; 0 and a warning naming the offset without it), 4
    (outputs that cannot be written, no temp file left), and the worst code
    winning over several inputs while the good ones are still written;
  * filters: --pid, --tid, --comm, --event, --time relative and @absolute give
    the sample counts perf script / perf report give with the same filter;
  * off a terminal and with -q: no progress, no summary (-v forces the
    summary); on a terminal (util-linux `script`): progress (\\r ESC[K) and the
    summary; -q on a terminal: neither.

Checks compare conv with perf on the same recording, never with where its
samples happen to land, the machine's speed or an earlier run: a check that
needs a recording to hold something (a sample in burn_inner, a kernel sample,
a sample in the JIT code) records it again, RECORD_TRIES times in all, and is
skipped if it still lacks it. Every subprocess has a generous timeout (HANG)
against hangs only; nothing is timed.

Python 3 standard library only; no network (--offline everywhere, except
--debuginfod runs against a loopback server). Prints `N passed, M failed,
K skipped`; exit 1 when a check failed, 77 (SKIP) when nothing could be checked.
"""
import collections
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "symbolize"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
sys.dont_write_bytecode = True
import pprof_read  # noqa: E402
import pprofdec  # noqa: E402
import testlib  # noqa: E402  (its fake server; this test keeps its own check and skip)

CONV, WORK0 = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
REPO = os.path.dirname(os.path.dirname(HERE))
FIX = os.path.join(REPO, "tests", "fixtures")
T0 = time.monotonic()
passed = failed = skipped = 0
TIMES = bool(os.environ.get("CONV_TEST_TIMES"))
HANG = 300        # seconds: a subprocess that takes longer is stuck, not slow
RECORD_TRIES = 3  # recordings at most, when one lacks what a check needs
KERNEL_HALF = 1 << 63  # kernel text is in the upper half (x86_64, arm64)

os.makedirs(WORK0, exist_ok=True)
WORK = os.path.join(WORK0, "run")  # ours alone: cleared on every run
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
HOME = os.path.join(WORK, "home")
TMP = os.path.join(WORK, "tmp")
os.makedirs(HOME)
os.makedirs(TMP)

# conv's environment: no servers, a private HOME (debuginfod cache, ~/.debug), TMPDIR of ours
ENV = dict(os.environ, HOME=HOME, TMPDIR=TMP, LC_ALL="C")
for k in ("DEBUGINFOD_URLS", "DEBUGINFOD_CACHE_PATH", "XDG_CACHE_HOME"):
    ENV.pop(k, None)
# perf's too: a HOME of its own, so no ~/.debug of earlier runs answers for it
PERF_HOME = os.path.join(WORK, "perf-home")
os.makedirs(PERF_HOME)
PERF_ENV = dict(os.environ, HOME=PERF_HOME, LC_ALL="C", PERF_PAGER="cat", PAGER="cat")
for k in ("PERF_EXEC_PATH", "DEBUGINFOD_URLS"):
    PERF_ENV.pop(k, None)


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print("ok %s%s" % (name, "  [%.1f s]" % (time.monotonic() - T0) if TIMES else ""))
    else:
        failed += 1
        print("FAIL %s -- %s" % (name, detail))
    sys.stdout.flush()
    return bool(cond)


def skip(name, why):
    global skipped
    skipped += 1
    print("skip %s -- %s" % (name, why))


def sh(cmd, timeout=HANG, env=None, cwd=None, input=None, stdin=subprocess.DEVNULL):
    try:
        if input is not None:
            return subprocess.run(cmd, input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  timeout=timeout, env=env, cwd=cwd)
        return subprocess.run(cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout, env=env, cwd=cwd)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, -999, e.stdout or b"", (e.stderr or b"") + b"TIMEOUT")


USED = set()  # every option token conv was run with


def note_opts(args):
    for a in args:
        if a.startswith("--") and len(a) > 2:
            USED.add(a[2:].split("=", 1)[0])
        elif a.startswith("-") and len(a) > 1:
            USED.add("-" + a[1])


def conv(*args, cwd=None, input=None, timeout=HANG, env=None):
    args = [str(a) for a in args]
    note_opts(args)
    return sh([CONV] + args, timeout=timeout, env=env or ENV, cwd=cwd, input=input)


def err(r):
    return r.stderr.decode("utf-8", "replace")


def desc(r):
    return "exit %s, stderr %r" % (r.returncode, err(r)[-400:])


def stats_lines(text):
    out = []
    for line in text.splitlines():
        if line.strip():
            try:
                out.append(json.loads(line))
            except ValueError:
                out.append({"_bad_json": line})
    return out


def stats_of(r):
    """The single --stats object conv printed on stdout, or {}."""
    s = stats_lines(r.stdout.decode("utf-8", "replace"))
    return s[0] if len(s) == 1 else {}


def fresh(*parts):
    d = os.path.join(WORK, *parts)
    os.makedirs(d, exist_ok=True)
    return d


def tmp_leftovers(d):
    bad = []
    for root, _, files in os.walk(d):
        bad += [os.path.join(root, f) for f in files if ".tmp." in f]
    return bad


# ---------------------------------------------------------------------------
# pprof, read with tests/tools/pprofdec.py

def pprof_parse(data):
    """{samples[{locs, values, labels[(key, str or None, num)]}], mappings[{filename,
    build_id}], functions: sorted names}."""
    p = pprofdec.parse(data, errors="replace")
    return {
        "samples": [{"locs": ids, "values": vals, "labels": [lab[:3] for lab in labels]}
                    for (ids, vals, _), labels in zip(p["samples"], p["labels"])],
        "mappings": [{"filename": m["file"], "build_id": m["bid"]} for m in p["maps"].values()],
        "functions": sorted(name for name, _, _ in p["funcs"].values()),
    }


def pprof_file(path):
    try:
        with open(path, "rb") as f:
            return pprof_parse(f.read())
    except (OSError, ValueError, IndexError, EOFError) as e:
        return {"error": str(e), "samples": [], "mappings": [], "functions": []}


def label_value(lab):
    key, s, num = lab
    return (num or 0) if s is None else s  # proto3 leaves a 0 out


def sums_by_label(prof, key):
    out = collections.Counter()
    for s in prof["samples"]:
        for lab in s["labels"]:
            if lab[0] == key:
                out[str(label_value(lab))] += s["values"][0] if s["values"] else 0
    return dict(out)


# ---------------------------------------------------------------------------
# perf's view

PERF = shutil.which("perf")
LINE_RE = re.compile(r"^\s*(\d+)/(\d+)\s+(?:\[(\d+)\]\s+)?(\d+)\.(\d{9}):")


def perf_samples(path, *filters, via_stdin=False):
    """(pid, tid, cpu, time_ns) per sample as `perf script` sees them with FILTERS; None on failure.
    cpu is None when the samples have no CPU field."""
    if not PERF:
        return None
    for fields in ("pid,tid,cpu,time", "pid,tid,time"):
        cmd = [PERF, "script", "-f", "-i", "-" if via_stdin else path, "--ns", "-F", fields]
        cmd += list(filters)
        if via_stdin:
            with open(path, "rb") as f:
                r = sh(cmd, env=PERF_ENV, stdin=f)
        else:
            r = sh(cmd, env=PERF_ENV)
        if r.returncode == 0:
            break
    else:
        return None
    out = []
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        m = LINE_RE.match(line)
        if m:
            out.append((int(m.group(1)), int(m.group(2)), int(m.group(3)) if m.group(3) else None,
                        int(m.group(4)) * 10 ** 9 + int(m.group(5))))
    return out


def perf_events(path):
    """{event name: samples} from `perf script -F event`."""
    r = sh([PERF, "script", "-f", "-i", path, "-F", "event"], env=PERF_ENV)
    c = collections.Counter()
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if line.endswith(":"):
            c[line[:-1]] += 1
    return dict(c)


def perf_report_total(path, *filters):
    """Sum of the Samples column of perf report --sort comm,pid with FILTERS.

    Not --sort pid alone: perf keeps one entry per pid named by the comm of
    its first sample, and --comms then filters whole entries by that name,
    so a process whose first sample came before its exec (a `timeout` child
    that became sha256sum) loses every sample to the filter. With comm in
    the sort key the filter sees each sample's comm, as conv's --comm does."""
    r = sh([PERF, "report", "-f", "-i", path, "--stdio", "-n", "--no-children", "-g", "none",
            "--sort", "comm,pid"] + list(filters), env=PERF_ENV)
    total = 0
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s", line)
        if m:
            total += int(m.group(1))
    return total


def fmt_s(ns):
    return "%d.%09d" % (ns // 10 ** 9, ns % 10 ** 9)


def perf_syms(path):
    """The symbol names perf gives any frame of any sample (call chains included)."""
    r = sh([PERF, "script", "-f", "-i", path, "-F", "ip,sym"], env=PERF_ENV)
    names = set()
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        f = line.split(None, 1)
        if len(f) == 2:
            names.add(f[1].strip())
    return names


def perf_kernel(path, kallsyms="/proc/kallsyms"):
    """({kernel function: self samples}, all kernel samples) from perf report's [k] rows,
    kernel names from KALLSYMS (never a vmlinux: conv reads kallsyms too)."""
    r = sh([PERF, "report", "-f", "-i", path, "--stdio", "-n", "--sort", "sym", "--no-children",
            "-g", "none", "--ignore-vmlinux", "--kallsyms", kallsyms], env=PERF_ENV)
    named, total = collections.Counter(), 0
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+\[k\]\s+(.*\S)\s*$", line)
        if m:
            total += int(m.group(1))
            if not re.match(r"^0x[0-9a-f]+$", m.group(2)):
                named[m.group(2)] += int(m.group(1))
    return dict(named), total


def perf_leaf_ips(path):
    """[(pid, leaf ip)] per sample."""
    r = sh([PERF, "script", "-f", "-i", path, "-F", "pid,ip", "-G"], env=PERF_ENV)
    out = []
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        f = line.split()
        if len(f) == 2 and f[0].isdigit():
            out.append((int(f[0]), int(f[1], 16)))
    return out


def conv_leaves(pb, kernel=None):
    """{function: samples with it as the leaf frame} of conv's pprof output (the
    function the leaf's code belongs to: its last line); kernel=True/False keeps
    only kernel/user leaves."""
    prof = pprof_read.read(pb)
    c = collections.Counter()
    for locs, vals in prof["samples"]:
        if not locs:
            continue
        _, addr, names = prof["locations"][locs[0]]
        if kernel is not None and (addr >= KERNEL_HALF) != kernel:
            continue
        c[names[-1] if names else ""] += vals[0] if vals else 0
    return dict(c)


# ---------------------------------------------------------------------------
# recordings

REC = fresh("rec")


def perf_record(out, argv, extra=()):
    r = sh([PERF, "record", "-N", "-q", "-e", "cpu-clock", "-F", "999", "-g"] + list(extra) +
           ["-o", out, "--"] + argv, env=PERF_ENV)
    ok = r.returncode == 0 and os.path.exists(out) and os.path.getsize(out) > 0
    if not ok:
        print("note: perf record %s failed: %s" % (argv[0], r.stderr.decode("utf-8", "replace")[-300:]))
    return ok


def record_with(out, argv, extra=(), want=None, what=""):
    """perf record, again while the recording lacks what a check needs (want(out)
    false), RECORD_TRIES times at most: (recorded, has it)."""
    for attempt in range(1, RECORD_TRIES + 1):
        if not perf_record(out, argv, extra):
            return False, False
        if want is None or want(out):
            return True, True
        print("note: %s: recording %d has no %s%s" % (os.path.basename(out), attempt, what,
                                                       "; recording again" if attempt < RECORD_TRIES else ""))
    return True, False


def has_burn_inner(path):
    return "burn_inner" in perf_syms(path)


can_record = False
if PERF:
    probe = os.path.join(REC, "probe.data")
    can_record = perf_record(probe, ["true"])

cc = shutil.which("clang") or shutil.which("cc") or shutil.which("gcc")
CFLAGS = ["-O2", "-g", "-fno-omit-frame-pointer", "-fno-optimize-sibling-calls"]
if cc and "clang" in os.path.basename(cc):
    CFLAGS.append("-mno-omit-leaf-frame-pointer")
SRC = os.path.join(FIX, "src")
WL = fresh("wl")
built = False
if cc and can_record:
    r1 = sh([cc] + CFLAGS + ["-fPIC", "-shared", "-o", os.path.join(WL, "libwork.so"),
                            os.path.join(SRC, "libwork.c")])
    builds = []
    for sub in ("wl", "mv"):
        bid = os.urandom(20).hex()
        d = fresh(sub)
        r2 = sh([cc] + CFLAGS + ["-o", os.path.join(d, "workload"), os.path.join(SRC, "workload.c"),
                                "-L" + WL, "-lwork", "-Wl,-rpath," + WL, "-pthread",
                                "-Wl,--build-id=0x" + bid])
        builds.append((r2.returncode == 0, bid))
    built = r1.returncode == 0 and all(b[0] for b in builds)
    if not built:
        print("note: building the workload failed: %s %s" % (err(r1)[-300:], builds))
    WL_BID, MV_BID = builds[0][1], builds[1][1]

MAIN = os.path.join(REC, "wl.data")
own_main = main_burn = False
if built:
    own_main, main_burn = record_with(MAIN, [os.path.join(WL, "workload"), "200"], ["--sample-cpu"],
                                      has_burn_inner, "sample in burn_inner")
if not own_main:
    shutil.copyfile(os.path.join(REPO, "samples", "perf.data"), MAIN)
TWO = os.path.join(REC, "two.data")
own_two = two_kernel = False
if can_record and shutil.which("sha256sum") and shutil.which("md5sum") and shutil.which("timeout"):
    # (its kernel samples are what -k renames)
    own_two, two_kernel = record_with(TWO, ["sh", "-c", "timeout 0.3 sha256sum /dev/zero & "
                                            "timeout 0.3 md5sum /dev/zero; wait"],
                                      want=lambda p: perf_kernel(p)[1] > 0, what="kernel sample")
if not own_two:
    shutil.copyfile(os.path.join(FIX, "tracepoint.data"), TWO)  # several comms and pids
NOBID = os.path.join(REC, "nobid.data")
have_nobid = built and perf_record(NOBID, [os.path.join(WL, "workload"), "100"], extra=["-B"])
MOVED = os.path.join(REC, "moved.data")
DBG = fresh("dbg")
have_moved = False
if built:
    # burn_inner is the witness that debug info was found: the recording needs a sample in it
    rec_moved, have_moved = record_with(MOVED, [os.path.join(WORK, "mv", "workload"), "100"],
                                        want=has_burn_inner, what="sample in burn_inner")
if have_moved:
    shutil.move(os.path.join(WORK, "mv", "workload"), os.path.join(DBG, "workload"))

JIT = os.path.join(REC, "jit.data")
JITDIR = fresh("jitmaps")
JIT_PROG = r'''
import ctypes, mmap, os, sys, time
code = bytes.fromhex("4889f848ffc875fbc3")  # mov rax,rdi; 1: dec rax; jnz 1b; ret
m = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
              prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
with open(sys.argv[1], "w") as f:
    f.write("%d %x\n" % (os.getpid(), addr))
fn = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_uint64)(addr)
end = time.monotonic() + 0.3
while time.monotonic() < end:
    fn(2000000)
'''
have_jit = False
JIT_SAMPLES = 0


def jit_leaves(path, addrf):
    """perf's samples whose leaf is in the JIT code (pid and address from addrf)."""
    try:
        with open(addrf) as f:
            pid, addr = f.read().split()
    except (OSError, ValueError):
        return 0
    lo = int(addr, 16)
    return sum(1 for p, ip in perf_leaf_ips(path) if p == int(pid) and lo <= ip < lo + 9)


if can_record and os.uname().machine == "x86_64":
    prog = os.path.join(WORK, "jitprog.py")
    with open(prog, "w") as f:
        f.write(JIT_PROG)
    addrf = os.path.join(WORK, "jit.addr")
    rec_jit, in_jit = record_with(JIT, [sys.executable, prog, addrf],
                                  want=lambda p: jit_leaves(p, addrf) > 0, what="sample in the JIT code")
    if rec_jit and in_jit:
        with open(addrf) as f:
            jpid, jaddr = f.read().split()
        with open(os.path.join(JITDIR, "perf-%s.map" % jpid), "w") as f:
            f.write("%s 9 convtest_jit_loop\n" % jaddr)
        JIT_SAMPLES = jit_leaves(JIT, addrf)
        have_jit = True
print("note: recordings: own workload %s (burn_inner sampled %s), own two-command %s (kernel samples %s), "
      "nobid %s, moved %s, jit %s (%.1f s)" %
      (bool(own_main), main_burn, bool(own_two), two_kernel, bool(have_nobid), bool(have_moved), have_jit,
       time.monotonic() - T0))

MAIN_PERF = perf_samples(MAIN)
if MAIN_PERF is None:
    print("note: perf script cannot read %s: perf comparisons skipped" % MAIN)

STATS_KEYS = {"input", "exit_code", "samples", "samples_total", "samples_filtered", "processes",
              "threads", "unique_stacks", "frames", "sources", "debuginfod", "unresolved_objects",
              "lost_samples", "problems", "outputs"}


def check_stats(name, st, files=True):
    """Keys and the numbers that must agree with each other."""
    if not check("%s: --stats has every key" % name, isinstance(st, dict) and STATS_KEYS <= set(st),
                 "missing %s in %r" % (sorted(STATS_KEYS - set(st or {})), st)):
        return False
    fr = st["frames"]
    ok = check("%s: --stats nested keys" % name,
               {"total", "symbolized", "unresolved", "unmapped"} <= set(fr) and
               {"fetched", "cache_hits", "not_found", "errors", "bytes"} <= set(st["debuginfod"]) and
               all({"offset", "record_type", "count", "message"} <= set(p) for p in st["problems"]) and
               all({"format", "path", "bytes"} <= set(o) for o in st["outputs"]) and
               all({"build_id", "path", "frames"} <= set(o) for o in st["unresolved_objects"]),
               st)
    if not ok:
        return False
    check("%s: samples_total == sum of samples per event" % name,
          st["samples_total"] == sum(st["samples"].values()), (st["samples_total"], st["samples"]))
    check("%s: frames.total == symbolized + unresolved + unmapped" % name,
          fr["total"] == fr["symbolized"] + fr["unresolved"] + fr["unmapped"],
          "%r (sum %d)" % (fr, fr["symbolized"] + fr["unresolved"] + fr["unmapped"]))
    check("%s: frames.symbolized == sum of sources" % name,
          fr["symbolized"] == sum(st["sources"].values()), (fr, st["sources"]))
    check("%s: unique_stacks <= samples_total, processes <= threads" % name,
          st["unique_stacks"] <= st["samples_total"] and st["processes"] <= st["threads"], st)
    if files:
        bad = [(o["path"], o["bytes"], os.path.getsize(o["path"]) if os.path.exists(o["path"]) else None)
               for o in st["outputs"] if o["path"] != "-" and
               (not os.path.exists(o["path"]) or os.path.getsize(o["path"]) != o["bytes"])]
        check("%s: outputs' bytes are the file sizes" % name, not bad, bad)
    return True


# ===========================================================================
# 1. help, version, the options conv --help lists
r = conv("-h")
htext = r.stdout.decode("utf-8", "replace")
hl = htext.splitlines()
check("-h: exit 0, usage on stdout, nothing on stderr", r.returncode == 0 and
      htext.startswith("usage: conv") and not r.stderr, desc(r))
check("-h: at most 40 lines", len(hl) <= 40, "%d lines" % len(hl))
# "-o, --output BASE", "--pprof PATH", "-p, --pid LIST   -t, --tid LIST", "-h, --help    --version"
LONG = sorted(set(re.findall(r"(?<![\w-])--([a-z][a-z0-9-]*)", htext)))
SHORT_OF = {lng: sh_ for sh_, lng in re.findall(r"(?<![\w-])-([A-Za-z0-9]), --([a-z][a-z0-9-]*)", htext)}
SHORTS = "".join(sorted(set(re.findall(r"(?<![\w'-])-([A-Za-z0-9])(?=[, ])", htext))))
OPTS = set(LONG)
check("-h: lists long options (%d) and short ones (%s), each short one beside its long form"
      % (len(LONG), SHORTS), len(LONG) >= 20 and SHORTS and set(SHORTS) == set(SHORT_OF.values()),
      (LONG, SHORTS, SHORT_OF))
# the man page and the README say the same: every long option is in conv.1 (as troff writes
# it, "\-\-name") and in the README's text or its pointer to the man page
man = open(os.path.join(REPO, "doc", "conv.1"), encoding="utf-8").read().replace("\\-", "-")
missing = [n for n in LONG if not re.search(r"(?<![\w-])--%s(?![\w-])" % re.escape(n), man)]
check("doc/conv.1: documents every long option conv --help lists", not missing, missing)
missing = [c for c in SHORTS if not re.search(r"(?<![\w-])-%s\b" % re.escape(c), man)]
check("doc/conv.1: documents every short option (%s)" % SHORTS, not missing, missing)
readme = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
check("README: points to conv --help and the man page for the options",
      "conv --help" in readme and "doc/conv.1" in readme)
for code in ("0", "1", "2", "3", "4"):
    check("README and conv.1 document exit status %s" % code,
          re.search(r"\b%s\b[^\n]{0,40}" % code, readme) is not None and
          (".B %s\n" % code) in open(os.path.join(REPO, "doc", "conv.1"), encoding="utf-8").read())
r2 = conv("--help")
check("--help == -h", r2.returncode == 0 and r2.stdout == r.stdout, desc(r2))
r = conv("--version")
check("--version: 'conv X.Y...' on stdout, exit 0",
      r.returncode == 0 and re.match(rb"^conv \d+\.\d+\S*\n$", r.stdout) and not r.stderr,
      (r.stdout, desc(r)))

# ===========================================================================
# 2. outputs and their names

# default input: ./perf.data -> ./perf.pb.gz and ./perf.jfr; quiet off a terminal
d = fresh("default")
shutil.copyfile(MAIN, os.path.join(d, "perf.data"))
r = conv("--offline", cwd=d)
check("no FILE: converts ./perf.data to perf.pb.gz and perf.jfr",
      r.returncode == 0 and os.path.isfile(os.path.join(d, "perf.pb.gz")) and
      os.path.isfile(os.path.join(d, "perf.jfr")), (desc(r), os.listdir(d)))
check("off a terminal without -q: nothing on stderr (no progress, no summary)", r.stderr == b"",
      err(r))
main_prof = pprof_file(os.path.join(d, "perf.pb.gz"))
check("default pprof is a readable profile with samples", main_prof["samples"] and
      "error" not in main_prof, main_prof.get("error"))

# --stats on stdout, the reference facts for MAIN
d = fresh("o")
r = conv("--offline", "--stats", "-o", os.path.join(d, "base"), MAIN)
MS = stats_of(r)
check("-o BASE: BASE.pb.gz and BASE.jfr", r.returncode == 0 and
      sorted(os.listdir(d)) == ["base.jfr", "base.pb.gz"], (desc(r), os.listdir(d)))
check("--stats (no FILE): one JSON line on stdout", len(stats_lines(r.stdout.decode())) == 1 and
      bool(MS), r.stdout[:300])
check_stats("main", MS)
if MS:
    check("--stats: input, exit_code 0, no problems, nothing lost",
          MS["input"] == MAIN and MS["exit_code"] == 0 and MS["problems"] == [] and
          MS["lost_samples"] == 0 and MS["samples_filtered"] == 0, MS)
    check("--stats: outputs name both files", sorted((o["format"], o["path"]) for o in MS["outputs"]) ==
          [("jfr", os.path.join(d, "base.jfr")), ("pprof", os.path.join(d, "base.pb.gz"))],
          MS["outputs"])
    if MAIN_PERF is not None:
        check("--stats: samples_total == perf's sample count (%d)" % len(MAIN_PERF),
              MS["samples_total"] == len(MAIN_PERF), MS["samples_total"])
        check("--stats: processes and threads == perf's distinct pids and tids",
              MS["processes"] == len({p for p, _, _, _ in MAIN_PERF}) and
              MS["threads"] == len({t for _, t, _, _ in MAIN_PERF}),
              (MS["processes"], MS["threads"], len({p for p, _, _, _ in MAIN_PERF}),
               len({t for _, t, _, _ in MAIN_PERF})))
    bp = pprof_file(os.path.join(d, "base.pb.gz"))
    check("pprof: sample values sum to samples_total",
          sum(s["values"][0] for s in bp["samples"]) == MS["samples_total"],
          sum(s["values"][0] for s in bp["samples"]))
MAIN_N = MS.get("samples_total", 0)

r = conv("-q", "--offline", "--output=" + os.path.join(d, "long"), MAIN)
check("--output=BASE (long form)", r.returncode == 0 and
      os.path.isfile(os.path.join(d, "long.pb.gz")) and os.path.isfile(os.path.join(d, "long.jfr")),
      desc(r))

d = fresh("odir1")
r = conv("-q", "--offline", "-o", d, MAIN)
check("-o DIR (existing, one input): DIR/wl.pb.gz and DIR/wl.jfr",
      r.returncode == 0 and sorted(os.listdir(d)) == ["wl.jfr", "wl.pb.gz"], (desc(r), os.listdir(d)))

# formats
for fl, want in ((["-F", "pprof"], ["f.pb.gz"]), (["-F", "jfr"], ["f.jfr"]),
                 (["--format", "pprof,jfr"], ["f.jfr", "f.pb.gz"]),
                 (["--format=jfr,pprof"], ["f.jfr", "f.pb.gz"])):
    d = fresh("fmt", "_".join(fl).replace("=", "_").replace(",", "_"))
    r = conv("-q", "--offline", *fl, "-o", os.path.join(d, "f"), MAIN)
    check("%s: writes exactly %s" % (" ".join(fl), want),
          r.returncode == 0 and sorted(os.listdir(d)) == want, (desc(r), os.listdir(d)))

# the views: folded stacks, the flame graph, the summary's top functions
for fl, want in ((["-F", "folded"], ["f.folded"]), (["-F", "html"], ["f.html"]),
                 (["--format=pprof,jfr,folded,html"], ["f.folded", "f.html", "f.jfr", "f.pb.gz"])):
    d = fresh("fmt", "_".join(fl).replace("=", "_").replace(",", "_"))
    r = conv("-q", "--offline", *fl, "-o", os.path.join(d, "f"), MAIN)
    check("%s: writes exactly %s" % (" ".join(fl), want),
          r.returncode == 0 and sorted(os.listdir(d)) == want, (desc(r), os.listdir(d)))
d = fresh("views")
r = conv("-q", "--offline", "-o", os.path.join(d, "x.folded"), "-F", "folded,html", MAIN)
check("-o x.folded: the base is x (x.folded, x.html)", r.returncode == 0 and
      sorted(os.listdir(d)) == ["x.folded", "x.html"], (desc(r), os.listdir(d)))
r = conv("-q", "--offline", "--folded", "-", MAIN)
flines = r.stdout.decode("utf-8", "replace").splitlines()
check("--folded -: folded stacks on stdout, their counts add up to every sample",
      r.returncode == 0 and flines and all(re.match(r"^\S.* \d+$", ln) for ln in flines) and
      sum(int(ln.rsplit(" ", 1)[1]) for ln in flines) == MAIN_N, (desc(r), flines[:3]))
r = conv("-q", "--offline", "--folded", os.path.join(d, "ns.folded"), "--folded-value", "cpu-clock",
         "--pprof", os.path.join(d, "ns.pb.gz"), MAIN)
wsum = sum(int(ln.rsplit(" ", 1)[1]) for ln in open(os.path.join(d, "ns.folded"))) if r.returncode == 0 else -1
pp = pprofdec.read(os.path.join(d, "ns.pb.gz")) if r.returncode == 0 else None
wcol = [i for i, (t, _) in enumerate(pp["types"]) if t == "cpu-clock"] if pp else []
check("--folded-value cpu-clock: the counts are its nanoseconds (the pprof's cpu-clock column)",
      r.returncode == 0 and wcol and wsum == sum(v[wcol[0]] for _, v, _ in pp["samples"]) and wsum > MAIN_N,
      (desc(r), wsum))
r = conv("-q", "--offline", "-F", "folded,html", "--folded-value", "cpu-clock", "-o", os.path.join(d, "fv"), MAIN)
m = re.search(r'id="conv-data">(.*?)</script>', open(os.path.join(d, "fv.html")).read(), re.S) if r.returncode == 0 else None
views = [(v["name"], v["unit"], v["total"]) for v in json.loads(m.group(1))["views"]] if m else None
check("-F folded,html --folded-value cpu-clock: the page's view is still the sample count, alone",
      views is not None and len(views) == 1 and views[0][1] == "samples" and views[0][2] == MAIN_N, views)
# --stats inside the -o directory conv creates for several inputs
od = os.path.join(d, "made") + "/"  # the slash: a directory, made
r = conv("-q", "--offline", "-o", od, "--stats", os.path.join(od, "s.json"), MAIN, os.path.join(FIX, "fg.data"))
check("-o DIR (new) --stats DIR/s.json with 2 inputs: DIR is made first, 2 stats records",
      r.returncode == 0 and os.path.isfile(os.path.join(od, "s.json")) and
      len(stats_lines(open(os.path.join(od, "s.json")).read())) == 2, desc(r))
# more sampled events than a page has columns (16): the folded value keeps its column
# -o - with several inputs: standard output is no directory (it was made as one, named "-")
dd = fresh("dash-o")
r = conv("-q", "--offline", "-o", "-", MAIN, os.path.join(FIX, "plain.data"), cwd=dd)
check("-o - with two inputs: usage error, said, nothing made", r.returncode == 1 and "-o -" in err(r) and
      os.listdir(dd) == [], (desc(r), os.listdir(dd)))
E17 = os.path.join(FIX, "views", "events17.data")
# 17 sampled events, more than the page has views: the folded value keeps its column. A weighted
# value is no view and takes one (15 views); the default, the first event's count, is one (16).
for tag, fv, col, nviews in (("e17", ["--folded-value", "clk17"], "clk17", 15), ("e17d", [], "clk1_samples", 16)):
    r = conv("-q", "--offline", "-F", "pprof,folded,html", *fv, "-o", os.path.join(d, tag), E17)
    pp = pprofdec.read(os.path.join(d, tag + ".pb.gz")) if r.returncode == 0 else None
    ci = [i for i, (t, _) in enumerate(pp["types"]) if t == col] if pp else []
    fsum = sum(int(ln.rsplit(" ", 1)[1]) for ln in open(os.path.join(d, tag + ".folded"))) if r.returncode == 0 else -1
    m = re.search(r'id="conv-data">(.*?)</script>', open(os.path.join(d, tag + ".html")).read(),
                  re.S) if r.returncode == 0 else None
    views = [v["name"] for v in json.loads(m.group(1))["views"]] if m else []
    check("17 sampled events, -F folded,html %s: folded = the pprof's %s column; the page shows %d views and "
          "says %d are left out" % (" ".join(fv), col, nviews, 17 - nviews),
          r.returncode == 0 and ci and fsum == sum(v[ci[0]] for _, v, _ in pp["samples"]) and fsum > 0 and
          views == ["clk%d" % i for i in range(1, nviews + 1)] and
          "%d more with samples are left out" % (17 - nviews) in err(r), (desc(r), fsum, views))
r = conv("-q", "--offline", "--folded", os.path.join(d, "none.folded"), "--folded-value", "no-such", MAIN)
check("--folded-value no-such: a usage error (exit 1), said, no file", r.returncode == 1 and "no-such" in err(r) and
      not os.path.exists(os.path.join(d, "none.folded")) and tmp_leftovers(d) == [], desc(r))
r = conv("-q", "--offline", "--folded-value", "cpu-clock", "-o", os.path.join(d, "nf"), MAIN)
check("--folded-value without folded stacks: usage error", r.returncode == 1 and "folded" in err(r), desc(r))
r = conv("-q", "--offline", "--html", os.path.join(d, "g.html"), MAIN)
page = open(os.path.join(d, "g.html"), encoding="utf-8").read() if r.returncode == 0 else ""
check("--html PATH: one HTML page with the data in it, no request outside it",
      r.returncode == 0 and page.lstrip().lower().startswith("<!doctype html") and "/*CONV-DATA*/" not in page and
      '"views":[' in page and not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page, re.I), desc(r))
sfile = os.path.join(d, "top.json")
r = conv("-q", "--offline", "--top", "3", "--stats=" + sfile, "--pprof", os.path.join(d, "t.pb.gz"), MAIN)
st = stats_lines(open(sfile).read()) if os.path.exists(sfile) else [{}]
tf = st[0].get("top_functions") or {}
check("--top 3 --stats: top_functions, 3 by self and 3 by total, in order, of every sample",
      r.returncode == 0 and tf.get("samples") == MAIN_N and len(tf.get("self", [])) == 3 and
      len(tf.get("total", [])) == 3 and
      [e["self"] for e in tf["self"]] == sorted((e["self"] for e in tf["self"]), reverse=True) and
      [e["total"] for e in tf["total"]] == sorted((e["total"] for e in tf["total"]), reverse=True) and
      tf["total"][0]["total"] >= tf["self"][0]["self"], (desc(r), tf))
r = conv("-q", "--offline", "--top", "0", "--stats=" + sfile, "--pprof", os.path.join(d, "t.pb.gz"), MAIN)
st = stats_lines(open(sfile).read()) if os.path.exists(sfile) else [{}]
check("--top 0: no top_functions", r.returncode == 0 and "top_functions" not in st[0], st)
r = conv("-v", "--offline", "--top", "2", "--pprof", os.path.join(d, "t.pb.gz"), MAIN)
check("-v --top 2: the summary ends with the top functions by self and total, with %",
      r.returncode == 0 and re.search(r"top self .*\n +\d+\.\d\d% +\d+  \S.*\n.*\n  top total\n", err(r)),
      err(r)[-600:])
r = conv("-q", "--top", "x", MAIN)
check("--top x: usage error", r.returncode == 1 and "--top" in err(r), desc(r))
r = conv("-q", "--symbolize-deadline", "0", MAIN)
check("--symbolize-deadline 0: usage error", r.returncode == 1 and "--symbolize-deadline" in err(r), desc(r))
r = conv("-q", "--offline", "--symbolize-deadline", "30", "--pprof", os.path.join(d, "dl.pb.gz"), MAIN)
check("--symbolize-deadline 30: converts", r.returncode == 0 and os.path.getsize(os.path.join(d, "dl.pb.gz")) > 0,
      desc(r))

main_dir_before = sorted(os.listdir(REC))
d = fresh("paths")
r = conv("-q", "--offline", "--pprof", os.path.join(d, "only.pb.gz"), MAIN)
check("--pprof PATH alone: that file only (no JFR anywhere)",
      r.returncode == 0 and os.listdir(d) == ["only.pb.gz"] and sorted(os.listdir(REC)) == main_dir_before,
      (desc(r), os.listdir(d)))
r = conv("-q", "--offline", "--jfr", os.path.join(d, "only.jfr"), MAIN)
check("--jfr PATH alone: that file only", r.returncode == 0 and
      sorted(os.listdir(d)) == ["only.jfr", "only.pb.gz"] and sorted(os.listdir(REC)) == main_dir_before,
      (desc(r), os.listdir(d)))
r = conv("-q", "--offline", "--pprof", os.path.join(d, "p2.pb.gz"), "--jfr", os.path.join(d, "j2.jfr"), MAIN)
check("--pprof PATH --jfr PATH: both, named", r.returncode == 0 and
      os.path.isfile(os.path.join(d, "p2.pb.gz")) and os.path.isfile(os.path.join(d, "j2.jfr")), desc(r))

# stdout outputs
sfile = os.path.join(d, "stdout-stats.json")
r = conv("-q", "--offline", "--pprof", "-", "--stats=" + sfile, MAIN)
p = pprof_parse(r.stdout) if r.stdout[:2] == b"\x1f\x8b" else {"samples": []}
check("--pprof -: gzip on stdout, a profile with every sample",
      r.returncode == 0 and r.stdout[:2] == b"\x1f\x8b" and
      sum(s["values"][0] for s in p["samples"]) == MAIN_N, (desc(r), r.stdout[:8]))
st = stats_lines(open(sfile).read()) if os.path.exists(sfile) else []
check("--stats=FILE with --pprof -: outputs [{pprof, '-', bytes on stdout}]",
      len(st) == 1 and st[0].get("outputs") == [{"format": "pprof", "path": "-", "bytes": len(r.stdout)}],
      st)
r = conv("-q", "--offline", "--jfr", "-", MAIN)
check("--jfr -: JFR ('FLR\\0') on stdout", r.returncode == 0 and r.stdout[:4] == b"FLR\0",
      (desc(r), r.stdout[:8]))
jfr_stdout = os.path.join(d, "stdout.jfr")
with open(jfr_stdout, "wb") as f:
    f.write(r.stdout)
check("--jfr -: its temp file is gone from TMPDIR", os.listdir(TMP) == [], os.listdir(TMP))
r = conv("-q", "--offline", "--pprof", "-", "--jfr", os.path.join(d, "with-stdout.jfr"), MAIN)
check("--pprof - --jfr PATH: pprof on stdout, JFR in the file",
      r.returncode == 0 and r.stdout[:2] == b"\x1f\x8b" and
      os.path.getsize(os.path.join(d, "with-stdout.jfr")) > 0, desc(r))

# several inputs, -o DIR created, --stats=FILE one line per input
d = os.path.join(WORK, "multi-out") + "/"  # does not exist yet: the slash makes it
sfile = os.path.join(WORK, "multi.json")
ins = [MAIN, TWO, os.path.join(FIX, "fg.data")]
r = conv("-q", "--offline", "-o", d, "--stats=" + sfile, *ins)
want = sorted(["wl.pb.gz", "wl.jfr", "two.pb.gz", "two.jfr", "fg.pb.gz", "fg.jfr"])
check("-o DIR with several inputs: DIR created, outputs named after each input",
      r.returncode == 0 and os.path.isdir(d) and sorted(os.listdir(d)) == want,
      (desc(r), os.listdir(d) if os.path.isdir(d) else None))
st = stats_lines(open(sfile).read()) if os.path.exists(sfile) else []
check("--stats=FILE: one object per input, in order",
      [s.get("input") for s in st] == ins and all(s.get("exit_code") == 0 for s in st), st)
for s in st:
    check_stats("multi[%s]" % os.path.basename(s.get("input", "?")), s)

# globs: quoted, conv expands them
gin = fresh("glob-in")
for n in ("fg.data", "plain.data", "zstd.data"):
    shutil.copyfile(os.path.join(FIX, n), os.path.join(gin, n))
gout = os.path.join(WORK, "glob-out") + "/"
sfile = os.path.join(WORK, "glob.json")
r = conv("-q", "--offline", "-o", gout, "--stats=" + sfile, os.path.join(gin, "*.data"))
st = stats_lines(open(sfile).read()) if os.path.exists(sfile) else []
check("quoted glob: conv expands it (3 inputs, sorted)",
      r.returncode == 0 and [s.get("input") for s in st] ==
      [os.path.join(gin, n) for n in ("fg.data", "plain.data", "zstd.data")], (desc(r), st))
check("quoted glob: every match converted into -o DIR",
      os.path.isdir(gout) and sorted(os.listdir(gout)) ==
      sorted(b + e for b in ("fg", "plain", "zstd") for e in (".pb.gz", ".jfr")),
      os.listdir(gout) if os.path.isdir(gout) else None)
r = conv("-q", "--offline", "-o", os.path.join(WORK, "glob-none"), os.path.join(gin, "*.nothing"))
check("glob matching nothing: exit 2, 'no file matches' on stderr, no output",
      r.returncode == 2 and "no file matches" in err(r) and
      not os.path.exists(os.path.join(WORK, "glob-none")), desc(r))
gout2 = fresh("glob-none-plus-good")
r = conv("-q", "--offline", "-o", gout2, os.path.join(gin, "*.nothing"), os.path.join(gin, "fg.data"))
check("glob matching nothing + a good input: exit 2, the good one written",
      r.returncode == 2 and sorted(os.listdir(gout2)) == ["fg.jfr", "fg.pb.gz"],
      (desc(r), os.listdir(gout2)))

# stdin: file mode and pipe mode, through a pipe (not seekable)
d = fresh("stdin-file")
with open(MAIN, "rb") as f:
    data = f.read()
r = conv("--offline", "--stats", "-", cwd=d, input=data)
st = stats_of(r)
check("stdin (file-mode recording through a pipe): converted, every sample",
      r.returncode == 0 and st.get("input") == "-" and st.get("samples_total") == MAIN_N,
      (desc(r), st.get("samples_total"), MAIN_N))
check("stdin: default outputs are ./stdin.pb.gz and ./stdin.jfr",
      sorted(os.listdir(d)) == ["stdin.jfr", "stdin.pb.gz"], os.listdir(d))
for n in ("pipe.data", "pipe-zstd.data"):
    fx = os.path.join(FIX, n)
    d = fresh("stdin-" + n)
    with open(fx, "rb") as f:
        data = f.read()
    r = conv("--offline", "--stats", "-o", os.path.join(d, "x"), "-", input=data)
    st = stats_of(r)
    ps = perf_samples(fx, via_stdin=True)
    rp = conv("-q", "--offline", "--stats", "-o", os.path.join(d, "y"), fx)
    st2 = stats_of(rp)
    check("stdin (pipe-mode %s via cat): samples == perf's (%s) and == the path's" %
          (n, None if ps is None else len(ps)),
          r.returncode == 0 and st.get("samples_total", -1) > 0 and
          st.get("samples_total") == st2.get("samples_total") and
          (ps is None or st.get("samples_total") == len(ps)),
          (desc(r), st.get("samples_total"), st2.get("samples_total"), ps and len(ps)))
    check("stdin (%s): both outputs written" % n,
          os.path.isfile(os.path.join(d, "x.pb.gz")) and os.path.isfile(os.path.join(d, "x.jfr")),
          os.listdir(d))
cat = shutil.which("cat")
if cat:
    d = fresh("stdin-cat")
    try:
        with open(os.path.join(FIX, "pipe.data"), "rb") as f:
            c1 = subprocess.Popen([cat], stdin=f, stdout=subprocess.PIPE)
            note_opts(["-q", "--offline", "--pprof"])
            c2 = subprocess.run([CONV, "-q", "--offline", "--pprof", "-", "-"], stdin=c1.stdout,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=HANG, env=ENV)
            c1.stdout.close()
            c1.wait(timeout=HANG)
        check("`cat pipe.data | conv - --pprof -`: pprof on stdout",
              c2.returncode == 0 and c2.stdout[:2] == b"\x1f\x8b", desc(c2))
    except subprocess.TimeoutExpired:
        check("`cat pipe.data | conv - --pprof -`", False, "timeout")

# labels
d = fresh("labels")
profs = {}
for name, fl in (("default", []), ("no-labels", ["--no-labels"]), ("cpu", ["--label", "cpu"])):
    out = os.path.join(d, name + ".pb.gz")
    r = conv("-q", "--offline", *fl, "--pprof", out, MAIN)
    profs[name] = pprof_file(out) if r.returncode == 0 else {"samples": [], "functions": []}
    check("labels %s: written" % name, r.returncode == 0, desc(r))


def label_keys(p):
    return {lab[0] for s in p["samples"] for lab in s["labels"]}


check("default labels: pid, tid, comm, process; no cpu",
      {"pid", "tid", "comm", "process"} <= label_keys(profs["default"]) and
      "cpu" not in label_keys(profs["default"]), label_keys(profs["default"]))
check("--no-labels: no sample has a label", label_keys(profs["no-labels"]) == set(),
      label_keys(profs["no-labels"]))
check("--no-labels: same sample total",
      sum(s["values"][0] for s in profs["no-labels"]["samples"]) == MAIN_N)
check("--label cpu: every sample has a cpu label",
      profs["cpu"]["samples"] and all(any(lab[0] == "cpu" for lab in s["labels"])
                                      for s in profs["cpu"]["samples"]), label_keys(profs["cpu"]))
if MAIN_PERF is not None and MAIN_PERF and MAIN_PERF[0][2] is not None:
    want_cpu = {str(k): v for k, v in collections.Counter(c for _, _, c, _ in MAIN_PERF).items()}
    got_cpu = sums_by_label(profs["cpu"], "cpu")
    check("--label cpu: samples per cpu == perf script's", got_cpu == want_cpu, (got_cpu, want_cpu))
else:
    skip("--label cpu vs perf", "perf cannot read the recording or it has no CPU field")
if MAIN_PERF is not None:
    want_pid = {str(k): v for k, v in collections.Counter(p for p, _, _, _ in MAIN_PERF).items()}
    got_pid = sums_by_label(profs["default"], "pid")
    check("pid labels: samples per pid == perf script's", got_pid == want_pid, (got_pid, want_pid))
    want_tid = {str(k): v for k, v in collections.Counter(t for _, t, _, _ in MAIN_PERF).items()}
    got_tid = sums_by_label(profs["default"], "tid")
    check("tid labels: samples per tid == perf script's", got_tid == want_tid, (got_tid, want_tid))
else:
    skip("labels vs perf", "perf cannot read the recording")

# --label cpu on a recording whose samples carry no CPU (no -a, no --sample-cpu): no made-up cpu 0
NOCPU = os.path.join(FIX, "fg.data")
r = conv("-q", "--offline", "--label", "cpu", "--pprof", os.path.join(d, "nocpu.pb.gz"), NOCPU)
pc = pprof_file(os.path.join(d, "nocpu.pb.gz"))
cpuvals = collections.Counter(str(label_value(lab)) for s in pc["samples"] for lab in s["labels"]
                              if lab[0] == "cpu")
check("--label cpu on a recording without CPU in its samples: no cpu label invented (or a warning)",
      r.returncode == 0 and (not cpuvals or "cpu" in err(r)),
      "exit %d, cpu label values %s, stderr %r" % (r.returncode, dict(cpuvals), err(r)[-200:]))

# options after the input are options (getopt permutes), not file names
d = fresh("permute")
r = conv(MAIN, "-q", "--offline", "-o", os.path.join(d, "after"))
check("options after FILE: `conv FILE -q --offline -o BASE` works",
      r.returncode == 0 and sorted(os.listdir(d)) == ["after.jfr", "after.pb.gz"], (desc(r), os.listdir(d)))

# --max-reorder: a small reorder buffer still gives every sample
d = fresh("reorder")
if "max-reorder" in OPTS:
    r = conv("-q", "--offline", "--max-reorder", "64k", "--stats", "-F", "pprof", "-o", os.path.join(d, "r"), MAIN)
    st = stats_of(r)
    check("--max-reorder 64k: accepted, every sample kept", r.returncode == 0 and
          st.get("samples_total") == MAIN_N, (desc(r), st.get("samples_total"), MAIN_N))
    r = conv("-q", "--offline", "--max-reorder=1M", "-F", "pprof", "-o", os.path.join(d, "r2"), MAIN)
    check("--max-reorder=1M: accepted", r.returncode == 0, desc(r))

# --object-cache: what a run over several inputs keeps of their objects changes no output
d = fresh("objcache")
if "object-cache" in OPTS:
    outs = {}
    for size in ("0", "1", "64M"):
        o = os.path.join(d, "c" + size) + "/"
        r = conv("-q", "--offline", "--object-cache", size, "-o", o, MAIN, os.path.join(REPO, "samples", "perf.data"))
        outs[size] = (r.returncode, {f: open(o + f, "rb").read() for f in sorted(os.listdir(o))}
                      if os.path.isdir(o) else {})
    check("--object-cache 0, 1 and 64M over two inputs: the same outputs",
          outs["0"][0] == 0 and len(outs["0"][1]) == 4 and outs["0"] == outs["1"] == outs["64M"],
          {k: (v[0], sorted(v[1])) for k, v in outs.items()})

# JFR chunks. How many chunks 1k makes depends on how many samples a recording has, so
# "several" is asked of the committed samples/perf.data (372 samples, ~34 kB of JFR), and
# the sample counts of both chunkings of our own recording
jfr = shutil.which("jfr")
d = fresh("chunks")
FIXED = os.path.join(REPO, "samples", "perf.data")
r = conv("-q", "--offline", "--jfr-chunk-size", "1k", "--jfr", os.path.join(d, "small.jfr"), MAIN)
r2 = conv("-q", "--offline", "--jfr-chunk-size=1M", "--jfr", os.path.join(d, "big.jfr"), MAIN)
r3 = conv("-q", "--offline", "--stats", "--jfr-chunk-size", "1k", "--jfr", os.path.join(d, "fixed.jfr"), FIXED)
FIXED_N = stats_of(r3).get("samples_total")
check("--jfr-chunk-size 1k / =1M: accepted", r.returncode == 0 and r2.returncode == 0 and r3.returncode == 0,
      (desc(r), desc(r2), desc(r3)))


def jfr_summary(path):
    s = sh([jfr, "summary", path])
    t = s.stdout.decode("utf-8", "replace")
    ch = re.search(r"Chunks:\s*(\d+)", t)
    ex = re.search(r"jdk\.ExecutionSample\s+(\d+)", t)
    return (int(ch.group(1)) if ch else None, int(ex.group(1)) if ex else None, t[-300:])


if jfr:
    small, big = jfr_summary(os.path.join(d, "small.jfr")), jfr_summary(os.path.join(d, "big.jfr"))
    fixed = jfr_summary(os.path.join(d, "fixed.jfr"))
    check("--jfr-chunk-size 1k: jfr summary shows several chunks (samples/perf.data)", (fixed[0] or 0) > 1,
          fixed)
    check("--jfr-chunk-size 1M: one chunk", big[0] == 1, big)
    check("JFR: jdk.ExecutionSample count == samples_total (both chunkings; samples/perf.data at 1k)",
          small[1] == MAIN_N and big[1] == MAIN_N and fixed[1] == FIXED_N,
          (small[1], big[1], MAIN_N, fixed[1], FIXED_N))
    so = jfr_summary(jfr_stdout)
    check("--jfr - output is a recording jfr reads", so[1] == MAIN_N, so)
else:
    skip("--jfr-chunk-size via jfr summary", "no jfr tool")

# -j
d = fresh("jobs")
r1 = conv("-q", "--offline", "-j", "1", "-o", os.path.join(d, "j1"), MAIN)
r2 = conv("-q", "--offline", "--jobs=2", "-o", os.path.join(d, "j2"), MAIN)


def same(a, b):
    try:
        with open(a, "rb") as fa, open(b, "rb") as fb:
            return fa.read() == fb.read()
    except OSError:
        return False


check("-j 1 and --jobs=2: byte-identical pprof and JFR", r1.returncode == 0 and r2.returncode == 0 and
      same(os.path.join(d, "j1.pb.gz"), os.path.join(d, "j2.pb.gz")) and
      same(os.path.join(d, "j1.jfr"), os.path.join(d, "j2.jfr")), (desc(r1), desc(r2)))
# C names have no signature to add (tests/cli/test_names.py checks C++ ones)
r3 = conv("-q", "--offline", "--full-signatures", "-o", os.path.join(d, "full"), MAIN)
check("--full-signatures on a C program: byte-identical pprof and JFR",
      r3.returncode == 0 and same(os.path.join(d, "j1.pb.gz"), os.path.join(d, "full.pb.gz")) and
      same(os.path.join(d, "j1.jfr"), os.path.join(d, "full.jfr")), desc(r3))

# -n
d = fresh("nosym")
r = conv("-q", "--offline", "-n", "--stats", "--pprof", os.path.join(d, "n.pb.gz"), MAIN)
st = stats_of(r)
pn = pprof_file(os.path.join(d, "n.pb.gz"))
r2 = conv("-q", "--offline", "--no-symbolize", "--pprof", os.path.join(d, "n2.pb.gz"), MAIN)
if main_burn:
    check("without -n: the workload's functions are named (burn_inner, which perf names too)",
          "burn_inner" in main_prof["functions"], main_prof["functions"][:20])
else:
    skip("without -n: burn_inner named", "no own recording with a sample in it (%d tries)" % RECORD_TRIES)
check("-n: no function names at all, nothing symbolized",
      r.returncode == 0 and pn["functions"] == [] and st.get("frames", {}).get("symbolized") == 0,
      (desc(r), pn["functions"][:10], st.get("frames")))
check("-n: same samples", sum(s["values"][0] for s in pn["samples"]) == MAIN_N)
check("--no-symbolize == -n (byte-identical)", r2.returncode == 0 and
      same(os.path.join(d, "n.pb.gz"), os.path.join(d, "n2.pb.gz")), desc(r2))

# -k / --kallsyms: a kallsyms file whose names we made up
ksrc = None
try:
    with open("/proc/kallsyms") as f:
        ksrc = [l.split() for l in f if l[17:19] in ("T ", "t ")]
except OSError:
    pass
if ksrc and any(int(x[0], 16) for x in ksrc[:10]) and two_kernel:
    kf = os.path.join(WORK, "kallsyms.txt")
    with open(kf, "w") as f:
        for x in ksrc:
            name = x[2] if x[2] in ("_text", "_stext") else "cvt_" + x[2]
            f.write("%s %s %s\n" % (x[0], x[1], name))
    d = fresh("kallsyms")
    r = conv("-q", "--offline", "-k", kf, "--stats", "--pprof", os.path.join(d, "k.pb.gz"), TWO)
    st = stats_of(r)
    pk = pprof_file(os.path.join(d, "k.pb.gz"))
    r2 = conv("-q", "--offline", "--kallsyms=" + kf, "--pprof", os.path.join(d, "k2.pb.gz"), TWO)
    kn = [n for n in pk["functions"] if n.startswith("cvt_")]
    check("-k FILE: kernel frames named from that file (%d cvt_ names)" % len(kn),
          r.returncode == 0 and kn and st.get("sources", {}).get("kallsyms", 0) > 0,
          (desc(r), st.get("sources"), pk["functions"][:10]))
    # perf, given the same file, names the kernel leaves alike, sample for sample
    want, _ = perf_kernel(TWO, kf)
    got = conv_leaves(os.path.join(d, "k.pb.gz"), kernel=True) if r.returncode == 0 else {}
    got.pop("", None)
    check("-k FILE: samples per kernel function == perf report --kallsyms FILE's (%d functions)" % len(want),
          want and got == want,
          {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)})
    check("--kallsyms=FILE == -k FILE", r2.returncode == 0 and
          same(os.path.join(d, "k.pb.gz"), os.path.join(d, "k2.pb.gz")), desc(r2))
else:
    conv("-q", "--offline", "-k", "/dev/null", "--kallsyms=/dev/null", "--pprof",
         os.path.join(WORK, "k.pb.gz"), MAIN)
    skip("-k FILE", "no recording of ours with a kernel sample (%d tries)" % RECORD_TRIES
         if ksrc and not two_kernel else "/proc/kallsyms unreadable or without addresses")

# --jit-dir
if have_jit:
    d = fresh("jit")
    r0 = conv("-q", "--offline", "--jit-dir", fresh("jit-empty"), "--stats", "--pprof",
              os.path.join(d, "nomap.pb.gz"), JIT)
    r1 = conv("-q", "--offline", "--jit-dir=" + JITDIR, "--stats", "--pprof",
              os.path.join(d, "map.pb.gz"), JIT)
    s0, s1 = stats_of(r0), stats_of(r1)
    f1 = pprof_file(os.path.join(d, "map.pb.gz"))["functions"]
    f0 = pprof_file(os.path.join(d, "nomap.pb.gz"))["functions"]
    check("--jit-dir DIR: perf-PID.map there names the JIT code",
          r1.returncode == 0 and "convtest_jit_loop" in f1 and
          s1.get("sources", {}).get("jit_map", 0) > 0, (desc(r1), s1.get("sources")))
    jl = conv_leaves(os.path.join(d, "map.pb.gz")).get("convtest_jit_loop") if r1.returncode == 0 else None
    check("--jit-dir DIR: samples in the JIT code == perf's leaves in its address range (%d)" % JIT_SAMPLES,
          jl == JIT_SAMPLES, jl)
    check("--jit-dir without the map: no JIT name", r0.returncode == 0 and
          "convtest_jit_loop" not in f0 and s0.get("sources", {}).get("jit_map") == 0, s0.get("sources"))
    check_stats("jit, with its map", s1)
    check_stats("jit, map missing", s0)
else:
    conv("-q", "--offline", "--jit-dir", JITDIR, "--pprof", os.path.join(WORK, "j.pb.gz"), MAIN)
    skip("--jit-dir", "no JIT recording with a sample in the JIT code (needs perf record and x86_64; "
         "%d tries)" % RECORD_TRIES)

# --buildid-from-disk
if have_nobid:
    d = fresh("bid")
    r0 = conv("-q", "--offline", "--pprof", os.path.join(d, "no.pb.gz"), NOBID)
    r1 = conv("-q", "--offline", "--buildid-from-disk", "--pprof", os.path.join(d, "yes.pb.gz"), NOBID)
    wl = os.path.join(WL, "workload")
    b0 = {m["build_id"] for m in pprof_file(os.path.join(d, "no.pb.gz"))["mappings"] if m["filename"] == wl}
    b1 = {m["build_id"] for m in pprof_file(os.path.join(d, "yes.pb.gz"))["mappings"] if m["filename"] == wl}
    # made on this machine, the binary unchanged: its build-id comes from the file (source
    # "path"; another machine's recording gets none: tests/cli/test_defaults.py)
    check("recording without build-ids (perf record -B), made here: the build-id from the file",
          r0.returncode == 0 and b0 == {WL_BID}, (desc(r0), b0, WL_BID))
    check("--buildid-from-disk: the binary's build-id read from disk", r1.returncode == 0 and
          b1 == {WL_BID}, (desc(r1), b1, WL_BID))
else:
    conv("-q", "--offline", "--buildid-from-disk", "--pprof", os.path.join(WORK, "b.pb.gz"), MAIN)
    skip("--buildid-from-disk on a -B recording", "cannot build or record")

# -d / --debug-dir, --cache-dir, --debuginfod, --offline
if have_moved:
    d = fresh("debug")

    def moved(tag, *fl, offline=True):
        out = os.path.join(d, tag + ".pb.gz")
        r = conv("-q", *(["--offline"] if offline else []), *fl, "--stats", "--pprof", out, MOVED)
        return r, stats_of(r), pprof_file(out)["functions"]

    r, s, f = moved("none")
    check("binary moved away: its functions unresolved", r.returncode == 0 and "burn_inner" not in f and
          any(u["path"].endswith("/mv/workload") for u in s.get("unresolved_objects", [])),
          (desc(r), s.get("unresolved_objects")))
    check_stats("moved", s)
    r, s, f = moved("d", "-d", DBG)
    check("-d DIR: the binary found there (sources.debug_dir)", r.returncode == 0 and "burn_inner" in f and
          s.get("sources", {}).get("debug_dir", 0) > 0, (desc(r), s.get("sources")))
    r, s, f = moved("dlong", "--debug-dir=" + DBG)
    check("--debug-dir=DIR: same", r.returncode == 0 and "burn_inner" in f, desc(r))
    cache = fresh("dcache")
    os.makedirs(os.path.join(cache, MV_BID))
    shutil.copyfile(os.path.join(DBG, "workload"), os.path.join(cache, MV_BID, "debuginfo"))
    r, s, f = moved("cache", "--cache-dir", cache)
    check("--cache-dir DIR (--offline): the cached debuginfo is used",
          r.returncode == 0 and "burn_inner" in f and s.get("debuginfod", {}).get("cache_hits", 0) >= 1,
          (desc(r), s.get("debuginfod"), s.get("sources")))
    # a debuginfod server on 127.0.0.1 that serves the moved binary
    srv = None
    try:
        try:
            srv, url = testlib.fake_debuginfod(DBG, lifetime=3 * HANG)
        except RuntimeError as e:
            skip("--debuginfod", e)
        if srv:
            # --offline with --debuginfod is a usage error (test_cli_usage); the server named
            # the other way, $DEBUGINFOD_URLS, must be left alone too
            ENV["DEBUGINFOD_URLS"] = url
            try:
                r, s, f = moved("dfd-offline", "--cache-dir", fresh("dcache-off"))
            finally:
                del ENV["DEBUGINFOD_URLS"]
            n0 = testlib.server_stats(url, HANG)["requests"]
            check("$DEBUGINFOD_URLS --offline: no request reaches the server, unresolved",
                  r.returncode == 0 and n0 == 0 and "burn_inner" not in f, (desc(r), n0))
            r, s, f = moved("dfd", "--debuginfod", url, "--cache-dir", fresh("dcache-on"), offline=False)
            check("--debuginfod URL: fetched from the server and used",
                  r.returncode == 0 and "burn_inner" in f and s.get("debuginfod", {}).get("fetched", 0) >= 1
                  and s.get("sources", {}).get("debuginfod", 0) > 0,
                  (desc(r), s.get("debuginfod"), s.get("sources")))
            if "max-download" in OPTS:
                r, s, f = moved("dfd-max", "--debuginfod", url, "--cache-dir", fresh("dcache-max"),
                                "--max-download", "1k", offline=False)
                check("--max-download 1k: a larger debug file is not downloaded",
                      r.returncode == 0 and "burn_inner" not in f and
                      s.get("debuginfod", {}).get("fetched") == 0, (desc(r), s.get("debuginfod")))
            if "timeout" in OPTS:
                # the server sends the headers and then nothing for longer than any run may
                # take (conv is killed after HANG s): conv must give up on it by itself
                testlib.server_get(url, "/__fault?id=*&kind=stall&arg=%d" % (3 * HANG), HANG)
                r, s, f = moved("dfd-timeout", "--debuginfod", url, "--cache-dir", fresh("dcache-to"),
                                "--timeout", "1", offline=False)
                stalled = testlib.server_stats(url, HANG)["in_flight"]
                check("--timeout 1: conv gives up on a stalled server (exit 0, nothing fetched, the "
                      "server still stalling: %d in flight)" % stalled,
                      r.returncode == 0 and stalled >= 1 and "burn_inner" not in f and
                      s.get("debuginfod", {}).get("fetched") == 0, (desc(r), s.get("debuginfod")))
                testlib.server_get(url, "/__fault?id=*&kind=none", HANG)
    finally:
        if srv:
            testlib.stop(srv)
else:
    conv("-q", "--offline", "-d", DBG, "--debug-dir=" + DBG, "--cache-dir", fresh("dc"),
         "--debuginfod", "http://127.0.0.1:9", "--max-download", "1M", "--timeout", "5",
         "--pprof", os.path.join(WORK, "d.pb.gz"), MAIN)
    skip("-d / --cache-dir / --debuginfod effects", "cannot build or record, or no recording with a "
         "sample in burn_inner (%d tries)" % RECORD_TRIES)

# -v off a terminal
d = fresh("verbose")
r = conv("-v", "--offline", "-o", os.path.join(d, "v"), MAIN)
e = err(r)
check("-v off a terminal: the summary on stderr (input, samples, wrote), no progress",
      r.returncode == 0 and e.startswith(MAIN + ": %d samples (" % MAIN_N) and "wrote" in e and
      "\r" not in e and "\x1b" not in e, e[:400])
r = conv("--verbose", "--offline", "-o", os.path.join(d, "vq"), MAIN)
check("--verbose accepted: the summary", r.returncode == 0 and "wrote" in err(r), desc(r))
r = conv("-q", "--offline", "-o", os.path.join(d, "q"), MAIN)
r2 = conv("--quiet", "--offline", "-o", os.path.join(d, "q2"), MAIN)
check("-q / --quiet off a terminal: stderr empty", r.returncode == 0 and r.stderr == b"" and
      r2.returncode == 0 and r2.stderr == b"", (desc(r), desc(r2)))

# ===========================================================================
# 3. exit codes
U = fresh("usage")


def usage_case(name, *args, code=1, inputs=(MAIN,)):
    before = sorted(os.listdir(U))
    r = conv("--offline", *args, *inputs, cwd=U)
    e = err(r)
    check("exit %d: %s" % (code, name), r.returncode == code and e.startswith("conv:") and
          r.stdout == b"" and sorted(os.listdir(U)) == before and sorted(os.listdir(REC)) == main_dir_before,
          (desc(r), sorted(set(os.listdir(U)) - set(before))))
    return r


usage_case("unknown long option", "--no-such-option")
usage_case("unknown short option", "-Z")
usage_case("-o without a value", "-o", inputs=())
usage_case("--pprof without a value", "--pprof", inputs=())
usage_case("-p without a value", "-p", inputs=())
usage_case("-F xml", "-F", "xml", "-o", "x")
usage_case("--format with no format", "--format", ",", "-o", "x")
usage_case("--time 5 (no comma)", "--time", "5", "-o", "x")
usage_case("--time 2,1 (end before start)", "--time", "2,1", "-o", "x")
usage_case("--time @1,2 (absolute and relative mixed)", "--time", "@1,2", "-o", "x")
usage_case("--time a,b", "--time", "a,b", "-o", "x")
usage_case("--time , (empty)", "--time", ",", "-o", "x")
usage_case("-j 0", "-j", "0", "-o", "x")
usage_case("-j 65", "-j", "65", "-o", "x")
usage_case("--jobs x", "--jobs", "x", "-o", "x")
usage_case("--jfr-chunk-size 0", "--jfr-chunk-size", "0", "-o", "x")
usage_case("--jfr-chunk-size 4X", "--jfr-chunk-size", "4X", "-o", "x")
usage_case("--label pid (only cpu)", "--label", "pid", "-o", "x")
usage_case("--tp-fields without fields (EVENT is sys:name)", "--tp-fields", "sched:sched_switch", "-o", "x")
usage_case("--tp-fields with an empty field list", "--tp-fields", "sched:sched_switch:", "-o", "x")
if "max-download" in OPTS:
    usage_case("--max-download x", "--max-download", "x", "-o", "x")
if "max-reorder" in OPTS:
    usage_case("--max-reorder 0", "--max-reorder", "0", "-o", "x")
if "object-cache" in OPTS:
    usage_case("--object-cache x", "--object-cache", "x", "-o", "x")
if "timeout" in OPTS:
    usage_case("--timeout 0", "--timeout", "0", "-o", "x")
usage_case("--pid abc", "--pid", "abc", "-o", "x")
usage_case("-t 1,x", "-t", "1,x", "-o", "x")
usage_case("--pprof PATH with several inputs", "--pprof", "x.pb.gz", inputs=(MAIN, TWO))
usage_case("--jfr PATH with several inputs", "--jfr", "x.jfr", inputs=(MAIN, TWO))
usage_case("stdin twice", "-o", "x", inputs=("-", "-"))
usage_case("--stats and --pprof both on stdout", "--stats", "--pprof", "-")
usage_case("--pprof - and --jfr - both on stdout", "--pprof", "-", "--jfr", "-")
r = usage_case("unknown option", "--bogus")
check("unknown option: one line pointing to conv --help",
      err(r).strip().count("\n") == 0 and "conv --help" in err(r), err(r)[:200])

# exit 2
X2 = fresh("exit2")
notperf = os.path.join(X2, "notperf.data")
with open(notperf, "w") as f:
    f.write("this is not a perf.data file\n" * 200)
empty = os.path.join(X2, "empty.data")
open(empty, "w").close()
for name, path in (("missing file", os.path.join(X2, "missing.data")), ("not perf data", notperf),
                   ("empty file", empty), ("a directory", X2)):
    out = os.path.join(X2, "out-" + name.replace(" ", "-"))
    r = conv("-q", "--offline", "--stats", "-o", out, path)
    st = stats_of(r)
    check("exit 2: %s (message names it, nothing written)" % name,
          r.returncode == 2 and path in err(r) and not os.path.exists(out + ".pb.gz") and
          not os.path.exists(out + ".jfr"), desc(r))
    check("exit 2: %s: --stats says exit_code 2, no outputs" % name,
          st.get("exit_code") == 2 and st.get("outputs") == [] and st.get("input") == path, st)

# exit 3: --strict on a truncated copy
X3 = fresh("exit3")
with open(MAIN, "rb") as f:
    raw = f.read()
doff = int.from_bytes(raw[32:40], "little")
dsize = int.from_bytes(raw[40:48], "little")
cut = doff + dsize * 6 // 10
TRUNC = os.path.join(X3, "trunc.data")
with open(TRUNC, "wb") as f:
    f.write(raw[:cut])
r = conv("--offline", "--stats", "-o", os.path.join(X3, "lax"), TRUNC)
st = stats_of(r)
offs = [p.get("offset") for p in st.get("problems", [])]
e = err(r)
check("truncated, no --strict: exit 0, outputs written",
      r.returncode == 0 and os.path.isfile(os.path.join(X3, "lax.pb.gz")) and
      os.path.isfile(os.path.join(X3, "lax.jfr")), desc(r))
check("truncated: a warning on stderr naming the input and an offset of --stats' problems",
      "warning" in e and TRUNC in e and offs and
      all(re.search(r"offset %d\b" % o, e) for o in offs), (e[:400], offs))
check("truncated: --stats problems with offset, record_type, count, message",
      st.get("problems") and all(p.get("message") and p.get("count", 0) >= 1 for p in st["problems"]),
      st.get("problems"))
check_stats("truncated", st)
r = conv("-q", "--offline", "--strict", "--stats", "-o", os.path.join(X3, "strict"), TRUNC)
st = stats_of(r)
check("truncated, --strict: exit 3, outputs still written, --stats exit_code 3",
      r.returncode == 3 and os.path.isfile(os.path.join(X3, "strict.pb.gz")) and
      os.path.isfile(os.path.join(X3, "strict.jfr")) and st.get("exit_code") == 3, (desc(r), st))
check("-q keeps warnings: the truncation warning still shows", "warning" in err(r), desc(r))
r = conv("-q", "--offline", "--strict", "-o", os.path.join(X3, "strict-good"), MAIN)
check("--strict on a sound recording: exit 0", r.returncode == 0, desc(r))

# exit 4
X4 = fresh("exit4")
afile = os.path.join(X4, "afile")
open(afile, "w").close()
isdir = fresh("exit4", "isdir")
for name, fl in (("-o /proc/nonexistent/x", ["-o", "/proc/nonexistent/x"]),
                 ("-o in /proc (a directory nobody can write)", ["-o", "/proc/conv-cli-test"]),
                 ("-o under a regular file", ["-o", os.path.join(afile, "x")]),
                 ("--pprof onto an existing directory", ["--pprof", isdir]),
                 ("--jfr onto an existing directory", ["--jfr", isdir]),
                 ("--stats=FILE unwritable", ["--stats=/proc/nonexistent/s.json", "-o", os.path.join(X4, "s")])):
    r = conv("-q", "--offline", *fl, MAIN)
    check("exit 4: %s ('cannot write' on stderr)" % name,
          r.returncode == 4 and "cannot" in err(r), desc(r))
check("exit 4: no temp file or partial output left", tmp_leftovers(X4) == [] and
      os.listdir(isdir) == [] and sorted(os.listdir(X4)) == ["afile", "isdir"] and
      not os.path.exists("/proc/conv-cli-test.pb.gz"),
      (tmp_leftovers(X4), os.listdir(X4)))
if os.geteuid() != 0:
    ro = fresh("exit4-ro")
    os.chmod(ro, 0o555)
    r = conv("-q", "--offline", "-o", os.path.join(ro, "x"), MAIN)
    check("exit 4: read-only directory", r.returncode == 4 and os.listdir(ro) == [], desc(r))
    os.chmod(ro, 0o755)
else:
    skip("exit 4: chmod 555 directory", "root writes anyway (the /proc case stands in)")
r = conv("-q", "--offline", "-o", "/proc/nonexistent/dir/", MAIN, TWO)
check("exit 4: -o DIR that cannot be created, several inputs", r.returncode == 4 and "cannot" in err(r),
      desc(r))

# several inputs: the worst wins, good ones are still written
XM = os.path.join(WORK, "worst") + "/"
sfile = os.path.join(WORK, "worst.json")
missing_in = os.path.join(X2, "missing.data")
r = conv("-q", "--offline", "-o", XM, "--stats=" + sfile, MAIN, missing_in, TWO)
st = stats_lines(open(sfile).read()) if os.path.exists(sfile) else []
check("good + missing + good: exit 2, both good ones written",
      r.returncode == 2 and os.path.isdir(XM) and
      sorted(os.listdir(XM)) == ["two.jfr", "two.pb.gz", "wl.jfr", "wl.pb.gz"], (desc(r), st))
check("good + missing + good: --stats exit codes 0, 2, 0",
      [s.get("exit_code") for s in st] == [0, 2, 0], [s.get("exit_code") for s in st])
XM3 = os.path.join(WORK, "worst3") + "/"
r = conv("-q", "--offline", "--strict", "-o", XM3, missing_in, TRUNC, MAIN)
check("missing + truncated(--strict) + good: exit 3, truncated and good written",
      r.returncode == 3 and os.path.isdir(XM3) and
      sorted(os.listdir(XM3)) == ["trunc.jfr", "trunc.pb.gz", "wl.jfr", "wl.pb.gz"], desc(r))
XM4 = fresh("worst4")
os.makedirs(os.path.join(XM4, "two.pb.gz"))  # that output cannot be written
r = conv("-q", "--offline", "--strict", "-o", XM4, TWO, missing_in, TRUNC, MAIN)
check("unwritable + missing + truncated + good: exit 4, others written, no temp file",
      r.returncode == 4 and {"trunc.pb.gz", "trunc.jfr", "wl.pb.gz", "wl.jfr"} <= set(os.listdir(XM4)) and
      tmp_leftovers(XM4) == [] and os.listdir(os.path.join(XM4, "two.pb.gz")) == [],
      (desc(r), os.listdir(XM4)))

# ===========================================================================
# 4. filters: conv's counts == perf's with the same filter


def conv_count(path, *fl):
    r = conv("-q", "--offline", *fl, "-F", "pprof", "--stats", "-o", os.path.join(fresh("filt"), "f"), path)
    st = stats_of(r)
    return r, st


def filt_check(name, path, conv_flags, perf_flags, total):
    r, st = conv_count(path, *conv_flags)
    ps = perf_samples(path, *perf_flags)
    if ps is None:
        skip(name, "perf script failed")
        return
    n = st.get("samples_total")
    print("note: %s: conv %s, perf %d (of %d)" % (name, n, len(ps), total))
    check("%s: conv %s == perf %d" % (name, n, len(ps)),
          r.returncode == 0 and n == len(ps) and st.get("samples_filtered") == total - len(ps),
          (desc(r), st.get("samples_total"), st.get("samples_filtered"), len(ps), total))


if MAIN_PERF:
    tot = len(MAIN_PERF)
    pids = collections.Counter(p for p, _, _, _ in MAIN_PERF)
    tids = collections.Counter(t for _, t, _, _ in MAIN_PERF)
    big_pid = pids.most_common()[0][0]
    filt_check("--pid %d" % big_pid, MAIN, ["--pid", str(big_pid)], ["--pid", str(big_pid)], tot)
    if len(pids) > 1:
        small_pid = pids.most_common()[-1][0]
        filt_check("-p %d (the exec'd child)" % small_pid, MAIN, ["-p", str(small_pid)],
                   ["--pid", str(small_pid)], tot)
        lst = "%d,%d" % (big_pid, small_pid)
        filt_check("--pid %s (list)" % lst, MAIN, ["--pid", lst], ["--pid", lst], tot)
    rp = perf_report_total(MAIN, "--pid", str(big_pid))
    r, st = conv_count(MAIN, "-p", str(big_pid))
    check("--pid %d: conv == perf report --pid (%d)" % (big_pid, rp), st.get("samples_total") == rp,
          (st.get("samples_total"), rp))
    tl = [t for t, _ in tids.most_common()]
    filt_check("--tid %d" % tl[0], MAIN, ["--tid", str(tl[0])], ["--tid", str(tl[0])], tot)
    if len(tl) > 2:
        lst = "%d,%d" % (tl[1], tl[-1])
        filt_check("-t %s (list)" % lst, MAIN, ["-t", lst], ["--tid", lst], tot)
        filt_check("-t %d -t %d (repeated)" % (tl[1], tl[-1]), MAIN, ["-t", str(tl[1]), "-t", str(tl[-1])],
                   ["--tid", lst], tot)
    # time windows, boundaries half-way between two samples
    ts = sorted(t for _, _, _, t in MAIN_PERF)
    first = ts[0]

    def mid(frac):
        i = int(len(ts) * frac)
        while i + 1 < len(ts) - 1 and ts[i + 1] - ts[i] < 2:
            i += 1
        return (ts[i] + ts[i + 1]) // 2

    a, b = mid(0.25), mid(0.7)
    rel = "%s,%s" % (fmt_s(a - first), fmt_s(b - first))
    filt_check("--time %s (relative)" % rel, MAIN, ["--time", rel], ["--time", "%s,%s" % (fmt_s(a), fmt_s(b))], tot)
    ab = "@%s,@%s" % (fmt_s(a), fmt_s(b))
    filt_check("--time %s (perf time)" % ab, MAIN, ["--time", ab], ["--time", "%s,%s" % (fmt_s(a), fmt_s(b))], tot)
    filt_check("--time %s, (open end)" % fmt_s(a - first), MAIN, ["--time", "%s," % fmt_s(a - first)],
               ["--time", "%s," % fmt_s(a)], tot)
    filt_check("--time ,@%s (open start)" % fmt_s(b), MAIN, ["--time", ",@%s" % fmt_s(b)],
               ["--time", ",%s" % fmt_s(b)], tot)
    r, st = conv_count(MAIN, "--time", "0,")
    check("--time 0, keeps every sample (the window starts at the first sample)",
          st.get("samples_total") == tot and st.get("samples_filtered") == 0, st.get("samples_total"))
    rp = perf_report_total(MAIN, "--time", "%s,%s" % (fmt_s(a), fmt_s(b)))
    r, st = conv_count(MAIN, "--time", ab)
    check("--time %s: conv == perf report --time (%d)" % (ab, rp), st.get("samples_total") == rp,
          (st.get("samples_total"), rp))
    filt_check("--pid %d --time %s (combined)" % (big_pid, rel), MAIN, ["--pid", str(big_pid), "--time", rel],
               ["--pid", str(big_pid), "--time", "%s,%s" % (fmt_s(a), fmt_s(b))], tot)
else:
    conv("-q", "--offline", "-p", "1", "-t", "1", "--time", "0,1", "--pprof", os.path.join(WORK, "t.pb.gz"), MAIN)
    skip("--pid/--tid/--time vs perf", "perf cannot read the recording")

TWO_PERF = perf_samples(TWO)
if TWO_PERF:
    rc = sh([PERF, "script", "-f", "-i", TWO, "-F", "comm"], env=PERF_ENV)
    comms = collections.Counter(l.strip() for l in rc.stdout.decode("utf-8", "replace").splitlines() if l.strip())
    cl = [c for c, _ in comms.most_common() if "," not in c and c]
    tot = len(TWO_PERF)
    filt_check("--comm %s" % cl[0], TWO, ["--comm", cl[0]], ["--comms", cl[0]], tot)
    # a list of two comms other than the first when the recording has them; which comms
    # got samples is the machine's doing, so else the last one (a comm nobody has is refused)
    lst = "%s,%s" % (cl[1], cl[-1]) if len(cl) > 2 else cl[-1]
    filt_check("-c %s (list)" % lst, TWO, ["-c", lst], ["--comms", lst], tot)
    rp = perf_report_total(TWO, "--comms", cl[0])
    r, st = conv_count(TWO, "--comm", cl[0])
    check("--comm %s: conv == perf report --comms (%d)" % (cl[0], rp), st.get("samples_total") == rp,
          (st.get("samples_total"), rp))
    r, st = conv_count(TWO, "--comm", "no-such-comm")
    check("--comm no-such-comm: a usage error (exit 1), all filtered, no output", r.returncode == 1 and
          st.get("exit_code") == 1 and st.get("outputs") == [] and
          st.get("samples_total") == 0 and st.get("samples_filtered") == tot, st)
    tp = collections.Counter(p for p, _, _, _ in TWO_PERF)
    p2 = tp.most_common()[1][0] if len(tp) > 1 else tp.most_common()[0][0]
    filt_check("--pid %d (%s)" % (p2, os.path.basename(TWO)), TWO, ["--pid", str(p2)], ["--pid", str(p2)], tot)
    r, st = conv_count(TWO)
    check_stats("two", st)
else:
    conv("-q", "--offline", "-c", "x", "--comm", "y", "--pprof", os.path.join(WORK, "c.pb.gz"), MAIN)
    skip("--comm vs perf", "perf cannot read %s" % TWO)

MULTI = os.path.join(FIX, "multi.data")
if PERF:
    ev = perf_events(MULTI)
    tot = sum(ev.values())
    for e in sorted(ev):
        r, st = conv_count(MULTI, "-e", e)
        check("-e %s: conv %s == perf %d" % (e, st.get("samples_total"), ev[e]),
              r.returncode == 0 and st.get("samples_total") == ev[e] and
              st.get("samples_filtered") == tot - ev[e] and
              {k: v for k, v in st.get("samples", {}).items() if v} == {e: ev[e]}, (desc(r), st.get("samples")))
    lst = ",".join(sorted(ev))
    r, st = conv_count(MULTI, "--event", lst)
    check("--event %s: every sample" % lst, st.get("samples_total") == tot and st.get("samples_filtered") == 0,
          st.get("samples"))
else:
    conv("-q", "--offline", "-e", "cpu-clock", "--event", "cpu-clock", "--pprof", os.path.join(WORK, "e.pb.gz"), MULTI)
    skip("--event vs perf", "no perf")

# ===========================================================================
# 5. progress and summary on a terminal
script = shutil.which("script")
if script:
    pr = sh([script, "-qec", "echo conv-tty-probe; test -t 2", "/dev/null"])
    if pr.returncode != 0 or b"conv-tty-probe" not in pr.stdout:
        script = None
if script:
    d = fresh("tty")

    def on_tty(*args):
        note_opts(args)
        cmd = " ".join(shlex.quote(a) for a in [CONV] + list(args))
        return sh([script, "-qec", cmd, "/dev/null"], env=ENV)

    r = on_tty("--offline", "-o", os.path.join(d, "t"), MAIN)
    out = r.stdout.decode("utf-8", "replace")
    if check("terminal: conv converts (exit 0) and writes to the terminal", r.returncode == 0 and out,
             desc(r)):
        check("terminal: progress lines rewritten with \\r ESC[K", "\r\x1b[K" in out and "conv: " in out,
              repr(out[:300]))
        # (the line may wrap after its first words: the summary fits the terminal's width)
        # a long checkout path wraps too, mid-name: continuation lines are joined before names are looked for
        text = "\n".join(l.split("\x1b[K")[-1] for l in out.splitlines())
        spaced, joined = re.sub(r"\n +", " ", text), re.sub(r"\n +", "", text)
        summ = [l for l in spaced.splitlines() if l.startswith(MAIN + ": ")]
        check("terminal: summary starts with the input name and its samples",
              summ and summ[0].startswith("%s: %d samples" % (MAIN, MAIN_N)), summ)
        check("terminal: summary has frames and 'wrote' with both outputs",
              "frames" in out and "wrote" in out and os.path.join(d, "t.pb.gz") in joined and
              os.path.join(d, "t.jfr") in joined, repr(out[-400:]))
        check("terminal: progress cleared before the summary (ESC[K right before it)",
              re.search(r"\r\x1b\[K" + re.escape(MAIN + ": "), out) is not None, repr(out[:400]))
        for q in ("-q", "--quiet"):
            r = on_tty(q, "--offline", "-o", os.path.join(d, "q" + q), MAIN)
            out = r.stdout.decode("utf-8", "replace")
            check("terminal with %s: no progress, no summary" % q,
                  r.returncode == 0 and "\x1b" not in out and "\r" not in out.replace("\r\n", "\n") and
                  " samples (" not in out and "wrote" not in out, repr(out[:300]))
        r = on_tty("-q", "--offline", "-o", os.path.join(d, "qt"), TRUNC)
        out = r.stdout.decode("utf-8", "replace")
        check("terminal with -q: warnings still shown, no progress", "warning" in out and "\x1b" not in out,
              repr(out[:300]))
else:
    skip("terminal checks", "no working script(1) (util-linux) to give conv a terminal")

# ===========================================================================
# --merge: one profile of several inputs (tests/cli/test_merge.py checks what it holds)
md = os.path.join(WORK, "merge")
os.makedirs(md, exist_ok=True)
shutil.copyfile(MAIN, os.path.join(md, "again.data"))
r = conv("-q", "--offline", "--merge", os.path.join(md, "all"), "--merge-label", "file,host",
         "--stats=" + os.path.join(md, "s.json"), MAIN, "--label", "run=2", os.path.join(md, "again.data"))
recs = stats_lines(open(os.path.join(md, "s.json")).read()) if os.path.exists(os.path.join(md, "s.json")) else []
check("--merge: exit 0, one all.pb.gz and all.jfr for two inputs",
      r.returncode == 0 and all(os.path.exists(os.path.join(md, "all" + x)) for x in (".pb.gz", ".jfr")) and
      not os.path.exists(os.path.join(md, "again.pb.gz")), desc(r))
check("--merge --stats: a record per input (no outputs of its own), then the merged one",
      len(recs) == 3 and [x.get("input") for x in recs] == [MAIN, os.path.join(md, "again.data"),
                                                            os.path.join(md, "all")] and
      not recs[0].get("outputs") and recs[2].get("merged_inputs") == 2 and len(recs[2].get("outputs", [])) == 2,
      recs[-1:])
for args, what in ((["--merge", os.path.join(md, "x"), "-o", os.path.join(md, "y")], "-o with --merge"),
                   (["--merge", md], "--merge naming a directory"),
                   (["--merge", os.path.join(md, "x"), "--merge-label", "nosuch"], "--merge-label nosuch"),
                   (["--merge-label", "host"], "--merge-label without --merge"),
                   (["--label", "k=v"], "--label K=V without --merge")):
    r = conv("-q", "--offline", *args, MAIN)
    check("%s: a usage error (exit 1), said" % what, r.returncode == 1 and err(r).startswith("conv: "), desc(r))

# ===========================================================================
# every option conv --help lists was used
unused = [n for n in LONG if n not in USED and ("-" + SHORT_OF.get(n, "?")) not in USED]
check("every long option conv --help lists is exercised by this test", not unused, unused)
unused_short = [c for c in SHORTS if "-" + c not in USED]
check("every short option conv --help lists is exercised by this test", not unused_short, unused_short)

print("note: %.1f s" % (time.monotonic() - T0))
if passed + failed == 0:
    print("SKIP: nothing could be checked")
    print("0 passed, 0 failed, %d skipped" % max(skipped, 1))
    sys.exit(77)
print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
sys.exit(1 if failed else 0)
