#!/usr/bin/env python3
"""conv symbolize's command line, on the committed fixtures (no recording, no network).

  * conv -n then conv symbolize of every fixture: exit 0; BASE.symbolized.pb.gz
    beside the input (gzipped as the input was); go tool pprof reads it when go
    is there; the samples (labels, values, addresses) are the input's; a second
    run writes the same bytes; --stats has its keys and says how many
    locations were named and left; a profile already named is left as it was
    (named_before), and --force names it again;
  * -o PATH, -o DIR with several inputs; an uncompressed profile stays
    uncompressed;
  * a JFR recording (conv -n's): BASE.symbolized.jfr, --stats format "jfr";
  * refused, with a message and exit code, and no output left: no FILE, -n, an
    unknown option, the output being the input, a file that is not a profile
    (exit 2), a truncated gzip or JFR (exit 2), a missing file (exit 2); no
    temp file is left anywhere.

usage: test_symbolize_cli.py CONV WORKDIR
"""
import glob
import gzip
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
sys.dont_write_bytecode = True
import pprof_stacks  # noqa: E402
import pprofdec  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import testlib as t  # noqa: E402

CONV, WORK = sys.argv[1], os.path.abspath(sys.argv[2])
ENV = dict(os.environ, HOME=os.path.join(WORK, "home"), LC_ALL="C")
for k in ("DEBUGINFOD_URLS", "DEBUGINFOD_CACHE_PATH"):
    ENV.pop(k, None)


def conv(*args):
    return subprocess.run([CONV, *args], stdin=subprocess.DEVNULL, capture_output=True, timeout=300, env=ENV)


def err(r):
    return r.stderr.decode(errors="replace")


def leftovers(d):
    return [f for f in os.listdir(d) if ".tmp." in f]


def bare_samples(path):
    """Samples as labels, values and addresses only: what symbolize must keep."""
    p = pprofdec.read(path)
    return sorted((tuple(sorted(lab.items())), tuple(v), tuple(p["locs"][x][1] for x in ids))
                  for ids, v, lab in p["samples"])


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(ENV["HOME"])
go = shutil.which("go")
fixtures = sorted(glob.glob(os.path.join(REPO, "tests", "fixtures", "*.data")))
for f in fixtures:
    name = os.path.basename(f)[:-5]
    raw = os.path.join(WORK, name + ".pb.gz")
    named = os.path.join(WORK, name + ".symbolized.pb.gz")
    r = conv("-q", "-n", "--pprof", raw, f)
    if not t.check("%s: conv -n writes the profile" % name, r.returncode == 0, err(r)):
        continue
    sfile = os.path.join(WORK, name + ".json")
    r = conv("symbolize", "-q", "--offline", "--stats=" + sfile, raw)
    st = json.loads(open(sfile).readline()) if os.path.exists(sfile) else {}
    keys = {"input", "exit_code", "format", "locations", "named", "left_unnamed", "named_before", "unmapped",
            "sources", "debuginfod", "unresolved_objects", "outputs"}
    t.check("%s: conv symbolize writes BASE.symbolized.pb.gz, --stats has its keys (%s of %s named)"
            % (name, st.get("named"), st.get("locations")),
            r.returncode == 0 and os.path.exists(named) and keys <= set(st) and
            st["named"] + st["left_unnamed"] + st["named_before"] + st["unmapped"] == st["locations"] and
            st["outputs"] == [{"format": "pprof", "path": named, "bytes": os.path.getsize(named)}], (err(r), st))
    t.check("%s: the output is gzipped as the input was, and keeps its samples" % name,
            open(named, "rb").read(2) == b"\x1f\x8b" and bare_samples(raw) == bare_samples(named))
    if go:
        g = subprocess.run([go, "tool", "pprof", "-raw", "-symbolize=none", named], capture_output=True,
                           timeout=120, env=dict(ENV, PPROF_BINARY_PATH=WORK))
        t.check("%s: go tool pprof reads it" % name, g.returncode == 0, g.stderr.decode()[-300:])
    again = os.path.join(WORK, name + ".again.pb.gz")
    r = conv("symbolize", "-q", "--offline", "-o", again, raw)
    t.check("%s: a second run writes the same bytes" % name,
            r.returncode == 0 and open(again, "rb").read() == open(named, "rb").read(), err(r))
    # a profile with names: kept (named_before), unless --force
    r = conv("symbolize", "-q", "--offline", "--stats=" + sfile, "-o", os.path.join(WORK, "x.pb.gz"), named)
    st2 = json.loads(open(sfile).readline()) if os.path.exists(sfile) else {}
    t.check("%s: names already there are kept (named_before %s = %s named + %s named before)"
            % (name, st2.get("named_before"), st.get("named"), st.get("named_before")),
            r.returncode == 0 and st2.get("named_before") == st.get("named") + st.get("named_before") and
            st2.get("named") == 0, st2)
    r = conv("symbolize", "-q", "--offline", "--force", "-o", os.path.join(WORK, "forced.pb.gz"), named)
    t.check("%s: --force names them again, to the same stacks" % name, r.returncode == 0 and
            pprof_stacks.samples(named) == pprof_stacks.samples(os.path.join(WORK, "forced.pb.gz")), err(r))

# an uncompressed profile stays uncompressed; -o DIR for several inputs
plain = os.path.join(WORK, "plain.pb")
with open(plain, "wb") as fh:
    fh.write(gzip.decompress(open(os.path.join(WORK, "fg.pb.gz"), "rb").read()))
