#!/usr/bin/env python3
"""conv unwinds `perf record --call-graph dwarf` samples (user registers and a
copy of the user stack) as perf does, says where and why a walk stopped short,
and joins LBR call stacks as perf does (issue 20).

usage: test_unwind.py [--selftest] [--programs a,b] CONV WORKDIR [--part fixtures|corpus]

--part fixtures (recordings made here)
  1. build.sh WORKDIR/fixtures: C, C++ and Rust programs without frame pointers
     (see build.sh: libc's qsort calling back into a shared library, a SIGPROF
     handler burning CPU, recursion 24 KB deep, C++ templates/virtual calls/
     std::sort with a lambda, Rust), stripped, their debug info split off.
  2. Each is recorded for RUN_MS ms with `perf record -N -e cpu-clock -F 999
     --call-graph dwarf` (perf's default 8 KB stack copies); uw_deep also with
     `--call-graph dwarf,65528`. A recording with fewer than MIN_SAMPLES
     samples, or without what a check needs (a sample in the signal handler,
     one at the bottom of the recursion), is made again, RECORD_TRIES times
     at most; the checks that need it are skipped after that.
  3. perf's view, the reference: `perf script --no-inline --no-demangle
     --max-stack 10000 -F tid,time,ip,sym,dso` with a private HOME whose
     build-id cache holds the UNSTRIPPED binaries (`perf buildid-cache -a`)
     and this kernel's vDSO (tests/tools/vdso.py). Why unstripped: perf 6.1
     reads a DSO's CFI from the first file its build-id cache has for it, and
     a .debug file's .eh_frame is SHT_NOBITS, so with the .debug files
     there (as tests/symbolize does for names) perf unwinds no further than
     the first frame in our code; the unstripped binary is exactly the
     stripped one plus that debug info. libc's names come from libc6-dbg
     (/usr/lib/debug) for both tools. (Debian's perf 6.1 unwinds with
     libunwind, not libdw: `perf version --build-options`.)
  4. conv's view: `CONV --pprof P --jfr J --stats S --debuginfod URL
     --cache-dir C --jit-dir EMPTY FILE`, the debug info served by the real
     debuginfod on 127.0.0.1 (tests/symbolize/serve_debuginfod.sh; in a
     private network namespace when possible), the stripped binaries at
     their recorded paths. The pprof is read with tests/tools/pprofdec.py.

  Per recording:
  * samples: conv has as many as perf.
  * stacks: for >= MATCH of the samples, conv's stack equals perf's. A
    stack is compared as (thread id, number of kernel frames, the user
    frames' function names leaf first); the kernel frames come from the
    recorded callchain, not from unwinding, and are compared by number only
    (their names are tests/conformance/test_kernel_symbols.py's business).
    conv's pprof holds no sample times, so the two are compared as
    multisets: the share of samples is the sum over distinct keys of
    min(perf's count, conv's count) divided by the larger total. A sample
    whose stack is wrong moves its count to another key, so it cannot be
    hidden by another sample short of two wrong stacks swapping exactly;
    and the check needs no JFR reader (a JFR with per-sample times would
    allow matching sample by sample, but adds a JDK to what the test needs
    and conv's own JFR writer to what it trusts). Where they differ, the
    most common differing stacks are printed side by side, at the first
    frame where they part.
    Names, per frame: conv's function of the location's outermost line
    (the function the address is in; inline frames are conv's business
    and not compared) against perf's symbol, which is what conv names the
    outermost frame after (symbolize.c: the symbol table's name, perf's
    choice among aliases). perf's raw names are demangled as conv
    demangles (`c++filt -i`: libiberty with DMGL_PARAMS|DMGL_ANSI, Rust
    hashes dropped). Then, on both sides: a version or PLT suffix
    (`@@GLIBC_2.34`, `@GLIBC_2.2.5`, `@plt`) is dropped; unresolved frames
    (empty, hex, `[unknown]`, `obj+0x..`) are `[unknown]`; a frame in a PLT
    section (.plt, .plt.sec, .plt.got, .iplt) of a binary built here or of
    a system library is `[plt]` (how to name a stub is tests/symbolize's
    business; perf calls libc's IRELATIVE stubs `@plt`, conv `memcpy@plt`). Two perf
    artefacts are accounted for: (1) when perf's libunwind walk leaves the
    stack copy it ends with a frame at 0xffffffffffffffff, which is no frame
    of the program and is dropped; (2) the signal trampoline: perf (like
    conv, by the contract) looks its frame up at return address - 1, the
    nop glibc puts before __restore_rt, which no symbol covers (`[unknown]`),
    so conv's `__restore_rt` there counts as `[unknown]`. conv's trailing
    `[truncated: ...]` frame is left out of the comparison (perf has none)
    and checked on its own:
  * structure: kernel frames before user frames; at most one truncation
    frame, the outermost, with no mapping and one line, named
    `[truncated: <reason>]`; every stack whose outermost user frame is no
    root (`_start`, or a thread's `clone`/`clone3`) ends with one (so in
    particular every stack perf shows deeper than conv). Reasons outside
    the contract's list are printed, not failed.
  * call sites: every caller frame of conv's stacks in the programs built
    here is at return address - 1 (address + 1 ends a call instruction of
    the unstripped binary, objdump -d), for >= MATCH of the samples; in
    uw_signal the frame a signal interrupted (above the trampoline, below
    on_prof) is at an instruction start instead.
  * --stats: an "unwind" object {samples, to_root, truncated {reason: n},
    frames}: samples = the recording's samples (all are dwarf samples),
    to_root + the truncated = samples, per reason the pprof's samples with
    that truncation frame, frames = the user frames (locations) of the
    pprof's samples, truncation frames left out. conv warns no more that it
    does not unwind.
  * JFR (when `jfr` is installed): per reason, the samples whose stack trace
    has the `truncated` flag and ends in that truncation frame equal the
    pprof's; no stack trace has one without the other.
  * uw_deep with 8 KB copies: every sample at the bottom of the recursion
    that does not reach a root ends in `[truncated: stack copy ended]`, and
    conv's summary (stderr) suggests `--call-graph dwarf,65528`. With 65528
    bytes: >= MAIN_SHARE of the samples whose stack holds deep_recurse or
    deep_burn reach main.

--part corpus (perfparser's recordings in ../shared/corpus/perfparser, or
$CONV_CORPUS/perfparser; skipped with exit 77 without it), conv run with
`-q --offline -d <the case's folder> --cache-dir EMPTY` (the binaries lie
beside the recordings):
  * vector_static_gcc/perf.data, perf.data.zstd, fork_static_gcc/
    perf.data.zstd: >= CORPUS_MATCH of the samples have the user stacks of
    the perf.data*.expected.txt beside them (perfparser's own decoded
    output; format: KDAB/perfparser tests/auto/shared/
    perfparsertestclient.cpp, convertToText). Compared as above (multisets
    of thread id and user function names; perfparser's kernel frames are
    unnamed and not compared), a frame being named by its outermost
    (non-inlined) function. perfparser names frames its own way, so here
    both sides' names are made comparable: C++ names lose parameter lists
    and return types (perfparser prints them without; cxx_base); aliases
    (names of one address in the binary's symbol table) count as the name
    perf would choose (alias_canon: perfparser says __hypot_finite and
    cabsf64 for perf's __ieee754_hypot and __cabs); a frame in the PLT is
    `[plt]` (perfparser, like perf, calls a static binary's IRELATIVE stubs
    `_init`). A binary conv did not use (the recording holds no build-id
    for it) is named in a note.
  * cpp-inlining/cpp-inlining.perf.data (perf 6.6, no expected output;
    perf 6.1 cannot read it): >= CORPUS_MATCH of the samples with user
    frames are unwound to `_start` with every caller frame at a call site
    (as above, on the static binary beside it); the samples taken before
    `main` (the kernel's exec work on _start's first instruction) have no
    `main` to pass through, so it is not asked of every stack; and what
    perfparser's test asserts: `main` is a function frame and
    `std::__detail::_Mod<unsigned long, 2147483647ul, 16807ul, 0ul, true,
    true>::__calc(unsigned long)` an inline frame in some stack (qualified
    or not: how DWARF's inline frames are named is the symbolizer's choice).
  * vector_static_gcc/perf.lbr.data (--call-graph lbr): conv's stacks are
    the ones perf decodes for the same records, joined as conv's contract
    says (pipeline/unwinding.h, unwinding_lbr_chain), for >= CORPUS_MATCH
    of the samples, compared as in the fixtures part (thread, number of
    kernel frames, user names; PLT stubs `[plt]`). Three perf views of
    the file are read, all perf's decoding and naming: its LBR call stacks
    (`perf script`), the recorded callchains (`perf script` on a copy
    whose attrs no longer ask for PERF_SAMPLE_BRANCH_CALL_STACK), and the
    sampled IPs with their branch stacks (`-F ip,sym,brstack -G`). perf's
    LBR stacks are not taken whole, for three reasons, each counted and
    printed: (1) perf's user leaf is the latest call's target (the entry
    of the function, or of a PLT stub on the way to it: `_init` for a
    static binary's IRELATIVE stubs), conv's the sampled IP for a
    user-mode sample and the user PC recorded at kernel entry for a
    kernel-mode one, where the thread was; (2) a user-mode precise sample
    whose chain holds kernel frames: the chain was taken at the interrupt,
    later than the IP and the branch stack, so conv leaves those kernel
    frames out, perf does not; (3) an empty branch stack: perf 6.1 reads
    entry 0 past the record (lbr_callchain_add_lbr_ip does not check nr),
    so its user frame is another record's bytes; conv takes the recorded
    callchain.

--selftest runs the fixtures part with tests/unwind/perf_as_conv.py (perf's
own unwinding written as a pprof, conv's interface) in place of CONV: the
comparisons must pass; the checks of what perf does not write (truncation
frames, --stats, JFR) are skipped.

Prints testlib's ok/FAIL/skip lines and "N passed, M failed[, K skipped]";
exit 1 on a failure, 77 when it cannot run here at all ("SKIP: why": no perf
rights, a tool missing, no corpus) or every check was skipped. Everything is
written under WORKDIR, emptied first. Needs root or perf_event_paranoid <=
1, and the Debian packages linux-perf binutils gcc g++ debuginfod (rustc
optional).
"""
import argparse
import collections
import json
import os
import re
import shutil
import struct
import subprocess
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
REPO = os.path.dirname(TESTS)
sys.path.insert(0, os.path.join(TESTS, "tools"))
sys.path.insert(0, os.path.join(TESTS, "symbolize"))
import testlib as t  # noqa: E402
import pprofdec  # noqa: E402
import vdso  # noqa: E402
import test_symbolize as ts  # noqa: E402  (enter_netns, elf_loads, conv_env, start_debuginfod,
#                                            stop_server)

