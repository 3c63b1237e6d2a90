#!/usr/bin/env python3
"""conv's JFR output of a recording of STRIPPED binaries names their functions,
inline frames and lines from debug info fetched from a real debuginfod, and with
--no-symbolize writes <build-id>.<remote>(0xELF_ADDRESS) frames that addr2line
resolves to exactly the same frames.

usage: test_jfr_symbols.py CONV WORKDIR

Setup (all in WORKDIR, which is created):
  * jfr_symbols_build.sh WORKDIR builds the sample workload (tests/fixtures/src:
    workload + libwork.so) with samples/record.sh's flags (clang -O2 -g, frame
    pointers) plus -gdwarf-4 (binutils 2.40 addr2line misses inline frames in
    clang's DWARF 5 DW_FORM_rnglistx ranges: now_ms inlined into burn_for
    at 0x140b); in its copy of workload.c burn_inner is always_inline (same
    line, so line numbers are the fixture's): burn_inner becomes an inline
    frame of burn_outer. unstripped/NAME keeps .symtab + DWARF (addr2line's
    input); bin/NAME is `strip --strip-all` WITHOUT .gnu_debuglink;
    debug/NAME.debug is objcopy --only-keep-debug.
  * perf record -N -q --buildid-all -e cpu-clock -F 999 -g
      -o WORKDIR/workload.data -- WORKDIR/bin/workload 1000
    (the stripped binaries, at the paths conv reads them from; -N: no
    build-id cache; --buildid-all: the build-ids of libc and ld.so too, which
    perf otherwise records only when a sample's leaf lies in them; kernel
    samples included).
  * tests/symbolize/serve_debuginfod.sh WORKDIR PORT: the real debuginfod
    (elfutils) over the .debug files and stripped binaries, 127.0.0.1 only;
    the whole test runs under `unshare -n` (loopback only) when permitted.
  * conv runs with HOME=WORKDIR/home (empty: no ~/.debug), no DEBUGINFOD_*
    variables, a fresh --cache-dir; /usr/lib/debug is checked to have no file
    for the two build-ids. A control run with --offline and an empty cache
    must NOT find the hidden function names (burn_inner ... lib_mix): the
    debug info can only have come from the server (whose log must show the
    two /buildid/ID/debuginfo requests answered 200).

Runs:
  sym:    CONV -q --debuginfod URL --cache-dir WORKDIR/cache --jfr sym.jfr DATA
  nosym:  CONV -q --offline --no-symbolize --cache-dir WORKDIR/cache-nosym
               --jfr nosym.jfr DATA
  both read back with `jfr print --json --stack-depth 64 --events
  jdk.ExecutionSample,jdk.NativeLibrary` (parsed here) and the text form of
  `jfr print --events jdk.ExecutionSample --stack-depth 64`.

Checks:
  1. sym: every expected function of the two binaries (burn_inner, burn_outer,
     burn_for, worker of workload; lib_mix, lib_work of libwork.so) is a
     Native frame `workload.NAME() line: N` / `libwork.so.NAME() line: N` with
     N > 0 in `jfr print` (N = 0 only where the line table has line 0 there,
     which check 2 asserts per address); burn_inner is an inline frame: directly above
     burn_outer in the same stacks and, per check 2, expanded from the same
     address; no <remote> frame is left for the two build-ids; kernel frames
     (type Kernel, class "", descriptor (Lk;)L;, a kallsyms name, line 0;
     `.name(k) line: 0` in text) equal perf script's kernel call chains
     (multiset) -- conditional: reported as SKIP when the recording happens to
     have no kernel samples.
  2. nosym: the native frames of the two binaries are all
     <build-id>.<remote>(0xOFFSET) (class = readelf -n's build-id, Native,
     line 0, descriptor "(L0xOFFSET;)L;"; `<build-id>.<remote>(0xOFFSET)` in
     jfr print's text). Per sample position (same time
     and thread in both files), the symbolized frames of the two binaries
     (leaf to root, with lines) equal the remote frames of the same sample
     expanded by `addr2line -a -f -i -e unstripped/NAME` (innermost first):
     names and line numbers, exactly (an address addr2line cannot name, a
     PLT stub, must be left <remote> or named as objdump names its PLT entry,
     e.g. clock_gettime@plt, line 0). System libraries (libc, ld.so) are
     compared the same way when /usr/lib/debug has their debug file, as a
     separate check, except for the outermost function name of each address:
     conv names it after the .symtab symbol, as perf does
     (clock_gettime@@GLIBC_2.17), addr2line after DWARF (__GI___clock_gettime);
     samples where conv left a system frame <remote> are left out (ld.so's
     _start has size 0; addr2line stretches it, conv does not).
  3. jdk.NativeLibrary: workload and libwork.so (one event per process
     mapping) with readelf's build-id, baseAddress < topAddress equal to a
     perf MMAP2 record of that file, loadBias = start - pgoff + p_offset -
     p_vaddr (computed here from perf's MMAP2 and readelf -l); every remote
     offset + some loadBias of its build-id lies in [baseAddress, topAddress);
     and, per sample (matched by thread and time), the remote frames equal the
     raw call chain of `perf report -D` mapped to ELF addresses here (leaf as
     is, callers return address - 1), for every object with a file on disk
     and a build-id in the recording (workload, libwork.so, libc, ld.so; perf
     --buildid-all records them all).
  3b. samples taken in the kernel whose user part starts in such an object:
     that first user address is regs->ip. After an interrupt or exception
     (asm_sysvec_*, asm_exc_page_fault) it is the exact address of the
     instruction to run (or that faulted), so its remote offset must be that
     ELF address and sym.jfr must name it as addr2line does there; after a
     syscall (entry_SYSCALL_64*) it is also the syscall's return address, so
     the address - 1 (as for callers) is accepted too. These samples come and
     go with the machine's interrupts: SKIP when the recording has none.

JFRSYM_REUSE_DATA=1 (debugging) keeps WORKDIR/workload.data of an earlier run
instead of recording again (the build is reproducible: same build-ids).

Prints ok/FAIL/SKIP lines and `N passed, M failed, K skipped`; exit 1 on any
failure. Prints "SKIP: ..." and exits 77 (skipped) when perf cannot record
here or debuginfod, jfr, addr2line, a C compiler ... are missing. WORKDIR is
emptied first. Python 3 standard library only; every jfr call has a timeout;
about 10 s.
"""
import calendar
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BUILD = os.path.join(HERE, "jfr_symbols_build.sh")
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
sys.path.insert(0, os.path.join(REPO, "tests", "symbolize"))
sys.dont_write_bytecode = True
import pprof_stacks  # noqa: E402
import test_symbolize as ts  # noqa: E402  (enter_netns, start_debuginfod, stop_server)
DEADLINE = time.time() + 150
BINS = ("workload", "libwork.so")
# functions that must appear (name -> binary); all but lib_work are static:
# the stripped files do not name them (lib_work is in libwork.so's .dynsym)
EXPECT = {"burn_inner": "workload", "burn_outer": "workload", "burn_for": "workload",
          "worker": "workload", "lib_mix": "libwork.so", "lib_work": "libwork.so"}
