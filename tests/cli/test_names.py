#!/usr/bin/env python3
"""C++ function names as perf shows them (issue 19, item 2), in pprof and JFR.

usage: test_names.py CONV WORKDIR

Setup (in WORKDIR):
  * tests/cli/src/names.cpp built with g++ -O2 -g -fno-omit-frame-pointer
    -mno-omit-leaf-frame-pointer: a function template, a function returning
    std::string ([abi:cxx11]), std::string calls through the PLT into
    libstdc++, std::sort with a lambda (inline __unguarded_partition and
    operator() frames), an operator++ out of line (an .isra clone) and inlined.
  * perf record -N -q --buildid-all -e cpu-clock:u -F 4000 -g -- names 1.5
    (user space only: kernel names are not what this tests). A live
    recording may miss a function: everything is compared with perf (and
    addr2line) on this very recording, nothing asserts that a function is
    there.
  * conv -q --offline -o def DATA, and with --full-signatures -o full.

Checks (ok/FAIL per check; each fails on conv before issue 19's item 2):
  1. top 20: `go tool pprof -top -noinlines -nodecount=20` (sample counts)
     names and flat counts equal `perf report --no-children --sort sym -n`'s
     (summed per name over objects), and every name perf counts above the
     20th row is in pprof's top (ties at the 20th count may differ);
     perf's names with their symbol version cut (perf 6.1 prints libc6-dbg's
     "cfree@GLIBC_2.2.5"; conv names it "cfree", issue 31);
  2. every name pprof shows for a function with self samples is a name
     perf reports; PLT entries (...@plt) have perf's names and counts and
     none is left mangled;
  3. inline frames: at every address of the program where conv has an inline
     chain, the chain equals `addr2line -a -i -f -e BIN ADDR`'s, each name
     demangled as `addr2line -C` does but without the parameter list
     (`c++filt -p -i`, binutils' own demangler: addr2line -C's names minus
     return type and parameters; checked to be contained in addr2line -C's
     names). binutils names the innermost frame of an internal-linkage
     function (no DW_AT_linkage_name) after the ELF symbol around the address;
     there llvm-addr2line, which reads DW_AT_name, is the reference;
  4. pprof shows the names conv wrote: pprof rewrites a name that equals its
     system_name and looks like a demangled C++ name ("operator()<...>" was
     shown as "operator");
  5. system_name: the linkage (mangled) name for every demangled function,
     whose perf-form demangling is the name; "" only for functions without a
     linkage name, which are inline frames only;
  6. JFR (`jfr print --json`): the same method names as the pprof, leaf
     counts per name equal to pprof's flat counts (inline frames included),
     every C++ name one perf report gives (--children: callers too) or an
     inline name of check 3, none with a parameter list; and `jfr print`
     shows no doubled parameter list ("operator++()()");
  7. --full-signatures: every demangled name is addr2line -C's form
     (`c++filt -i`: return type and parameter list), some names have
     parameter lists, the other names are unchanged, and the JFR has the
     same names as that pprof.

Exits 77 printing SKIP: when perf, g++, go, jfr or binutils are missing or
perf cannot record here. Python 3 standard library only; every subprocess
has a timeout.
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import pprofdec  # noqa: E402
import vdso  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "src", "names.cpp")
TOP = 20

passed = failed = 0


def check(name, ok, detail=None):
    global passed, failed
    if ok:
        passed += 1
        print("ok   %s" % name)
    else:
        failed += 1
        print("FAIL %s" % name)
        if detail is not None:
            if isinstance(detail, str):
                text = detail
            elif isinstance(detail, (list, tuple, set)):
                text = "\n".join(str(d) for d in detail)
            else:
                text = repr(detail)
            for line in text.splitlines()[:40]:
                print("       %s" % line[:400])


def skip_all(why):
    print("SKIP: %s" % why)
    sys.exit(77)


def env():
    e = dict(os.environ)
    e.update(LC_ALL="C", PERF_PAGER="cat", PAGER="cat", GOTOOLCHAIN="local", GOFLAGS="")
    e.pop("DEBUGINFOD_URLS", None)
    return e


def run(cmd, timeout=120, input=None, check_rc=True):
    r = subprocess.run(cmd, input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout, env=env())
    if check_rc and r.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd[:4]), r.returncode,
                                                r.stderr.decode("utf-8", "replace")[-800:]))
    return r


# ---------------------------------------------------------------------------
# pprof protobuf (tests/tools/pprofdec.py)

def pprof_read(path):
    """sample_types [str], samples [(loc ids, values)], mappings {id: {...}},
    locations {id: {mapping, address, lines [(function id, line)]}},
    functions {id: (name, system_name)}."""
    p = pprofdec.read(path, errors="replace")
    return {"sample_types": [t for t, _ in p["types"]],
            "samples": [(ids, vals) for ids, vals, _ in p["samples"]],
            "mappings": {mid: {"start": m["start"], "offset": m["offset"], "file": m["file"]}
                         for mid, m in p["maps"].items()},
            "locations": {lid: {"mapping": mid, "address": addr, "lines": lines}
                          for lid, (mid, addr, lines) in p["locs"].items()},
            "functions": {fid: (name, sysname) for fid, (name, sysname, _) in p["funcs"].items()}}


def samples_index(p):
    for i, t in enumerate(p["sample_types"]):
        if t.endswith("_samples"):
            return i
    return 0


def pprof_flat(p):
    """Self samples per name, innermost (inline) frame first, as pprof's flat column."""
    k = samples_index(p)
    flat = collections.Counter()
    for locs, vals in p["samples"]:
        if locs and p["locations"][locs[0]]["lines"]:
            fid = p["locations"][locs[0]]["lines"][0][0]
            flat[p["functions"][fid][0]] += vals[k]
    return flat