CORPUS = os.environ.get("CONV_CORPUS", os.path.join(os.path.dirname(REPO), "shared", "corpus"))
HANG = 600            # seconds: a subprocess that takes longer is stuck, not slow
RUN_MS = 500          # each program's run
FREQ = 999
MIN_SAMPLES = 100     # fewer and 1 % is not a sample: record again
RECORD_TRIES = 3
MATCH = 0.99          # share of samples whose stack must be perf's
MAIN_SHARE = 0.99     # uw_deep with 65528-byte copies: share reaching main
CORPUS_MATCH = 0.95
SHOW_DIFFS = 5
# name, program, stack copy size (None: perf's default, 8192)
RECORDINGS = [
    ("uw_qsort", "uw_qsort", None),
    ("uw_signal", "uw_signal", None),
    ("uw_deep", "uw_deep", None),
    ("uw_deep-65528", "uw_deep", 65528),
    ("uw_cpp", "uw_cpp", None),
    ("uw_rust", "uw_rust", None),
]
# what a recording must hold for its own checks: (why, perf stack predicate)
NEEDS = {
    "uw_signal": ("a sample in the SIGPROF handler", lambda names: "on_prof" in names),
    "uw_deep": ("a sample at the bottom of the recursion", lambda names: "deep_burn" in names),
    "uw_deep-65528": ("a sample at the bottom of the recursion", lambda names: "deep_burn" in names),
}
# the outermost frames of a process or thread; _dl_start_user is ld.so's entry code after _start
ROOTS = {"_start", "_dl_start_user", "clone", "clone3", "__clone", "__clone3"}
TRUNC = re.compile(r"^\[truncated: (.+)\]$")
CONTRACT_REASONS = re.compile(r"^(stack copy ended|no CFI for \S+|stack pointer did not advance|"
                              r"register not recorded|bad CFI)$")
KERNEL_START = 0xffff800000000000
PERF_END_FRAME = 0xffffffffffffffff

check, skip, note, finish, text = t.check, t.skip, t.note, t.finish, t.text
cannot_run = t.skip_all


def sh(cmd, timeout=HANG, env=None, cwd=None, stdin=None):
    return t.sh(cmd, timeout=timeout, env=env, cwd=cwd, stdin=stdin)


def share(a, b):
    return "%d/%d = %.1f %%" % (a, b, 100.0 * a / b) if b else "0/0"


# -- names ----------------------------------------------------------------------------

UNRESOLVED = re.compile(r"^(|0x[0-9a-fA-F]+|\[unknown\].*|\S*\+0x[0-9a-fA-F]+)$")
VERSION_OR_PLT = re.compile(r"@{1,2}[A-Za-z0-9_.]+$")


def norm(name):
    """A frame's name as compared: version/PLT suffix dropped, unresolved ones
    [unknown], the signal trampoline as perf names it (see the docstring)."""
    if name is None or UNRESOLVED.match(name):
        return "[unknown]"
    name = VERSION_OR_PLT.sub("", name)
    if name == "__restore_rt":
        return "[unknown]"
    return name


def demangle(names):
    """{raw: demangled} with c++filt -i (what conv's DMGL_PARAMS|DMGL_ANSI gives)."""
    raw = sorted({n for n in names if n.startswith(("_Z", "_R"))})
    out = {}
    if raw:
        p = sh(["c++filt", "-i"], stdin=("\n".join(raw) + "\n").encode())
        got = text(p.stdout).split("\n")
        if p.returncode == 0 and len(got) >= len(raw):
            out = dict(zip(raw, got))
    return out


def _strip_group(s, close, open_):
    """s without its trailing balanced group close...open_ (scanning from the end)."""
    depth = 0
    for i in range(len(s) - 1, -1, -1):
        if s[i] == close:
            depth += 1
        elif s[i] == open_:
            depth -= 1
            if depth == 0:
                return s[:i]
    return s


def cxx_base(name):
    """A demangled C++ name without its parameter list, cv/ref qualifiers, clone
    suffix and (for function templates) return type: `void std::vector<double>::
    _M_realloc_insert<double>(double&&)` -> `std::vector<double>::
    _M_realloc_insert<double>`, as perfparser prints names. Heuristic (for the
    names of the corpus cases), used only where perfparser is the reference."""
    s = re.sub(r" \[clone [^\]]*\]$", "", name.strip())
    for _ in range(3):
        s2 = re.sub(r"\s*(const|volatile|&&|&)$", "", s)
        if s2 == s:
            break
        s = s2
    if s.endswith(")") and not s.endswith("operator()"):
        s = _strip_group(s, ")", "(").rstrip()
    # return type: the last space outside <>, (), {}, not the one of "operator new"
    depth, cut = 0, -1
    for i, ch in enumerate(s):
        if ch in "<({":
            depth += 1
        elif ch in ">)}":
            depth -= 1
        elif ch == " " and depth == 0 and not s[:i].endswith("operator"):
            cut = i
    return s[cut + 1:] if cut >= 0 else s


