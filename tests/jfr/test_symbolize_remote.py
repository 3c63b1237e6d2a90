#!/usr/bin/env python3
"""conv symbolize names the remote frames of JFR recordings: Datadog's and conv's.

Builds a non-PIE and a PIE program (-O2 -g, an always_inline helper, GNU
build-ids), picks ELF addresses in their functions (starts and call sites,
some inside inlined code) with nm, and writes with gen_remote_jfr.py:
  * Datadog's shape: class = build-id, method <remote>, descriptor
    "0x<offset from the image base>", frame type 7 without a pool entry,
    jdk.NativeLibrary{name, baseAddress, topAddress, buildId, loadBias};
  * conv's shape: descriptor "(L0x<ELF address>;)L;", type Native, and the
    "(0x<ELF address>)" earlier conv versions wrote (conv-old).
Then `conv symbolize --offline` (the programs at their recorded paths,
build-id verified) must give every frame the functions `addr2line -f -i -e
PROGRAM ADDRESS` gives, innermost first, with their lines, in a class named
after the program's file, type Native; `jfr print` and `jfr summary` read
the result (jfr print cannot read Datadog's descriptors before); the other
events (jdk.ActiveSetting, jdk.OSInformation) print the same as before.

usage: test_symbolize_remote.py CONV WORKDIR
Exit 1 on a failure, 77 when jfr, a C compiler or binutils are missing.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import testlib as t  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CONV, WORK = sys.argv[1], os.path.abspath(sys.argv[2])
SRC = r"""
#include <stdio.h>
static inline __attribute__((always_inline)) unsigned mix(unsigned x) { return x * 2654435761u ^ (x >> 13); }
__attribute__((noinline)) unsigned hot(unsigned n) { unsigned x = n; for (unsigned i = 0; i < 1000u; i++) x = mix(x + i); return x; }
__attribute__((noinline)) unsigned warm(unsigned n) { return hot(n) + hot(n + 1); }
int main(int c, char **v) { (void)v; printf("%u\n", warm((unsigned)c)); return 0; }
"""


def sh(cmd, **kw):
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=120, **kw)


def skip(why):
    t.skip_all("%s" % why)


JFR = shutil.which("jfr") or next(iter(sorted(glob.glob("/usr/lib/jvm/*/bin/jfr"))), None)
CC = shutil.which("cc") or shutil.which("gcc")
if not JFR or not CC or not shutil.which("addr2line") or not shutil.which("nm"):
    skip("needs jfr (a JDK), a C compiler, nm and addr2line")
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
with open(os.path.join(WORK, "prog.c"), "w") as fh:
    fh.write(SRC)
progs = {}
for name, flags in (("nopie", ["-no-pie", "-fno-pie"]), ("pie", ["-pie", "-fPIE"])):
    out = os.path.join(WORK, name)
    r = sh([CC, "-O2", "-g", *flags, "-Wl,--build-id", "-o", out, os.path.join(WORK, "prog.c")])
    if not t.check("%s builds" % name, r.returncode == 0, r.stderr[-300:]):
        sys.exit(1)
    syms = {l.split()[2]: int(l.split()[0], 16) for l in sh(["nm", out]).stdout.decode().splitlines()
            if len(l.split()) == 3 and l.split()[2] in ("hot", "warm", "main")}
    progs[name] = (out, syms)


def a2l(binary, addr):
    """addr2line -f -i: [(function, line)] innermost first."""
    out = sh(["addr2line", "-f", "-i", "-e", binary, hex(addr)]).stdout.decode().splitlines()
    res = []
    for fn, loc in zip(out[0::2], out[1::2]):
        m = re.search(r":(\d+)", loc)
        res.append((fn, int(m.group(1)) if m else 0))
    return res


samples, want = [], []
for name, (binary, syms) in progs.items():
    # leaf first: inside hot's loop (inlined mix), hot, warm, main
    stack = [syms["hot"] + 0x10, syms["warm"] + 4, syms["main"] + 8]
    for i in range(3):
        samples.append({"thread": 100 + i, "time_ns": 1000 * (len(samples) + 1),
                        "frames": [[name, hex(a)] for a in stack]})
        want.append([(os.path.basename(binary), fn, line) for a in stack for fn, line in a2l(binary, a)])
t.check("the addresses include inlined code (mix inside hot, as addr2line -i sees it)",
        all(w[0][1] == "mix" and w[1][1] == "hot" for w in want), want[:1])
spec = os.path.join(WORK, "samples.json")
with open(spec, "w") as fh:
    json.dump(samples, fh)

other = ["print", "--events", "jdk.ActiveSetting,jdk.OSInformation"]
for style, extra in (("datadog", []), ("conv", ["--conv-style"]),
                     ("conv-old", ["--conv-style", "--conv-old-descriptor"])):
    raw = os.path.join(WORK, style + ".jfr")
    named = os.path.join(WORK, style + ".symbolized.jfr")
    r = sh([sys.executable, os.path.join(HERE, "gen_remote_jfr.py"), raw, progs["nopie"][0], progs["pie"][0],
            "--samples", spec, *extra])
    if not t.check("%s: the generator writes the recording" % style, r.returncode == 0, r.stderr[-300:]):
        continue
    sfile = os.path.join(WORK, style + ".json")
    r = sh([CONV, "symbolize", "--offline", "--stats=" + sfile, raw], env=dict(os.environ, HOME=WORK))
    st = json.loads(open(sfile).readline()) if os.path.exists(sfile) else {}
    if not t.check("%s: conv symbolize names every remote frame from the local programs (%s of %s)"
                   % (style, st.get("named"), st.get("locations")),
                   r.returncode == 0 and st.get("named") == st.get("locations") and st.get("named", 0) > 0 and
                   st.get("sources", {}).get("local") == st.get("named"), (r.stderr[-300:], st)):
        continue
    pj = sh([JFR, "print", "--json", "--stack-depth", "64", "--events", "jdk.ExecutionSample", named])
    got, types = [], set()
    for ev in json.loads(pj.stdout)["recording"]["events"] if pj.returncode == 0 else []:
        got.append([((fr["method"]["type"] or {}).get("name"), fr["method"]["name"], fr["lineNumber"])
                    for fr in ev["values"]["stackTrace"]["frames"]])
        types |= {fr["type"] for fr in ev["values"]["stackTrace"]["frames"]}
    t.check("%s: each frame is addr2line -f -i's functions, innermost first, with lines, in the program's class"
            % style, pj.returncode == 0 and sorted(got) == sorted(want) and types == {"Native"},
            (got[:1], want[:1]))
    t.check("%s: jfr print and jfr summary read the result" % style,
            sh([JFR, "print", "--stack-depth", "64", named]).returncode == 0 and
            sh([JFR, "summary", named]).returncode == 0)
    a, b = sh([JFR] + other + [raw]), sh([JFR] + other + [named])
    t.check("%s: the other events print as before" % style, a.returncode == 0 and a.stdout == b.stdout and
            b"keep-me" in a.stdout)
t.finish()
