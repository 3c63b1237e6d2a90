#!/usr/bin/env python3
"""Names as perf shows them (issue 31, What 8): libc's aliases and JIT code without a perf map.

usage: test_names_perf.py CONV WORKDIR

libc (tests/cli/src/names_libc.c, gcc -O1 -g -fno-omit-frame-pointer: qsort and
malloc/free of small blocks, so libc's code is sampled):
  perf record -N -q -e cpu-clock:u -F 4000 -g, then perf report and conv on the
  same file, in two variants:
    * debug: libc6-dbg's file for this libc is in /usr/lib/debug/.build-id
      (skipped when it is not installed). Its .symtab holds versioned names
      (cfree@GLIBC_2.2.5, __libc_start_main@@GLIBC_2.34) beside the aliases;
    * nodebug: /usr/lib/debug hidden by an empty directory bind-mounted over
      it in a private mount namespace (unshare -m; skipped where that cannot
      be made), so both tools read libc's .dynsym only.
  HOME is an empty directory for both tools (no perf buildid cache; -N adds
  nothing to it). Checks per variant:
    1. no function name of conv's pprof carries a symbol version ('@' other
       than "@plt");
    2. leaf names and counts equal `perf report --no-children --sort sym -n`'s,
       perf's names with their version cut (perf 6.1 prints .symtab names with
       their versions, which is what conv leaves out) and summed per name;
       addresses perf cannot name and PLT entries are left out (perf 6.1
       names libc's IRELATIVE slots "@plt" and the program's .plt.sec stubs
       "_init", the symbol before them; conv names both SYMBOL@plt, as
       objdump does; test_names checks PLT names).
  A libc name must have been sampled for check 2 to say something: the
  recording must name at least one libc function on both sides.

JVM without a perf map (tests/conformance/jit/JitWork.java, java
-XX:+PreserveFramePointer, no -XX:+DumpPerfMapAtExit, no agent):
  perf record -N -q -e cpu-clock -F 999 -g. "Distinct stacks" are perf
  script's distinct call chains by symbol name (-F ip,sym) and conv's
  distinct pprof stacks by each location's function (its outermost one: perf
  script shows no inline frames), a location without one named as the views
  name it (LIB+0xOFFSET, [unknown] outside any mapping).
    3. conv's count equals perf's (within 2 %, at least 2: perf and conv may end a broken
       frame-pointer chain one stray word apart);
    4. every location in a JIT mapping that no map names has one function per
       process, perf's DSO for it ("[JIT] tid PID"), and keeps its address;
    5. `conv info --dso`: one row per (thread, object, event), sorted by
       samples, and each thread's [JIT] row equals perf report --sort
       pid,dso's (the JVM's code heaps are three mappings of one object).

Fails on conv before issue 31 (checks 1-2 with the debug file: cfree@GLIBC_2.2.5;
3: 293 against 107 distinct stacks; 4: no function; 5: [JIT] tid N in three
rows, 23 + 2 + 1304 where perf has 1329, unsorted). Exits 77 printing SKIP:
when perf, gcc or java cannot run here. Every subprocess has a timeout; the
/tmp/perf-PID.map of the recorded JVM, should one appear, is removed.
"""
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
import pprofdec  # noqa: E402
import testlib as t  # noqa: E402

CONV, WORK = sys.argv[1], sys.argv[2]
SRC = os.path.join(HERE, "src", "names_libc.c")
JIT_SRC = os.path.join(os.path.dirname(HERE), "conformance", "jit", "JitWork.java")
SEP = "\x1f"
LIBC = "/lib/x86_64-linux-gnu/libc.so.6"


skip, finish = t.skip, t.finish


def env(home=None):
    e = dict(os.environ, LC_ALL="C", PERF_PAGER="cat", PAGER="cat")
    e.pop("DEBUGINFOD_URLS", None)
    if home:
        e["HOME"] = home
    return e


def sh(cmd, timeout=180, home=None):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                          env=env(home), universal_newlines=True, errors="replace")


def in_ns(cmds, hide_debug, home, timeout=300):
    """Runs shell commands, with /usr/lib/debug hidden when hide_debug."""
    script = " && ".join(cmds)
    if hide_debug:
        empty = os.path.join(WORK, "empty-debug")
        os.makedirs(empty, exist_ok=True)
        script = "mount --bind %s /usr/lib/debug && %s" % (empty, script)
        return sh(["unshare", "-m", "--propagation", "private", "sh", "-c", script], timeout, home)
    return sh(["sh", "-c", script], timeout, home)


def q(s):
    return "'" + s.replace("'", "'\\''") + "'"


def unversioned(name):
    at = name.find("@")
    return name if at <= 0 or name.endswith("@plt") else name[:at]