def pprof_top(conv_out, p, extra, n):
    """[(name, flat)] of go tool pprof -top (counts), in its order."""
    r = run(["go", "tool", "pprof", "-top", "-nodecount=%d" % n, "-nodefraction=0",
             "-sample_index=%d" % samples_index(p)] + extra + [conv_out], timeout=120)
    rows, started = [], False
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        if line.strip().startswith("flat "):
            started = True
            continue
        if not started or not line.strip():
            continue
        cols = line.split(None, 5)
        if len(cols) < 6:
            continue
        rows.append((cols[5], int(float(cols[0]))))
    return rows


# ---------------------------------------------------------------------------
# references

def unversioned(name):
    """perf 6.1 prints .symtab names with their symbol version (cfree@GLIBC_2.2.5); conv cuts it."""
    at = name.find("@")
    return name if at <= 0 or name.endswith("@plt") else name[:at]


def perf_counts(data):
    r = run(["perf", "report", "-i", data, "--no-children", "--stdio", "-n", "-g", "none",
             "--sort", "sym", "--percent-limit", "0"], timeout=180)
    counts = collections.Counter()
    pat = re.compile(r"^\s*[\d.]+%\s+(\d+)\s+\[.\]\s+(.*?)\s*$")
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        m = pat.match(line)
        if m:
            counts[unversioned(m.group(2))] += int(m.group(1))
    return counts


def perf_all_names(data):
    """Every function perf report names in the call chains (--children: callers too)."""
    r = run(["perf", "report", "-i", data, "--children", "--stdio", "-g", "none",
             "--sort", "sym", "--percent-limit", "0"], timeout=180)
    pat = re.compile(r"^\s*[\d.]+%\s+[\d.]+%\s+\[.\]\s+(.*?)\s*$")
    return {unversioned(m.group(1)) for m in map(pat.match, r.stdout.decode("utf-8", "replace").splitlines())
            if m}