# -- perf's side ------------------------------------------------------------------------

def perf_env(home):
    env = dict(os.environ, HOME=home, PERF_PAGER="cat", PAGER="cat", LC_ALL="C")
    env.pop("DEBUGINFOD_URLS", None)
    return env


def perf_cache(home, files):
    """A perf HOME whose build-id cache holds files (perf buildid-cache -a): None or why not."""
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    for f in files:
        p = sh(["perf", "buildid-cache", "-a", f], env=perf_env(home))
        if p.returncode:
            return "perf buildid-cache -a %s: %s" % (f, text(p.stderr).strip()[-300:])
    return None


def install_vdso(home, data):
    """This kernel's vDSO into perf's cache when the recording's [vdso] is it (perf
    record -N saved none); as tests/symbolize/perf_reference.py does."""
    p = sh(["perf", "buildid-list", "-i", data], env=perf_env(home))
    for line in text(p.stdout).splitlines():
        f = line.split()
        if len(f) == 2 and f[1] == "[vdso]":
            vdso.install_in_perf_cache(os.path.join(home, ".debug"), f[0])


HEAD = re.compile(r"^\s*(-?\d+)\s+(\d+\.\d+):\s*(.*)$")
FRAME = re.compile(r"^\s*([0-9a-f]+)\s+(\S+)\s+\((.*)\)\s*$")


class Sample:
    """A stack: tid, count, kernel frame count, user frames [(name, where, address)]
    leaf first, truncation reason (conv) and a time (perf) for the diagnostics."""
    __slots__ = ("tid", "n", "kernel", "user", "trunc", "time", "extra")

    def __init__(self, tid, n=1, kernel=0, user=None, trunc=None, time=None):
        self.tid, self.n, self.kernel, self.user = tid, n, kernel, user or []
        self.trunc, self.time, self.extra = trunc, time, None

    def names(self):
        return tuple(norm(f[0]) for f in self.user)

    def key(self, namer=None):
        """(tid, kernel frames, user frame names); namer(frame) names a frame."""
        return (self.tid, self.kernel, tuple(namer(f) for f in self.user) if namer else self.names())


def perf_samples(data, home, extra=()):
    """perf's stacks of data: ([Sample], notes) or (None, why)."""
    cmd = ["perf", "script", "-i", data, "--no-inline", "--no-demangle", "--max-stack", "10000",
           "-F", "tid,time,ip,sym,dso"] + list(extra)
    p = sh(cmd, env=perf_env(home))
    if p.returncode:
        return None, "%s: exit %d: %s" % (" ".join(cmd), p.returncode, text(p.stderr).strip()[-400:])
    samples, cur, dropped = [], None, 0

    def frame(m):
        cur.extra.append((int(m.group(1), 16), m.group(2), m.group(3)))

    for line in text(p.stdout).splitlines():
        h = HEAD.match(line)
        if h:
            cur = Sample(int(h.group(1)), time=h.group(2))
            cur.extra = []
            samples.append(cur)
            m = FRAME.match(h.group(3)) if h.group(3).strip() else None
            if m:
                frame(m)
            continue
        m = FRAME.match(line)
        if m and cur is not None:
            frame(m)
    raw = {name for s in samples for _, name, _ in s.extra}
    dem = demangle({VERSION_OR_PLT.sub("", n) for n in raw})
    for s in samples:
        fr = s.extra
        if fr and fr[-1][0] == PERF_END_FRAME:
            fr = fr[:-1]
            dropped += 1
        for addr, name, dso in fr:
            if addr >= KERNEL_START:
                s.kernel += 1
            else:
                base = VERSION_OR_PLT.sub("", name)
                s.user.append((dem.get(base, name), dso, addr))
        s.extra = None
    notes = []
    if dropped:
        notes.append("perf ended %d walks with a frame at 0xffffffffffffffff (dropped)" % dropped)
    return samples, notes


# -- conv's side ------------------------------------------------------------------------

def is_kernel_map(name):
    return name.startswith("[kernel.kallsyms]") or name.startswith("[guest.kernel") or \
        name.endswith(".ko") or re.search(r"\.ko(\.(gz|xz|zst))?$", name) is not None or \
        name == "vmlinux" or name.startswith("[") and name.endswith("]") and \
        name not in ("[vdso]", "[vsyscall]", "[heap]", "[stack]", "[anon]", "[unknown]")


def conv_samples(pb):
    """conv's stacks from its pprof: ([Sample], problems). Each user frame is
    (outermost function name or None, mapping dict or None, address, all names)."""
    prof = pprofdec.read(pb)
    # one sample count per perf event (<event>_samples); the others are weights
    cols = [i for i, (t, _) in enumerate(prof["types"]) if t.endswith("_samples")] or [0]
    out, problems = [], []
    for ids, vals, labels in prof["samples"]:
        n = sum(vals[i] for i in cols if i < len(vals))
        if n <= 0:
            continue
        s = Sample(labels.get("tid"), n=n)
        seen_user = False
        for pos, lid in enumerate(ids):
            mid, addr, lines = prof["locs"][lid]
            names = [prof["funcs"][fid][0] for fid, _ in lines]
            m = prof["maps"].get(mid) if mid else None
            t = TRUNC.match(names[0]) if len(names) >= 1 else None
            if t or any(TRUNC.match(x) for x in names):
                if pos != len(ids) - 1 or len(names) != 1 or m is not None:
                    problems.append("a truncation frame that is not one line of no mapping, outermost: "
                                    "%s at position %d of %d, mapping %s" % (names, pos, len(ids),
                                                                           m and m["file"]))
                s.trunc = t.group(1) if t else names[0]
                continue
            kernel = addr >= KERNEL_START or (m is not None and is_kernel_map(m["file"]))
            if kernel:
                if seen_user:
                    problems.append("a kernel frame after a user frame (%s)" % names)
                s.kernel += 1
            else:
                seen_user = True
                s.user.append((names[-1] if names else None, m, addr, names))
        out.append(s)
    return out, problems


data_of = {}  # recording name -> (conv command, conv info's options, its perf.data), for copies_full
COPY_FULL = re.compile(r"\((\d+) with the whole copy used\)")


def copies_full(entry):
    """How many walks cut at the copy's end had a full copy, as conv info counts them; None
    when conv info cannot say."""
    if not entry:
        return None
    cmd, opts, data = entry
    p = sh(cmd + ["info"] + opts + [data])
    if p.returncode:
        return None
    m = COPY_FULL.search(text(p.stdout) + text(p.stderr))
    return int(m.group(1)) if m else 0


def run_conv(cmd, env, out_base, extra):
    """Runs CONV ... FILE: (pprof, jfr, stats, stderr, error)."""
    pb, jfr, st = out_base + ".pb.gz", out_base + ".jfr", out_base + ".stats.json"
    for f in (pb, jfr, st):
        if os.path.exists(f):
            os.unlink(f)
    p = sh(cmd + ["--pprof", pb, "--jfr", jfr, "--stats", st] + extra, env=env)
    err = text(p.stderr)
    if p.returncode:
        return None, None, None, err, "exit %d: %s" % (p.returncode, err.strip()[-600:])
    stats = None
    try:
        with open(st) as f:
            stats = json.load(f)
    except (OSError, ValueError):
        pass
    return pb, (jfr if os.path.exists(jfr) else None), stats, err, None


# -- PLT stubs ---------------------------------------------------------------------------

