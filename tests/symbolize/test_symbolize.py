#!/usr/bin/env python3
"""conv names the functions of stripped binaries as perf does with their debug
info installed, fetching that debug info from a real debuginfod by build-id.

  1. build.sh OUTDIR: a PIE + shared library (an always_inline helper inlined
     into a hot function), a non-PIE executable, an lld-linked PIE whose text
     PT_LOAD has a file offset that is not page aligned, a Go binary with a GNU
     build-id, a Rust binary (when rustc is there); stripped --strip-all, debug
     info split into OUTDIR/debug/NAME.debug, .gnu_debuglink added.
  2. record.sh OUTDIR: perf record -g of each stripped binary.
  3. perf's side (runs whatever conv can do): the stripped binaries alone do
     not give perf the hot names; with the .debug files in a private build-id
     cache perf names every hot function (perf_reference.py), exactly as with
     the unstripped binaries (--symfs); addr2line finds the inlined helpers at
     the hot leaf addresses.
  4. serve_debuginfod.sh: the real debuginfod on 127.0.0.1 over OUTDIR's
     .debug files and stripped executables, waited for until it serves all.
  5. conv: `CONV info --json --top 20 --debuginfod URL --cache-dir OUTDIR/cache
     FILE` per program: its top_functions must equal perf's (same names, same
     samples per name; ties may reorder), with the inlined helper listed in its
     caller's "inlined". Run again with the same cache: no request for our
     build-ids may reach the server. The server stopped: `--offline` with that
     cache gives the same answer, and `--offline` with an empty cache must not
     produce the hot names (nothing else on this machine has them), while
     `--offline --debug-dir OUTDIR/debug-dir` (a .build-id/XX/REST.debug tree)
     must equal perf again.

All of it runs in a private network namespace (unshare -n; loopback only) when
the kernel allows it, since debuginfod 0.188 listens on every interface.

  6. conv's pprof output, read here (pprof_read.py): at every sampled leaf
     address in the code of the programs built here, the function and its
     inline frames are exactly `addr2line -f -i -C -e UNSTRIPPED ADDRESS`'s,
     innermost first; so conv reports each inlined helper at exactly the
     addresses where addr2line does.

Nothing here depends on where the samples of one recording happen to land, on
the machine's speed or on an earlier run: conv is compared with perf and
addr2line on the same recording. The few checks that need the recording to
contain something (a sample in each hot function, for the checks that no
other source leaks their names; a sample on an inlined address, for the check
that conv reports the helper there) record that program again, at most
RECORD_TRIES times in all, and are reported as skipped if it still lacks it.
Subprocesses have generous timeouts against hangs; there is no time limit on
the test itself (CTest has its own). Everything is written under OUTDIR/run,
which is cleared first.

usage: test_symbolize.py [--selftest] [--programs a,b] CONV OUTDIR
  --selftest uses selftest_conv.py (perf-based, same interface) as CONV to test
  this harness (the checks on conv's pprof output are then skipped). Prints
  testlib's ok/FAIL/skip lines and "N passed, M failed[, K skipped]"; exits 1
  on any failure, 77 when it cannot run at all (perf cannot record, a tool
  is missing: "SKIP: reason") or every check was skipped.
"""
import argparse
import collections
import fcntl
import glob
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
sys.dont_write_bytecode = True
import perf_reference as pr  # noqa: E402
import pprof_read  # noqa: E402
import pprof_stacks  # noqa: E402
import testlib as t  # noqa: E402

TOP = 20
RECORD_TRIES = 3  # recordings of one program at most, when one lacks what a check needs
HANG = 600        # seconds: a subprocess that takes longer is stuck, not slow

# The hot functions of each program, as perf names them (demangled).
HOT = {
    "pie_main": ["hot_mix", "hot_hash", "hot_collatz", "pie_spin"],
    "nopie": ["nopie_xorshift", "nopie_modsum", "__popcountdi2"],
    "lldhot": ["lld_crc32", "lld_newton"],
    "gohot": ["main.goPrimes", "main.goFib"],
    "rshot": ["rs_scramble", "hot::rs_digits"],
}
# Hot functions whose names only the debug info has: the stripped binaries
# keep no symbol for them (libhot_run, the one export, is not hot).
HIDDEN = HOT
# function -> the helper the compiler inlined into it.
INLINED = {
    "pie_main": {"hot_mix": "mix_round"},
    "lldhot": {"lld_crc32": "crc_byte"},
    "rshot": {"rs_scramble": "hot::rs_step"},
}


def own_code(binary, function):
    """True for the functions whose source is in src/ (or, for the C binaries,
    everything linked in: crt files and libgcc have no inline frames).

    conv is held to addr2line's frames there. Outside them the two readers of
    DWARF legitimately differ: in Go's runtime binutils repeats the caller where
    libdw names the inlined callee (internal/cpu.processOptions at 0x4010a1:
    addr2line [processOptions, processOptions], conv [indexByte,
    processOptions]), and Rust's std has identical-code-folded generics whose
    one address carries several names. Which functions are "ours" is fixed by
    the program, not by where samples landed."""
    if binary == "gohot":
        return function.startswith("main.")
    if binary == "rshot":
        return function == "rs_scramble" or function.startswith("hot::")
    return True
