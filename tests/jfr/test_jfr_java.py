#!/usr/bin/env python3
"""A Java recording with a perf map: conv's JFR shows Java frames as Java methods.

usage: test_jfr_java.py CONV WORKDIR

Records tests/jfr/JfrJitWork.java (four hot methods in package conv.jfrtest,
one of them an instance method of the nested class JfrJitWork$Inner, with
parameter and return types covering primitives, arrays, multi-dimensional
arrays and object types) with
    perf record -N -q -e cpu-clock -F 999 -g -o WORKDIR/java.data --
      java -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit
           -XX:+PreserveFramePointer -XX:CompileCommand=dontinline,conv.jfrtest.*::hot*
           -cp WORKDIR/classes conv.jfrtest.JfrJitWork 1500
(the JVM writes /tmp/perf-<pid>.map at exit; HotSpot map names look like
`void conv.jfrtest.JfrJitWork.hotLoop(int[])`), converts it with
    CONV -q --offline --jfr WORKDIR/java.jfr WORKDIR/java.data
and reads the JFR back with `jfr print --json --stack-depth 64` (and the text
form of `jfr print --events jdk.ExecutionSample --stack-depth 64`).

The expected JFR frame of a map name is computed here, independently of conv,
from HotSpot's grammar `<return type> <pkg.Class>.<method>(<param types>)`:
class = pkg/Class (internal form, as JFR stores class names; `jfr print`
text shows it with dots), method = <method>, descriptor = the JVM descriptor
of the parameter and return types, frame type `JIT compiled`, line 0. Any
other JIT name (Interpreter, StubRoutines, adapters ...) is expected as a
`Native` frame of empty class whose method is the whole name.

Checks:
  * conv writes the JFR, `jfr print --json` reads it, one jdk.ExecutionSample
    per sample of conv info;
  * every hot method has JIT compiled frames whose class, method and
    descriptor are exactly those of its map name(s) (e.g.
    `void conv.jfrtest.JfrJitWork.hotLoop(int[])` -> conv/jfrtest/JfrJitWork,
    hotLoop, ([I)V), in the class's package, line 0;
  * for every JIT symbol of `CONV info --json --jit` (summed by name), the
    number of samples whose leaf frame is that symbol's expected frame equals
    conv info's count (conv's two outputs agree), > 0 for each hot method;
    no JIT compiled leaf is left over;
  * every JIT compiled frame of the JFR is the expected frame of some map
    name, has a valid JVM method descriptor and line 0;
  * non-method JIT names (when sampled, e.g. Interpreter) are Native frames
    with empty class;
  * libjvm.so frames are Native or C++ frames of class libjvm.so (a libjvm
    address without a symbol is a remote-symbolication frame whose class is
    libjvm's build-id); the leaf count of libjvm.so and the named JIT leaf
    count per name equal perf report's (--sort dso,sym, leaf only);
  * `jfr print` text shows each hot method with its parameter types decoded
    from the descriptor, e.g. `conv.jfrtest.JfrJitWork.hotLoop(int[])`, as the
    leaf of as many samples as conv info counts for its map name;
  * the same recording with the map rewritten in perf-map-agent form
    `L<pkg/Class>;::<method><descriptor>` (in a --jit-dir) gives the same JIT
    compiled frames and leaf counts; in the form without a signature
    `L<pkg/Class>;::<method>` the same class, method and leaf counts per
    (class, method) (the descriptor conv uses then is printed, not checked).

At the end the /tmp/perf-<pid>.map files of the recorded processes (and only
those) and the recordings in WORKDIR are removed (kept with CONV_JIT_KEEP=1).
The hot-method checks need a leaf sample in each hot method; a recording in
which perf report shows none for one of them is made again (up to 3 times);
after that such a method is only required to have equal counts (0) in conv
info and the JFR.

Prints ok/FAIL lines and `N passed, M failed, K skipped`; exit 1 on failure.
Prints "SKIP: ..." and exits 77 (skipped) when perf cannot record here or
java, javac or jfr are missing. WORKDIR is emptied first. Python 3 standard
library only.
"""
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

