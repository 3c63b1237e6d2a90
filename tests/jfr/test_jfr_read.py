#!/usr/bin/env python3
"""conv's JFR reader (jfredit/) reads every stack as the JDK's own reader does.

jfredit/ is what `conv symbolize` will read JFR recordings with: types from
each chunk's metadata, constant pools of every checkpoint, values decoded
by field name. tests/tools/jfr_stacks prints, through it, the stack of each
event that has one (type, then per frame: class, method, descriptor, line,
frame type); `jfr print --json --stack-depth 4096` is the JDK's reading of
the same file. Their multisets must be equal, on:
  * conv's JFR output of every fixture, symbolized (--offline) and -n;
  * a recording of the JDK itself (java -XX:StartFlightRecording, settings
    profile, a small program with Java frames, JIT and interpreter), many
    event types and chunk features conv does not write;
  * gen_remote_jfr.py's files, Datadog's remote frames and conv's.
Exit 1 on a difference, 77 when `jfr` (a JDK) is missing.

usage: test_jfr_read.py CONV JFR_STACKS WORKDIR
"""
import collections
import glob
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import testlib as t  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CONV, STACKS, WORK = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])


def sh(cmd, timeout=300, **kw):
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout, **kw)


def jdk_stacks(path):
    r = sh([JFR, "print", "--json", "--stack-depth", "4096", path])
    if r.returncode:
        return None, r.stderr.decode(errors="replace")[-300:]
    out = collections.Counter()
    for ev in json.loads(r.stdout)["recording"]["events"]:
        st = ev["values"].get("stackTrace")
        if not isinstance(st, dict):
            continue
        frames = []
        for fr in st.get("frames") or []:
            m = fr.get("method") or {}
            cls = (m.get("type") or {}).get("name") or ""
            frames.append((cls, m.get("name") or "", m.get("descriptor") or "", fr.get("lineNumber"),
                           fr.get("type") or ""))
        out[(ev["type"], tuple(frames))] += 1
    return out, ""


def ours(path):
    r = sh([STACKS, path])
    if r.returncode:
        return None, r.stderr.decode(errors="replace")[-300:]
    out = collections.Counter()
    for ln in r.stdout.decode("utf-8", "surrogateescape").splitlines():
        ev = json.loads(ln)
        out[(ev[0], tuple((c, m, d, l, t) for c, m, d, l, t in ev[1:]))] += 1
    return out, ""


def compare(name, path):
    a, ea = jdk_stacks(path)
    b, eb = ours(path)
    if not t.check("%s: both readers read it" % name, a is not None and b is not None, ea + eb):
        return
    diff = {"jdk only": list((a - b).items())[:2], "jfredit only": list((b - a).items())[:2]}
    t.check("%s: the same %d stacks (%d events with one), frame by frame" % (name, len(a), sum(a.values())),
            a == b and sum(a.values()) > 0, diff)


JFR = shutil.which("jfr") or next(iter(sorted(glob.glob("/usr/lib/jvm/*/bin/jfr"))), None)
if not JFR:
    t.skip_all("no jfr (a JDK) here")
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)

for f in sorted(glob.glob(os.path.join(REPO, "tests", "fixtures", "*.data"))) + [os.path.join(REPO, "samples", "perf.data")]:
    name = os.path.basename(f)[:-5]
    for mode, opts in (("sym", ["--offline", "-d", os.path.join(REPO, "samples", "debug")]), ("n", ["-n"])):
        out = os.path.join(WORK, "%s.%s.jfr" % (name, mode))
        r = sh([CONV, "-q", *opts, "--jfr", out, f])
        if t.check("%s %s: conv writes its JFR" % (name, mode), r.returncode == 0, r.stderr[-300:]):
            compare("conv %s %s" % (name, mode), out)

# the JDK's own recording
java, javac = shutil.which("java"), shutil.which("javac")
if java and javac:
    src = os.path.join(WORK, "Spin.java")
    with open(src, "w") as fh:
        fh.write("""
public class Spin {
    static long fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
    static String text(int i) { StringBuilder b = new StringBuilder(); for (int k = 0; k < 200; k++) b.append(k * i); return b.toString(); }
    public static void main(String[] a) throws Exception {
        long end = System.nanoTime() + 2_000_000_000L, s = 0;
        java.util.List<String> keep = new java.util.ArrayList<>();
        while (System.nanoTime() < end) { s += fib(22); keep.add(text((int) s)); if (keep.size() > 2000) keep.clear(); }
        System.out.println(s);
    }
}
""")
    r = sh([javac, "-d", WORK, src])
    rec = os.path.join(WORK, "jdk.jfr")
    if t.check("javac builds the Java program", r.returncode == 0, r.stderr[-300:]):
        r = sh([java, "-XX:StartFlightRecording=filename=%s,settings=profile" % rec, "-cp", WORK, "Spin"], timeout=120)
        if t.check("the JDK records itself (-XX:StartFlightRecording, settings profile)",
                   r.returncode == 0 and os.path.exists(rec), r.stderr[-300:]):
            compare("the JDK's own recording", rec)
else:
    print("SKIP the JDK's own recording: no java/javac")

# remote frames, Datadog's and conv's
cc = shutil.which("cc") or shutil.which("gcc")
if cc:
    prog = os.path.join(WORK, "remote")
    with open(prog + ".c", "w") as fh:
        fh.write("int f1(int x) { return x * 3 + 1; }\nint f2(int x) { return f1(x) ^ 7; }\n"
                 "int main(int c, char **v) { (void)v; return f2(c); }\n")
    r = sh([cc, "-O1", "-g", "-pie", "-fPIE", "-Wl,--build-id", "-o", prog, prog + ".c"])
    nm = sh(["nm", prog]).stdout.decode().split("\n")
    addrs = {l.split()[2]: int(l.split()[0], 16) for l in nm if len(l.split()) == 3 and l.split()[2] in ("f1", "f2", "main")}
    spec = json.dumps([{"thread": 4242, "time_ns": 1000 + i, "frames": [["remote", hex(addrs["f1"])],
                        ["remote", hex(addrs["f2"] + 2)], ["remote", hex(addrs["main"])]]} for i in range(3)])
    for style, extra in (("dd", ["--frame-type-7", "Native remote"]), ("conv", ["--conv-style"])):
        out = os.path.join(WORK, "remote.%s.jfr" % style)
        r = sh([sys.executable, os.path.join(HERE, "gen_remote_jfr.py"), out, prog, "--samples", spec, *extra])
        if t.check("gen_remote_jfr.py writes the %s-style file" % style, r.returncode == 0, r.stderr[-300:]):
            compare("remote frames, %s style" % style, out)
t.finish()