TOOLS = {"lldhot": ("ld.lld", "lld"), "gohot": ("go", "golang-go"), "rshot": ("rustc", "rustc")}

check, skip, note, finish = t.check, t.skip, t.note, t.finish
cannot_run = t.skip_all


def sh(cmd, timeout=HANG, env=None, cwd=None):
    return t.sh(cmd, timeout=timeout, env=env, cwd=cwd)


def start_debuginfod(out, lifetime=3 * HANG):
    """serve_debuginfod.sh over out on a free port of 127.0.0.1: (process, URL or None, the lines
    it printed; when it gave no URL, its stderr last and the process ended, exit 3: no debuginfod)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    # LIFETIME only bounds a server this script failed to stop
    env = dict(os.environ, LIFETIME=str(lifetime), INDEX_TIMEOUT=str(HANG))
    server = subprocess.Popen([os.path.join(HERE, "serve_debuginfod.sh"), out, str(port)],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env)
    url, lines = None, []
    while True:
        line = server.stdout.readline().decode()
        if not line:
            break
        lines.append(line.strip())
        if line.startswith("URL "):
            url = line.split()[1]
            break
    if not url:
        lines.append(server.stderr.read().decode(errors="replace"))
        stop_server(server, 15)
    return server, url, lines


def stop_server(server, timeout=60):
    """Ends a server process (None: none): SIGTERM, SIGKILL after timeout s."""
    if server and server.poll() is None:
        server.terminate()
        try:
            server.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


# -- network namespace -------------------------------------------------------------

def lo_up():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        ifr = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(s, 0x8913, ifr))[1]  # SIOCGIFFLAGS
        fcntl.ioctl(s, 0x8914, struct.pack("16sH", b"lo", flags | 1))  # SIOCSIFFLAGS, IFF_UP
    finally:
        s.close()


def enter_netns():
    """Re-runs the running script (sys.argv[0], so that other tests can use this too)
    under `unshare -n` once; returns a note."""
    if os.environ.get("SYMBOLIZE_NETNS") == "1":
        lo_up()
        return "private network namespace (loopback only)"
    if os.environ.get("SYMBOLIZE_NETNS") == "0" or not shutil.which("unshare"):
        return "host network namespace"
    if sh(["unshare", "-n", "true"], timeout=10).returncode != 0:
        return "host network namespace (unshare -n not permitted)"
    env = dict(os.environ, SYMBOLIZE_NETNS="1")
    sys.stdout.flush()
    os.execvpe("unshare", ["unshare", "-n", sys.executable, os.path.abspath(sys.argv[0])] + sys.argv[1:], env)
    return ""  # not reached


# -- perf's side --------------------------------------------------------------------

def perf_names_stripped(out, name):
    """perf report's names with no debug info at all (empty HOME)."""
    home = os.path.join(out, "perf-home-none")
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    rows = pr.report(os.path.join(out, name + ".data"), pr.perf_env(home), out, [])
    return {r[2] for r in rows}


def reference(out, name, method="buildid-cache"):
    p = sh([sys.executable, os.path.join(HERE, "perf_reference.py"), "--method", method, out, name])
    if p.returncode:
        return None, p.stderr.decode(errors="replace")
    return json.loads(p.stdout), ""


def lacking(ref, n):
    """What recording n lacks for the checks that need it: hot functions perf
    (with the debug info) gives no sample, and (function, helper) pairs with no
    sample on an address where addr2line puts the helper inside the function."""
    got = {e["name"] for e in ref["top"] if e["samples"] > 0}
    cold = [h for h in HOT[n] if h not in got]
    no_inline = [(fn, helper) for fn, helper in INLINED.get(n, {}).items()
                 if not any(same_inline(h, helper) and c > 0
                            for h, c in ref["inline"].get(fn, {}).items())]
    return cold, no_inline


def ours(ref, out):
    """{name: samples} of the entries of ref in the binaries built here."""
    bins = set(pr.buildids(out))
    return {e["name"]: e["samples"] for e in ref["top"] if e["dsos"] and set(e["dsos"]) <= bins}


def same_inline(a, b):
    return a == b or a.rsplit("::", 1)[-1] == b.rsplit("::", 1)[-1]


# -- conv's side --------------------------------------------------------------------

UNRESOLVED = re.compile(r"^(0x[0-9a-fA-F]+|\[unknown\].*|.*\+0x[0-9a-f]+)$")


def conv_env(out):
    env = dict(os.environ)
    for k in ("DEBUGINFOD_URLS", "DEBUGINFOD_CACHE_PATH", "XDG_CACHE_HOME"):
        env.pop(k, None)
    env["HOME"] = os.path.join(out, "conv-home")
    os.makedirs(env["HOME"], exist_ok=True)
    return env


