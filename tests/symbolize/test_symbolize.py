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

usage: test_symbolize.py [--selftest] [--programs a,b] CONV OUTDIR
  --selftest uses selftest_conv.py (perf-based, same interface) as CONV to test
  this harness. Prints ok/FAIL/SKIP lines and "N passed, M failed"; exits 1 on
  any failure. SKIP (exit 0) when perf cannot record or debuginfod is missing.
"""
import argparse
import fcntl
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import perf_reference as pr  # noqa: E402

TOP = 20
DEADLINE = time.time() + 170  # the whole suite stays under 3 minutes

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
# function -> the helper the compiler inlined into it (where most of its
# samples land).
INLINED = {
    "pie_main": {"hot_mix": "mix_round"},
    "lldhot": {"lld_crc32": "crc_byte"},
    "rshot": {"rs_scramble": "hot::rs_step"},
}
# Programs whose every inline frame conv must list exactly as addr2line does.
# Rust's are std generics whose spelling differs between DWARF's DW_AT_name
# and the demangled linkage name addr2line prints, so only the helper counts.
EXACT_INLINE = {"pie_main", "nopie", "lldhot", "gohot"}
TOOLS = {"lldhot": ("ld.lld", "lld"), "gohot": ("go", "golang-go"), "rshot": ("rustc", "rustc")}

passed = failed = skipped = 0


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    print(("ok   " if cond else "FAIL ") + name + ("" if cond or not detail else "  -- " + str(detail)))
    sys.stdout.flush()
    return cond


def skip(name, why):
    global skipped
    skipped += 1
    print("SKIP %s  -- %s" % (name, why))


def note(msg):
    print("     " + msg)


def finish():
    print("%d passed, %d failed" % (passed, failed) + (", %d skipped" % skipped if skipped else ""))
    sys.exit(1 if failed else 0)


def sh(cmd, timeout=120, env=None, cwd=None):
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=timeout, env=env, cwd=cwd)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, 124, e.stdout or b"", (e.stderr or b"") + b"\ntimed out")


def time_left():
    return DEADLINE - time.time()


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
    """Re-runs this script under `unshare -n` once; returns a note."""
    if os.environ.get("SYMBOLIZE_NETNS") == "1":
        lo_up()
        return "private network namespace (loopback only)"
    if os.environ.get("SYMBOLIZE_NETNS") == "0" or not shutil.which("unshare"):
        return "host network namespace"
    if sh(["unshare", "-n", "true"], timeout=10).returncode != 0:
        return "host network namespace (unshare -n not permitted)"
    env = dict(os.environ, SYMBOLIZE_NETNS="1")
    sys.stdout.flush()
    os.execvpe("unshare", ["unshare", "-n", sys.executable, os.path.abspath(__file__)] + sys.argv[1:], env)
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
    p = sh(cmd, timeout=max(10, min(90, time_left())), env=conv_env(out), cwd=out)
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


def pprof_top(conv, out, data, *extra, index=0):
    """conv's pprof output of data, read back with go tool pprof: {function: flat value}."""
    go = shutil.which("go")
    if not go:
        return None, "go is not installed"
    pb = data[:-5] + ".pb.gz"
    p = sh(conv + ["-q", "--pprof", pb] + list(extra) + [data],
           timeout=max(10, min(90, time_left())), env=conv_env(out), cwd=out)
    if p.returncode:
        return None, "conv exit %d: %s" % (p.returncode, p.stderr.decode(errors="replace")[-300:])
    empty = os.path.join(out, "pprof-empty")
    os.makedirs(empty, exist_ok=True)
    env = dict(os.environ, HOME=empty, PPROF_BINARY_PATH=empty, GOCACHE=os.path.join(out, "gocache"))
    unit = ["-unit=nanoseconds"] if index == 1 else []
    r = sh([go, "tool", "pprof", "-top", "-noinlines", "-nodecount=1000",
                 "-nodefraction=0", "-edgefraction=0"] + unit +
           ["-sample_index=%d" % index, "-symbolize=none", pb],
           timeout=60, env=env)
    if r.returncode:
        return None, "go tool pprof: %s" % r.stderr.decode(errors="replace")[-300:]
    flat = {}
    for line in r.stdout.decode(errors="replace").splitlines():
        m = re.match(r"\s*(\d+)(?:ns)?\s+[\d.]+%\s+[\d.]+%\s+\d+(?:ns)?\s+[\d.]+%\s+(.*\S)\s*$", line)
        if m:
            flat[m.group(2)] = flat.get(m.group(2), 0) + int(m.group(1))
    return flat, ""


def conv_lacks(conv, out, data, url):
    """The first option conv rejects, or None."""
    probes = [["--top", "1"], ["--top", "1", "--cache-dir", os.path.join(out, "cache-probe")],
              ["--top", "1", "--cache-dir", os.path.join(out, "cache-probe"), "--offline"],
              ["--top", "1", "--debuginfod", url],
              ["--top", "1", "--offline", "--debug-dir", os.path.join(out, "debug-dir")]]
    for args in probes:
        p = sh(conv + ["info", "--json"] + args + [data], timeout=60, env=conv_env(out), cwd=out)
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
    perf = {e["name"]: e["samples"] for e in ref["top"] if e["name"] not in odd}
    mine = {e["name"] for e in ref["top"] if e["dsos"] and set(e["dsos"]) <= bins}
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