CONV, WORK = sys.argv[1], sys.argv[2]
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "JfrJitWork.java")
MAIN = "conv.jfrtest.JfrJitWork"
# the hot methods: map name -> (class, method, descriptor, jfr text form)
HOT = {
    "void conv.jfrtest.JfrJitWork.hotLoop(int[])":
        ("conv/jfrtest/JfrJitWork", "hotLoop", "([I)V", "conv.jfrtest.JfrJitWork.hotLoop(int[])"),
    "long conv.jfrtest.JfrJitWork.hotMix(long, boolean, char)":
        ("conv/jfrtest/JfrJitWork", "hotMix", "(JZC)J",
         "conv.jfrtest.JfrJitWork.hotMix(long, boolean, char)"),
    "java.lang.String conv.jfrtest.JfrJitWork.hotText(java.lang.Object, byte, short)":
        ("conv/jfrtest/JfrJitWork", "hotText", "(Ljava/lang/Object;BS)Ljava/lang/String;",
         "conv.jfrtest.JfrJitWork.hotText(Object, byte, short)"),
    "double[][] conv.jfrtest.JfrJitWork$Inner.hotGrid(double[][], float)":
        ("conv/jfrtest/JfrJitWork$Inner", "hotGrid", "([[DF)[[D",
         "conv.jfrtest.JfrJitWork$Inner.hotGrid(double[][], float)"),
}
SEP = "\x1f"
ATTEMPTS = 3  # recordings until perf shows a leaf sample in every hot method
passed = failed = skipped = 0
T0 = time.monotonic()
CREATED = set()


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else "  -- " + str(detail)))
    return cond


def skip(name, why):
    global skipped
    skipped += 1
    print("SKIP %s: %s" % (name, why))


def skip_all(why):
    print("SKIP: %s" % why)
    print("0 passed, 0 failed, 1 skipped")
    sys.exit(77)


def sh(cmd, timeout=60, **kw):
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout, **kw)


def err(r):
    return "exit %s: %s" % (r.returncode, r.stderr.decode(errors="replace")[-600:])


# ---------------------------------------------------------------- map names -> JFR frames
PRIM = {"int": "I", "long": "J", "boolean": "Z", "byte": "B", "char": "C", "short": "S",
        "float": "F", "double": "D", "void": "V"}
HS_NAME = re.compile(r"^(\S+) ([^\s(]+)\.([^.\s(]+)\(([^()]*)\)$")
_CLS = r"L[^;\[./()\s]+(?:/[^;\[./()\s]+)*;"
_FIELD = r"\[*(?:[BCDFIJSZ]|%s)" % _CLS
DESC = re.compile(r"^\((?:%s)*\)(?:V|%s)$" % (_FIELD, _FIELD))


def type_desc(t, ret=False):
    t = t.strip()
    dims = 0
    while t.endswith("[]"):
        dims += 1
        t = t[:-2].rstrip()
    if not t or re.search(r"[\s(),;\[\]]", t) or (t == "void" and (dims or not ret)):
        return None
    return "[" * dims + (PRIM[t] if t in PRIM else "L" + t.replace(".", "/") + ";")


def hotspot_frame(name):
    """(class, method, descriptor) of a HotSpot perf map method name, else None."""
    m = HS_NAME.match(name)
    if not m:
        return None
    ret, cls, meth, params = m.groups()
    descs = [type_desc(p) for p in params.split(",")] if params.strip() else []
    r = type_desc(ret, ret=True)
    if r is None or None in descs:
        return None
    return cls.replace(".", "/"), meth, "(" + "".join(descs) + ")" + r


def expected(name):
    """The frame conv's JFR should have for a JIT name: (type, class, method, descriptor)."""
    f = hotspot_frame(name)
    if f:
        return ("JIT compiled",) + f
    return ("Native", "", name, None)  # descriptor of a native frame: not checked