def run_conv(conv, out, data, *extra):
    cmd = conv + ["info", "--json", "--top", str(TOP)] + list(extra) + [data]
    t0 = time.time()
    p = sh(cmd, env=conv_env(out), cwd=out)
    dt = time.time() - t0
    if p.returncode:
        return None, "exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace").strip()[-600:]), dt
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        return None, "not JSON: %s" % e, dt
    top = doc.get("top_functions")
    if not isinstance(top, list):
        return None, "no top_functions key", dt
    return doc, "", dt


def conv_pprof(conv, out, data, *extra):
    """conv's pprof output of data: (path, error)."""
    pb = data[:-5] + ".pb.gz"
    p = sh(conv + ["-q", "--pprof", pb] + list(extra) + [data], env=conv_env(out), cwd=out)
    if p.returncode:
        return None, "conv exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace")[-300:])
    return pb, ""


def pprof_top(out, pb, index=0):
    """conv's pprof output read back with go tool pprof: {function: flat value}."""
    go = shutil.which("go")
    empty = os.path.join(out, "pprof-empty")
    os.makedirs(empty, exist_ok=True)
    env = dict(os.environ, HOME=empty, PPROF_BINARY_PATH=empty, GOCACHE=os.path.join(out, "gocache"))
    unit = ["-unit=nanoseconds"] if index == 1 else []
    r = sh([go, "tool", "pprof", "-top", "-noinlines", "-nodecount=1000",
                 "-nodefraction=0", "-edgefraction=0"] + unit +
           ["-sample_index=%d" % index, "-symbolize=none", pb], env=env)
    if r.returncode:
        return None, "go tool pprof: %s" % r.stderr.decode(errors="replace")[-300:]
    flat = {}
    for line in r.stdout.decode(errors="replace").splitlines():
        m = re.match(r"\s*(\d+)(?:ns)?\s+[\d.]+%\s+[\d.]+%\s+\d+(?:ns)?\s+[\d.]+%\s+(.*\S)\s*$", line)
        if m:
            flat[m.group(2)] = flat.get(m.group(2), 0) + int(m.group(1))
    return flat, ""


