#!/usr/bin/env python3
"""Self-check of gen_remote_jfr.py (the remote-symbolication JFR generator).

usage: test_gen_remote_jfr.py [WORKDIR]      (default: a fresh directory in /tmp)

Builds two tiny C programs with `cc -O1 -g -Wl,--build-id`, one non-PIE
(-fno-pie -no-pie, ELF type EXEC) and one PIE (-pie -fPIE, ELF type DYN),
takes ELF addresses inside two functions of each with `nm -S`, writes a
samples JSON and runs the generator in three ways:
  dd    Datadog style, defaults (frame type key 7 with no pool entry, as Datadog)
  dd7   Datadog style, --frame-type-7 "Native remote", the PIE placed by --base
  conv  --conv-style (conv's own unsymbolized-frame form)
Then reads each file with the JDK's `jfr` (`jfr summary`, `jfr print --json
--events jdk.ExecutionSample,jdk.NativeLibrary`) and checks:
  * jfr reads it without error; the event counts are right;
  * every jdk.NativeLibrary has name, baseAddress, topAddress, buildId,
    loadBias; buildId = `readelf -n`'s; non-PIE: loadBias 0 and baseAddress =
    the ELF address of file offset 0; PIE: page-aligned non-zero loadBias and
    baseAddress = loadBias + that ELF address;
  * every frame: method `<remote>`, class = the binary's build-id, line 0,
    modifiers 0x100; dd: descriptor "0x<offset>", bci -19, type as written;
    conv: descriptor "(L0x<vaddr>;)L;", bci 0, type Native (conv-old:
    "(0x<vaddr>)", --conv-old-descriptor);
  * the symbolizer's arithmetic gives back the ELF address put in:
    dd: offset + baseAddress - loadBias (and offset + ELF address of file
    offset 0, from `readelf -lW` alone); conv: the descriptor's number;
    and `addr2line -f` names the intended function at that address;
  * the text form of `jfr print` works on the conv-style file and shows each
    frame's address: `<remote>(0x<vaddr>)`;
  * the output is deterministic; bad input (address outside every PT_LOAD,
    unknown binary, binary without build-id, non-ELF file, bad JSON) exits
    non-zero with a message and writes no file; success writes one line to
    stderr and nothing to stdout.

Prints "ok ..." / "FAIL ..." lines and a final count; exit 1 on a failure,
77 ("SKIP: ...") when no `jfr`, no C compiler or no binutils (nm, readelf).
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "gen_remote_jfr.py")
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
import testlib  # noqa: E402

PAGE = 0x1000

def sh(cmd, timeout=120, **kw):
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, "", "timed out after %ds" % timeout)


def find_jfr():
    env = os.environ.get("JFR")
    if env:
        return env if os.access(env, os.X_OK) else None
    w = shutil.which("jfr")
    if w:
        return w
    cands = sorted(glob.glob("/usr/lib/jvm/*/bin/jfr"))
    return cands[0] if cands else None


C_SRC = r"""
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) long %(p)s_leaf(long n)
{
	volatile long s = 0;
	for (long i = 0; i < n; i++)
		s += i * 3 + (s >> 2);
	return s;
}
__attribute__((noinline)) long %(p)s_caller(long n)
{
	long r = %(p)s_leaf(n) + 1;
	if (r & 1)
		r += %(p)s_leaf(n / 2);
	return r;
}
int main(int argc, char **argv)
{
	printf("%%ld\n", %(p)s_caller(argc > 1 ? atol(argv[1]) : 1000));
	return 0;
}
"""


def build(cc, work, name, flags, prefix):
    src = os.path.join(work, name + ".c")
    with open(src, "w") as f:
        f.write(C_SRC % {"p": prefix})
    out = os.path.join(work, name)
    r = sh([cc, "-O1", "-g"] + flags + ["-o", out, src])
    if r.returncode != 0:
        return None, r.stderr.strip()
    return out, None


def elf_facts(path):
    """(type, build-id, ELF address of file offset 0, {func: (addr, size)}) from binutils."""
    h = sh(["readelf", "-hW", path]).stdout
    m = re.search(r"Type:\s+(\w+)", h)
    etype = m.group(1) if m else None
    n = sh(["readelf", "-n", path]).stdout
    m = re.search(r"Build ID:\s*([0-9a-fA-F]+)", n)
    bid = m.group(1).lower() if m else None
    loads = []
    for line in sh(["readelf", "-lW", path]).stdout.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            loads.append((int(f[2], 16), int(f[1], 16), int(f[5], 16)))  # vaddr, offset, memsz
    loads.sort()
    file0 = loads[0][0] - loads[0][1] if loads else None
    funcs = {}
    for line in sh(["nm", "-S", "--defined-only", path]).stdout.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "Tt":
            funcs[f[3]] = (int(f[0], 16), int(f[1], 16))
    return etype, bid, file0, loads, funcs


def instant_ns(s):
    """'2023-11-14T22:13:20.000001Z' -> ns within the day (enough to order and compare)."""
    m = re.search(r"T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?Z$", s or "")
    if not m:
        return None
    frac = (m.group(4) or "").ljust(9, "0")[:9]
    return ((int(m.group(1)) * 60 + int(m.group(2))) * 60 + int(m.group(3))) * 10 ** 9 + int(frac)


def main():
    jfr = find_jfr()
    if not jfr:
        testlib.skip_all("no jfr tool (JDK) found")
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        testlib.skip_all("no C compiler")
    for tool in ("nm", "readelf"):
        if not shutil.which(tool):
            testlib.skip_all("no %s" % tool)
    addr2line = shutil.which("addr2line")

    if len(sys.argv) > 1:
        work = os.path.abspath(sys.argv[1])
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        keep = True
    else:
        work = tempfile.mkdtemp(prefix="gen_remote_jfr.", dir="/tmp")
        keep = False
    print("     jfr: %s; cc: %s; work: %s" % (jfr, cc, work))

    nopie, err = build(cc, work, "prog_nopie", ["-fno-pie", "-no-pie", "-Wl,--build-id"], "np")
    if not nopie:
        testlib.skip_all("cannot build a non-PIE program: %s" % err)
    pie, err = build(cc, work, "prog_pie", ["-pie", "-fPIE", "-Wl,--build-id"], "pi")
    if not pie:
        testlib.skip_all("cannot build a PIE program: %s" % err)
    noid, _ = build(cc, work, "prog_noid", ["-Wl,--build-id=none"], "ni")

    bins = {}
    for path, want_type, prefix in ((nopie, "EXEC", "np"), (pie, "DYN", "pi")):
        etype, bid, file0, loads, funcs = elf_facts(path)
        name = os.path.basename(path)
        testlib.check("%s is ELF type %s" % (name, want_type), etype == want_type, etype)
        testlib.check("%s has a build-id" % name, bid is not None and len(bid) >= 16, bid)
        fl = {}
        for fn in ("leaf", "caller"):
            a = funcs.get("%s_%s" % (prefix, fn))
            testlib.check("%s: nm finds %s_%s" % (name, prefix, fn), a is not None and a[1] > 8, a)
            fl[fn] = a
        if None in fl.values() or bid is None:
            testlib.check("%s: the facts the generator needs" % name, False, fl)
            testlib.finish()
        bins[name] = {"path": path, "type": etype, "bid": bid, "file0": file0, "loads": loads,
                      "funcs": {"%s_%s" % (prefix, k): v for k, v in fl.items()}}

    # addresses: a function start, and points inside functions (a pc mid-function)
    def at(binname, fn, delta):
        a, size = bins[binname]["funcs"][fn]
        return (binname, a + min(delta, size - 1), fn)

    NP, PI = "prog_nopie", "prog_pie"
    stacks = [
        [at(PI, "pi_leaf", 0), at(PI, "pi_caller", 5), at(NP, "np_caller", 7)],
        [at(NP, "np_leaf", 3), at(NP, "np_caller", 0)],
        [at(PI, "pi_leaf", 6), at(PI, "pi_caller", 5), at(NP, "np_leaf", 1),
         at(NP, "np_caller", 7)],
    ]
    plan = [  # (thread, time_ns, stack index, truncated)
        (1234, 5000000, 0, False), (1235, 6000000, 1, True), (1234, 7000000, 0, False),
        (4321, 8000000, 2, False), (1235, 9000000, 1, True),
    ]
    samples = []
    for tid, t, si, tr in plan:
        s = {"thread": tid, "time_ns": t,
             "frames": [[b, "0x%x" % a] for b, a, _ in stacks[si]]}
        if tr:
            s["truncated"] = True
        samples.append(s)
    spec = os.path.join(work, "samples.json")
    with open(spec, "w") as f:
        json.dump(samples, f, indent=1)

    pie_base = 0x55d0c0a00000
    runs = {
        "dd": ([], None, -19, "0x"),
        "dd7": (["--frame-type-7", "Native remote", "--base", "%s=0x%x" % (PI, pie_base)],
                "Native remote", -19, "0x"),
        "conv": (["--conv-style"], "Native", 0, "("),
        "conv-old": (["--conv-style", "--conv-old-descriptor"], "Native", 0, "("),
    }
    conv_desc = {"conv": r"^\(L0x([1-9a-f][0-9a-f]*);\)L;$", "conv-old": r"^\(0x([1-9a-f][0-9a-f]*)\)$"}
    for mode, (extra, want_type, want_bci, _) in runs.items():
        out = os.path.join(work, mode + ".jfr")
        cmd = [sys.executable, GEN, out, nopie, pie, "--samples", spec] + extra
        r = sh(cmd)
        print("     $ %s" % " ".join(cmd))
        if not testlib.check("[%s] generator exits 0" % mode, r.returncode == 0, r.stderr.strip()):
            continue
        testlib.check("[%s] generator: one summary line on stderr, nothing on stdout" % mode,
              r.stdout == "" and len(r.stderr.strip().splitlines()) == 1, (r.stdout, r.stderr))
        print("     %s" % r.stderr.strip())

        # determinism
        out2 = os.path.join(work, mode + ".again.jfr")
        sh(cmd[:2] + [out2] + cmd[3:])
        with open(out, "rb") as a, open(out2, "rb") as b:
            testlib.check("[%s] output is deterministic" % mode, a.read() == b.read())

        # jfr summary
        r = sh([jfr, "summary", out])
        if not testlib.check("[%s] jfr summary reads the file" % mode, r.returncode == 0,
                     (r.stdout + r.stderr)[-400:]):
            continue
        counts = {}
        for line in r.stdout.splitlines():
            f = line.split()
            if len(f) >= 3 and f[1].isdigit() and "." in f[0]:
                counts[f[0]] = int(f[1])
        want = {"jdk.ExecutionSample": len(samples), "jdk.NativeLibrary": 2,
                "jdk.ActiveSetting": 3, "jdk.OSInformation": 1}
        testlib.check("[%s] jfr summary counts %s" % (mode, want),
              all(counts.get(k) == v for k, v in want.items()), counts)

        # jfr print --json
        r = sh([jfr, "print", "--json", "--stack-depth", "64", "--events",
                "jdk.ExecutionSample,jdk.NativeLibrary", out])
        if not testlib.check("[%s] jfr print --json reads the file" % mode, r.returncode == 0,
                     (r.stdout + r.stderr)[-400:]):
            continue
        try:
            evs = json.loads(r.stdout)["recording"]["events"]
        except (ValueError, KeyError, TypeError) as e:
            testlib.check("[%s] jfr print --json output is JSON" % mode, False, e)
            continue
        libs = [e["values"] for e in evs if e["type"] == "jdk.NativeLibrary"]
        sams = [e["values"] for e in evs if e["type"] == "jdk.ExecutionSample"]
        testlib.check("[%s] 2 NativeLibrary, %d ExecutionSample events" % (mode, len(samples)),
              len(libs) == 2 and len(sams) == len(samples), (len(libs), len(sams)))

        by_bid = {}
        for lib in libs:
            keys = ("name", "baseAddress", "topAddress", "buildId", "loadBias")
            if not testlib.check("[%s] NativeLibrary %s has %s" % (mode, lib.get("name"), "/".join(keys)),
                         all(k in lib and lib[k] is not None for k in keys), lib):
                continue
            b = [x for x in bins.values() if x["path"] == lib["name"]]
            if not testlib.check("[%s] NativeLibrary name is a binary's absolute path" % mode,
                         len(b) == 1, lib["name"]):
                continue
            b = b[0]
            nm = os.path.basename(b["path"])
            base, top, bias = lib["baseAddress"], lib["topAddress"], lib["loadBias"]
            testlib.check("[%s] %s buildId = readelf's %s" % (mode, nm, b["bid"]),
                  lib["buildId"] == b["bid"], lib["buildId"])
            if b["type"] == "EXEC":
                testlib.check("[%s] %s (EXEC): loadBias 0, baseAddress 0x%x = ELF address of file "
                      "offset 0" % (mode, nm, base), bias == 0 and base == b["file0"],
                      (hex(bias), hex(base), hex(b["file0"])))
            else:
                ok = bias != 0 and bias % PAGE == 0 and base == bias + b["file0"]
                if mode == "dd7":
                    ok = ok and base == pie_base
                testlib.check("[%s] %s (DYN): loadBias 0x%x page-aligned, baseAddress = loadBias + ELF "
                      "address of file offset 0" % (mode, nm, bias), ok, (hex(bias), hex(base)))
            end = max(v + m for v, _, m in b["loads"])
            testlib.check("[%s] %s topAddress 0x%x covers the last PT_LOAD" % (mode, nm, top),
                  base < top and top >= end + bias and top % PAGE == 0, hex(top))
            by_bid[lib["buildId"]] = (b, lib)
        r0 = sorted((l["baseAddress"], l["topAddress"]) for l in libs if "baseAddress" in l)
        testlib.check("[%s] the libraries do not overlap" % mode,
              all(a[1] <= c[0] for a, c in zip(r0, r0[1:])), r0)

        # samples, in time order
        sams.sort(key=lambda v: instant_ns(v.get("startTime")) or 0)
        exp = sorted(plan, key=lambda p: p[1])
        bad = []
        recovered = {}
        for (tid, _t, si, tr), got in zip(exp, sams):
            thr = got.get("sampledThread") or {}
            st = got.get("stackTrace") or {}
            frames = st.get("frames") or []
            if thr.get("osThreadId") != tid:
                bad.append("thread %r != %d" % (thr.get("osThreadId"), tid))
            if st.get("truncated") != tr:
                bad.append("truncated %r != %r" % (st.get("truncated"), tr))
            if got.get("state") != "STATE_DEFAULT":
                bad.append("state %r" % got.get("state"))
            if len(frames) != len(stacks[si]):
                bad.append("%d frames != %d" % (len(frames), len(stacks[si])))
                continue
            for fr, (bname, vaddr, fn) in zip(frames, stacks[si]):
                b = bins[bname]
                meth = fr.get("method") or {}
                cls = (meth.get("type") or {}).get("name")
                desc = meth.get("descriptor") or ""
                why = []
                if meth.get("name") != "<remote>":
                    why.append("method %r" % meth.get("name"))
                if cls != b["bid"]:
                    why.append("class %r != build-id %s" % (cls, b["bid"]))
                if meth.get("modifiers") != 0x100:
                    why.append("modifiers %r" % meth.get("modifiers"))
                if fr.get("lineNumber") != 0:
                    why.append("line %r" % fr.get("lineNumber"))
                if fr.get("bytecodeIndex") != want_bci:
                    why.append("bci %r" % fr.get("bytecodeIndex"))
                if fr.get("type") != want_type:
                    why.append("type %r" % fr.get("type"))
                lib = by_bid.get(cls, (None, None))[1]
                if mode in conv_desc:
                    m = re.match(conv_desc[mode], desc)
                    got_vaddr = int(m.group(1), 16) if m else None
                    alt = got_vaddr
                else:
                    m = re.match(r"^0x(0|[1-9a-f][0-9a-f]*)$", desc)
                    off = int(m.group(1), 16) if m else None
                    got_vaddr = off + lib["baseAddress"] - lib["loadBias"] \
                        if m and lib else None
                    alt = off + b["file0"] if m else None
                    if m and lib and not (lib["baseAddress"] <= off + lib["baseAddress"] <
                                          lib["topAddress"]):
                        why.append("runtime address outside [baseAddress, topAddress)")
                if not m:
                    why.append("descriptor %r" % desc)
                elif got_vaddr != vaddr or alt != vaddr:
                    why.append("descriptor %s gives 0x%x / 0x%x, not 0x%x"
                               % (desc, got_vaddr or 0, alt or 0, vaddr))
                else:
                    recovered[(b["path"], vaddr)] = fn
                if why:
                    bad.append("%s 0x%x: %s" % (bname, vaddr, "; ".join(why)))
        n_frames = sum(len(stacks[p[2]]) for p in plan)
        testlib.check("[%s] %d frames: <remote>, class = build-id, descriptor %s, line 0, bci %d, "
              "type %s, thread/truncated/state right" % (mode, n_frames, {"conv": "(L0x<vaddr>;)L;",
                                                          "conv-old": "(0x<vaddr>)"}.get(mode, "0x<offset>"),
                                                         want_bci, want_type),
              not bad, bad[:6])
        testlib.check("[%s] %s recovers every ELF address" % (
            mode, "offset + baseAddress - loadBias (= offset + ELF addr of file offset 0)"
            if mode not in conv_desc else "the descriptor"),
            len(recovered) == len({(bins[b]["path"], a) for s in stacks for b, a, _ in s}),
            len(recovered))
        if addr2line:
            wrong = []
            for (path, vaddr), fn in sorted(recovered.items()):
                r = sh([addr2line, "-f", "-e", path, "0x%x" % vaddr])
                name = r.stdout.splitlines()[0] if r.stdout else ""
                if name != fn:
                    wrong.append("%s 0x%x: %r != %s" % (os.path.basename(path), vaddr, name, fn))
            testlib.check("[%s] addr2line -f names the intended function at each recovered address"
                  % mode, recovered and not wrong, wrong)
        if mode == "conv":
            r = sh([jfr, "print", "--stack-depth", "64", "--events", "jdk.ExecutionSample", out])
            testlib.check("[conv] jfr print (text) reads the conv-style file",
                  r.returncode == 0 and "<remote>(" in r.stdout, (r.stdout + r.stderr)[-300:])
            shown = set(int(a, 16) for a in re.findall(r"\.<remote>\(0x([0-9a-f]+)\) line:", r.stdout))
            want_addrs = {a for _, a in recovered}
            testlib.check("[conv] jfr print shows each frame's ELF address: <remote>(0x<vaddr>) (%d of %d)"
                          % (len(shown & want_addrs), len(want_addrs)),
                          want_addrs and want_addrs <= shown, sorted(want_addrs - shown)[:5])

    # bad input
    def bad_input(name, binaries, spec_text, want_msg):
        out = os.path.join(work, "bad.jfr")
        if os.path.exists(out):
            os.remove(out)
        r = sh([sys.executable, GEN, out] + binaries + ["--samples", spec_text])
        testlib.check("bad input (%s): exit %d, message %r, no file" % (name, r.returncode,
                                                               r.stderr.strip()[-90:]),
              r.returncode != 0 and want_msg in r.stderr and r.stdout == ""
              and not os.path.exists(out), (r.returncode, r.stderr[-300:]))

    one = lambda b, a: json.dumps([{"thread": 1, "time_ns": 1, "frames": [[b, a]]}])
    leaf = "0x%x" % bins[NP]["funcs"]["np_leaf"][0]
    bad_input("address in no PT_LOAD", [nopie], one(NP, "0x10"), "no PT_LOAD")
    bad_input("unknown binary", [nopie], one("nosuch", leaf), "not one of the binaries")
    if noid:
        bad_input("no build-id", [noid], one("prog_noid", "0x1000"), "no GNU build-id")
    bad_input("not ELF", [spec], one("samples.json", "0x1"), "not an ELF file")
    bad_input("bad JSON", [nopie], "[{", "not JSON")
    bad_input("missing samples file", [nopie], os.path.join(work, "nosuch.json"), "--samples")
    bad_input("thread 0", [nopie], json.dumps([{"thread": 0, "time_ns": 1,
                                               "frames": [[NP, leaf]]}]), "thread")

    if not keep and not testlib.failed:
        shutil.rmtree(work, ignore_errors=True)
    elif testlib.failed:
        print("     files kept in %s" % work)
    testlib.finish()


if __name__ == "__main__":
    main()