HIDDEN = ["burn_inner", "burn_outer", "burn_for", "worker", "lib_mix"]
INLINE = ("burn_inner", "burn_outer")  # (inlined function, its caller)

passed = failed = skipped = 0


def served_200(log, mark, want, limit=30.0):
    """The build-ids the debuginfod log (from offset mark on) shows a debuginfo
    request answered 200 for, once it shows all of want or after limit seconds:
    debuginfod logs a request after answering it, so the line may come a moment
    after conv has its file."""
    end = time.monotonic() + limit
    while True:
        with open(log, "rb") as f:
            f.seek(mark)
            txt = f.read().decode(errors="replace")
        got = {b for b, st in re.findall(r"GET /buildid/([0-9a-f]+)/debuginfo\S* (\d{3})", txt) if st == "200"}
        if want <= got or time.monotonic() >= end:
            return got
        time.sleep(0.05)


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    print(("ok   " if cond else "FAIL ") + name + ("" if cond or detail in ("", None) else "  -- %s" % (detail,)))
    sys.stdout.flush()
    return cond


def skip(name, why):
    global skipped
    skipped += 1
    print("SKIP %s  -- %s" % (name, why))
    sys.stdout.flush()


def note(msg):
    print("     " + msg)
    sys.stdout.flush()


def finish():
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    sys.exit(1 if failed else 0)


def skip_all(why):
    print("SKIP: " + why)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped + 1))
    sys.exit(1 if failed else 77)


def sh(cmd, timeout=120, env=None, cwd=None, stdin_data=None):
    try:
        return subprocess.run(cmd, input=stdin_data, stdin=None if stdin_data is not None else subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                              env=env, cwd=cwd)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, 124, e.stdout or b"", (e.stderr or b"") + b"\ntimed out")
    except OSError as e:
        return subprocess.CompletedProcess(cmd, 127, b"", str(e).encode())


def err(p, n=600):
    return ("exit %d: " % p.returncode) + p.stderr.decode(errors="replace").strip()[-n:]


# -- ELF facts (binutils) ------------------------------------------------------------

def readelf_buildid(path):
    p = sh(["readelf", "-n", path], timeout=30)
    m = re.search(r"Build ID:\s*([0-9a-f]+)", p.stdout.decode(errors="replace"))
    return m.group(1) if m else None


def eu_buildid(path):
    if not shutil.which("eu-readelf"):
        return None
    p = sh(["eu-readelf", "-n", path], timeout=30)
    m = re.search(r"Build ID:\s*([0-9a-f]+)", p.stdout.decode(errors="replace"))
    return m.group(1) if m else None


def load_segments(path):
    """[(p_offset, p_vaddr, p_filesz)] of the PT_LOADs."""
    p = sh(["readelf", "-lW", path], timeout=30)
    segs = []
    for line in p.stdout.decode(errors="replace").splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
    return segs


def bias_of(segs, start, pgoff):
    """load bias (runtime - ELF address) of a mapping of file offset pgoff at start."""
    for off, va, fsz in segs:
        if off - (off & 0xfff) <= pgoff < off + max(fsz, 1):
            return start - pgoff + off - va
    return None


def plt_name(path, addr):
    """objdump's name for a PLT entry holding addr (clock_gettime@plt), else None."""
    p = sh(["objdump", "-d", "--start-address=0x%x" % addr, "--stop-address=0x%x" % (addr + 1), path],
           timeout=30)
    m = re.search(r"^[0-9a-f]+ <([^>+-]+@plt)(?:\+0x[0-9a-f]+)?>:", p.stdout.decode(errors="replace"), re.M)
    return m.group(1) if m else None


def addr2line(path, addrs):
    """{addr: [(function, line)] innermost first} from addr2line -a -f -i."""
    out = {}
    if not addrs:
        return out
    addrs = sorted(set(addrs))
    p = sh(["addr2line", "-a", "-f", "-i", "-e", path],
           stdin_data=("".join("0x%x\n" % a for a in addrs)).encode(), timeout=60)
    cur = None
    lines = p.stdout.decode(errors="replace").splitlines()
    i = 0
    while i < len(lines):
        l = lines[i]
        if re.match(r"^0x[0-9a-f]+$", l):
            cur = int(l, 16)
            out[cur] = []
            i += 1
            continue
        fn = l
        loc = lines[i + 1] if i + 1 < len(lines) else "??:0"
        m = re.search(r":(\d+)", loc)
        out.setdefault(cur, []).append((fn, int(m.group(1)) if m else 0))
        i += 2
    return out


# -- perf's side ----------------------------------------------------------------------

def perf_env():
    env = dict(os.environ, LC_ALL="C", PERF_PAGER="cat", PAGER="cat")
    env.pop("PERF_EXEC_PATH", None)
    return env


CTX_MAX = 0xfffffffffffff001  # PERF_CONTEXT_MAX = (u64)-4095


def perf_dump(data):
    """Samples (pid, tid, time, [raw chain]) and MMAP2/FORK records from perf report -D."""
    p = sh(["perf", "report", "-D", "-f", "-i", data], timeout=90, env=perf_env())
    samples, mmaps, forks = [], [], {}
    cur = None
    for l in p.stdout.decode(errors="replace").splitlines():
        m = re.match(r"^(\d+) 0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_SAMPLE\([^)]*\): (-?\d+)/(-?\d+): 0x([0-9a-f]+)", l)
        if m:
            cur = {"time": int(m.group(1)), "pid": int(m.group(2)), "tid": int(m.group(3)),
                   "ip": int(m.group(4), 16), "chain": []}
            samples.append(cur)
            continue
        m = re.match(r"^\.\.\.\.\.\s+\d+: ([0-9a-f]+)$", l)
        if m and cur is not None:
            cur["chain"].append(int(m.group(1), 16))
            continue
        if l.startswith(" ... thread:") or not l.strip():
            cur = None
        m = re.match(r"^(\d+) 0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_MMAP2? (-?\d+)/(-?\d+): "
                     r"\[0x([0-9a-f]+)\(0x([0-9a-f]+)\) @ (0x[0-9a-f]+|0)[ \]].*?: [-rwxps]+ (.*)$", l)
        if m:
            mmaps.append({"time": int(m.group(1)), "pid": int(m.group(2)), "start": int(m.group(4), 16),
                          "len": int(m.group(5), 16), "pgoff": int(m.group(6), 16), "path": m.group(7)})
            continue
        m = re.match(r"^(\d+) 0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_FORK\((\d+):(\d+)\):\((\d+):(\d+)\)", l)
        if m and m.group(2) != m.group(4):
            forks[int(m.group(2))] = (int(m.group(4)), int(m.group(1)))
    return samples, mmaps, forks, p