def debuginfod_requests(logpath, start):
    """[(build-id, kind, status)] of the /buildid requests in the log after byte start."""
    with open(logpath, "rb") as f:
        f.seek(start)
        txt = f.read().decode(errors="replace")
    return re.findall(r"GET /buildid/([0-9a-f]+)/(\w+)\S* (\d{3})", txt)


def log_size(path):
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--programs")
    ap.add_argument("conv", nargs="?")
    ap.add_argument("outdir")
    a = ap.parse_args()
    where = enter_netns()
    out = os.path.abspath(a.outdir)
    os.makedirs(out, exist_ok=True)
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
            skip("symbolize", "%s is not installed (Debian package %s)" % (tool, pkg))
            finish()

    # 1. build
    t0 = time.time()
    p = sh([os.path.join(HERE, "build.sh"), out], timeout=150)
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
            skip(n, "%s not found (Debian package %s)" % (tool, pkg))
    if a.programs:
        progs = [n for n in progs if n in a.programs.split(",")]

    # 2. record
    p = sh([os.path.join(HERE, "record.sh"), out] + progs, timeout=120)
    if p.returncode:
        msg = p.stderr.decode(errors="replace").strip().splitlines()
        skip("symbolize", "perf record failed here: %s" % (msg[-1] if msg else p.returncode))
        finish()

    # 3. perf's side
    refs = {}
    for n in progs:
        ref, err = reference(out, n)
        if not check("%s: perf report with the .debug files in a build-id cache" % n, ref, err):
            continue
        refs[n] = ref
        total = ref["total_samples"]
        note("%s: %d samples; perf: %s" % (n, total, ", ".join(
            "%s %d" % (e["name"], e["samples"]) for e in ref["top"][:8])))
        bare = perf_names_stripped(out, n)
        leaked = [h for h in HIDDEN[n] if h in bare]
        check("%s: the stripped binaries alone give perf none of the hot names" % n, not leaked, leaked)
        got = {e["name"]: e["samples"] for e in ref["top"]}
        weak = {h: got.get(h, 0) for h in HOT[n] if got.get(h, 0) * 100 < 3 * total}
        check("%s: perf names every hot function (>= 3%% of samples each)" % n, not weak, weak)
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
        check("%s: addr2line's outermost frame at each leaf is perf's symbol" % n,
              not ref["inline_mismatch"], ref["inline_mismatch"])
        if ref["artifacts"]:
            note("%s: perf names samples outside every sized symbol after the symbol before "
                 "them (ignored): %s" % (n, ref["artifacts"]))
        for fn, helper in INLINED.get(n, {}).items():
            inl = ref["inline"].get(fn, {})
            cnt = max((c for h, c in inl.items() if same_inline(h, helper)), default=0)
            check("%s: %s is inlined into %s at %d of its %d samples (addr2line -i)" % (
                n, helper, fn, cnt, got.get(fn, 0)), cnt * 2 >= got.get(fn, 1), inl)
        if ref["inline"]:
            note("%s: inline frames at leaf addresses: %s" % (n, json.dumps(ref["inline"])))

    # 4. the real debuginfod
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    env = dict(os.environ, LIFETIME=str(int(max(30, time_left() + 20))))
    server = subprocess.Popen([os.path.join(HERE, "serve_debuginfod.sh"), out, str(port)],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env)
    url, lines = None, []
    t0 = time.time()
    while time.time() - t0 < 90:
        line = server.stdout.readline().decode()
        if not line:
            break
        lines.append(line.strip())
        if line.startswith("URL "):
            url = line.split()[1]
            break
    if not check("debuginfod serves every .debug file and executable by build-id", url,
                 " ".join(lines) + server.stderr.read().decode(errors="replace") if not url else ""):
        server.terminate()
        finish()
    for l in lines:
        note("debuginfod: " + l)
    log = os.path.join(out, "debuginfod.log")

    def stop_server():
        if server.poll() is None:
            server.terminate()
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()

    try:
        # 5. conv
        if not progs:
            finish()
        first = os.path.join(out, progs[0] + ".data")
        lacking, err = conv_lacks(conv, out, first, url)
        if lacking:
            check("conv lacks %s: `conv info --json --top N --debuginfod URL --cache-dir DIR "
                  "[--offline]` is needed for the conv checks" % lacking, False, err[-300:])
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
            flat, perr = pprof_top(conv, out, data, "--debuginfod", url, "--cache-dir", cache)
            if flat is None:
                check("%s: conv's pprof output reads back (go tool pprof)" % n, False, perr)
            elif doc:
                # functions with one sample are left out: go tool pprof shortens some
                # system-library names (e.g. clone suffixes) that perf keeps
                want = {e["name"]: e["samples"] for e in doc["top_functions"] if e["samples"] > 1}
                got = {k: v for k, v in flat.items() if k in want}
                check("%s: pprof output's flat samples per function equal the top %d (go tool pprof -top)"
                      % (n, TOP), got == want, {"pprof": got, "top": want})
                # the weighted value (sum of sample periods, ns) against perf's Period column
                wflat, werr = pprof_top(conv, out, data, "--debuginfod", url, "--cache-dir", cache,
                                        index=1)
                # the functions of the programs built here (system code is compared by count above)
                perf_w = {e["name"]: e.get("period") for e in refs[n]["top"]
                          if e["samples"] > 1 and e["dsos"] and set(e["dsos"]) <= bins}
                top20 = [k for k, _ in sorted(perf_w.items(), key=lambda kv: -kv[1])][:TOP]
                wgot = {k: (wflat or {}).get(k) for k in top20}
                check("%s: pprof's weighted value per function equals perf's period (top %d)"
                      % (n, TOP), wflat is not None and wgot == {k: perf_w[k] for k in top20},
                      werr or {"pprof": wgot, "perf": {k: perf_w[k] for k in top20}})
            if not check("%s: conv runs with --debuginfod (%.1f s)" % (n, dt), doc, err):
                continue
            results[n] = doc
            time.sleep(0.3)  # the server logs a request after answering it
            asked = {b for b, _, st in debuginfod_requests(log, mark) if st == "200"}
            mine = {ids[x] for x in ids if x == n or x == "libhot.so" and n == "pie_main"}
            check("%s: conv fetched its debug info from debuginfod" % n, mine <= asked,
                  "build-ids served: %s, wanted %s" % (sorted(asked), sorted(mine)))
            mine_p, other_p = compare(refs[n], doc, bins)
            check("%s: conv's top %d equals perf's for the functions of the binaries built here"
                  % (n, TOP), not mine_p, "; ".join(mine_p))
            check("%s: ... and for the rest (system libraries, vdso)" % n, not other_p, "; ".join(other_p))
            inl = inlined_of(doc)
            for fn, helper in INLINED.get(n, {}).items():
                check("%s: %s is in the inlined frames of %s" % (n, helper, fn),
                      any(same_inline(h, helper) for h in inl.get(fn, [])),
                      "conv: %s" % inl.get(fn))
            if n in EXACT_INLINE:
                diff = {}
                # only functions of the binaries built here: addr2line runs on their files;
                # system libraries may have debug info conv finds in /usr/lib/debug
                built = {e["name"] for e in refs[n]["top"] if e["dsos"] and set(e["dsos"]) <= bins}
                for e in doc["top_functions"]:
                    # single samples in Go's runtime (signal preemption code) are read
                    # differently by libdw and binutils; the hot functions decide
                    if e.get("name") not in built or e.get("samples", 0) < 3:
                        continue
                    want = sorted(refs[n]["inline"].get(e.get("name"), {}))
                    if sorted(set(e.get("inlined") or [])) != want:
                        diff[e.get("name")] = {"conv": e.get("inlined"), "addr2line": want}
                check("%s: every function's inlined frames equal addr2line -i's" % n, not diff, diff)
            # the same again from the cache
            mark = log_size(log)
            doc2, err, dt = run_conv(conv, out, data, "--debuginfod", url, "--cache-dir", cache)
            time.sleep(0.3)
            reqs = debuginfod_requests(log, mark)
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
            if time_left() < 20:
                check("time: the suite ran out of its 3 minutes", False)
                break
        stop_server()
        for n, doc in results.items():
            data = os.path.join(out, n + ".data")
            doc3, err, dt = run_conv(conv, out, data, "--offline", "--cache-dir", cache)
            check("%s: --offline with the cache, server stopped, gives the same top functions" % n,
                  doc3 and doc3["top_functions"] == doc["top_functions"], err or (doc3 or {}).get("top_functions"))
            empty = os.path.join(out, "cache-empty")
            shutil.rmtree(empty, ignore_errors=True)
            doc4, err, dt = run_conv(conv, out, data, "--offline", "--cache-dir", empty)
            names = {e.get("name") for e in (doc4 or {}).get("top_functions", [])}
            leaked = [h for h in HIDDEN[n] if h in names]
            check("%s: --offline with an empty cache finds no hot names (no other source of debug info)" % n,
                  doc4 and not leaked, err or leaked)
            shutil.rmtree(empty, ignore_errors=True)
            doc5, err, dt = run_conv(conv, out, data, "--offline", "--cache-dir", empty,
                                     "--debug-dir", os.path.join(out, "debug-dir"))
            probs = sum(compare(refs[n], doc5, bins), []) if doc5 else [err]
            check("%s: --offline --debug-dir OUTDIR/debug-dir (.build-id tree) equals perf too" % n,
                  not probs, "; ".join(probs))
    finally:
        stop_server()
    finish()


if __name__ == "__main__":
    main()