def perf_leaf_counts(text):
    """{name: samples} of `perf report -t SEP --sort sym -n` (version cut), unnamed and PLT left out."""
    out = collections.Counter()
    for line in text.splitlines():
        if line.startswith("#") or SEP not in line:
            continue
        f = [x.strip() for x in line.split(SEP)]
        if len(f) < 3 or not f[1].isdigit():
            continue
        sym = re.sub(r"^\[[.k]\]\s*", "", f[2])
        if not sym or sym.startswith("0x") or sym.endswith("@plt") or sym == "_init":
            continue
        out[unversioned(sym)] += int(f[1])
    return out


def outer_name(p, lid):
    mid, addr, lines = p["locs"][lid]
    if lines:
        return p["funcs"][lines[-1][0]][0]
    if not mid:
        return "[unknown]"
    m = p["maps"][mid]
    return "%s+0x%x" % (m["file"].rsplit("/", 1)[-1], addr - m["start"] + m["offset"])


def conv_leaf_counts(p):
    out = collections.Counter()
    for ids, vals, _ in p["samples"]:
        if not ids:
            continue
        mid, _, lines = p["locs"][ids[0]]
        if not lines:
            continue
        name = p["funcs"][lines[-1][0]][0]
        if name.endswith("@plt") or name.startswith("[truncated"):
            continue
        out[name] += vals[0]
    return out


def libc_variant(name, data, hide):
    home = os.path.join(WORK, "home-" + name)
    os.makedirs(home, exist_ok=True)
    pb = os.path.join(WORK, name + ".pb.gz")
    rep = os.path.join(WORK, name + ".report")
    r = in_ns(["perf report -f -i %s --stdio -n --no-children --sort sym -g none -t %s > %s"
               % (q(data), q(SEP), q(rep)),
               "timeout 120 %s -q --offline --pprof %s %s" % (q(CONV), q(pb), q(data))], hide, home)
    if r.returncode:
        if hide:
            skip("%s: libc names" % name, "cannot hide /usr/lib/debug here: %s" % r.stderr.strip()[-200:])
            return
        t.check("%s: perf report and conv read the recording" % name, False, r.stderr[-400:])
        return
    p = pprofdec.read(pb, errors="replace")
    versioned = sorted({n for n, _, _ in p["funcs"].values() if "@" in n and not n.endswith("@plt")})
    t.check("%s: no function name carries a symbol version (%d functions)" % (name, len(p["funcs"])),
            not versioned, versioned[:8])
    with open(rep) as fh:
        perf = perf_leaf_counts(fh.read())
    conv = conv_leaf_counts(p)
    libc_names = {n for n, _, _ in p["funcs"].values()} & set(perf)
    diffs = sorted((n, perf.get(n, 0), conv.get(n, 0)) for n in set(perf) | set(conv)
                   if perf.get(n, 0) != conv.get(n, 0))
    print("     %s: perf names %d leaf functions (%d samples), conv %d (%d)"
          % (name, len(perf), sum(perf.values()), len(conv), sum(conv.values())))
    t.check("%s: leaf names and counts equal perf report's, versions cut (%d names)" % (name, len(perf)),
            perf and not diffs and len(libc_names) > 0, diffs[:8])


def libc_part():
    if not shutil.which("gcc"):
        skip("libc", "no gcc")
        return
    prog = os.path.join(WORK, "names_libc")
    r = sh(["gcc", "-O1", "-g", "-fno-omit-frame-pointer", SRC, "-o", prog])
    if r.returncode:
        t.check("libc: the program builds", False, r.stderr[-300:])
        return
    data = os.path.join(WORK, "libc.data")
    r = sh(["perf", "record", "-N", "-q", "-e", "cpu-clock:u", "-F", "4000", "-g", "-o", data,
            "--", prog, "300"], timeout=120)
    if r.returncode or not os.path.exists(data):
        skip("libc", "perf record failed: %s" % r.stderr.strip()[-200:])
        return
    bid = ""
    n = sh(["readelf", "-n", LIBC]) if os.path.exists(LIBC) else None
    m = re.search(r"Build ID: ([0-9a-f]+)", n.stdout) if n else None
    if m:
        bid = m.group(1)
    dbg = "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:]) if bid else ""
    if dbg and os.path.exists(dbg):
        libc_variant("debug", data, False)
    else:
        skip("debug: libc names", "libc6-dbg's file for libc (build-id %s) is not installed" % (bid or "?"))
    libc_variant("nodebug", data, True)


def perf_chains(data):
    r = sh(["perf", "script", "-f", "-i", data, "-F", "ip,sym"], timeout=180)
    if r.returncode:
        return None
    chains, cur = set(), []
    for line in r.stdout.splitlines() + [""]:
        if not line.strip():
            if cur:
                chains.add(tuple(cur))
            cur = []
            continue
        f = line.split(None, 1)
        cur.append(f[1].strip() if len(f) > 1 else "")
    return chains