def cxxfilt(names, full):
    """binutils' demangler over names (a suffix from '@' kept, as perf keeps "@plt");
    full: addr2line -C's form, else the same without parameter list (c++filt -p)."""
    names = list(names)
    if not names:
        return {}
    heads = [n.split("@", 1)[0] for n in names]
    flags = ["-i"] if full else ["-p", "-i"]
    r = run(["c++filt"] + flags, input=("\n".join(heads) + "\n").encode(), timeout=60)
    out = r.stdout.decode("utf-8", "replace").split("\n")
    res = {}
    for n, h, d in zip(names, heads, out):
        res[n] = d + n[len(h):]
    return res


def addr2line(tool, binary, addrs, demangle):
    """{addr: [function, ...] innermost first} from TOOL -a -i -f [-C]."""
    res = {}
    addrs = sorted(addrs)
    for k in range(0, len(addrs), 500):
        part = addrs[k:k + 500]
        cmd = [tool, "-a", "-i", "-f"] + (["-C"] if demangle else []) + ["-e", binary]
        r = run(cmd + ["0x%x" % a for a in part], timeout=120)
        cur = None
        lines = r.stdout.decode("utf-8", "replace").splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            if re.match(r"^0x[0-9a-f]+$", line):
                cur = int(line, 16)
                res[cur] = []
                i += 1
                continue
            if cur is not None and i + 1 < len(lines):
                res[cur].append(line)
                i += 2
                continue
            i += 1
    return res


def load_segments(binary):
    """[(p_offset, p_vaddr, p_filesz)] of the executable PT_LOADs."""
    r = run(["readelf", "-lW", binary], timeout=30)
    segs = []
    for line in r.stdout.decode().splitlines():
        cols = line.split()
        if cols and cols[0] == "LOAD" and "E" in cols[6:-1]:
            segs.append((int(cols[1], 16), int(cols[2], 16), int(cols[4], 16)))
    return segs


def elf_symbols(binary):
    """[(address, size, mangled name)] of the defined function symbols, by address."""
    r = run(["nm", "-S", "--defined-only", binary], timeout=30)
    out = []
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        cols = line.split()
        if len(cols) == 4 and cols[2] in "tTwW":
            out.append((int(cols[0], 16), int(cols[1], 16), cols[3]))
    return sorted(out)


def symbol_at(syms, va):
    for a, n, name in syms:
        if a <= va < a + n:
            return name
    return None


def elf_address(loc, mapping, segs):
    off = loc["address"] - mapping["start"] + mapping["offset"]
    for p_off, p_va, size in segs:
        if p_off <= off < p_off + size:
            return off - p_off + p_va
    return None


def jfr_events(path):
    r = run(["jfr", "print", "--json", "--events", "jdk.ExecutionSample", "--stack-depth", "64",
             path], timeout=240)
    return json.loads(r.stdout.decode("utf-8", "replace"))["recording"]["events"]


def jfr_text(path):
    r = run(["jfr", "print", "--events", "jdk.ExecutionSample", "--stack-depth", "64", path],
            timeout=240)
    return r.stdout.decode("utf-8", "replace")


def jfr_names(events):
    """(set of native method names, leaf counts per name)."""
    names, leaf = set(), collections.Counter()
    for e in events:
        frames = e["values"]["stackTrace"]["frames"]
        for fr in frames:
            # unsymbolized frames are their address or "<remote>" (pprof: no line)
            if fr["type"] in ("Native", "C++") and \
                    not re.match(r"^(0x[0-9a-f]+|<remote>)$", fr["method"]["name"]):
                names.add(fr["method"]["name"])
        if frames and frames[0]["type"] in ("Native", "C++") and \
                not re.match(r"^(0x[0-9a-f]+|<remote>)$", frames[0]["method"]["name"]):
            leaf[frames[0]["method"]["name"]] += 1
    return names, leaf


def has_params(name):
    """Whether a demangled name ends in a parameter list (after cv-qualifiers and a clone
    suffix); "operator()" is a name, not a parameter list."""
    n = re.sub(r"( \[clone [^\]]*\])+$", "", name)
    n = re.sub(r"( const| volatile| &&| &)+$", "", n)
    return n.endswith(")") and not n.endswith("operator()")