def text_form(cls, meth, desc):
    """How `jfr print` shows a method: class with dots, parameter types by simple name."""
    params = desc[1:desc.index(")")]
    out = []
    for m in re.finditer(r"(\[*)([BCDFIJSZ]|L[^;]+;)", params):
        base = m.group(2)
        t = next(k for k, v in PRIM.items() if v == base) if len(base) == 1 else base[1:-1]
        out.append(t.replace("/", ".").rsplit(".", 1)[-1] + "[]" * len(m.group(1)))
    return "%s.%s(%s)" % (cls.replace("/", "."), meth, ", ".join(out))


# ---------------------------------------------------------------- readers
def jfr_json(path):
    """[(frames)] per jdk.ExecutionSample; a frame is (type, class, method, descriptor,
    line, package or None). None and a message when jfr cannot read it."""
    r = sh(["jfr", "print", "--json", "--stack-depth", "64", path], timeout=120)
    if r.returncode:
        return None, err(r)
    try:
        d = json.loads(r.stdout)
    except ValueError as e:
        return None, "jfr print --json output is not JSON: %s" % e
    samples = []
    for e in d["recording"]["events"]:
        if e["type"] != "jdk.ExecutionSample":
            continue
        st = e["values"].get("stackTrace") or {}
        frames = []
        for f in st.get("frames") or []:
            m = f.get("method") or {}
            t = m.get("type") or {}
            pkg = t.get("package")
            frames.append((f.get("type"), t.get("name"), m.get("name"), m.get("descriptor"),
                           f.get("lineNumber"), pkg.get("name") if isinstance(pkg, dict) else None))
        samples.append(frames)
    return samples, ""


def jfr_text_leaves(path):
    """Counter of the leaf frame (as jfr print shows it, without ` line: N`) per sample."""
    r = sh(["jfr", "print", "--events", "jdk.ExecutionSample", "--stack-depth", "64", path],
           timeout=120)
    if r.returncode:
        return None, err(r)
    leaves = collections.Counter()
    lines = r.stdout.decode(errors="replace").splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "stackTrace = [" and i + 1 < len(lines):
            leaf = lines[i + 1].strip()
            if leaf != "]":
                leaves[re.sub(r" line: -?\d+$", "", leaf)] += 1
    return leaves, ""


def perf_leaves(data):
    """{(dso, sym): leaf samples} from perf report; None if perf cannot read it."""
    r = sh(["perf", "report", "-f", "-i", data, "--stdio", "-n", "--sort", "dso,sym",
            "--no-children", "-g", "none", "-t", SEP], timeout=120)
    if r.returncode:
        return None
    out = collections.Counter()
    for line in r.stdout.decode(errors="replace").splitlines():
        f = line.split(SEP)
        if line.startswith("#") or len(f) != 4:
            continue
        sym = f[3].strip()
        if sym.startswith("[.] ") or sym.startswith("[k] "):
            sym = sym[4:].strip()
        out[(f[2].strip(), sym)] += int(f[1].strip())
    return out


def perf_pids(data):
    r = sh(["perf", "script", "-f", "-i", data, "--show-task-events", "-F", "pid", "-G"],
           timeout=120)
    pids = set()
    for line in r.stdout.decode(errors="replace").splitlines():
        m = re.match(r"\s*(\d+)", line)
        if m and int(m.group(1)) > 0:
            pids.add(int(m.group(1)))
    return pids


def perf_buildids(data):
    r = sh(["perf", "buildid-list", "-f", "-i", data], timeout=60)
    ids = {}
    for line in r.stdout.decode(errors="replace").splitlines():
        p = line.split(None, 1)
        if len(p) == 2:
            ids[p[1].strip()] = p[0]
    return ids