def elf_loads(path):
    """[(p_offset, p_vaddr, p_filesz)] of the PT_LOADs of a 64-bit little-endian ELF file."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
            return []
        phoff, = struct.unpack_from("<Q", head, 0x20)
        phentsize, phnum = struct.unpack_from("<HH", head, 0x36)
        f.seek(phoff)
        ph = f.read(phentsize * phnum)
    segs = []
    for i in range(phnum):
        p_type, _, off, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", ph, i * phentsize)
        if p_type == 1:
            segs.append((off, vaddr, filesz))
    return segs


def leaf_frames(pb, out, ids):
    """{binary: {(ELF address, (function, ...)): samples}} of the leaf frames of
    conv's pprof output in the binaries built here: the runtime address made an
    ELF virtual address through the pprof mapping (start, file offset) and the
    binary's program headers, and conv's names there, innermost first."""
    prof = pprof_read.read(pb)
    by_id = {bid: name for name, bid in ids.items()}
    loads = {}
    per = collections.defaultdict(collections.Counter)
    for locs, vals in prof["samples"]:
        if not locs:
            continue
        mid, addr, names = prof["locations"][locs[0]]
        m = prof["mappings"].get(mid)
        name = by_id.get(m["build_id"]) if m else None
        if not name:
            continue
        if name not in loads:
            loads[name] = elf_loads(os.path.join(out, "unstripped", name))
        fo = addr - m["start"] + m["offset"]
        va = next((v + fo - o for o, v, sz in loads[name] if o <= fo < o + sz), None)
        per[name][(va, tuple(names))] += vals[0] if vals else 0
    return per


def inline_vs_addr2line(per, out, n):
    """conv's frames at every sampled leaf address against addr2line -f -i -C
    on the unstripped binary: (addresses compared, differences, addresses
    outside own_code, where[(function, helper)] = (addr2line's address set,
    conv's address set))."""
    compared, diff, outside = 0, [], 0
    where = {pair: (set(), set()) for pair in INLINED.get(n, {}).items()}
    for name, c in sorted(per.items()):
        addrs = sorted({va for va, _ in c if va is not None})
        a2l = pr.addr2line(os.path.join(out, "unstripped", name), addrs)
        for (va, names), cnt in sorted(c.items(), key=lambda kv: (kv[0][0] or 0, kv[0][1])):
            if va is None:
                diff.append("%s: conv's address is in no PT_LOAD of the file (%s, %d samples)"
                            % (name, names, cnt))
                continue
            want = a2l.get(va) or ["??"]
            if want[-1] == "??":
                continue  # in no function's DWARF (PLT, padding): nothing to compare
            if not own_code(name, want[-1]):
                outside += 1
                continue
            compared += 1
            if list(names) != want:
                diff.append("%s 0x%x (%d samples): conv %s, addr2line %s" % (name, va, cnt, list(names), want))
            for (fn, helper), (a_set, c_set) in where.items():
                if want[-1] == fn and any(same_inline(h, helper) for h in want[:-1]):
                    a_set.add((name, va))
                if names and names[-1] == fn and any(same_inline(h, helper) for h in names[:-1]):
                    c_set.add((name, va))
    return compared, diff, outside, where


def resymbolized(conv, out, data, pb, url, n):
    """7. conv --no-symbolize, then conv symbolize with an empty cache and the debug
    info on the server only: the samples (labels, values, stacks with every line)
    equal the direct conversion's."""
    raw = data[:-5] + ".n.pb.gz"
    named = data[:-5] + ".n.symbolized.pb.gz"
    cache2 = os.path.join(out, "cache-resym")
    shutil.rmtree(cache2, ignore_errors=True)
    p = sh(conv + ["-q", "-n", "--pprof", raw, data], env=conv_env(out), cwd=out)
    if not check("%s: conv --no-symbolize writes its pprof" % n, p.returncode == 0,
                 p.stderr.decode(errors="replace")[-300:]):
        return
    p = sh(conv + ["symbolize", "--stats", "--debuginfod", url, "--cache-dir", cache2, raw],
           env=conv_env(out), cwd=out)
    st = json.loads(p.stdout.splitlines()[0]) if p.returncode == 0 and p.stdout else {}
    if not check("%s: conv symbolize names it (%s of %s locations, %s from debuginfod)"
                 % (n, st.get("named"), st.get("locations"), st.get("sources", {}).get("debuginfod")),
                 p.returncode == 0 and os.path.exists(named) and st.get("named", 0) > 0,
                 p.stderr.decode(errors="replace")[-400:]):
        return
    a, b = pprof_stacks.samples(pb), pprof_stacks.samples(named)
    check("%s: after conv symbolize, every sample's stack (names, inline frames, lines), labels and "
          "values equal the direct conversion's (%d samples)" % (n, sum(a.values())), a == b,
          pprof_stacks.diff(a, b))
    go = shutil.which("go")
    if go:
        empty = os.path.join(out, "pprof-empty")
        os.makedirs(empty, exist_ok=True)
        g = sh([go, "tool", "pprof", "-raw", "-symbolize=none", named],
               env=dict(os.environ, HOME=empty, PPROF_BINARY_PATH=empty, GOCACHE=os.path.join(out, "gocache")))
        check("%s: go tool pprof reads the symbolized profile" % n, g.returncode == 0, g.stderr[-300:])
    # the same for JFR: conv -n --jfr, conv symbolize, against a direct --jfr conversion
    jfr = shutil.which("jfr") or next(iter(sorted(glob.glob("/usr/lib/jvm/*/bin/jfr"))), None)
    if not jfr:
        skip("%s: JFR after conv symbolize" % n, "no jfr (a JDK) here")
        return
    direct, rawj = data[:-5] + ".direct.jfr", data[:-5] + ".n.jfr"
    namedj = data[:-5] + ".n.symbolized.jfr"
    shutil.rmtree(cache2, ignore_errors=True)
    p1 = sh(conv + ["-q", "--debuginfod", url, "--cache-dir", os.path.join(out, "cache"), "--jfr", direct, data],
            env=conv_env(out), cwd=out)
    p2 = sh(conv + ["-q", "-n", "--jfr", rawj, data], env=conv_env(out), cwd=out)
    p3 = sh(conv + ["symbolize", "-q", "--debuginfod", url, "--cache-dir", cache2, rawj], env=conv_env(out), cwd=out)
    if not check("%s: JFR: conv -n, then conv symbolize --debuginfod URL with an empty cache" % n,
                 p1.returncode == 0 and p2.returncode == 0 and p3.returncode == 0 and os.path.exists(namedj),
                 (p1.stderr + p2.stderr + p3.stderr).decode(errors="replace")[-400:]):
        return
    ev = ["print", "--events", "jdk.ExecutionSample", "--stack-depth", "256"]
    a, b = sh([jfr] + ev + [direct]), sh([jfr] + ev + [namedj])
    check("%s: JFR: after conv symbolize, jfr print shows every sample exactly as for the direct conversion "
          "(names, inline frames, lines, frame types)" % n, a.returncode == 0 and a.stdout == b.stdout and
          a.stdout.count(b"jdk.ExecutionSample") > 0, (a.stderr + b.stderr).decode(errors="replace")[-300:])
    other = ["print", "--events", "jdk.NativeLibrary,jdk.ActiveSetting,jdk.OSInformation,jdk.CPUInformation"]
    a, b = sh([jfr] + other + [rawj]), sh([jfr] + other + [namedj])
    check("%s: JFR: the other events are unchanged" % n, a.returncode == 0 and a.stdout == b.stdout)
    sm = sh([jfr, "summary", namedj])
    check("%s: JFR: jfr summary reads it" % n, sm.returncode == 0 and b"jdk.ExecutionSample" in sm.stdout)


def conv_lacks(conv, out, data, url):
    """The first option conv rejects, or None."""
    probes = [["--top", "1"], ["--top", "1", "--cache-dir", os.path.join(out, "cache-probe")],
              ["--top", "1", "--cache-dir", os.path.join(out, "cache-probe"), "--offline"],
              ["--top", "1", "--debuginfod", url],
              ["--top", "1", "--offline", "--debug-dir", os.path.join(out, "debug-dir")]]
    for args in probes:
        p = sh(conv + ["info", "--json"] + args + [data], env=conv_env(out), cwd=out)
        err = p.stderr.decode(errors="replace")
        if p.returncode == 1 and ("unknown option" in err or "usage" in err.lower()):
            m = re.search(r"unknown option '?(--[a-z-]+)", err)
            return m.group(1) if m else " ".join(args), err.strip()
        if p.returncode == 0:
            try:
                if "top_functions" not in json.loads(p.stdout):
                    return "--top (no top_functions key)", ""
            except ValueError:
                return "--json output", p.stdout[:200]
    shutil.rmtree(os.path.join(out, "cache-probe"), ignore_errors=True)
    return None, ""


def compare(ref, doc, bins):
    """Problems between perf's flat profile and conv's top_functions, as
    (ours, others): entries of the binaries built here (bins), and the rest
    (system libraries, [vdso], functions perf does not have).

    perf's artifacts (samples in no sized symbol, which perf names after the
    size-less symbol before them, e.g. _init for the PLT header) are left out
    on both sides; conv may name those samples NAME@plt or leave them unknown.
    """
    odd = {e["name"] for e in ref.get("artifacts", [])}
    odd_samples = sum(e["samples"] for e in ref.get("artifacts", []))
    # perf 6.1 prints .symtab names with their symbol version (libc6-dbg's
    # _IO_file_setbuf@@GLIBC_2.2.5); conv cuts it (issue 31)
    perf = collections.Counter()
    for e in ref["top"]:
        if e["name"] not in odd:
            perf[unversioned(e["name"])] += e["samples"]
    mine = {unversioned(e["name"]) for e in ref["top"] if e["dsos"] and set(e["dsos"]) <= bins}
    top = doc["top_functions"]
    ours, others = [], []

    def put(name, msg):
        (ours if name in mine else others).append(msg)

    # PLT stubs of system libraries: perf 6.1 pairs the i-th stub with the
    # i-th .rela.plt entry, which glibc's libc breaks (its IRELATIVE stubs
    # come first, their relocations last), so it names them "@plt" or after
    # the wrong function; conv reads each stub's GOT slot (checked against
    # objdump in test_symbolize's test_plt). Those names are not compared.
    def sys_plt(n):
        return isinstance(n, str) and n.endswith("@plt") and n not in mine
    skipped = {n for n in perf if sys_plt(n)}
    perf = {n: s for n, s in perf.items() if n not in skipped}
    conv = [(e.get("name"), e.get("samples")) for e in top]
    resolved = [(n, s) for n, s in conv if isinstance(n, str) and not UNRESOLVED.match(n)
                and n not in odd and not sys_plt(n)
                and not (n.endswith("@plt") and isinstance(s, int) and s <= odd_samples)]
    seen = set()
    for n, s in resolved:
        if n in seen:
            put(n, "%s listed twice" % n)
        seen.add(n)
        if n not in perf:
            put(n, "%s: conv %s, perf has no such function" % (n, s))
        elif perf[n] != s:
            put(n, "%s: conv %s samples, perf %d" % (n, s, perf[n]))
    keys = [(-(s if isinstance(s, int) else 0), n or "") for n, s in conv]
    if keys != sorted(keys):
        ours.append("not sorted by samples desc, name")
    if len(top) > TOP:
        ours.append("%d entries for --top %d" % (len(top), TOP))
    boundary = min((s for _, s in conv if isinstance(s, int)), default=0) if len(top) >= TOP else 0
    for n, p in perf.items():
        if p > boundary and n not in seen:
            put(n, "%s: perf %d samples, missing from conv" % (n, p))
    return ours, others


def inlined_of(doc):
    return {e.get("name"): list(e.get("inlined") or []) for e in doc["top_functions"]}


SENTINEL = "0" * 40  # a build-id nobody has


def debuginfod_requests(logpath, start, url):
    """[(build-id, kind, status)] of the /buildid requests in the log after byte start,
    once the server has logged every request made before this call.

    debuginfod logs a request after answering it, so the requests of a conv that
    has exited may not be in the log yet. This asks for SENTINEL's debuginfo
    and waits (HANG s at most) for that request in the log: the earlier ones
    were answered before it was even sent."""
    try:
        urllib.request.urlopen("%s/buildid/%s/debuginfo" % (url, SENTINEL), timeout=HANG).read()
    except (urllib.error.URLError, OSError):
        pass  # 404 is the answer
    t0 = time.time()
    while True:
        with open(logpath, "rb") as f:
            f.seek(start)
            txt = f.read().decode(errors="replace")
        reqs = re.findall(r"GET /buildid/([0-9a-f]+)/(\w+)\S* (\d{3})", txt)
        if any(b == SENTINEL for b, _, _ in reqs) or time.time() - t0 > HANG:
            return [r for r in reqs if r[0] != SENTINEL]
        time.sleep(0.05)


def log_size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def record(out, names):
    """record.sh OUTDIR NAMES: None, or why it failed."""
    p = sh([os.path.join(HERE, "record.sh"), out] + list(names))
    if p.returncode:
        msg = p.stderr.decode(errors="replace").strip().splitlines()
        return msg[-1] if msg else "exit %d" % p.returncode
    return None


def unversioned(name):
    at = name.find("@") if isinstance(name, str) else -1
    return name if at <= 0 or name.endswith("@plt") else name[:at]


def perf_can_record(out):
    """None if perf records user-space samples here, else why not."""
    probe = os.path.join(out, "probe.data")
    p = sh(["perf", "record", "-N", "-q", "-e", "cpu-clock:u", "-o", probe, "--", "true"])
    if p.returncode:
        msg = p.stderr.decode(errors="replace").strip().splitlines()
        return "perf record failed here: %s" % (msg[-1] if msg else p.returncode)
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--programs")
    ap.add_argument("conv", nargs="?")
    ap.add_argument("outdir")
    a = ap.parse_args()
    where = enter_netns()
    # ours alone, and nothing an earlier run left may count: cleared every time
    out = os.path.join(os.path.abspath(a.outdir), "run")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    if a.selftest:
        conv = [sys.executable, os.path.join(HERE, "selftest_conv.py")]
    elif not a.conv:
        ap.error("CONV is required (or --selftest)")
    else:
        conv = [os.path.abspath(a.conv)]
    note("network: " + where)

    for tool, pkg in [("perf", "linux-perf"), ("gcc", "gcc"), ("objcopy", "binutils"),
                      ("addr2line", "binutils"), ("debuginfod", "debuginfod")]:
        if not shutil.which(tool):
            cannot_run("%s is not installed (Debian package %s)" % (tool, pkg))
    why = perf_can_record(out)
    if why:
        cannot_run(why)

    # 1. build
    t0 = time.time()
    p = sh([os.path.join(HERE, "build.sh"), out])
    if not check("build.sh builds, strips and splits every program", p.returncode == 0,
                 p.stderr.decode(errors="replace")[-1500:]):
        finish()
    note("build: %.1f s" % (time.time() - t0))
    for line in p.stdout.decode().splitlines():
        note(line)
    ids = pr.buildids(out)
    progs = [n for n in HOT if n in ids]
    for n, (tool, pkg) in TOOLS.items():
        if n not in ids:
            skip(n, "%s not found or not usable (Debian package %s): %s" % (
                tool, pkg, " ".join(l for l in p.stderr.decode(errors="replace").splitlines()
                                    if n in l or tool in l)[-300:]))
    if a.programs:
        progs = [n for n in progs if n in a.programs.split(",")]

    # 2. record
    why = record(out, progs)
    if not check("record.sh records every program", why is None, why):
        finish()

    # 3. perf's side
    refs = {}
    for n in progs:
        # a recording that lacks a sample the checks below need is made again
        for attempt in range(1, RECORD_TRIES + 1):
            ref, err = reference(out, n)
            if ref is None:
                break
            cold, no_inline = lacking(ref, n)
            if not (cold or no_inline) or attempt == RECORD_TRIES:
                break
            note("%s: recording %d has no sample in %s; recording again" % (
                n, attempt, ", ".join(cold + ["%s inlined into %s" % (h, f) for f, h in no_inline])))
            why = record(out, [n])
            if why:
                ref, err = None, "record.sh: " + why
                break
        if not check("%s: perf report with the .debug files in a build-id cache" % n, ref, err):
            continue
        refs[n] = ref
        total = ref["total_samples"]
        note("%s: %d samples; perf: %s" % (n, total, ", ".join(
            "%s %d" % (e["name"], e["samples"]) for e in ref["top"][:8])))
        cold, no_inline = lacking(ref, n)
        for h in cold:
            skip("%s: %s has samples" % (n, h), "none in %d recordings" % RECORD_TRIES)
        for fn, helper in no_inline:
            skip("%s: a sample on an address where %s is inlined into %s" % (n, helper, fn),
                 "none in %d recordings" % RECORD_TRIES)
        present = [h for h in HIDDEN[n] if h not in cold]
        if present:
            bare = perf_names_stripped(out, n)
            leaked = [h for h in present if h in bare]
            check("%s: the stripped binaries alone give perf none of the hot names %s" % (n, present),
                  not leaked, leaked)
        truth, err = reference(out, n, "symfs")
        if truth is not None:
            # perf names a sample "sym+0xOFF" when no sized symbol covers it; which
            # symbol it stretches depends on how it found the file (seen with Go's
            # runtime), so such single samples are left out of this comparison and
            # conv is compared with the --symfs view, perf's most exact one
            def plain(d):
                return {k: v for k, v in d.items() if not re.search(r"\+0x[0-9a-f]+$", k)}
            mine, theirs = ours(ref, out), ours(truth, out)
            odd = sum(v for k, v in mine.items() if k not in plain(mine))
            close = all(abs(mine.get(k, 0) - theirs.get(k, 0)) <= odd
                        for k in set(plain(mine)) | set(plain(theirs)))
            check("%s: same as perf with the unstripped binaries (--symfs)" % n,
                  plain(mine) == plain(theirs) or close,
                  "build-id cache %s, symfs %s" % (mine, theirs))
            if plain(mine) != plain(theirs):
                note("%s: perf's two views differ by %d stretched-symbol sample(s); "
                     "comparing conv with --symfs" % (n, odd))
                refs[n] = truth
        else:
            check("%s: perf with the unstripped binaries (--symfs)" % n, False, err)
        # (in the programs' own functions: see own_code for where the two readers of
        # DWARF differ, which is not conv's business)
        mism = [m for m in ref["inline_mismatch"] if own_code(n, m["addr2line"])]
        check("%s: addr2line's outermost frame at each leaf in its own code is perf's symbol" % n,
              not mism, mism)
        if len(mism) != len(ref["inline_mismatch"]):
            note("%s: addr2line and perf name %d leaves outside the program's own functions "
                 "differently (not compared): %s" % (n, len(ref["inline_mismatch"]) - len(mism),
                                                     ref["inline_mismatch"]))
        if ref["artifacts"]:
            note("%s: perf names samples outside every sized symbol after the symbol before "
                 "them (ignored): %s" % (n, ref["artifacts"]))
        if ref["inline"]:
            note("%s: inline frames at leaf addresses: %s" % (n, json.dumps(ref["inline"])))

    # 4. the real debuginfod
    server, url, lines = start_debuginfod(out)
    if not check("debuginfod serves every .debug file and executable by build-id", url,
                 " ".join(lines) if not url else ""):
        finish()
    for l in lines:
        note("debuginfod: " + l)
    log = os.path.join(out, "debuginfod.log")

    try:
        # 5. conv
        if not progs:
            finish()
        first = os.path.join(out, progs[0] + ".data")
        lacking_opt, err = conv_lacks(conv, out, first, url)
        if lacking_opt:
            check("conv lacks %s: `conv info --json --top N --debuginfod URL --cache-dir DIR "
                  "[--offline]` is needed for the conv checks" % lacking_opt, False, err[-300:])
            finish()
        bins = set(ids)
        cache = os.path.join(out, "cache")
        shutil.rmtree(cache, ignore_errors=True)
        results = {}
        for n in progs:
            if n not in refs:
                continue
            data = os.path.join(out, n + ".data")
            mark = log_size(log)
            doc, err, dt = run_conv(conv, out, data, "--debuginfod", url, "--cache-dir", cache)
            pb, perr = (None, "--selftest: the stand-in writes no pprof") if a.selftest else \
                conv_pprof(conv, out, data, "--debuginfod", url, "--cache-dir", cache)
            if a.selftest:
                skip("%s: conv's pprof output" % n, perr)
            elif not check("%s: conv writes its pprof output" % n, pb, perr):
                pass
            elif not shutil.which("go"):
                skip("%s: pprof output read back with go tool pprof" % n, "go is not installed")
            elif doc:
                flat, perr = pprof_top(out, pb)
                # functions with one sample are left out: go tool pprof shortens some
                # system-library names (e.g. clone suffixes) that perf keeps
                want = {e["name"]: e["samples"] for e in doc["top_functions"] if e["samples"] > 1}
                got = {k: v for k, v in (flat or {}).items() if k in want}
                check("%s: pprof output's flat samples per function equal the top %d (go tool pprof -top)"
                      % (n, TOP), flat is not None and got == want, perr or {"pprof": got, "top": want})
                # the weighted value (sum of sample periods, ns) against perf's Period column
                wflat, werr = pprof_top(out, pb, index=1)
                # the functions of the programs built here (system code is compared by count above)
                perf_w = {e["name"]: e.get("period") for e in refs[n]["top"]
                          if e["samples"] > 1 and e["dsos"] and set(e["dsos"]) <= bins}
                top20 = [k for k, _ in sorted(perf_w.items(), key=lambda kv: -kv[1])][:TOP]
                wgot = {k: (wflat or {}).get(k) for k in top20}
                check("%s: pprof's weighted value per function equals perf's period (top %d)"
                      % (n, TOP), wflat is not None and wgot == {k: perf_w[k] for k in top20},
                      werr or {"pprof": wgot, "perf": {k: perf_w[k] for k in top20}})
            if pb:
                # 6. every sampled address, frame by frame, against addr2line
                compared, diff, outside, where = inline_vs_addr2line(leaf_frames(pb, out, ids), out, n)
                name = "%s: at each of the %d sampled leaf addresses in its own code, conv's function " \
                       "and inline frames are addr2line -f -i's" % (n, compared)
                if compared or diff:
                    check(name, not diff, "; ".join(diff[:8]))
                else:
                    skip(name, "no sample in the program's own code")
                if outside:
                    note("%s: %d sampled addresses outside the program's own functions (Go runtime, "
                         "Rust std) not compared" % (n, outside))
                for (fn, helper), (a_set, c_set) in sorted(where.items()):
                    name = "%s: conv reports %s inlined into %s exactly where addr2line does" % (n, helper, fn)
                    if not a_set:
                        skip(name, "no sample on such an address in %d recordings" % RECORD_TRIES)
                    else:
                        check(name + " (%d addresses)" % len(a_set), a_set == c_set,
                              {"addr2line only": sorted("0x%x" % v for _, v in a_set - c_set),
                               "conv only": sorted("0x%x" % v for _, v in c_set - a_set)})
            if pb and not a.selftest:
                resymbolized(conv, out, data, pb, url, n)
            if not check("%s: conv runs with --debuginfod (%.1f s)" % (n, dt), doc, err):
                continue
            results[n] = doc
            asked = {b for b, _, st in debuginfod_requests(log, mark, url) if st == "200"}
            # conv needs the debug info of every binary built here that has a sample (its
            # leaf in it, as perf reports); those with frames in call chains only may be
            # fetched too
            sampled = {d for e in refs[n]["top"] for d in e["dsos"]} | \
                      {u["dso"] for u in refs[n]["unresolved"]}
            mine = {ids[x] for x in ids if x in sampled}
            if not mine:
                skip("%s: conv fetched the debug info of every sampled binary" % n,
                     "no sample in a binary built here")
            else:
                check("%s: conv fetched the debug info of every sampled binary from debuginfod (%s)"
                      % (n, ", ".join(sorted(x for x in ids if ids[x] in mine))), mine <= asked,
                      "build-ids served: %s, wanted %s" % (sorted(asked), sorted(mine)))
            mine_p, other_p = compare(refs[n], doc, bins)
            check("%s: conv's top %d equals perf's for the functions of the binaries built here"
                  % (n, TOP), not mine_p, "; ".join(mine_p))
            check("%s: ... and for the rest (system libraries, vdso)" % n, not other_p, "; ".join(other_p))
            # conv info's "inlined" per function: addr2line's frames at the leaves perf
            # attributes to it, in the functions of the programs' own source
            diff = {}
            built = {e["name"] for e in refs[n]["top"] if e["dsos"] and set(e["dsos"]) <= bins}
            for e in doc["top_functions"]:
                fname = e.get("name")
                if fname not in built or not any(own_code(d, fname) for d in
                                                 next(x["dsos"] for x in refs[n]["top"] if x["name"] == fname)):
                    continue
                want = sorted(refs[n]["inline"].get(fname, {}))
                if sorted(set(e.get("inlined") or [])) != want:
                    diff[fname] = {"conv": e.get("inlined"), "addr2line": want}
            check("%s: each function's inlined frames (conv info) are addr2line -i's at its sampled leaves"
                  % n, not diff, diff)
            # the same again from the cache
            mark = log_size(log)
            doc2, err, dt = run_conv(conv, out, data, "--debuginfod", url, "--cache-dir", cache)
            reqs = debuginfod_requests(log, mark, url)
            again = [r for r in reqs if r[0] in ids.values()]
            others = [r for r in reqs if r[0] not in ids.values()]
            check("%s: a second run is served from the cache (%.1f s, no request for our build-ids)"
                  % (n, dt), doc2 and not again, err or again)
            if others:
                note("%s: the second run asked again for %d build-ids the server does not have "
                     "(no negative caching): %s" % (n, len(others), sorted({r[0] for r in others})))
            if doc2:
                check("%s: the cached run gives the same top functions" % n,
                      doc2["top_functions"] == doc["top_functions"])
        stop_server(server)
        for n, doc in results.items():
            data = os.path.join(out, n + ".data")
            doc3, err, dt = run_conv(conv, out, data, "--offline", "--cache-dir", cache)
            check("%s: --offline with the cache, server stopped, gives the same top functions" % n,
                  doc3 and doc3["top_functions"] == doc["top_functions"], err or (doc3 or {}).get("top_functions"))
            empty = os.path.join(out, "cache-empty")
            shutil.rmtree(empty, ignore_errors=True)
            doc4, err, dt = run_conv(conv, out, data, "--offline", "--cache-dir", empty)
            names = {e.get("name") for e in (doc4 or {}).get("top_functions", [])}
            # the hidden names conv found with the debug info: without it none may show
            found = [h for h in HIDDEN[n] if h in {e.get("name") for e in doc["top_functions"]}]
            leaked = [h for h in found if h in names]
            if found:
                check("%s: --offline with an empty cache finds none of %s (no other source of debug info)"
                      % (n, found), doc4 and not leaked, err or leaked)
            else:
                skip("%s: --offline with an empty cache finds no hot names" % n,
                     "no hot function has a sample")
            shutil.rmtree(empty, ignore_errors=True)
            doc5, err, dt = run_conv(conv, out, data, "--offline", "--cache-dir", empty,
                                     "--debug-dir", os.path.join(out, "debug-dir"))
            probs = sum(compare(refs[n], doc5, bins), []) if doc5 else [err]
            check("%s: --offline --debug-dir OUTDIR/debug-dir (.build-id tree) equals perf too" % n,
                  not probs, "; ".join(probs))
    finally:
        stop_server(server)
    finish()


if __name__ == "__main__":
    main()