PLT_SECTIONS = (".plt", ".plt.sec", ".plt.got", ".iplt")
SECTION = re.compile(r"^\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)")


def plt_ranges(path, cache={}):  # noqa: B006 (a cache per process on purpose)
    if path not in cache:
        p = sh(["readelf", "-SW", path])
        cache[path] = [(int(m.group(2), 16), int(m.group(2), 16) + int(m.group(3), 16))
                       for m in map(SECTION.match, text(p.stdout).splitlines())
                       if m and m.group(1) in PLT_SECTIONS]
    return cache[path]


def plt_namer(files, perf_side):
    """norm, except that a frame in a PLT section of a binary of files ({build-id or
    basename: ELF path}), or of the file at the frame's recorded path (system
    libraries, in recordings made here), is `[plt]`: how to name a PLT stub is the
    symbolizer's business (tests/symbolize), and perf names some after the symbol
    before them (`_init+0x30` in a static binary's IRELATIVE PLT) or not at all
    (`@plt` in libc's, which conv calls memcpy@plt). perf's frames are (name, DSO,
    file offset), conv's (name, mapping, address, names)."""
    loads = {}

    def local(p):
        return p if p and p.startswith("/") and os.path.isfile(p) else None

    def namer(f):
        if perf_side:
            path, fo = files.get(os.path.basename(f[1] or "")) or local(f[1]), f[2]
        else:
            m = f[1]
            path = m and (files.get(m.get("bid")) or files.get(os.path.basename(m["file"])) or
                          local(m["file"]))
            fo = m and f[2] - m["start"] + m["offset"]
        if path:
            if path not in loads:
                loads[path] = ts.elf_loads(path)
            va = next((v + fo - o for o, v, sz in loads[path] if o <= fo < o + sz), None)
            if va is not None and any(lo <= va < hi for lo, hi in plt_ranges(path)):
                return "[plt]"
        return norm(f[0])
    return namer


# -- comparison -------------------------------------------------------------------------

def counter(samples, namer=None):
    c = collections.Counter()
    for s in samples:
        c[s.key(namer)] += s.n
    return c


def compare(ref, got, label_ref="perf", namer=None, ref_namer=None):
    """(matched, total, [diff lines]) of two sample lists as multisets of keys;
    namer names conv's frames, ref_namer the reference's (default: namer).

    A conv stack cut where the stack copy ended also matches the reference's
    stack without its outermost user frame: conv keeps a frame whose return
    address it read but whose other saved registers lay past the copy, where
    perf (libunwind restores every register in a step) drops it."""
    r, g = counter(ref, ref_namer or namer), counter(got, namer)
    cut = collections.Counter()
    for s_ in got:
        if s_.trunc == "stack copy ended" and s_.user:
            k = s_.key(namer)
            cut[(k[0], k[1], k[2][:-1])] += s_.n
    for k in list(r):
        short = min(r[k] - min(r[k], g[k]), cut[k])
        if short > 0:
            # the reference's stack met in its one-frame-deeper conv form
            deeper = [k2 for k2 in g if k2[:2] == k[:2] and k2[2][:-1] == k[2] and len(k2[2]) == len(k[2]) + 1]
            for k2 in deeper:
                move = min(short, g[k2])
                g[k2] -= move
                g[k] += move
                cut[k] -= move
                short -= move
    g = +g
    matched = sum(min(n, g[k]) for k, n in r.items())
    total = max(sum(r.values()), sum(g.values()))
    r_only, g_only = r - g, g - r
    lines = []
    for k, n in r_only.most_common(SHOW_DIFFS):
        # the conv stack of the same thread that shares the longest leaf-side prefix
        best, bl = None, -1
        for k2 in g_only:
            if k2[0] != k[0]:
                continue
            pl = 0
            while pl < min(len(k[2]), len(k2[2])) and k[2][pl] == k2[2][pl]:
                pl += 1
            if pl > bl:
                best, bl = k2, pl
        lines.append(describe(k, n, best, g_only.get(best, 0), label_ref))
    if len(r_only) > SHOW_DIFFS:
        lines.append("... %d more stacks (%d samples) only in %s's view" % (
            len(r_only) - SHOW_DIFFS, sum(r_only.values()) - sum(n for _, n in r_only.most_common(SHOW_DIFFS)),
            label_ref))
    if g_only:
        lines.append("conv-only stacks: %d (%d samples)" % (len(g_only), sum(g_only.values())))
    return matched, total, lines


def _short(name, width=70):
    return name if len(name) <= width else name[:width - 3] + "..."


def _frames(names, lo, hi):
    part = [_short(n) for n in names[lo:hi]]
    return ("... " if lo > 0 else "") + " <- ".join(part) + (" <- ..." if hi < len(names) else "")


def describe(k, n, k2, n2, label_ref):
    tid, kern, names = k
    if k2 is None:
        return "%s (tid %s, %d samples): %d kernel + %s; conv has no stack of that thread left" % (
            label_ref, tid, n, kern, _frames(names, 0, 8))
    names2 = k2[2]
    i = 0
    while i < min(len(names), len(names2)) and names[i] == names2[i]:
        i += 1
    lo = max(0, i - 2)
    if i == len(names) and i == len(names2):
        where = "same user frames, kernel frames %d vs %d" % (kern, k2[1])
    elif i == len(names):
        where = "conv has %d more frames: %s" % (len(names2) - i, _frames(names2, i, i + 4))
    elif i == len(names2):
        where = "conv stops %d frames short, before %s" % (len(names) - i, _frames(names, i, i + 4))
    else:
        where = "they part at user frame %d: %s has %s, conv %s" % (i, label_ref, _short(names[i]),
                                                                  _short(names2[i]))
    return "%s (tid %s, %d samples, %d user frames) vs conv (%d samples, %d user frames): %s; " \
           "%s: %s | conv: %s" % (label_ref, tid, n, len(names), n2, len(names2), where, label_ref,
                                  _frames(names, lo, i + 3), _frames(names2, lo, i + 3))


# -- call sites -------------------------------------------------------------------------

INSN = re.compile(r"^\s*([0-9a-f]+):\s+(\S.*)$")


def call_sites(path, cache={}):  # noqa: B006 (a cache per process on purpose)
    """(instruction starts, ends of call instructions) of an ELF file (objdump -d)."""
    if path in cache:
        return cache[path]
    p = sh(["objdump", "-d", "-w", "--no-show-raw-insn", path])
    insns = []
    for line in text(p.stdout).splitlines():
        m = INSN.match(line)
        if m:
            insns.append((int(m.group(1), 16), m.group(2)))
    starts = {a for a, _ in insns}
    # (prefixed forms too: "addr32 call" in static glibc's _start, "notrack call", "bnd call")
    ends = {insns[i + 1][0] for i in range(len(insns) - 1)
            if re.match(r"^((addr32|data16|notrack|bnd|rex\.\w+)\s+)*call", insns[i][1])}
    cache[path] = (starts, ends)
    return cache[path]


def elf_address(m, addr, loads):
    fo = addr - m["start"] + m["offset"]
    return next((v + fo - o for o, v, sz in loads if o <= fo < o + sz), None)