def perf_kernel_stacks(data):
    """Counter of (tid, kernel frame names leaf first) from perf script, and the sample count."""
    p = sh(["perf", "script", "-f", "-i", data, "-F", "tid,ip,sym,dso"], timeout=90, env=perf_env())
    stacks = collections.Counter()
    n = 0
    tid, frames = None, None
    for l in p.stdout.decode(errors="replace").splitlines() + [""]:
        if not l.strip():
            if tid is not None:
                n += 1
                k = tuple(frames)
                if k:
                    stacks[(tid, k)] += 1
            tid, frames = None, None
            continue
        if tid is None:
            m = re.match(r"^\s*(\d+)\s*$", l)
            if m:
                tid, frames = int(m.group(1)), []
            continue
        m = re.match(r"^\s*[0-9a-f]+ (\S+) \(\[kernel\.kallsyms\]\)\s*$", l)
        if m:
            frames.append(re.sub(r"\+0x[0-9a-f]+$", "", m.group(1)))
    return stacks, n, p


# -- JFR ---------------------------------------------------------------------------------

def jfr_json(path):
    p = sh(["jfr", "print", "--json", "--stack-depth", "64", "--events",
            "jdk.ExecutionSample,jdk.NativeLibrary", path], timeout=90)
    if p.returncode:
        return None, err(p)
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        return None, "not JSON: %s" % e
    evs = doc.get("recording", {}).get("events", [])
    samples = [e["values"] for e in evs if e.get("type") == "jdk.ExecutionSample"]
    libs = [e["values"] for e in evs if e.get("type") == "jdk.NativeLibrary"]
    return (samples, libs), ""


def jfr_text(path):
    p = sh(["jfr", "print", "--events", "jdk.ExecutionSample", "--stack-depth", "64", path], timeout=90)
    return (p.stdout.decode(errors="replace") if p.returncode == 0 else None), err(p)


def frames_of(ev):
    out = []
    for f in (ev.get("stackTrace") or {}).get("frames", []):
        m = f.get("method") or {}
        cls = (m.get("type") or {}).get("name")
        out.append({"cls": cls if cls is not None else "", "name": m.get("name"),
                    "desc": m.get("descriptor"), "line": f.get("lineNumber"), "type": f.get("type")})
    return out