def read_map(path):
    """[(start, size, name)] of a perf map."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            p = line.rstrip("\n").split(" ", 2)
            if len(p) == 3:
                out.append(p)
    return out


def cm(c):
    """a Counter keyed by (type, class, method, descriptor) summed by (type, class, method)"""
    out = collections.Counter()
    for k, v in c.items():
        out[k[:3]] += v
    return out


def leaf_counter(samples):
    return collections.Counter(s[0][:4] for s in samples if s)


# ---------------------------------------------------------------- the test
def run(java, javac):
    classes = os.path.join(WORK, "classes")
    os.makedirs(classes, exist_ok=True)
    r = sh([javac, "-d", classes, SRC], timeout=90)
    if not check("javac JfrJitWork.java", r.returncode == 0, err(r)):
        return
    data = os.path.join(WORK, "java.data")
    for attempt in range(1, ATTEMPTS + 1):
        for f in (data, data + ".old"):
            if os.path.exists(f):
                os.unlink(f)
        t = time.monotonic()
        r = sh(["perf", "record", "-N", "-q", "-e", "cpu-clock", "-F", "999", "-g", "-o", data, "--",
                java, "-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit",
                "-XX:+PreserveFramePointer", "-XX:CompileCommand=quiet",
                "-XX:CompileCommand=dontinline,conv.jfrtest.*::hot*",
                "-cp", classes, MAIN, "1500"], timeout=90)
        t_rec = time.monotonic() - t
        if r.returncode or not os.path.exists(data):
            skip_all("perf record of java failed: %s" % err(r))
        pids = perf_pids(data)
        CREATED.update(pids)
        # the checks below need a leaf sample in each hot method; where samples land is the
        # workload's luck, not conv's doing: record again (bounded), judged by perf's view
        leaves_p = perf_leaves(data) or {}
        missing = sorted(m for m in HOT if not any(s == m for (_d, s) in leaves_p))
        if not missing:
            break
        print("     recording %d: perf shows no leaf sample in %s%s" % (
            attempt, "; ".join(missing), "; recording again" if attempt < ATTEMPTS else ""))
    unsampled = set(missing)

    # conv's two outputs
    r = sh([CONV, "info", "--json", "--jit", data], timeout=120)
    try:
        info = json.loads(r.stdout) if r.returncode == 0 else None
    except ValueError:
        info = None
    if not check("conv info --json --jit reads the recording", info is not None, err(r)):
        return
    # the processes of this recording (earlier attempts' are in CREATED too, for the cleanup)
    mine = set(pids)
    mine.update(s["pid"] for s in info.get("processes", {}).get("samples_per_process", []))
    mine.update(s["pid"] for s in info.get("jit_symbols", []))
    CREATED.update(mine)
    jit = collections.Counter()
    for s in info.get("jit_symbols", []):
        jit[s["name"]] += s["samples"]
    procs = info.get("processes", {})
    check("conv loaded the JVM's perf map", (procs.get("jit_maps_loaded") or 0) >= 1
          and (procs.get("jit_entries") or 0) > 0, {k: v for k, v in procs.items() if "jit" in k})

    jfr = os.path.join(WORK, "java.jfr")
    t = time.monotonic()
    r = sh([CONV, "-q", "--offline", "--jfr", jfr, data], timeout=120)
    t_conv = time.monotonic() - t
    if not check("conv --offline --jfr writes the JFR", r.returncode == 0 and os.path.exists(jfr),
                 err(r)):
        return
    samples, why = jfr_json(jfr)
    if not check("jfr print --json reads conv's JFR", samples is not None, why):
        return
    check("one jdk.ExecutionSample per sample (%d, conv info %s)" % (len(samples), info.get("samples")),
          len(samples) == info.get("samples"), (len(samples), info.get("samples")))

    # the perf maps of the recorded processes, as the test reads them
    maps = {}
    for pid in sorted(mine):
        p = "/tmp/perf-%d.map" % pid
        if os.path.exists(p):
            maps[pid] = read_map(p)
    names = {e[2] for m in maps.values() for e in m}
    check("the JVM wrote its perf map (/tmp/perf-<pid>.map, %d entries)"
          % sum(len(m) for m in maps.values()), names, sorted(mine))
    exp_of = {n: expected(n) for n in names | set(jit)}
    hs_frames = {exp_of[n][1:]: n for n in exp_of if exp_of[n][0] == "JIT compiled"}

    frames = [f for s in samples for f in s]
    jitf = collections.Counter(f[:4] for f in frames if f[0] == "JIT compiled")
    leaves = leaf_counter(samples)
    print("     record %.1f s, conv --jfr %.1f s; pids %s; %d samples, %d frames, %d JIT compiled "
          "frames (%d distinct methods), %d map entries (%d names), jit_symbols %d names / %d samples"
          % (t_rec, t_conv, sorted(mine), len(samples), len(frames), sum(jitf.values()),
             len(jitf), sum(len(m) for m in maps.values()), len(names), len(jit),
             sum(jit.values())))

    # 1. the hot methods, exactly as the map names them
    for mapname, (cls, meth, desc, _) in sorted(HOT.items(), key=lambda kv: kv[1][1]):
        in_map = [e for m in maps.values() for e in m if e[2] == mapname]
        check("map names %s (%d entries)" % (mapname, len(in_map)), in_map or mapname in unsampled,
              sorted(n for n in names if "." + meth + "(" in n))
        check("  our reading of the map name is %s %s %s" % (cls, meth, desc),
              hotspot_frame(mapname) == (cls, meth, desc), hotspot_frame(mapname))
        fr = [f for f in frames if f[0] == "JIT compiled" and f[2] == meth]
        want = ("JIT compiled", cls, meth, desc)
        check("  JFR has JIT compiled frames %s.%s%s (%d)" % (cls, meth, desc, len(fr)),
              (fr or mapname in unsampled) and all(f[:4] == want for f in fr),
              sorted(collections.Counter(f[:4] for f in fr).items()))
        pkg = cls.rsplit("/", 1)[0]
        check("  in package %s, line 0" % pkg, (fr or mapname in unsampled)
              and all(f[5] == pkg and f[4] == 0 for f in fr),
              sorted({(f[5], f[4]) for f in fr}))
        n_conv, n_jfr = jit.get(mapname, 0), leaves.get(want, 0)
        check("  leaf samples: JFR %d, conv info %d" % (n_jfr, n_conv),
              (n_conv > 0 or mapname in unsampled) and n_jfr == n_conv, (n_jfr, n_conv))

    # 2. every JIT symbol conv info names is the leaf of as many JFR samples
    bad = []
    for name, n in sorted(jit.items()):
        e = exp_of[name]
        got = sum(v for k, v in leaves.items()
                  if k[:3] == e[:3] and (e[3] is None or k[3] == e[3]))
        if got != n or (e[0] == "Native" and not any(k[:3] == e[:3] for k in leaves)):
            bad.append((name, e, "conv info %d" % n, "JFR leaves %d" % got))
    check("every jit_symbols name is the JFR leaf of as many samples (%d names)" % len(jit),
          jit and not bad, bad)
    n_leaf_jit = sum(v for k, v in leaves.items() if k[0] == "JIT compiled")
    n_info_jit = sum(n for name, n in jit.items() if exp_of[name][0] == "JIT compiled")
    check("JIT compiled leaves in the JFR (%d) = Java-method jit_symbols samples (%d)"
          % (n_leaf_jit, n_info_jit), n_leaf_jit == n_info_jit and n_leaf_jit > 0)

    # 3. every JIT compiled frame is a map name's method, with a valid descriptor
    unknown = sorted(k for k in jitf if k[1:] not in hs_frames)
    check("every JIT compiled frame is the method of a map name", not unknown, unknown[:10])
    baddesc = sorted({k[3] for k in jitf if not DESC.match(k[3] or "")})
    check("every JIT compiled frame has a valid JVM method descriptor (%d distinct)"
          % len({k[3] for k in jitf}), jitf and not baddesc, baddesc[:10])
    badshape = sorted({f[:5] for f in frames if f[0] == "JIT compiled"
                       and (not f[1] or not f[2] or re.search(r"[\s().;\[]", f[1] + f[2])
                            or f[4] != 0)})
    check("every JIT compiled frame has a class, a method name and line 0", not badshape,
          badshape[:10])

    # 4. JIT names that are not methods: Native frames of empty class
    nonmeth = sorted(n for n in jit if exp_of[n][0] == "Native")
    if nonmeth:
        wrong = sorted({f[:3] for f in frames if f[2] in nonmeth and f[:2] != ("Native", "")})
        seen = sorted({f[2] for f in frames if f[:2] == ("Native", "") and f[2] in nonmeth})
        check("non-method JIT code %s is Native with empty class" % nonmeth,
              not wrong and seen == nonmeth, {"wrong": wrong, "seen": seen})
    else:
        skip("non-method JIT frames", "none sampled")
    mislabeled = sorted({f[:3] for f in frames if f[0] != "JIT compiled" and f[2] in names
                         and exp_of[f[2]][0] == "JIT compiled"})
    check("no Java method of the map is left as a non-Java frame", not mislabeled, mislabeled[:10])

    # 5. libjvm.so frames, and perf's view of the leaves
    bids = perf_buildids(data)
    jvm_bid = next((b for p, b in bids.items() if os.path.basename(p) == "libjvm.so"), None)
    jvmf = [f for f in frames if f[1] == "libjvm.so"]
    remote = [f for f in frames if jvm_bid and f[1] == jvm_bid]
    if jvmf or remote:
        check("libjvm.so frames are Native/C++ of class libjvm.so (%d, %d C++; %d remote by "
              "build-id)" % (len(jvmf), sum(f[0] == "C++" for f in jvmf), len(remote)),
              jvmf and all(f[0] in ("Native", "C++") and f[2] for f in jvmf)
              and all(f[0] == "Native" and f[2] == "<remote>" for f in remote),
              sorted({f[:3] for f in jvmf + remote if f[0] not in ("Native", "C++")})[:10])
    else:
        skip("libjvm.so frames", "none sampled")
    perf = perf_leaves(data)
    if perf is None:
        skip("perf report leaves", "perf report cannot read the recording")
    else:
        p_jvm = sum(v for (d, s), v in perf.items() if d == "libjvm.so")
        j_jvm = sum(v for k, v in leaves.items() if k[1] == "libjvm.so" or (jvm_bid and k[1] == jvm_bid))
        check("libjvm.so leaf samples: JFR %d, perf %d" % (j_jvm, p_jvm), j_jvm == p_jvm,
              (j_jvm, p_jvm))
        pj = collections.Counter()
        for (d, s), v in perf.items():
            if re.match(r"^(?:\[JIT\] tid \d+|(?:/tmp/)?perf-\d+\.map)$", d) \
                    and not re.fullmatch(r"0x[0-9a-fA-F]+", s):
                pj[s] += v
        diff = sorted((n, pj.get(n, 0), jit.get(n, 0)) for n in set(pj) | set(jit)
                      if pj.get(n, 0) != jit.get(n, 0))
        check("named JIT leaf samples per name: perf %d = JFR/conv info %d"
              % (sum(pj.values()), sum(jit.values())), pj and not diff, diff[:10])

    # 6. jfr print (text) decodes the descriptors
    tl, why = jfr_text_leaves(jfr)
    if check("jfr print (text) reads conv's JFR", tl is not None, why):
        for mapname, (cls, meth, desc, text) in sorted(HOT.items(), key=lambda kv: kv[1][1]):
            n = jit.get(mapname, 0)
            check("jfr print shows %s as the leaf of %d samples (conv info %d)"
                  % (text, tl.get(text, 0), n),
                  text == text_form(cls, meth, desc) and (n > 0 or mapname in unsampled)
                  and tl.get(text, 0) == n,
                  {"ours": text_form(cls, meth, desc), "text leaves": tl.most_common(8)})

    # 7. the same recording with the map in perf-map-agent form
    for form in ("sig", "nosig"):
        jdir = os.path.join(WORK, "agent-" + form)
        shutil.rmtree(jdir, ignore_errors=True)
        os.makedirs(jdir)
        for pid, m in maps.items():
            with open(os.path.join(jdir, "perf-%d.map" % pid), "w") as f:
                for start, size, name in m:
                    hf = hotspot_frame(name)
                    if hf:
                        name = "L%s;::%s%s" % (hf[0], hf[1], hf[2] if form == "sig" else "")
                    f.write("%s %s %s\n" % (start, size, name))
        out = os.path.join(WORK, "agent-%s.jfr" % form)
        r = sh([CONV, "-q", "--offline", "--jit-dir", jdir, "--jfr", out, data], timeout=120)
        s2, why = jfr_json(out) if r.returncode == 0 else (None, err(r))
        if not check("perf-map-agent form (%s): conv --jit-dir writes a JFR jfr reads" % form,
                     s2 is not None, why):
            continue
        f2 = collections.Counter(f[:4] for s in s2 for f in s if f[0] == "JIT compiled")
        l2 = leaf_counter(s2)
        if form == "sig":
            check("perf-map-agent form `L<pkg/Class>;::<method><descriptor>`: same JIT compiled "
                  "frames (%d) and leaves" % sum(f2.values()), f2 == jitf and
                  {k: v for k, v in l2.items() if k[0] == "JIT compiled"}
                  == {k: v for k, v in leaves.items() if k[0] == "JIT compiled"},
                  sorted(set(f2.items()) ^ set(jitf.items()))[:10])
        else:
            a = cm({k: v for k, v in l2.items() if k[0] == "JIT compiled"})
            b = cm({k: v for k, v in leaves.items() if k[0] == "JIT compiled"})
            check("perf-map-agent form `L<pkg/Class>;::<method>`: same class/method leaves (%d)"
                  % sum(a.values()), a == b and cm(f2) == cm(jitf),
                  sorted(set(a.items()) ^ set(b.items()))[:10])
            print("     note: without a signature conv gives the descriptor(s) %s"
                  % sorted({k[3] for k in f2}))
        shutil.rmtree(jdir, ignore_errors=True)


def cleanup():
    if os.environ.get("CONV_JIT_KEEP") == "1":
        return
    for pid in sorted(CREATED):
        try:
            os.unlink("/tmp/perf-%d.map" % pid)
        except OSError:
            pass
    for pat in ("*.data", "*.data.old", "*.jfr"):
        for f in glob.glob(os.path.join(WORK, pat)):
            try:
                os.unlink(f)
            except OSError:
                pass
    shutil.rmtree(os.path.join(WORK, "classes"), ignore_errors=True)


def main():
    if not shutil.which("perf"):
        skip_all("perf is not installed")
    tools = {t: shutil.which(t) for t in ("java", "javac", "jfr")}
    missing = [t for t, p in tools.items() if not p]
    if missing:
        skip_all("%s not on PATH" % ", ".join(missing))
    try:
        r = sh([tools["java"], "-version"], timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        skip_all("java -version: %s" % e)
    m = re.search(r'version "(\d+)(?:\.(\d+))?', r.stderr.decode(errors="replace"))
    major = int(m.group(1)) if m else 0
    if major == 1 and m.group(2):
        major = int(m.group(2))
    if major < 17:
        skip_all("needs JDK 17 or later for -XX:+DumpPerfMapAtExit (found %s)" % (major or "?"))
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    probe = os.path.join(WORK, "probe.data")
    p = sh(["perf", "record", "-N", "-q", "-e", "cpu-clock", "-o", probe, "--", "true"], timeout=30)
    if p.returncode:
        msg = p.stderr.decode(errors="replace").strip().splitlines()
        skip_all("perf cannot record here: %s" % (msg[-1] if msg else p.returncode))
    os.unlink(probe)
    try:
        run(tools["java"], tools["javac"])
    except subprocess.TimeoutExpired as e:
        check("no command timed out", False, "%s after %s s" % (e.cmd[:3], e.timeout))
    finally:
        cleanup()
    print("%d passed, %d failed, %d skipped  (%.1f s)"
          % (passed, failed, skipped, time.monotonic() - T0))
    sys.exit(1 if failed else 0)


main()