def jvm_part():
    java, javac = shutil.which("java"), shutil.which("javac")
    if not java or not javac:
        skip("jvm", "java/javac not on PATH")
        return
    r = sh([javac, "-d", WORK, JIT_SRC], timeout=120)
    if r.returncode:
        t.check("jvm: JitWork builds", False, r.stderr[-300:])
        return
    data = os.path.join(WORK, "jvm.data")
    before = set(glob.glob("/tmp/perf-*.map"))
    r = sh(["perf", "record", "-N", "-q", "-e", "cpu-clock", "-F", "999", "-g", "-o", data, "--",
            java, "-XX:+PreserveFramePointer", "-cp", WORK, "JitWork", "1500"], timeout=120)
    for f in set(glob.glob("/tmp/perf-*.map")) - before:
        os.unlink(f)  # the JVM writes none without -XX:+DumpPerfMapAtExit; should one appear
    if r.returncode or not os.path.exists(data):
        skip("jvm", "perf record failed: %s" % r.stderr.strip()[-200:])
        return
    pb = os.path.join(WORK, "jvm.pb.gz")
    r = sh(["timeout", "120", CONV, "-q", "--offline", "--pprof", pb, data])
    chains = perf_chains(data)
    if not t.check("jvm: conv and perf script read the recording", r.returncode == 0 and chains is not None,
                   r.stderr[-300:]):
        return
    p = pprofdec.read(pb, errors="replace")
    conv = {tuple(outer_name(p, i) for i in ids) for ids, _, _ in p["samples"]}
    print("     jvm: distinct stacks: perf script %d, conv %d" % (len(chains), len(conv)))
    t.check("jvm: as many distinct stacks as perf script's chains (perf %d, conv %d)" % (len(chains), len(conv)),
            len(chains) > 0 and abs(len(conv) - len(chains)) <= max(2, len(chains) // 50))
    jit = [(mid, addr, lines) for mid, addr, lines in p["locs"].values()
           if mid and p["maps"][mid]["file"] == "//anon"]
    names = collections.Counter(p["funcs"][lines[-1][0]][0] if lines else "" for _, _, lines in jit)
    bad = [n for n in names if not re.match(r"^\[JIT\] tid \d+$", n)]
    t.check("jvm: JIT code without a map: one function per process, [JIT] tid PID, addresses kept "
            "(%d locations, names %s)" % (len(jit), dict(names)),
            jit and not bad and len({a for _, a, _ in jit}) == len(jit), bad[:5])
    dso_rows(data)


def dso_rows(data):
    """conv info --dso: one row per (tid, dso, event), sorted by samples; JIT samples equal perf's."""
    r = sh(["timeout", "120", CONV, "info", "--json", "--dso", data])
    # perf's pid key is the thread ("TID:comm")
    pr = sh(["perf", "report", "-f", "-i", data, "--stdio", "-n", "--sort", "pid,dso", "--no-children",
             "-g", "none", "-t", SEP])
    if not t.check("jvm: conv info --dso and perf report --sort pid,dso read the recording",
                   r.returncode == 0 and pr.returncode == 0, (r.stderr + pr.stderr)[-300:]):
        return
    rows = json.loads(r.stdout).get("dso_samples") or []
    keys = [(x["tid"], x["dso"], x["event"]) for x in rows]
    counts = [x["samples"] for x in rows]
    perf = collections.Counter()
    for line in pr.stdout.splitlines():
        f = [x.strip() for x in line.split(SEP)]
        if not line.startswith("#") and len(f) >= 4 and f[1].isdigit() and ":" in f[2]:
            perf[(int(f[2].split(":", 1)[0]), f[3])] += int(f[1])
    jit = sorted(k for k in perf if k[1].startswith("[JIT] tid "))
    t.check("jvm: conv info --dso: one row per thread, object and event, most samples first (%d rows)"
            % len(rows), rows and len(set(keys)) == len(keys) and counts == sorted(counts, reverse=True),
            rows[:4])
    # one event here: each JIT row is perf's (thread, object) row
    got = {(x["tid"], x["dso"]): x["samples"] for x in rows if x["dso"].startswith("[JIT] tid ")}
    t.check("jvm: conv info --dso: each thread's [JIT] row equals perf report --sort pid,dso's (%s)"
            % ", ".join("%d %s %s/%d" % (k[0], k[1], got.get(k), perf[k]) for k in jit),
            jit and all(got.get(k) == perf[k] for k in jit) and len(got) == len(jit))


def main():
    if not shutil.which("perf"):
        t.skip_all("perf not installed")
    os.makedirs(WORK, exist_ok=True)
    r = sh(["perf", "record", "-q", "-N", "-e", "cpu-clock:u", "-o", os.path.join(WORK, "probe.data"),
            "--", "true"], timeout=60)
    if r.returncode:
        t.skip_all("perf cannot record here: %s" % r.stderr.strip()[-200:])
    libc_part()
    jvm_part()
    finish()


main()