def used_functions(p):
    """{function id: True if it is the outermost frame of some location}."""
    used = {}
    for loc in p["locations"].values():
        n = len(loc["lines"])
        for i, (fid, _) in enumerate(loc["lines"]):
            used[fid] = used.get(fid, False) or i == n - 1
    return used


def shorten(names, n=8):
    return "\n".join(sorted(names)[:n])


# ---------------------------------------------------------------------------

def main():
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    conv, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    for tool in ("perf", "g++", "go", "jfr", "addr2line", "c++filt", "readelf", "nm"):
        if not shutil.which(tool):
            skip_all("%s not found" % tool)
    llvm_a2l = shutil.which("llvm-addr2line") or shutil.which("llvm-addr2line-14")
    os.makedirs(work, exist_ok=True)
    binary = os.path.join(work, "names")
    data = os.path.join(work, "names.data")
    run(["g++", "-O2", "-g", "-fno-omit-frame-pointer", "-mno-omit-leaf-frame-pointer",
         "-o", binary, SRC], timeout=180)
    r = run(["perf", "record", "-N", "-q", "--buildid-all", "-e", "cpu-clock:u", "-F", "4000",
             "-g", "-o", data, "--", binary, "1.5"], timeout=120, check_rc=False)
    if r.returncode != 0 or not os.path.exists(data):
        skip_all("perf cannot record here: %s" % r.stderr.decode("utf-8", "replace")[-300:])
    # -N kept no copy of the vDSO, which conv takes from this kernel when the build-ids
    # match: perf gets it in its cache (HOME is the test's own under isolate.py)
    if os.environ.get("HOME"):
        vdso.install_for_recording(data, os.path.join(os.environ["HOME"], ".debug"), env=env())
    outs = {}
    for form, extra in (("def", []), ("full", ["--full-signatures"])):
        base = os.path.join(work, form)
        for ext in (".pb.gz", ".jfr"):
            if os.path.exists(base + ext):
                os.unlink(base + ext)
        rc = subprocess.run([conv, "-q", "--offline", "-o", base] + extra + [data],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=180,
                            env=env())
        if rc.returncode != 0 or not os.path.exists(base + ".pb.gz") or \
                not os.path.exists(base + ".jfr"):
            check("conv %s: exit 0, both outputs" % " ".join(extra + ["DATA"]), False,
                  "exit %d: %s" % (rc.returncode, rc.stderr.decode("utf-8", "replace")[-500:]))
        outs[form] = base
    if not os.path.exists(outs["def"] + ".pb.gz"):
        return
    perf = perf_counts(data)
    prof = pprof_read(outs["def"] + ".pb.gz")
    funcs = prof["functions"]
    print("recording: %d samples, %d names in perf report" % (sum(perf.values()), len(perf)))

    # 1. the top 20 without inline frames, as perf report --no-children counts
    top = pprof_top(outs["def"] + ".pb.gz", prof, ["-noinlines"], TOP)
    cut = min(c for _, c in top) if top else 0
    bad = ["%s: pprof %d, perf %d" % (n, c, perf.get(n, 0)) for n, c in top if perf.get(n) != c]
    check("top %d: pprof -top -noinlines names and flat counts equal perf report's" % TOP,
          len(top) == min(TOP, len(perf)) and not bad, bad or "%d rows" % len(top))
    names = {n for n, _ in top}
    missing = ["%s (%d)" % (n, c) for n, c in perf.most_common() if c > cut and n not in names]
    check("top %d: every name perf counts above the %d-th row is in pprof's top" % (TOP, TOP),
          not missing, missing)

    # 2. every name with self samples, and the PLT entries
    allrows = pprof_top(outs["def"] + ".pb.gz", prof, ["-noinlines"], 100000)
    # "[libgcc_s.so.1]": pprof's name for a frame without symbol (perf: its address)
    unknown = ["%s (%d)" % (n, c) for n, c in allrows if c and n not in perf and
               not re.match(r"^\[[^\]]*\]$", n)]
    check("every pprof name with self samples is a name perf reports", not unknown, unknown)
    plt = [(n, c) for n, c in allrows if n.endswith("@plt")]
    perf_plt_cxx = [n for n in perf if n.endswith("@plt") and "::" in n]
    if not perf_plt_cxx:
        print("skip PLT names: no sample in a C++ PLT entry in this recording")
    else:
        bad = ["%s: pprof %d, perf %d" % (n, c, perf.get(n, 0)) for n, c in plt
               if perf.get(n) != c or n.startswith("_Z")]
        bad += ["not in pprof: %s (%d)" % (n, perf[n]) for n in perf_plt_cxx
                if n not in dict(plt)]
        check("PLT entries: demangled, perf's names and counts (%d, %d C++)" %
              (len(plt), len(perf_plt_cxx)), plt and not bad, bad)

    # 3. inline chains against addr2line
    segs = load_segments(binary)
    real = os.path.realpath(binary)
    chains = {}
    for loc in prof["locations"].values():
        m = prof["mappings"].get(loc["mapping"])
        if not m or os.path.realpath(m["file"]) != real or len(loc["lines"]) < 2:
            continue
        va = elf_address(loc, m, segs)
        if va is not None:
            chains[va] = [funcs[fid] for fid, _ in loc["lines"]]
    syms = elf_symbols(binary)
    plain_syms = cxxfilt({n for _, _, n in syms}, False)
    ref = addr2line("addr2line", binary, chains, False)
    ref_c = addr2line("addr2line", binary, chains, True)
    llvm = addr2line(llvm_a2l, binary, chains, False) if llvm_a2l else {}
    mangled = set(n for v in list(ref.values()) + list(llvm.values()) for n in v)
    plain = cxxfilt(mangled, False)
    bad, compared, frames, by_llvm, inconsistent, ref_inline = [], 0, 0, 0, [], set()
    for va, chain in sorted(chains.items()):
        want = [plain[n] for n in ref.get(va, [])]
        for n, c in zip(ref.get(va, []), ref_c.get(va, [])):
            if plain[n] not in c:
                inconsistent.append("%s not in %s" % (plain[n], c))
        got = [name for name, _ in chain]
        lv = llvm.get(va, [])
        sym = symbol_at(syms, va)
        if len(want) > 1 and sym and want[0] == plain_syms.get(sym) and len(lv) == len(want) \
                and plain[lv[0]] != want[0]:
            # binutils names the innermost frame of a function without linkage name
            # after the ELF symbol around the address; llvm-addr2line reads its DW_AT_name
            want[0] = plain[lv[0]]
            by_llvm += 1
        compared += 1
        frames += len(got) - 1
        ref_inline.update(want[:-1])
        if want[:-1] != got[:-1] or len(want) != len(got):
            bad.append("0x%x: conv %s\n        addr2line %s" % (va, got, want))
    # the reference itself: c++filt -p's names are addr2line -C's without the signature
    bad += ["reference: %s" % x for x in inconsistent]
    check("inline frames: %d chains (%d inline frames, %d innermost by llvm-addr2line) equal "
          "addr2line -i's without parameter lists" % (compared, frames, by_llvm),
          compared > 0 and not bad, bad)

    # 4. pprof shows what conv wrote
    wrote = {n for n, _ in funcs.values()}
    shown = pprof_top(outs["def"] + ".pb.gz", prof, [], 100000)
    # "<unknown>", "[lib.so]", "[[vdso]]": frames conv could not symbolize (no line)
    rewritten = [n for n, _ in shown if n != "<unknown>" and not re.match(r"^\[.*\]$", n)
                 and re.sub(r" \(inline\)$", "", n) not in wrote]
    check("go tool pprof -top shows the names conv wrote (%d rows)" % len(shown),
          shown and not rewritten, rewritten)

    # 5. system_name
    used = used_functions(prof)
    dem = cxxfilt([s for n, s in funcs.values() if s.startswith("_Z")], False)
    bad = []
    for fid, (name, sysname) in funcs.items():
        if fid not in used:
            continue
        if sysname.startswith("_Z"):
            if dem[sysname] != name:
                bad.append("%s: system_name %s demangles to %s" % (name, sysname, dem[sysname]))
        elif sysname == "":
            if used[fid]:
                bad.append("%s: no system_name but an outermost frame" % name)
        elif sysname != name:
            bad.append("%s: system_name %s" % (name, sysname))
        if name.startswith("_Z"):
            bad.append("%s: left mangled" % name)
    check("system_name: the mangled name of every demangled function, perf's form of it the "
          "name", not bad, bad)

    # 6. the JFR has the pprof's names, which are perf's and addr2line's
    events = jfr_events(outs["def"] + ".jfr")
    jnames, jleaf = jfr_names(events)
    pnames = {funcs[fid][0] for fid in used}
    flat = pprof_flat(prof)
    known = perf_all_names(data) | ref_inline
    bad = ["only in the JFR: %s" % n for n in sorted(jnames - pnames)]
    bad += ["only in the pprof: %s" % n for n in sorted(pnames - jnames)]
    bad += ["leaf frames of %s: JFR %d, pprof %d" % (n, jleaf[n], flat[n])
            for n in sorted(set(jleaf) | set(flat)) if jleaf[n] != flat[n]]
    # C++ names: the program's and libstdc++'s (C names are not at issue here)
    bad += ["neither perf's nor addr2line's: %s" % n for n in sorted(jnames)
            if re.search(r"::|<|operator", n) and n not in known]
    bad += ["with a parameter list: %s" % n for n in sorted(jnames) if has_params(n)]
    check("JFR: the pprof's method names and leaf counts, each C++ name perf report's "
          "(--children) or addr2line -i's (%d names)" % len(jnames), jnames and not bad, bad)
    text = jfr_text(outs["def"] + ".jfr")
    # a native frame is "library.name() line: N": the "()" is its empty descriptor
    doubled = set()
    for line in text.splitlines():
        m = re.match(r"^\s*(.*)\(\) line: \d+\s*$", line)
        if m and has_params(m.group(1)):
            doubled.add(line.strip())
    doubled = sorted(doubled)
    check("jfr print: no doubled parameter list", not doubled, doubled[:10])

    # 7. --full-signatures
    if not os.path.exists(outs["full"] + ".pb.gz") or not os.path.exists(outs["full"] + ".jfr"):
        check("--full-signatures: demangled names have addr2line -C's signatures", False,
              "no output")
        check("--full-signatures: the JFR has the same names as the pprof", False, "no output")
    else:
        fprof = pprof_read(outs["full"] + ".pb.gz")
        ffuncs = fprof["functions"]
        fused = used_functions(fprof)
        full = cxxfilt([s for n, s in ffuncs.values() if s.startswith("_Z")], True)
        bad, with_params = [], 0
        for fid, (name, sysname) in ffuncs.items():
            if fid not in fused:
                continue
            if sysname.startswith("_Z"):
                if full[sysname] != name:
                    bad.append("%s: addr2line -C form %s" % (name, full[sysname]))
                with_params += "(" in name
        defaults = {s: n for n, s in funcs.values() if not s.startswith("_Z")}
        changed = [n for n, s in ffuncs.values() if not s.startswith("_Z") and s in defaults and
                   s and defaults[s] != n]
        check("--full-signatures: demangled names have addr2line -C's signatures (%d with "
              "parameter lists)" % with_params, with_params > 0 and not bad and not changed,
              bad + changed)
        fjnames, _ = jfr_names(jfr_events(outs["full"] + ".jfr"))
        fpnames = {ffuncs[fid][0] for fid in fused}
        check("--full-signatures: the JFR has the same names as the pprof", fjnames == fpnames,
              "only JFR: %s\nonly pprof: %s" % (shorten(fjnames - fpnames),
                                                shorten(fpnames - fjnames)))


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        check("the test ran to its end", False, str(e))
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)