def check_call_sites(samples, files, label, signal=False):
    """Every caller frame in files {mapping key: ELF path} at a call site.
    files maps a build-id (hex) or a mapping file basename to the ELF file."""
    loads = {}
    ok_samples = total = frames = 0
    bad, interrupted, interrupted_bad = [], 0, []
    for s in samples:
        checked = False
        good = True
        for j in range(1, len(s.user)):
            name, m, addr, _ = s.user[j]
            if m is None:
                continue
            path = files.get(m.get("bid")) or files.get(os.path.basename(m["file"]))
            if not path:
                continue
            if path not in loads:
                loads[path] = ts.elf_loads(path)
            va = elf_address(m, addr, loads[path])
            starts, ends = call_sites(path)
            checked = True
            frames += 1
            below = s.user[j - 1]
            tramp = below[1] is not None and os.path.basename(below[1]["file"]).startswith("libc") and \
                norm(below[0]) == "[unknown]"
            if signal and tramp and j >= 2 and s.user[j - 2][0] == "on_prof":
                interrupted += 1
                if va not in starts:
                    interrupted_bad.append("%s at 0x%x" % (name, va or 0))
                    good = False
                continue
            if va is None or va + 1 not in ends:
                good = False
                if len(bad) < SHOW_DIFFS:
                    bad.append("%s 0x%x (caller of %s): address + 1 ends no call instruction" % (
                        name, va or 0, norm(below[0])))
        if checked:
            total += s.n
            ok_samples += s.n * good
    return ok_samples, total, frames, bad, interrupted, interrupted_bad


# -- fixtures ---------------------------------------------------------------------------

def can_record(out):
    p = sh(["perf", "record", "-N", "-q", "-e", "cpu-clock", "-o", os.path.join(out, "probe.data"),
            "--", "true"], timeout=60)
    return None if p.returncode == 0 else text(p.stderr).strip()[-300:] or "exit %d" % p.returncode


def record(out, rec):
    name, prog, size = rec
    data = os.path.join(out, name + ".data")
    for f in (data, data + ".old"):
        if os.path.exists(f):
            os.unlink(f)
    cg = "dwarf" if size is None else "dwarf,%d" % size
    p = sh(["perf", "record", "-N", "-q", "-e", "cpu-clock", "-F", str(FREQ), "--call-graph", cg,
            "-o", data, "--", os.path.join(out, "bin", prog), str(RUN_MS)])
    if p.returncode:
        return None, "perf record: exit %d: %s" % (p.returncode, text(p.stderr).strip()[-300:])
    return data, None


def buildids(out):
    ids = {}
    with open(os.path.join(out, "buildids")) as f:
        for line in f:
            n, b = line.split()
            ids[n] = b
    return ids


def rooted(s):
    return bool(s.user) and norm(s.user[-1][0]) in ROOTS


def fixtures(conv, work, selftest, programs):
    for tool, pkg in (("perf", "linux-perf"), ("gcc", "gcc"), ("objcopy", "binutils"),
                      ("objdump", "binutils"), ("c++filt", "binutils"), ("debuginfod", "debuginfod")):
        if not shutil.which(tool):
            cannot_run("%s not found (Debian package %s)" % (tool, pkg))
    out = os.path.join(work, "fixtures")
    os.makedirs(out, exist_ok=True)
    why = can_record(out)
    if why:
        cannot_run("perf cannot record here (root or perf_event_paranoid <= 1 needed): %s" % why)

    # 1. build
    p = sh(["sh", os.path.join(HERE, "build.sh"), out])
    if not check("build.sh builds the programs without frame pointers and splits their debug info",
                 p.returncode == 0, text(p.stderr)[-800:]):
        return
    for line in text(p.stderr).splitlines():
        if "skipped" in line:
            skip("build: " + line.split(": ", 1)[-1], "compiler missing")
    ids = buildids(out)
    recs = [r for r in RECORDINGS if r[1] in ids and (not programs or r[0] in programs or r[1] in programs)]

    # 2.-3. record, perf's view (a private build-id cache with the unstripped binaries)
    home = os.path.join(out, "perf-home")
    why = perf_cache(home, [os.path.join(out, "unstripped", n) for n in sorted(ids)])
    if not check("perf's build-id cache holds the unstripped binaries", why is None, why):
        return
    perf = {}
    for rec in recs:
        name = rec[0]
        samples, why, lack, notes = None, None, None, []
        for attempt in range(1, RECORD_TRIES + 1):
            data, why = record(out, rec)
            if not data:
                break
            install_vdso(home, data)
            samples, res = perf_samples(data, home)
            if samples is None:
                why = res
                break
            notes = res
            n = sum(s.n for s in samples)
            need = NEEDS.get(name)
            lack = None
            if n < MIN_SAMPLES:
                lack = "%d samples (< %d)" % (n, MIN_SAMPLES)
            elif need and not any(need[1](set(s.names())) for s in samples):
                lack = "no " + need[0]
            if not lack:
                break
            if attempt < RECORD_TRIES:
                note("%s: recording %d has %s; recording again" % (name, attempt, lack))
        if not check("%s: recorded with --call-graph %s and read by perf script" % (
                name, "dwarf" if rec[2] is None else "dwarf,%d" % rec[2]), samples is not None, why):
            continue
        if lack:
            skip("%s: the checks on this recording" % name, "%s in %d recordings" % (lack, RECORD_TRIES))
            continue
        perf[name] = samples
        rootedp = sum(s.n for s in samples if rooted(s))
        note("%s: %d samples; perf unwinds %s to a root; %s" % (
            name, sum(s.n for s in samples), share(rootedp, sum(s.n for s in samples)),
            "; ".join(notes) or "no perf artefacts"))

    # 4. conv, with the debug info on a real debuginfod
    server, url, lines = ts.start_debuginfod(out)
    try:
        if not check("debuginfod serves every .debug file and executable by build-id", url, " ".join(lines)):
            return
        for l in lines:
            note("debuginfod: " + l)
        cache = os.path.join(out, "conv-cache")
        shutil.rmtree(cache, ignore_errors=True)
        nojit = os.path.join(out, "no-jit")
        os.makedirs(nojit, exist_ok=True)
        env = ts.conv_env(out)
        env["UNWIND_PERF_HOME"] = home  # for the --selftest stand-in only
        # conv's mappings are found by build-id; the --selftest stand-in's by file name
        files = {bid: os.path.join(out, "unstripped", n) for n, bid in ids.items()}
        files.update({n: os.path.join(out, "unstripped", n) for n in ids})
        for rec in recs:
            name = rec[0]
            if name not in perf:
                continue
            data = os.path.join(out, name + ".data")
            data_of[name] = (conv, ["--debuginfod", url, "--cache-dir", cache], data)
            pb, jfr, stats, err, why = run_conv(conv, env, os.path.join(out, name + ".conv"),
                                                ["--debuginfod", url, "--cache-dir", cache,
                                                 "--jit-dir", nojit, data])
            if not check("%s: conv converts it" % name, pb, why):
                continue
            got, problems = conv_samples(pb)
            check_recording(name, rec, perf[name], got, problems, stats, err, jfr, files, selftest)
    finally:
        ts.stop_server(server)


