#!/usr/bin/env python3
"""CLI tests of `conv info`: exit codes, stdin in both modes, JSON keys, --strict.

usage: test_cli_info.py CONV FIXTURES_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

CONV, FIX = sys.argv[1], sys.argv[2]
passed = failed = 0


def run(args, stdin=None, input_bytes=None):
    p = subprocess.run([CONV] + args, stdin=stdin, input=input_bytes,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print("ok   " + name)
    else:
        failed += 1
        print("FAIL " + name + ("  -- " + detail if detail else ""))


def events(out):
    d = json.loads(out)
    return {e["name"]: e["samples"] for e in d["events"]}


fg = os.path.join(FIX, "fg.data")
pipe = os.path.join(FIX, "pipe.data")
pipez = os.path.join(FIX, "pipe-zstd.data")

rc, out, err = run(["--help"])
check("--help exits 0 and shows usage", rc == 0 and "conv info" in out, err)
# like conv, conv info reads perf.data when no file is named
with tempfile.TemporaryDirectory() as empty_dir:
    p = subprocess.run([os.path.abspath(CONV), "info"], cwd=empty_dir, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
check("conv info without a file reads perf.data (here missing: exit 2 naming it)",
      p.returncode == 2 and "perf.data" in p.stderr.decode("utf-8", "replace"), str(p.returncode))
rc, out, err = run(["info", "--help"])
check("conv info --help exits 0 and shows the info usage", rc == 0 and "--json" in out, str(rc))
rc, out, err = run(["info", "--bogus", fg])
check("unknown option is a usage error (1)", rc == 1, str(rc))
rc, out, err = run(["--frobnicate"])
check("unknown option of the converter is a usage error (1)", rc == 1, str(rc))
rc, out, err = run(["/nonexistent/frobnicate"])
check("converting a missing file exits 2", rc == 2 and "frobnicate" in err, str(rc))
rc, out, err = run(["info", "/nonexistent/perf.data"])
check("missing file exits 2 with a message", rc == 2 and "nonexistent" in err, err)
with tempfile.NamedTemporaryFile(delete=False) as t:
    t.write(b"definitely not a perf.data file\n" * 4)
rc, out, err = run(["info", t.name])
check("non-perf input exits 2", rc == 2 and "not a perf.data file" in err, err)
rc, out, err = run(["info", "-"], input_bytes=b"")
check("empty stdin exits 2", rc == 2, str(rc))
os.unlink(t.name)

rc, out, err = run(["info", "--json", fg])
d = json.loads(out) if rc == 0 else {}
need = ["mode", "byte_order", "perf_version", "events", "records", "lost_samples", "build_ids",
        "problems"]
check("--json has the documented keys", rc == 0 and all(k in d for k in need),
      str([k for k in need if k not in d]))
check("--json events carry name and samples",
      rc == 0 and all("name" in e and "samples" in e for e in d["events"]))
check("--json build_ids carry build_id, filename, source",
      rc == 0 and d["build_ids"] and all({"build_id", "filename", "source"} <= set(b)
                                          for b in d["build_ids"]))
file_events = events(out)

rc, out, err = run(["info", fg])
check("text output names the event and its count",
      rc == 0 and "cpu-clock" in out and str(file_events["cpu-clock"]) in out, out[:200])

# file mode through a pipe: the reader spools it to a temp file
with open(fg, "rb") as f:
    data = f.read()
rc, out, err = run(["info", "--json", "-"], input_bytes=data)
check("file-mode perf.data through stdin (pipe) reads the same",
      rc == 0 and events(out) == file_events, err)
with open(fg, "rb") as f:
    rc, out, err = run(["info", "--json", "-"], stdin=f)
check("file-mode perf.data as stdin redirect reads the same",
      rc == 0 and events(out) == file_events, err)

for path in (pipe, pipez):
    saved_rc, saved, _ = run(["info", "--json", path])
    with open(path, "rb") as f:
        rc, out, err = run(["info", "--json", "-"], input_bytes=f.read())
    check("pipe-mode %s through stdin equals the saved file" % os.path.basename(path),
          rc == 0 and saved_rc == 0 and events(out) == events(saved)
          and json.loads(out)["mode"] == "pipe", err)

# truncated copy: read to a precise problem; --strict turns it into exit 3
with tempfile.NamedTemporaryFile(delete=False, suffix=".data") as t:
    t.write(data[: len(data) * 2 // 3])
rc, out, err = run(["info", "--json", t.name])
d = json.loads(out) if rc == 0 else {}
check("truncated file is read with a reported problem (exit 0)",
      rc == 0 and d["problems"] and d["truncated"] and "offset" in d["problems"][0],
      str(d.get("problems")))
check("truncated file gives fewer samples than the whole one",
      rc == 0 and sum(e["samples"] for e in d["events"]) < sum(file_events.values()))
rc, out, err = run(["info", "--strict", t.name])
check("--strict exits 3 when data was lost", rc == 3, str(rc))
rc, out, err = run(["info", "--strict", fg])
check("--strict exits 0 on an intact file", rc == 0, str(rc))
os.unlink(t.name)

# --top: the text lists the inline frames seen in each function, as --json does
sample = os.path.join(os.path.dirname(os.path.dirname(FIX)), "samples")
args = ["info", "--offline", "-d", os.path.join(sample, "debug"), "--top", "3", os.path.join(sample, "perf.data")]
rc, out, err = run(args)
rcj, outj, errj = run(args[:1] + ["--json"] + args[1:])
tops = json.loads(outj).get("top_functions", []) if rcj == 0 else []
want = ["  %10d  %s%s" % (e["samples"], e["name"],
                          "  (inlined into it: %s)" % ", ".join(e["inlined"]) if e["inlined"] else "")
        for e in tops]
check("--top 3: the text's lines are --json's, with the inline frames (%s)" % [e["inlined"] for e in tops],
      rc == 0 and len(tops) == 3 and any(e["inlined"] for e in tops) and
      all(w in out.splitlines() for w in want), repr((want, out[-400:])))

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