def jfr_ns(stamp):
    """nanoseconds since the epoch of a jfr print --json time (2026-11-22T07:57:41.436906005Z)."""
    m = re.match(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z$", stamp or "")
    if not m:
        return None
    return calendar.timegm(time.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S")) * 10**9 + \
        int(((m.group(2) or "") + "000000000")[:9])


def tid_of(ev):
    return (ev.get("sampledThread") or {}).get("osThreadId")


REMOTE_DESC = re.compile(r"^\(L0x([0-9a-f]+);\)L;$")  # jfr print shows <remote>(0x...)


def conv_env(work):
    env = dict(os.environ)
    for k in ("DEBUGINFOD_URLS", "DEBUGINFOD_CACHE_PATH", "XDG_CACHE_HOME"):
        env.pop(k, None)
    env["HOME"] = os.path.join(work, "home")
    return env


def resymbolized(conv, work, data, url, cache):
    """conv --no-symbolize, then conv symbolize with an empty cache (the debug info
    on the server only): the pprof's samples, stacks with every line, equal a
    direct conversion's."""
    direct, raw = os.path.join(work, "sym.pb.gz"), os.path.join(work, "nosym.pb.gz")
    named = os.path.join(work, "nosym.symbolized.pb.gz")
    cache2 = os.path.join(work, "cache-resym")
    shutil.rmtree(cache2, ignore_errors=True)
    p1 = sh([conv, "-q", "--debuginfod", url, "--cache-dir", cache, "--pprof", direct, data],
            timeout=120, env=conv_env(work), cwd=work)
    p2 = sh([conv, "-q", "-n", "--pprof", raw, data], timeout=120, env=conv_env(work), cwd=work)
    p3 = sh([conv, "symbolize", "-q", "--debuginfod", url, "--cache-dir", cache2, raw], timeout=120,
            env=conv_env(work), cwd=work)
    if not check("pprof: conv --no-symbolize, then conv symbolize --debuginfod URL with an empty cache",
                 p1.returncode == 0 and p2.returncode == 0 and p3.returncode == 0 and os.path.exists(named),
                 err(p1) + err(p2) + err(p3)):
        return
    a, b = pprof_stacks.samples(direct), pprof_stacks.samples(named)
    check("pprof: after conv symbolize every sample's stack (names, inline frames, lines), labels and "
          "values equal the direct conversion's (%d samples)" % sum(a.values()), a == b, pprof_stacks.diff(a, b))
    # JFR: the recording -n wrote, named by conv symbolize, against the direct one (sym.jfr)
    shutil.rmtree(cache2, ignore_errors=True)
    rawj, namedj = os.path.join(work, "nosym2.jfr"), os.path.join(work, "nosym2.symbolized.jfr")
    p2 = sh([conv, "-q", "-n", "--jfr", rawj, data], timeout=120, env=conv_env(work), cwd=work)
    p3 = sh([conv, "symbolize", "-q", "--debuginfod", url, "--cache-dir", cache2, rawj], timeout=120,
            env=conv_env(work), cwd=work)
    if not check("JFR: conv --no-symbolize, then conv symbolize --debuginfod URL with an empty cache",
                 p2.returncode == 0 and p3.returncode == 0 and os.path.exists(namedj), err(p2) + err(p3)):
        return
    ev = ["print", "--events", "jdk.ExecutionSample", "--stack-depth", "256"]
    a = sh(["jfr"] + ev + [os.path.join(work, "sym.jfr")], timeout=120)
    b = sh(["jfr"] + ev + [namedj], timeout=120)
    check("JFR: after conv symbolize, jfr print shows every sample as for the direct conversion (names, "
          "inline frames, lines, kernel frames)", a.returncode == 0 and a.stdout == b.stdout and
          b"burn_inner" in b.stdout, err(a) + err(b))
    other = ["print", "--events", "jdk.NativeLibrary,jdk.ActiveSetting,jdk.OSInformation,jdk.CPUInformation"]
    a, b = sh(["jfr"] + other + [rawj], timeout=120), sh(["jfr"] + other + [namedj], timeout=120)
    check("JFR: the other events are unchanged", a.returncode == 0 and a.stdout == b.stdout)
    # several chunks (each with its own pools): the same
    rawc, namedc = os.path.join(work, "chunks.jfr"), os.path.join(work, "chunks.symbolized.jfr")
    directc = os.path.join(work, "chunks-direct.jfr")
    p1 = sh([conv, "-q", "--jfr-chunk-size", "8k", "--debuginfod", url, "--cache-dir", cache2, "--jfr", directc, data],
            timeout=120, env=conv_env(work), cwd=work)
    p2 = sh([conv, "-q", "-n", "--jfr-chunk-size", "8k", "--jfr", rawc, data], timeout=120, env=conv_env(work), cwd=work)
    p3 = sh([conv, "symbolize", "-q", "--debuginfod", url, "--cache-dir", cache2, rawc], timeout=120,
            env=conv_env(work), cwd=work)
    nchunks = sh(["jfr", "summary", rawc], timeout=120).stdout.decode(errors="replace")
    m = re.search(r"Chunks: (\d+)", nchunks)
    a = sh(["jfr"] + ev + [directc], timeout=120)
    b = sh(["jfr"] + ev + [namedc], timeout=120)
    check("JFR in %s chunks of 8 KiB: after conv symbolize, jfr print shows every sample as for the direct "
          "conversion" % (m.group(1) if m else "?"), p1.returncode == 0 and p2.returncode == 0 and
          p3.returncode == 0 and m and int(m.group(1)) > 1 and a.returncode == 0 and a.stdout == b.stdout,
          err(p1) + err(p2) + err(p3) + err(b))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: test_jfr_symbols.py CONV WORKDIR")
    where = ts.enter_netns()
    conv = os.path.abspath(sys.argv[1])
    work = os.path.abspath(sys.argv[2])
    # an earlier run's files play no part (JFRSYM_REUSE_DATA=1 keeps its recording)
    keep = os.path.join(work, "workload.data")
    if os.environ.get("JFRSYM_REUSE_DATA") == "1" and os.path.exists(keep):
        for n in os.listdir(work):
            if n != "workload.data":
                x = os.path.join(work, n)
                shutil.rmtree(x, ignore_errors=True) if os.path.isdir(x) and not os.path.islink(x) \
                    else os.unlink(x)
    else:
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work, exist_ok=True)
    note("network: " + where)
    for tool, pkg in [("perf", "linux-perf"), ("jfr", "openjdk-17-jdk-headless"),
                      ("debuginfod", "debuginfod"), ("addr2line", "binutils"),
                      ("readelf", "binutils"), ("objcopy", "binutils"), ("strip", "binutils"),
                      ("objdump", "binutils")]:
        if not shutil.which(tool):
            skip_all("%s is not installed (Debian package %s)" % (tool, pkg))
    if not (shutil.which("clang") or shutil.which("gcc") or os.environ.get("CC")):
        skip_all("no C compiler (clang or gcc)")
    probe = os.path.join(work, "probe.data")
    p = sh(["perf", "record", "-N", "-q", "-e", "cpu-clock", "-o", probe, "--", "true"], timeout=30,
           env=perf_env())
    if p.returncode != 0:
        skip_all("perf cannot record here (needs root or perf_event_paranoid <= 1): %s" % err(p, 300))
    os.unlink(probe)

    # -- build ---------------------------------------------------------------------------
    p = sh(["sh", BUILD, work], timeout=120)
    if not check("jfr_symbols_build.sh builds, strips and splits workload + libwork.so",
                 p.returncode == 0, err(p, 1500)):
        finish()
    for l in p.stdout.decode().splitlines():
        note(l)
    ids = {}
    with open(os.path.join(work, "buildids")) as f:
        for l in f:
            n, b = l.split()
            ids[n] = b
    unstripped = {n: os.path.join(work, "unstripped", n) for n in BINS}
    binpath = {n: os.path.join(work, "bin", n) for n in BINS}
    for n in BINS:
        r1, r2, r3 = readelf_buildid(binpath[n]), readelf_buildid(unstripped[n]), eu_buildid(binpath[n])
        check("%s: readelf -n build-id of the stripped and unstripped file agree (%s)" % (n, r1),
              r1 and r1 == r2 == ids.get(n) and (r3 is None or r3 == r1), (r1, r2, r3, ids.get(n)))
    bid2bin = {ids[n]: n for n in BINS}
    leaks = [q for b in ids.values() for q in ("/usr/lib/debug/.build-id/%s/%s.debug" % (b[:2], b[2:]),
                                               "/usr/lib/debug/.build-id/%s/%s" % (b[:2], b[2:]))
             if os.path.exists(q)]
    check("no /usr/lib/debug file for the two build-ids", not leaks, leaks)
    home = os.path.join(work, "home")
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)

    # -- record --------------------------------------------------------------------------
    data = os.path.join(work, "workload.data")
    # JFRSYM_REUSE_DATA=1 (debugging): keep WORKDIR/workload.data of an earlier run (the build
    # is reproducible: same build-ids)
    reuse = os.environ.get("JFRSYM_REUSE_DATA") == "1" and os.path.exists(data)
    for x in ((data, data + ".old") if not reuse else ()):
        if os.path.exists(x):
            os.unlink(x)
    rec = ["perf", "record", "-N", "-q", "--buildid-all", "-e", "cpu-clock", "-F", "999", "-g",
           "-o", data, "--", binpath["workload"], "1000"]
    p = sh(["true"]) if reuse else sh(rec, timeout=60, env=perf_env(), cwd=work)
    if p.returncode != 0 or not os.path.exists(data):
        skip_all("perf record failed here (needs root or perf_event_paranoid <= 1): %s" % err(p, 300))
    note("recorded %s (%d bytes)" % (data, os.path.getsize(data)))

    # -- the real debuginfod -------------------------------------------------------------
    server, url, lines = ts.start_debuginfod(work, lifetime=int(max(60, DEADLINE - time.time() + 30)))

    try:
        if not url:
            e = lines.pop()
            if server.returncode == 3:
                skip_all("debuginfod is not usable: " + e.strip())
            check("debuginfod serves the .debug files and stripped binaries by build-id", False,
                  " ".join(lines) + e[-800:])
            finish()
        for l in lines:
            note("debuginfod: " + l)
        log = os.path.join(work, "debuginfod.log")

        cache = os.path.join(work, "cache")
        shutil.rmtree(cache, ignore_errors=True)
        sym_jfr = os.path.join(work, "sym.jfr")
        mark = os.path.getsize(log) if os.path.exists(log) else 0
        t0 = time.time()
        p = sh([conv, "-q", "--debuginfod", url, "--cache-dir", cache, "--jfr", sym_jfr, data],
               timeout=120, env=conv_env(work), cwd=work)
        if not check("conv --debuginfod URL --cache-dir DIR --jfr sym.jfr (%.1f s)" % (time.time() - t0),
                     p.returncode == 0 and os.path.exists(sym_jfr), err(p)):
            finish()
        got = served_200(log, mark, set(ids.values()))
        check("conv fetched both .debug files from debuginfod (GET /buildid/ID/debuginfo 200)",
              set(ids.values()) <= got, "served 200: %s, want %s" % (sorted(got), sorted(ids.values())))
        # info: the symbolization report of the same run (the cache is warm now)
        pi = sh([conv, "info", "--json", "--top", "5", "--debuginfod", url, "--cache-dir", cache, data],
                timeout=120, env=conv_env(work), cwd=work)
        try:
            info = json.loads(pi.stdout) if pi.returncode == 0 else {}
        except ValueError:
            info = {}
        nsamples = sum(e.get("samples", 0) for e in info.get("events", []) if e.get("name") == "cpu-clock")
        srcs = (info.get("symbolization") or {}).get("sources", {})
        note("conv info: %d cpu-clock samples; frames by source %s" % (nsamples, json.dumps(srcs)))
        resymbolized(conv, work, data, url, cache)
    finally:
        ts.stop_server(server, 15)

    nosym_jfr = os.path.join(work, "nosym.jfr")
    p = sh([conv, "-q", "--offline", "--no-symbolize", "--cache-dir", os.path.join(work, "cache-nosym"),
            "--jfr", nosym_jfr, data], timeout=120, env=conv_env(work), cwd=work)
    if not check("conv --no-symbolize --jfr nosym.jfr", p.returncode == 0 and os.path.exists(nosym_jfr), err(p)):
        finish()
    off_jfr = os.path.join(work, "offline.jfr")
    empty = os.path.join(work, "cache-empty")
    shutil.rmtree(empty, ignore_errors=True)
    p = sh([conv, "-q", "--offline", "--cache-dir", empty, "--jfr", off_jfr, data],
           timeout=120, env=conv_env(work), cwd=work)
    if check("control: conv --offline with an empty cache", p.returncode == 0, err(p)):
        txt, e = jfr_text(off_jfr)
        found = sorted({n for n in HIDDEN if txt and re.search(r"\b%s\.%s\(" % (re.escape(EXPECT[n]), n), txt)})
        check("control: without the server conv finds none of %s (no other source of debug info)"
              % ",".join(HIDDEN), txt is not None and not found, e if txt is None else found)

    # -- read the JFRs back ------------------------------------------------------------------
    symd, e = jfr_json(sym_jfr)
    if not check("jfr print --json reads sym.jfr", symd, e):
        finish()
    nosd, e = jfr_json(nosym_jfr)
    if not check("jfr print --json reads nosym.jfr", nosd, e):
        finish()
    sym_ev, sym_libs = symd
    nos_ev, nos_libs = nosd
    note("samples: sym.jfr %d, nosym.jfr %d, conv info %d" % (len(sym_ev), len(nos_ev), nsamples))
    check("both JFRs hold one jdk.ExecutionSample per sample of conv info (%d)" % nsamples,
          len(sym_ev) == len(nos_ev) == nsamples and nsamples > 0, (len(sym_ev), len(nos_ev), nsamples))
    sym_text, e = jfr_text(sym_jfr)
    check("jfr print (text) reads sym.jfr", sym_text, e)
    nos_text, e = jfr_text(nosym_jfr)
    check("jfr print (text) reads nosym.jfr", nos_text, e)
    sym_text, nos_text = sym_text or "", nos_text or ""

    sframes = [frames_of(ev) for ev in sym_ev]
    nframes = [frames_of(ev) for ev in nos_ev]
    aligned = len(sym_ev) == len(nos_ev) and all(
        a.get("startTime") == b.get("startTime") and tid_of(a) == tid_of(b) for a, b in zip(sym_ev, nos_ev))
    if not check("sym.jfr and nosym.jfr list the samples in the same order (time, thread)", aligned):
        finish()

    # -- perf's raw call chains, matched to the JFR samples by thread and time ------------------
    samples, mmaps, forks, pd = perf_dump(data)
    if not check("perf report -D reads the recording (%d samples, %d MMAP2)" % (len(samples), len(mmaps)),
                 len(samples) == len(nos_ev) and mmaps, err(pd, 300)):
        finish()
    jt = [jfr_ns(ev.get("startTime")) for ev in nos_ev]
    shift = min(jt) - min(s_["time"] for s_ in samples) if None not in jt else 0
    by_key = {(s_["tid"], s_["time"]): s_ for s_ in samples}
    match = [by_key.get((tid_of(ev), t - shift)) if t is not None else None for ev, t in zip(nos_ev, jt)]
    if not check("every JFR sample is a perf sample of the same thread at the same time (+ a constant)",
                 None not in match and len({id(m) for m in match}) == len(match),
                 "%d of %d unmatched" % (match.count(None), len(match))):
        finish()
    segs, bid_of_path = {}, {}
    for mm in mmaps:
        path = mm["path"]
        if path not in segs and path.startswith("/") and os.path.isfile(path):
            segs[path] = load_segments(path)
            bid_of_path[path] = readelf_buildid(path)
    # objects whose build-id the recording has (conv writes <remote> frames for those)
    known = {l.get("buildId") for l in nos_libs if l.get("buildId")} & {b for b in bid_of_path.values() if b}
    by_pid = collections.defaultdict(list)
    for mm in mmaps:
        by_pid[mm["pid"]].append(mm)

    def elf_of(pid, t, ip, entry=False):
        """(build-id, ELF address) of runtime address ip in process pid at time t, from perf's
        MMAP2 records and readelf -l; None outside the objects of known. entry: the user IP
        saved at kernel entry, which inside execve (the new image's maps already recorded,
        the call not returned) is still the caller's, in the image the exec replaced: the
        parent's mappings of a forked child, when its own do not hold it (as conv and perf
        name it)."""
        own = [m for m in by_pid.get(pid, []) if m["time"] <= t]
        if not own and pid in forks:  # forked, not exec'd yet: the parent's mappings
            ppid, ft = forks[pid]
            return elf_of(ppid, ft, ip)
        hit = [m for m in own if m["start"] <= ip < m["start"] + m["len"]]
        if not hit and entry and pid in forks:
            ppid, ft = forks[pid]
            return elf_of(ppid, ft, ip)
        if not hit:
            return None
        m = max(hit, key=lambda x: x["time"])
        if bid_of_path.get(m["path"]) not in known:
            return None
        bias = bias_of(segs[m["path"]], m["start"], m["pgoff"])
        return None if bias is None else (bid_of_path[m["path"]], ip - bias)

    def perf_frames(smp):
        """[(role, (bid, elf) or None)] of the user frames: role leaf (the sample's IP), intr
        (the interrupted user IP of a sample taken in the kernel: an exact address, not a
        return address) or caller (return address - 1)."""
        out, seen, ctx, kern = [], False, "user", False
        for a in smp["chain"] or [smp["ip"]]:
            if a >= CTX_MAX:
                ctx = "kernel" if a == 0xffffffffffffff80 else "user" if a == 0xfffffffffffffe00 else "other"
                continue
            if a == 0:
                continue
            role = "leaf" if not seen else "intr" if (kern and ctx == "user" and
                                                      not any(r == "intr" for r, _ in out)) else "caller"
            seen = True
            if ctx == "kernel" or a >= 0xffff800000000000:
                kern = True
                continue
            if ctx == "user":
                out.append((role, elf_of(smp["pid"], smp["time"], a - (1 if role == "caller" else 0),
                                         role == "intr")))
        return out

    pf = [perf_frames(m) for m in match]

    def first_user(fr):
        """index of the frame right after the last Kernel frame, or None."""
        k = [j for j, f in enumerate(fr) if f["type"] == "Kernel"]
        return k[-1] + 1 if k and k[-1] + 1 < len(fr) else None

    # samples whose interrupted user IP lies in an object of known: checked apart (check 3b).
    # The kernel was entered by an interrupt or exception (the user IP is the exact address of
    # the next instruction to run, or of the faulting one) or by a syscall (the user IP follows
    # the syscall instruction: also a return address, so - 1 as for callers is right too)
    intr = {}
    for i, (fr, pfr) in enumerate(zip(nframes, pf)):
        want = [x for r, x in pfr if r == "intr" and x]
        j = first_user(fr)
        if want:
            got = None
            entry = sframes[i][j - 1]["name"] if j is not None else None
            if j is not None:
                m = REMOTE_DESC.match(fr[j]["desc"] or "")
                got = (fr[j]["cls"], int(m.group(1), 16)) if m else (fr[j]["cls"], fr[j]["name"])
            if entry and re.match(r"^entry_SYSCALL|^entry_INT80|^entry_SYSENTER", entry) and \
                    got == (want[0][0], want[0][1] - 1):
                want[0] = got  # either is right after a syscall
            intr[i] = (want[0], got, j, entry)
    intr_ours = {i for i, (w, _, _, _) in intr.items() if w[0] in bid2bin}

    # -- 1. names, lines, inline frames, kernel frames in sym.jfr ------------------------------
    for fn, b in sorted(EXPECT.items()):
        lines_ = [int(x) for x in re.findall(r"^\s+%s\.%s\(\) line: (\d+)$" % (re.escape(b), fn), sym_text, re.M)]
        # line 0 is right where the line table says 0 (clang emits such rows, and a sample may
        # land on one): check 2 compares every frame's line with addr2line's at its address
        check("sym: jfr print shows %s.%s() with a line number > 0 (%d frames, %d with line 0, lines %s)"
              % (b, fn, len(lines_), lines_.count(0), sorted(set(lines_))[:6]),
              any(x > 0 for x in lines_), "frames %d, lines %s" % (len(lines_), sorted(set(lines_))))
    bad_type = collections.Counter((f["cls"], f["type"], f["desc"]) for fr in sframes for f in fr
                                   if f["cls"] in BINS and (f["type"] != "Native" or f["desc"] != "()L;"))
    check("sym: frames of the two binaries are Native with descriptor ()L;", not bad_type,
          list(bad_type.items())[:5])
    inl_stacks = sum(1 for fr in sframes if any(
        a["cls"] == "workload" and a["name"] == INLINE[0] and b["cls"] == "workload" and b["name"] == INLINE[1]
        for a, b in zip(fr, fr[1:])))
    check("sym: %s is a frame directly above %s in %d stacks (inlined)" % (INLINE + (inl_stacks,)),
          inl_stacks > 0)

    kframes = [f for fr in sframes for f in fr if f["type"] == "Kernel"]
    kstacks = collections.Counter()
    for ev, fr in zip(sym_ev, sframes):
        k = tuple(f["name"] for f in fr if f["type"] == "Kernel")
        if k:
            kstacks[(tid_of(ev), k)] += 1
    note("kernel frames in sym.jfr: %d in %d samples" % (len(kframes), sum(kstacks.values())))
    if not kframes:
        skip("sym: kernel frames", "this recording has no kernel samples (cpu-clock caught none "
             "in the kernel); nothing to check")
    else:
        badk = [f for f in kframes if f["cls"] != "" or f["desc"] != "(Lk;)L;" or f["line"] != 0
                or not f["name"] or f["name"].startswith("0x")]
        check("sym: %d kernel frames are type Kernel, class \"\", (Lk;)L;, a kallsyms name, line 0"
              % len(kframes), not badk, badk[:3])
        ktext = re.findall(r"^\s+\.([A-Za-z_][\w.]*)\(k\) line: 0$", sym_text, re.M)
        check("sym: jfr print shows the kernel frames as .NAME(k) line: 0 (%d)" % len(ktext),
              len(ktext) == len(kframes), "text %d, json %d" % (len(ktext), len(kframes)))
        pk, pn, pp = perf_kernel_stacks(data)
        if pn != len(sym_ev):
            check("perf script reads the recording (%d samples)" % pn, False, err(pp, 300))
        else:
            diff = (kstacks - pk) + (pk - kstacks)
            check("sym: kernel call chains equal perf script's (%d samples)" % sum(pk.values()),
                  not diff, "conv-only %s; perf-only %s" % (list((kstacks - pk).items())[:3],
                                                           list((pk - kstacks).items())[:3]))

    # -- 2. remote frames in nosym.jfr, resolved by addr2line ---------------------------------------
    named = collections.Counter((f["cls"], f["name"]) for fr in nframes for f in fr if f["cls"] in BINS)
    check("nosym: no frame of the two binaries carries a name", not named, list(named.items())[:5])
    remote = collections.Counter()
    badr = []
    for fr in nframes:
        for f in fr:
            if f["cls"] in bid2bin:
                m = REMOTE_DESC.match(f["desc"] or "")
                if f["name"] != "<remote>" or not m or f["type"] != "Native" or f["line"] != 0:
                    badr.append(f)
                else:
                    remote[(f["cls"], int(m.group(1), 16))] += 1
    per_bin = collections.Counter(bid2bin[b] for b, _ in remote.elements())
    check("nosym: frames of workload (%d) and libwork.so (%d) are <build-id>.<remote>(0x...), Native, line 0"
          % (per_bin["workload"], per_bin["libwork.so"]),
          not badr and per_bin["workload"] > 0 and per_bin["libwork.so"] > 0, badr[:3])
    for n in BINS:
        t = len(re.findall(r"^\s+%s\.<remote>\(0x[0-9a-f]+\) line:" % ids[n], nos_text, re.M))
        check("nosym: jfr print shows %s.<remote>(0x...) frames for %s (%d)" % (ids[n], n, t), t > 0)

    a2l = {}
    for n in BINS:
        offs = {o for b, o in remote if bid2bin[b] == n} | {w[1] for w, _, _, _ in intr.values() if w[0] == ids[n]}
        res = addr2line(unstripped[n], offs)
        for o in offs:
            a2l[(ids[n], o)] = res.get(o, [])
    # addresses addr2line cannot name (no DWARF, no sized symbol: the PLT): conv may leave
    # them <remote> or name the PLT entry as objdump does (clock_gettime@plt), nothing else
    unnamed = {}
    for (b, o), v in a2l.items():
        if not v or v[0][0] == "??":
            alt = {"<remote>(L0x%x;)L;" % o}
            plt = plt_name(unstripped[bid2bin[b]], o)
            if plt:
                alt.add(plt)
            unnamed[(b, o)] = frozenset(alt)
    note("distinct remote offsets: %d (workload %d, libwork.so %d); addr2line -i gives inline chains "
         "(> 1 frame) for %d of them" % (len(remote), sum(1 for b, _ in remote if bid2bin[b] == "workload"),
                                          sum(1 for b, _ in remote if bid2bin[b] == "libwork.so"),
                                          sum(1 for k in remote if len(a2l.get(k, [])) > 1)))
    if unnamed:
        note("offsets addr2line has no name for (conv may leave them <remote> or name the PLT "
             "entry): %s" % ", ".join("%s:0x%x (%s)" % (bid2bin[b], o, "|".join(sorted(v)))
                                      for (b, o), v in sorted(unnamed.items())))
    left = collections.Counter((f["cls"], f["desc"]) for i, fr in enumerate(sframes) if i not in intr_ours
                               for f in fr if f["cls"] in bid2bin and
                               (f["cls"], int(REMOTE_DESC.match(f["desc"]).group(1), 16)
                                if REMOTE_DESC.match(f["desc"] or "") else None) not in unnamed)
    check("sym: no <remote> frame left for the two build-ids where addr2line has a name "
          "(samples of 3b apart)", not left, list(left.items())[:5])

    def ours_sym(fr):
        out = []
        for f in fr:
            if f["cls"] in BINS:
                out.append((f["cls"], f["name"], f["line"]))
            elif f["cls"] in bid2bin:
                out.append((bid2bin[f["cls"]], "<remote>" + (f["desc"] or ""), 0))
        return out

    def ours_a2l(fr, first=None):
        """the remote frames of the two binaries expanded by addr2line; first replaces the
        first of them (the interrupted IP, as perf has it)."""
        out = []
        for f in fr:
            if f["cls"] in bid2bin:
                m = REMOTE_DESC.match(f["desc"] or "")
                key = (f["cls"], int(m.group(1), 16)) if m else None
                if first:
                    key, first = first, None
                if key in unnamed:
                    out.append((bid2bin[f["cls"]], unnamed[key], 0))
                else:
                    out += [(bid2bin[f["cls"]], fn, ln) for fn, ln in a2l.get(key, [("?", 0)])]
            elif f["cls"] in BINS:
                out.append((f["cls"], f["name"], f["line"]))
        return out

    def same_frames(got, want, lines=True):
        """got [(bin, name, line)] against want, whose name may be a set of alternatives."""
        return len(got) == len(want) and all(
            g[0] == w[0] and (g[1] in w[1] if isinstance(w[1], frozenset) else g[1] == w[1]) and
            (not lines or g[2] == w[2]) for g, w in zip(got, want))

    def shown(w):
        return (w[0], "|".join(sorted(w[1])), w[2]) if isinstance(w[1], frozenset) else w

    name_bad, line_bad, frames_cmp, inl_fn = [], [], 0, collections.Counter()
    for i, (sf, nf) in enumerate(zip(sframes, nframes)):
        if i in intr_ours:
            continue
        got, want = ours_sym(sf), ours_a2l(nf)
        for f in nf:
            m = REMOTE_DESC.match(f["desc"] or "")
            if f["cls"] in bid2bin and m:
                inl_fn.update(fn for fn, _ in a2l.get((f["cls"], int(m.group(1), 16)), [])[:-1])
        frames_cmp += len(want)
        if not same_frames(got, want, lines=False):
            name_bad.append((i, [g[:2] for g in got], [shown(w)[:2] for w in want]))
        elif not same_frames(got, want):
            line_bad.append((i, got, [shown(w) for w in want]))
    note("compared %d frames of the two binaries in %d samples (%d samples whose interrupted user IP "
         "is in them are checked in 3b); inline frames by addr2line -i: %s"
         % (frames_cmp, len(sframes) - len(intr_ours), len(intr_ours), dict(inl_fn)))
    check("per sample: conv's function names = addr2line -f -i of the remote offsets (%d frames)"
          % frames_cmp, not name_bad and frames_cmp > 0,
          "%d samples differ, e.g. %s" % (len(name_bad), name_bad[:2]))
    check("per sample: conv's line numbers = addr2line's (the %d samples whose names agree)"
          % (len(sframes) - len(intr_ours) - len(name_bad)), not line_bad,
          "%d samples differ, e.g. %s" % (len(line_bad), line_bad[:2]))
    check("addr2line -i finds %s inlined (into %s) at remote offsets, as conv does" % INLINE,
          inl_fn[INLINE[0]] > 0, dict(inl_fn))
    nz = sum(1 for fr in sframes for f in fr if f["cls"] in BINS and f["line"] and f["line"] > 0)
    z = sum(1 for fr in sframes for f in fr if f["cls"] in BINS and not f["line"])
    note("frames of the two binaries with a line number > 0: %d; with line 0: %d" % (nz, z))

    # system libraries: only those with a debug file in /usr/lib/debug (conv's usr_lib_debug
    # source). conv names a function after its .symtab symbol, as perf does (e.g.
    # clock_gettime@@GLIBC_2.17), addr2line after DWARF (__GI___clock_gettime): the outermost
    # name of each address is not compared, its inline frames and every line are.
    sys_bids = {}
    for lib in nos_libs:
        b, name = lib.get("buildId") or "", lib.get("name") or ""
        if b in known and b not in bid2bin and \
                os.path.isfile("/usr/lib/debug/.build-id/%s/%s.debug" % (b[:2], b[2:])):
            sys_bids[b] = os.path.basename(name)
    if sys_bids:
        sa2l = {}
        for b in sys_bids:
            offs = {int(REMOTE_DESC.match(f["desc"]).group(1), 16) for fr in nframes for f in fr
                    if f["cls"] == b and REMOTE_DESC.match(f["desc"] or "")}
            res = addr2line("/usr/lib/debug/.build-id/%s/%s.debug" % (b[:2], b[2:]), offs)
            for o in offs:
                sa2l[(b, o)] = res.get(o, [])
        cls_of = {v: k for k, v in sys_bids.items()}
        bad, cmpd, unres = [], 0, 0
        for i, (sf, nf) in enumerate(zip(sframes, nframes)):
            if i in intr:
                continue
            # an address conv leaves <remote> (no sized symbol: ld.so's _start, size 0, which
            # addr2line stretches) is not compared: its sample is left out
            if any(f["cls"] in sys_bids for f in sf):
                unres += 1
                continue
            got = [(f["cls"], f["name"], f["line"]) for f in sf if f["cls"] in cls_of]
            want, outer = [], []
            for f in nf:
                m = REMOTE_DESC.match(f["desc"] or "")
                if f["cls"] in sys_bids and m:
                    ch = sa2l.get((f["cls"], int(m.group(1), 16))) or [("??", 0)]
                    # glibc declares its internal functions with an asm name (hidden_proto:
                    # _Fork is __GI__Fork): addr2line prints that linkage name, conv the
                    # DW_AT_name when the linkage name is not a mangled one; the same function
                    want += [(sys_bids[f["cls"]], re.sub(r"^__GI_", "", fn), ln) for fn, ln in ch]
                    outer += [k == len(ch) - 1 for k in range(len(ch))]
            cmpd += len(want)
            # the outermost function of each address: named by conv from .symtab (not compared)
            if len(got) != len(want) or any(
                    g[0] != w[0] or g[2] != w[2] or (not o and g[1] != w[1])
                    for g, w, o in zip(got, want, outer)):
                bad.append((i, got, want))
        check("per sample: system library frames (%s; debug files in /usr/lib/debug) = addr2line -f -i "
              "(%d frames; lines and inline frames, not .symtab names; %d samples with a <remote> "
              "system frame left out)" % (",".join(sorted(set(sys_bids.values()))), cmpd, unres), not bad,
              "%d samples differ, e.g. %s" % (len(bad), bad[:2]))
    else:
        skip("system libraries", "no /usr/lib/debug file for libc/ld.so here: their frames are not compared")

    # -- 3. jdk.NativeLibrary, and the remote offsets against perf's raw addresses -----------------
    for lib_set, label in ((nos_libs, "nosym"), (sym_libs, "sym")):
        for n in BINS:
            evs = [l for l in lib_set if l.get("name") == binpath[n]]
            bad = []
            for l in evs:
                base, top, bias = l.get("baseAddress"), l.get("topAddress"), l.get("loadBias")
                mm = [m for m in mmaps if m["path"] == binpath[n] and m["start"] == base
                      and m["start"] + m["len"] == top]
                want = bias_of(segs[binpath[n]], mm[0]["start"], mm[0]["pgoff"]) if mm else None
                if l.get("buildId") != ids[n] or not (base < top) or not mm or bias != want:
                    bad.append({"event": l, "mmap2": mm[:1], "expected loadBias": want})
            nproc = len({m["pid"] for m in mmaps if m["path"] == binpath[n]})
            check("%s: jdk.NativeLibrary of %s: %d events (%d processes mapped it), buildId = readelf's, "
                  "base < top = a perf MMAP2, loadBias = start - pgoff + p_offset - p_vaddr"
                  % (label, n, len(evs), nproc), evs and len(evs) >= nproc and not bad, bad[:2])
    outside = []
    for (b, o), c in remote.items():
        libs = [l for l in nos_libs if l.get("buildId") == b]
        if not any(l["baseAddress"] <= o + l["loadBias"] < l["topAddress"] for l in libs):
            outside.append("%s:0x%x" % (bid2bin[b], o))
    check("nosym: every remote offset + loadBias lies in [baseAddress, topAddress) of a NativeLibrary "
          "of its build-id (%d offsets)" % len(remote), not outside, outside[:5])

    nobid = sorted({os.path.basename(p) for p, b in bid_of_path.items() if b and b not in known})
    if nobid:
        note("objects without a build-id in the recording (not compared): %s" % ", ".join(nobid))
    names = {b: os.path.basename(p) for p, b in bid_of_path.items() if b in known}
    bad, nfr = [], 0
    for i, (fr, pfr) in enumerate(zip(nframes, pf)):
        j = intr[i][2] if i in intr else None
        got = []
        for k, f in enumerate(fr):
            m = REMOTE_DESC.match(f["desc"] or "")
            if f["cls"] in known and m and k != j:
                got.append((f["cls"], int(m.group(1), 16)))
        want = [x for r, x in pfr if x and r != "intr"]
        nfr += len(want)
        if got != want:
            bad.append((i, [(names[b], hex(o)) for b, o in got], [(names[b], hex(o)) for b, o in want]))
    check("nosym: per sample, the remote frames = perf report -D's raw call chain mapped to ELF "
          "addresses here (leaf as is, callers - 1, interrupted user IPs in 3b; %d frames of %s)"
          % (nfr, ",".join(sorted(set(names.values())))), not bad,
          "%d samples differ, e.g. %s" % (len(bad), bad[:2]))

    # 3b. samples taken in the kernel: the first user address (regs->ip) is, after an interrupt
    # or exception, the instruction the CPU was about to run (or the faulting one), not a
    # return address: its ELF address is exact, and conv's name for it is the function at that
    # address; after a syscall it is also the return address of the syscall (- 1 accepted)
    if not intr:
        skip("3b: interrupted user IP of kernel samples", "no kernel sample of this recording "
             "interrupted code of an object with a build-id (%d kernel samples)" % sum(kstacks.values()))
    else:
        kinds = collections.Counter("syscall" if e and e.startswith("entry_") else "interrupt/exception"
                                    for _, _, _, e in intr.values())
        wrong = [(i, e, names.get(w[0], w[0]), hex(w[1]),
                  g and (names.get(g[0], g[0]), g[1] if isinstance(g[1], str) else hex(g[1])))
                 for i, (w, g, _, e) in sorted(intr.items()) if g != w]
        check("3b: kernel samples: the user IP is written as its exact ELF address after an interrupt "
              "or exception (after a syscall also as return address - 1) (%s)"
              % ", ".join("%d %s" % (v, k) for k, v in sorted(kinds.items())), not wrong,
              "%d differ (sample, kernel entry, object, expected, conv wrote), e.g. %s"
              % (len(wrong), wrong[:4]))
        if intr_ours:
            diff = []
            for i in sorted(intr_ours):
                got, want = ours_sym(sframes[i]), ours_a2l(nframes[i], first=intr[i][0])
                if not same_frames(got, want):
                    diff.append((i, got, [shown(w) for w in want]))
            check("3b: ... and sym.jfr names it as addr2line does at that address (%d samples)"
                  % len(intr_ours), not diff, "%d differ, e.g. %s" % (len(diff), diff[:2]))
    finish()


if __name__ == "__main__":
    main()