def check_recording(name, rec, ref, got, problems, stats, err, jfr, files, selftest):
    n_ref, n_got = sum(s.n for s in ref), sum(s.n for s in got)
    check("%s: conv has perf's %d samples" % (name, n_ref), n_ref == n_got, "conv %d" % n_got)
    # perf script writes C++ names with return type and parameters, conv perf report's
    # form: both compared in the latter (cxx_base)
    conv_n, perf_n = plt_namer(files, False), plt_namer(files, True)
    matched, total, diffs = compare(ref, got, namer=lambda f: cxx_base(conv_n(f)),
                                    ref_namer=lambda f: cxx_base(perf_n(f)))
    check("%s: conv's stacks are perf's for >= %d %% of the samples (%s)" % (
        name, MATCH * 100, share(matched, total)), total and matched >= MATCH * total,
        "the most common differences follow")
    for d in diffs:
        note("%s: %s" % (name, d))

    # structure and truncation frames
    check("%s: kernel frames first; at most one truncation frame, outermost, one line, no mapping"
          % name, not problems, "; ".join(problems[:5]))
    reasons = collections.Counter()
    for s in got:
        if s.trunc is not None:
            reasons[s.trunc] += s.n
    odd = [r for r in reasons if not CONTRACT_REASONS.match(r)]
    if odd:
        note("%s: truncation reasons beyond the contract's list: %s" % (name, odd))
    unmarked = [s for s in got if s.user and not rooted(s) and s.trunc is None]
    if selftest:
        skip("%s: every stack that reaches no root ends in a truncation frame" % name,
             "--selftest: perf writes no truncation frames")
    else:
        check("%s: every stack that reaches no root ends in a truncation frame (%d truncated: %s)" % (
            name, sum(reasons.values()), dict(reasons)), not unmarked,
            "%d samples, e.g. %s" % (sum(s.n for s in unmarked),
                                     [" <- ".join(s.names()[-4:]) for s in unmarked[:3]]))

    # call sites
    sig = rec[1] == "uw_signal"
    ok, tot, frames, bad, interrupted, ibad = check_call_sites(got, files, name, signal=sig)
    # (perf's stacks have caller frames in our code in every recording: none is a failure)
    check("%s: caller frames in the programs built here are at return address - 1 (%d frames; "
          "samples %s)" % (name, frames, share(ok, tot)), tot and ok >= MATCH * tot,
          "; ".join(bad) or "no caller frame in the programs built here")
    if sig:
        handler = sum(s.n for s in got if "on_prof" in s.names())
        if interrupted:
            check("%s: the %d frames a signal interrupted are at the interrupted instruction, "
                  "not at return address - 1" % (name, interrupted), not ibad, ibad[:5])
        elif handler:
            check("%s: conv's stacks cross the signal frame (on_prof <- trampoline <- the interrupted "
                  "function)" % name, False, "%d samples in on_prof, none crossing" % handler)
        else:
            skip("%s: frames interrupted by the signal" % name, "no sample of conv's in on_prof")

    # --stats, the summary, JFR
    if selftest:
        skip("%s: --stats unwind object, summary, JFR" % name, "--selftest: perf writes none")
        return
    check("%s: conv no longer warns that it does not unwind" % name, "does not unwind" not in err,
          [l for l in err.splitlines() if "does not unwind" in l][:1])
    u = (stats or {}).get("unwind")
    if check("%s: --stats has an \"unwind\" object" % name, isinstance(u, dict),
             "keys: %s" % sorted((stats or {}).keys())):
        # --stats counts by reason without the object ("no CFI for libfoo.so": "no CFI"),
        # and lists every reason (0 where none)
        by_reason = collections.Counter()
        for r_, n_ in reasons.items():
            by_reason[re.sub(r"^no CFI for .*", "no CFI", r_)] += n_
        want = {"samples": n_got, "to_root": n_got - sum(reasons.values()),
                "truncated": dict(by_reason),
                "frames": sum(s.n * len(s.user) for s in got)}
        have = {k: u.get(k) for k in want}
        have["truncated"] = {k: v for k, v in (u.get("truncated") or {}).items() if v}
        check("%s: --stats unwind = the pprof's counts %s" % (name, json.dumps(want, sort_keys=True)),
              have == want and u.get("to_root", 0) + sum((u.get("truncated") or {}).values()) == u.get("samples"),
              json.dumps(u, sort_keys=True))
    if reasons.get("stack copy ended"):
        # deeper copies help only where the kernel filled the whole copy (dyn_size = size); a copy
        # cut short by the stack's own end does not: conv info says how many were full
        full = copies_full(data_of.get(name))
        if full:
            check("%s: the warning suggests --call-graph dwarf,65528 (%d of %d cut copies were full)" % (
                name, full, reasons["stack copy ended"]), "dwarf,65528" in err and
                (" %d of the " % full) in err, err.strip()[-400:])
        elif full == 0:
            check("%s: no --call-graph dwarf,65528 suggestion when no cut copy was full (%d cut)" % (
                name, reasons["stack copy ended"]), "dwarf,65528" not in err, err.strip()[-400:])
    check_jfr(name, jfr, reasons)

    # the deep recursion
    deep = [s for s in got if {"deep_recurse", "deep_burn"} & set(s.names())]
    if rec[0] == "uw_deep":
        short = [s for s in deep if not rooted(s)]
        if short:
            wrong = collections.Counter()
            for s in short:
                if s.trunc != "stack copy ended":
                    wrong[s.trunc] += s.n
            check("%s: the %d samples at the bottom cut short by the 8 KB copy end in "
                  "[truncated: stack copy ended]" % (name, sum(s.n for s in short)), not wrong, dict(wrong))
        else:
            skip("%s: samples cut short by the copy" % name, "none at the bottom of the recursion")
    if rec[2] == 65528:
        main = sum(s.n for s in deep if "main" in s.names())
        tot = sum(s.n for s in deep)
        if tot:
            check("%s: >= %d %% of the samples in the recursion unwind to main (%s)" % (
                name, MAIN_SHARE * 100, share(main, tot)), main >= MAIN_SHARE * tot)
        else:
            skip("%s: unwinding to main" % name, "no sample in the recursion")


def check_jfr(name, jfr, reasons):
    if not shutil.which("jfr"):
        skip("%s: JFR truncated flags" % name, "jfr (JDK) not installed")
        return
    if not jfr:
        check("%s: conv wrote its JFR" % name, False)
        return
    p = sh(["jfr", "print", "--json", "--stack-depth", "4096", "--events", "jdk.ExecutionSample", jfr])
    try:
        doc = json.loads(text(p.stdout))
    except ValueError as e:
        check("%s: jfr print --json reads conv's JFR" % name, False, "%s; %s" % (e, text(p.stderr)[-300:]))
        return
    flagged, bad = collections.Counter(), []
    for ev in doc.get("recording", {}).get("events", []):
        st = (ev.get("values") or {}).get("stackTrace") or {}
        frames = st.get("frames") or []
        last = ((frames[-1].get("method") or {}).get("name") or "") if frames else ""
        t = TRUNC.match(last)
        if bool(st.get("truncated")) != bool(t):
            bad.append("truncated=%s, outermost frame %r" % (st.get("truncated"), last))
        elif t:
            flagged[t.group(1)] += 1
    check("%s: JFR: a stack trace is flagged truncated exactly when it ends in the truncation frame; "
          "per reason as many as in the pprof" % name, not bad and flagged == reasons,
          "mismatches %d %s; jfr %s, pprof %s" % (len(bad), bad[:3], dict(flagged), dict(reasons)))


# -- corpus -----------------------------------------------------------------------------

def parse_expected(path):
    """perfparser's expected output: [Sample] with user frames (outermost name,
    inline names) and the kernel frames counted. Each sample is a header line
    (comm TAB pid TAB tid TAB time), value lines (TAB event: value), a blank
    line, one line per location (TAB address relAddr [TAB file:line:col] TAB
    symRelAddr size [TAB name binary path, then " [kernel]", " (inlined)" or
    " "]), and a blank line. A frame is the chain of a location and its
    parents: the address's location (no symbol), [an inlined function's
    location (`(inlined)`), its call site's location (no symbol)]..., the
    function's location (with the symbol); a frame with no symbol is its
    address location alone."""
    samples = []
    s, state, pending, inl = None, None, None, []

    def flush():
        if s is not None and pending is not None:
            s.user.append((None, None, pending, list(inl)))

    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    for line in lines:
        if line and not line.startswith("\t"):
            flush()
            f0 = line.split("\t")
            tid = int(f0[2]) if len(f0) > 2 and f0[2].lstrip("-").isdigit() else None
            s = Sample(tid, time=f0[3] if len(f0) > 3 else None)
            samples.append(s)
            state, pending, inl = "values", None, []
            continue
        if s is None:
            continue
        if not line:
            if state == "values":
                state = "frames"
            elif state == "frames":
                flush()
                state, pending, inl = None, None, []
            continue
        if state != "frames":
            continue
        parts = line[1:].split("\t")
        addr = int(parts[0].split()[0], 16) if parts[0].split() else 0
        sym = parts[-1] if len(parts) >= 3 and not re.match(r"^[0-9a-f]+ [0-9a-f]+$", parts[-1]) else None
        if sym is None:
            if pending is not None and not inl:
                s.user.append((None, None, pending, []))
            pending = addr
            continue
        kernel = sym.endswith(" [kernel]")
        inline = sym.endswith(" (inlined)")
        core = sym[:-len(" [kernel]")] if kernel else sym[:-len(" (inlined)")] if inline else sym.rstrip(" ")
        # name binary path: binary and path hold no spaces, the name may
        bits = core.rsplit(" ", 2)
        fname = bits[0] if len(bits) == 3 else core
        if inline:
            inl.append(fname)
            pending = None
            continue
        if kernel:
            s.kernel += 1
        else:
            s.user.append((fname, None, pending if pending is not None else addr, inl + [fname]))
        inl, pending = [], None
    flush()
    return samples