r = conv("symbolize", "-q", "--offline", plain)
out = os.path.join(WORK, "plain.symbolized.pb")
t.check("an uncompressed profile: BASE.symbolized.pb, not gzipped", r.returncode == 0 and os.path.exists(out) and
        open(out, "rb").read(2) != b"\x1f\x8b", err(r))
d = os.path.join(WORK, "outdir", "sub") + "/"  # not there yet: made (the slash says a directory)
r = conv("symbolize", "-q", "--offline", "-o", d, os.path.join(WORK, "fg.pb.gz"), plain)
t.check("-o DIR with two inputs: DIR made, both written there", r.returncode == 0 and os.path.isdir(d) and
        sorted(os.listdir(d)) == ["fg.symbolized.pb.gz", "plain.symbolized.pb"],
        (err(r), os.listdir(d) if os.path.isdir(d) else None))

# -o - with several inputs: standard output is no directory
dd = os.path.join(WORK, "dash-o")
os.makedirs(dd)
r = subprocess.run([CONV, "symbolize", "-q", "--offline", "-o", "-", os.path.join(WORK, "fg.pb.gz"), plain],
                   cwd=dd, stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
t.check("-o - with two inputs: usage error, said, nothing made", r.returncode == 1 and "-o -" in err(r) and
        os.listdir(dd) == [], (err(r), os.listdir(dd)))

# refusals
fg = os.path.join(WORK, "fg.pb.gz")
before = sorted(os.listdir(WORK))
for args, code, words in ((["symbolize"], 1, "no FILE"),
                          (["symbolize", "-n", fg], 1, "--no-symbolize"),
                          (["symbolize", "--bogus", fg], 1, "--bogus"),
                          (["symbolize", "-o", fg, fg], 1, "refusing to overwrite"),
                          (["symbolize", "-o", "", fg, fg], 1, "empty path"),
                          (["symbolize", "--stats=" + fg, "-o", os.path.join(WORK, "s.pb.gz"), fg], 1,
                           "--stats file"),
                          (["symbolize", "--stats", os.path.join(WORK, "s.pb.gz"), "-o",
                            os.path.join(WORK, ".", "s.pb.gz"), fg], 1, "the --stats file are both"),
                          # one input's output is another input: refused before either is read
                          (["symbolize", fg, os.path.join(WORK, "fg.symbolized.pb.gz")], 1,
                           "refusing to overwrite"),
                          # two inputs of one name into one -o DIR
                          (["symbolize", "-o", os.path.join(WORK, "outdir", "sub") + "/", fg,
                            os.path.join(WORK, "outdir", "fg.pb.gz")], 1, "would both be written"),
                          (["symbolize", os.path.join(WORK, "missing.pb.gz")], 2, "No such file"),
                          (["symbolize", "-o", os.path.join(WORK, "r.pb.gz"), os.path.join(REPO, "README.md")],
                           2, "not a pprof profile")):
    # every file named, input or would-be output, as it was
    named = {a: open(a, "rb").read() for a in args if os.path.isfile(a)}
    r = conv(*args)
    t.check("conv %s: exit %d, says '%s'" % (" ".join(os.path.basename(a) for a in args[1:]) or "symbolize", code,
                                           words), r.returncode == code and words in err(r), (r.returncode, err(r)))
    t.check("  ... and every file it names is intact (%d)" % len(named),
            all(os.path.isfile(a) and open(a, "rb").read() == b for a, b in named.items()),
            [a for a, b in named.items() if not os.path.isfile(a) or open(a, "rb").read() != b])
    if os.path.exists(os.path.join(WORK, "s.pb.gz")):  # the --stats file of the collision case
        os.unlink(os.path.join(WORK, "s.pb.gz"))
jfr = os.path.join(WORK, "fg.jfr")
conv("-q", "-n", "--jfr", jfr, fixtures[0])
sfile = os.path.join(WORK, "jfr.json")
r = conv("symbolize", "--offline", "--stats=" + sfile, jfr)
st = json.loads(open(sfile).readline()) if os.path.exists(sfile) else {}
t.check("a JFR recording: BASE.symbolized.jfr, --stats says format jfr", r.returncode == 0 and
        os.path.exists(os.path.join(WORK, "fg.symbolized.jfr")) and st.get("format") == "jfr" and
        open(os.path.join(WORK, "fg.symbolized.jfr"), "rb").read(4) == b"FLR\0", (err(r), st))
cutj = os.path.join(WORK, "cut.jfr")
with open(cutj, "wb") as fh:
    fh.write(open(jfr, "rb").read()[:300])
r = conv("symbolize", "-o", os.path.join(WORK, "cj.jfr"), cutj)
t.check("a JFR recording cut short: exit 2, said", r.returncode == 2 and "JFR" in err(r), err(r))
cut = os.path.join(WORK, "cut.pb.gz")
with open(cut, "wb") as fh:
    fh.write(open(fg, "rb").read()[:200])
r = conv("symbolize", "-o", os.path.join(WORK, "c.pb.gz"), cut)
t.check("a truncated gzip: exit 2, said", r.returncode == 2 and "gzip" in err(r), err(r))
t.check("no output or temp file left by the refused runs",
        sorted(os.listdir(WORK)) == sorted(before + ["fg.jfr", "fg.symbolized.jfr", "jfr.json", "cut.jfr", "cut.pb.gz"])
        and not leftovers(WORK),
        sorted(set(os.listdir(WORK)) ^ set(before)))
r = conv("symbolize", "--help")
t.check("--help: exit 0, usage on stdout", r.returncode == 0 and r.stdout.startswith(b"usage: conv symbolize"))
t.finish()