def cxx_key(frame):
    return norm(cxx_base(frame[0])) if frame[0] else "[unknown]"


def alias_canon(path):
    """{name: canonical name} over an ELF file's symbol table (nm -C, names as
    cxx_key makes them): the names of one address map to the one perf would
    choose, so that aliases compare equal (perfparser says __hypot_finite and cabsf64 where
    perf, and conv after it, choose __ieee754_hypot and __cabs). A name defined
    at several addresses is left alone."""
    p = sh(["nm", "-C", "--defined-only", path])
    by_addr, addrs_of = collections.defaultdict(set), collections.defaultdict(set)
    for line in text(p.stdout).splitlines():
        f = line.split(" ", 2)
        if len(f) == 3 and f[1] in "TtWwiI" and re.match(r"^[0-9a-f]+$", f[0]):
            name = norm(cxx_base(f[2]))
            # perf's preference among aliases (symbolize.c sym_better): not weak,
            # global, fewer leading underscores, longer
            rank = (f[1] in "Ww", f[1].islower(), len(name) - len(name.lstrip("_")), -len(name), name)
            by_addr[int(f[0], 16)].add((rank, name))
            addrs_of[name].add(int(f[0], 16))
    return {n: min(by_addr[next(iter(a))])[1] for n, a in addrs_of.items() if len(a) == 1}


def corpus_namer(path, conv_side):
    """Names frames for the comparison with perfparser: cxx_key, aliases made one
    (alias_canon), PLT stubs `[plt]` (perfparser, like perf, names a static
    binary's IRELATIVE PLT stubs `_init`). perfparser's frames carry the address
    itself (these binaries are not position independent)."""
    canon, plts, loads = alias_canon(path), plt_ranges(path), ts.elf_loads(path)
    base = os.path.basename(path)

    def namer(f):
        if conv_side:
            m = f[1]
            va = elf_address(m, f[2], loads) if m and os.path.basename(m["file"]) == base else None
        else:
            va = f[2]
        if va is not None and any(lo <= va < hi for lo, hi in plts):
            return "[plt]"
        k = cxx_key(f)
        return canon.get(k, k)
    return namer


def corpus_conv(conv, folder, data, out_base, empty):
    args = ["--offline", "--cache-dir", empty, "-d", folder, data]
    env = ts.conv_env(os.path.dirname(out_base))
    res = run_conv(conv, env, out_base, ["-q"] + args)
    if res[2]:
        # conv info reads the recording as conv does: the same unwinding counters
        p = sh(list(conv) + ["info", "--json"] + args, env=env)
        try:
            info = json.loads(text(p.stdout)).get("unwind") if p.returncode == 0 else None
        except ValueError:
            info = None
        check("%s: conv info's unwinding counters are the conversion's" % os.path.relpath(
            data, os.path.dirname(folder)), info == res[2].get("unwind"),
            "info %s, --stats %s" % (json.dumps(info), json.dumps(res[2].get("unwind"))))
    for o in (res[2] or {}).get("unresolved_objects") or []:
        if os.path.basename(o.get("path", "")) in os.listdir(folder):
            note("%s: conv did not use %s beside it: %s (build-id %r)" % (
                os.path.relpath(data, os.path.dirname(folder)), os.path.basename(o["path"]),
                o.get("reason"), o.get("build_id")))
    return res


def corpus(conv, work):
    pp = os.path.join(CORPUS, "perfparser")
    empty = os.path.join(work, "empty-cache")
    os.makedirs(empty, exist_ok=True)
    cases = [("vector_static_gcc", "perf.data"), ("vector_static_gcc", "perf.data.zstd"),
             ("fork_static_gcc", "perf.data.zstd")]
    binaries = {"vector_static_gcc": "vector_static_gcc_v9.1.0", "fork_static_gcc": "fork",
                "cpp-inlining": "cpp-inlining"}
    for case, fname in cases:
        folder = os.path.join(pp, case)
        data = os.path.join(folder, fname)
        exp = data + ".expected.txt"
        name = "%s/%s" % (case, fname)
        if not (os.path.exists(data) and os.path.exists(exp)):
            skip(name, "not in the corpus")
            continue
        pb, _, stats, err, why = corpus_conv(conv, folder, data, os.path.join(work, case + "-" + fname), empty)
        if not check("%s: conv converts it" % name, pb, why):
            continue
        got, problems = conv_samples(pb)
        ref = parse_expected(exp)
        # perfparser's kernel frames are unnamed and its marker entries are its own:
        # the user stacks are compared, with perfparser's names (cxx_base)
        for s in ref + got:
            s.kernel = 0
        binary = os.path.join(folder, binaries[case])
        matched, total, diffs = compare(ref, got, "perfparser", namer=corpus_namer(binary, True),
                                        ref_namer=corpus_namer(binary, False))
        check("%s: conv's user stacks are perfparser's expected ones for >= %d %% of the samples (%s)" % (
            name, CORPUS_MATCH * 100, share(matched, total)), total and matched >= CORPUS_MATCH * total,
            "the most common differences follow")
        for d in diffs:
            note("%s: %s" % (name, d))
        check("%s: kernel frames first; truncation frames well formed" % name, not problems, problems[:3])
        corpus_call_sites(name, got, folder, binaries[case])

    # cpp-inlining: no expected output; perf 6.1 cannot read it
    folder = os.path.join(pp, "cpp-inlining")
    data = os.path.join(folder, "cpp-inlining.perf.data")
    name = "cpp-inlining"
    if os.path.exists(data):
        pb, _, stats, err, why = corpus_conv(conv, folder, data, os.path.join(work, "cpp-inlining"), empty)
        if check("%s: conv converts it" % name, pb, why):
            got, problems = conv_samples(pb)
            user = [s for s in got if s.user]
            n = sum(s.n for s in user)
            full = sum(s.n for s in user if rooted(s))
            via_main = sum(s.n for s in user if rooted(s) and "main" in s.names())
            check("%s: >= %d %% of the samples with user frames are unwound to _start (%s; %d of them "
                  "through main)" % (name, CORPUS_MATCH * 100, share(full, n), via_main),
                  n and full >= CORPUS_MATCH * n,
                  collections.Counter(" <- ".join(s.names()[-3:]) + (" [%s]" % s.trunc if s.trunc else "")
                                      for s in user if not rooted(s)).most_common(3))
            corpus_call_sites(name, got, folder, binaries["cpp-inlining"])
            outer = {cxx_base(f[0]) for s in got for f in s.user if f[0]}
            inl = {cxx_base(x) for s in got for f in s.user for x in f[3][:-1]}
            # (DWARF names an inlined member function; whether qualified, as perfparser
            # prints it, is conv's symbolizer's choice, as for any frame)
            calc = "std::__detail::_Mod<unsigned long, 2147483647ul, 16807ul, 0ul, true, true>::__calc"
            has_calc = any(x == calc or x == "__calc" or x.endswith("::__calc") for x in inl)
            check("%s: main is a function frame and %s(unsigned long) an inline frame (perfparser's "
                  "testInlineDetection)" % (name, calc), "main" in outer and has_calc,
                  "main in functions: %s; inline frames: %s" % ("main" in outer, sorted(inl)[:8]))
            check("%s: kernel frames first; truncation frames well formed" % name, not problems, problems[:3])
    else:
        skip(name, "not in the corpus")

    # LBR call stacks, against perf script
    folder = os.path.join(pp, "vector_static_gcc")
    data = os.path.join(folder, "perf.lbr.data")
    name = "vector_static_gcc/perf.lbr.data"
    if not os.path.exists(data):
        skip(name, "not in the corpus")
        return
    home = os.path.join(work, "perf-home-lbr")
    why = perf_cache(home, [os.path.join(folder, binaries["vector_static_gcc"])])
    ref, why2 = (None, why) if why else lbr_reference(data, home, work)
    if not check("%s: perf script reads it (binary in a private build-id cache)" % name, ref is not None,
                 why2):
        return
    ref, differ = ref
    note("%s: perf's own LBR stacks left aside: %s" % (
        name, ", ".join("%s: %d" % kv for kv in sorted(differ.items())) or "none"))
    pb, _, stats, err, why = corpus_conv(conv, folder, data, os.path.join(work, "lbr"), empty)
    if not check("%s: conv converts it" % name, pb, why):
        return
    got, problems = conv_samples(pb)
    files = {binaries["vector_static_gcc"]: os.path.join(folder, binaries["vector_static_gcc"])}
    conv_n, perf_n = plt_namer(files, False), plt_namer(files, True)
    matched, total, diffs = compare(ref, got, namer=lambda f: cxx_base(conv_n(f)),
                                    ref_namer=lambda f: cxx_base(perf_n(f)))
    check("%s: conv's stacks are the LBR call stacks perf decodes for >= %d %% of the samples (%s)" % (
        name, CORPUS_MATCH * 100, share(matched, total)), total and matched >= CORPUS_MATCH * total,
        "the most common differences follow")
    for d in diffs:
        note("%s: %s" % (name, d))
    check("%s: kernel frames first; truncation frames well formed" % name, not problems, problems[:3])


def without_call_stacks(data, out):
    """A copy of a file-mode little-endian perf.data whose attrs do not ask for
    LBR call stacks (PERF_SAMPLE_BRANCH_CALL_STACK cleared): perf then shows
    the recorded callchains. None, or why not."""
    with open(data, "rb") as f:
        b = bytearray(f.read())
    if b[:8] != b"PERFILE2":
        return "%s: not a little-endian file-mode perf.data" % data
    attr_size = struct.unpack_from("<Q", b, 16)[0]
    off, size = struct.unpack_from("<QQ", b, 24)
    if attr_size < 80 or off + size > len(b):
        return "%s: attrs section out of bounds" % data
    for a in range(off, off + size - attr_size + 1, attr_size):
        bst = struct.unpack_from("<Q", b, a + 72)[0]  # perf_event_attr.branch_sample_type
        struct.pack_into("<Q", b, a + 72, bst & ~0x800)
    with open(out, "wb") as f:
        f.write(b)
    return None


IP_LINE = re.compile(r"^\s*(-?\d+)\s+([0-9a-f]+)\s+(\S+)\s+\((.*?)\)\s*(.*)$")


def lbr_reference(data, home, work):
    """((conv's expected [Sample], Counter of why perf's own LBR stack was
    left aside), None) or (None, why): see the docstring."""
    lbr, why = perf_samples(data, home)
    if lbr is None:
        return None, why
    copy = os.path.join(work, "lbr-as-recorded.data")
    why = without_call_stacks(data, copy)
    fp, why = (None, why) if why else perf_samples(copy, home)
    if fp is None:
        return None, why
    cmd = ["perf", "script", "-i", data, "--no-demangle", "-F", "tid,ip,sym,dso,brstack", "-G"]
    p = sh(cmd, env=perf_env(home))
    if p.returncode:
        return None, "%s: exit %d" % (" ".join(cmd), p.returncode)
    ips = [IP_LINE.match(l) for l in text(p.stdout).splitlines() if l.strip()]
    if None in ips or not len(ips) == len(lbr) == len(fp):
        return None, "perf's views disagree: %d LBR stacks, %d recorded chains, %d IPs (or an unread line)" % (
            len(lbr), len(fp), len(ips))
    dem = demangle({VERSION_OR_PLT.sub("", m.group(3)) for m in ips})
    ref, differ = [], collections.Counter()
    for lb, rec, m in zip(lbr, fp, ips):
        ip, base = int(m.group(2), 16), VERSION_OR_PLT.sub("", m.group(3))
        if not m.group(5).strip():
            differ["empty branch stack: the recorded chain"] += 1
            ref.append(rec)
            continue
        if ip < KERNEL_START:
            leaf = (dem.get(base, m.group(3)), m.group(4), ip)
            if lb.kernel:
                differ["user-mode sample, kernel frames of a later moment left out"] += 1
            s = Sample(lb.tid, time=lb.time, kernel=0)
        else:
            leaf = rec.user[0] if rec.user else lb.user[0] if lb.user else None
            s = Sample(lb.tid, time=lb.time, kernel=lb.kernel)
        if lb.user and leaf and norm(leaf[0]) != norm(lb.user[0][0]):
            differ["user leaf where the thread was, not the latest call's target"] += 1
        s.user = ([leaf] if leaf else []) + lb.user[1:]
        ref.append(s)
    return (ref, differ), None


def corpus_call_sites(name, got, folder, binary):
    path = os.path.join(folder, binary)
    if not os.path.exists(path):
        skip("%s: caller frames at call sites" % name, "no %s beside it" % binary)
        return
    ok, tot, frames, bad, _, _ = check_call_sites(got, {binary: path}, name)
    if tot and frames:
        check("%s: caller frames in %s are at return address - 1 (%d frames; samples %s)" % (
            name, binary, frames, share(ok, tot)), ok >= CORPUS_MATCH * tot, "; ".join(bad))
    else:
        check("%s: conv's stacks have caller frames in %s to check" % (name, binary), False,
              "no caller frame: the stacks were not unwound")


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--programs", default="")
    ap.add_argument("--part", choices=["fixtures", "corpus"])
    ap.add_argument("conv", nargs="?")
    ap.add_argument("workdir")
    a = ap.parse_args()
    if a.selftest:
        conv = [sys.executable, os.path.join(HERE, "perf_as_conv.py")]
    elif a.conv:
        conv = [os.path.abspath(a.conv)]
    else:
        ap.error("CONV is needed without --selftest")
    if a.part == "corpus" and not os.path.isdir(CORPUS):
        cannot_run("corpus not found at %s" % CORPUS)
    if a.part in (None, "fixtures"):
        # (re-runs this script in a private network namespace first, when it can)
        note("network: %s" % ts.enter_netns())
    work = os.path.abspath(a.workdir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    programs = set(filter(None, a.programs.split(",")))
    if a.part in (None, "fixtures"):
        fixtures(conv, work, a.selftest, programs)
    if a.part in (None, "corpus"):
        if a.selftest:
            skip("corpus", "--selftest: perf 6.1 unwinds none of the corpus recordings (the "
                 "stand-in has nothing to show there)")
        elif not os.path.isdir(CORPUS):
            skip("corpus", "not found at %s" % CORPUS)
        else:
            os.makedirs(os.path.join(work, "corpus"))
            corpus(conv, os.path.join(work, "corpus"))
    finish()


if __name__ == "__main__":
    main()
