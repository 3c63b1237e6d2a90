#!/usr/bin/env python3
"""Real recordings cut short: conv keeps what is there, never more, and says
what was lost.

usage: test_truncation.py CONV WORKDIR

Recordings: samples/perf.data (file mode), tests/fixtures/multi.data (two
events), pipe.data (pipe mode), zstd.data (file mode, COMPRESSED records),
pipe-zstd.data, and multi.data turned into a pipe stream here (a
HEADER_ATTR per event, as `perf inject -o -` streams it: pipe mode with
two events). Each is cut at 10 or more offsets taken from its own
layout: inside the 104-byte header, inside the attr ids and the attrs
section, at the start of the data, at record boundaries and in the middle
of records (in the 8-byte record header and in the body), inside COMPRESSED
payloads, at the end of the data (file mode: the feature index and the
feature sections, written last, are then missing), inside the feature index,
inside a feature section, and one byte short of the end. The pipe recording
is also fed through standard input ('-').

For every cut, `CONV -q --offline --stats=S -o OUT CUT` must:
  * finish within the timeout, with no sanitizer report and no "(null)";
  * exit 0; or exit 2 only when the cut leaves nothing usable (inside the
    header or the attrs of a file-mode recording, or before the first
    HEADER_ATTR is complete in a pipe stream), with a "conv: CUT: reason"
    line on stderr and no output file;
  * on exit 0: per event, no more samples than the intact recording, and
    never fewer than a shorter cut of the same recording; all of them when
    only the feature sections are cut off; at least one problem in --stats
    with an offset inside the cut file, and a "conv: warning: ... offset N"
    line (not for a pipe stream cut at a record boundary: a stream has no
    length, so it then looks complete and nothing need be reported); both outputs exist with the sizes --stats gives, `go tool pprof
    -raw` reads the pprof (per-event sample sums equal --stats) and `jfr
    summary` the JFR (jdk.ExecutionSample plus perf.* events equal
    samples_total; the jfr tool's code run in one JVM for all cuts,
    tests/jfr/jfrtool.py), each when installed;
  * with --strict: exit 3 where the plain run gave 0 with problems (0
    without), 2 where it gave 2.

data.size == 0 in the header (perf killed before it rewrote the header):
file-mode recordings (samples/perf.data, zstd.data) whose data.size is 0
and whose feature sections are missing convert every sample with a problem
at offset 48 (the field); the same with the feature sections left in place
(they are then read as records and reading stops at them) and cut in the
middle of the data (the same samples as the plain cut).

Prints a table per recording (cut offset, where, exit, samples vs intact,
first problem) and `N passed, M failed, K skipped`. Each run has a timeout;
the whole test takes a few seconds with a release build.
Python 3 standard library only.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys

CONV, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "jfr"))
import jfrtool  # noqa: E402
TIMEOUT = 120
passed = failed = skipped = 0


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    if not cond:
        print("FAIL " + name + "  -- %s" % (detail,))
    sys.stdout.flush()
    return cond


def sh(cmd, timeout=TIMEOUT, stdin=None, env=None):
    try:
        with open(stdin, "rb") if stdin else open(os.devnull, "rb") as f:
            p = subprocess.run(cmd, stdin=f, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=timeout, env=env)
        return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return None, "", "timeout after %ss" % timeout


def explain(err):
    """The sanitizer's summary line and first frames, or the end of stderr."""
    m = re.search(r"ERROR: \w+Sanitizer.*?\n(?:.*\n){0,3}|runtime error.*", err)
    return (m.group(0) + " ... " + "".join(re.findall(r"SUMMARY: .*", err))) if m else err[-300:]


GO = shutil.which("go")
JFR = shutil.which("jfr")
GENV = None


def pprof_sums(path):
    """{event: sum of <event>_samples} from go tool pprof -raw, or None (unreadable)."""
    rc, out, err = sh([GO, "tool", "pprof", "-raw", "-symbolize=none", path], timeout=60, env=GENV)
    if rc != 0 or "Samples:" not in out:
        return None, err[-300:]
    lines = out.splitlines()
    s = lines.index("Samples:")
    cols = lines[s + 1].split()
    sums = [0] * len(cols)
    for l in lines[s + 2:]:
        if not l.strip() or l.startswith("Locations"):
            break
        m = re.match(r"\s*(-?\d+(?:\s+-?\d+)*):", l)
        if m:
            for j, v in enumerate(m.group(1).split()[:len(cols)]):
                sums[j] += int(v)
    return {c.split("/")[0][:-len("_samples")]: sums[j] for j, c in enumerate(cols)
            if c.split("/")[0].endswith("_samples")}, ""


# jfr summary of every cut in one JVM that stays (tests/jfr/jfrtool.py): a JDK started per
# cut was most of this test's time
JFR_SERVER = None


def jfr_samples(path):
    """jdk.ExecutionSample + perf.* (but perf.LostSamples) counts from jfr summary, or None."""
    if JFR_SERVER:
        rc, out, err = JFR_SERVER.run(["summary", path], 60)
        if rc is None:
            return None, "jfr summary: timeout after 60s"
        out, err = out.decode(errors="replace"), err.decode(errors="replace")
    else:
        rc, out, err = sh([JFR, "summary", path], timeout=60)
    if rc != 0 or "Exception" in out + err:
        return None, (out + err)[-300:]
    n = 0
    for l in out.splitlines():
        m = re.match(r"\s*(jdk\.ExecutionSample|perf\.\w+)\s+(\d+)\s", l)
        if m and m.group(1) != "perf.LostSamples":
            n += int(m.group(2))
    return n, ""


# ---- layouts ----

def records(d, start, end):
    out, p = [], start
    while p + 8 <= end:
        t, _m, s = struct.unpack_from("<IHH", d, p)
        if s < 8:
            break
        out.append((p, t, s))
        if t == 66:
            s += struct.unpack_from("<I", d, p + 8)[0]
        p += s
    return out


def cuts_file(d):
    """[(offset, where, nothing_usable, all_data, detectable)] for a file-mode recording."""
    attrs_off, attrs_size = struct.unpack_from("<QQ", d, 24)
    do, ds = struct.unpack_from("<QQ", d, 40)
    words = struct.unpack_from("<4Q", d, 72)
    nfeat = sum(bin(w).count("1") for w in words)
    idx = do + ds
    feats = [struct.unpack_from("<QQ", d, idx + 16 * i) for i in range(nfeat)]
    recs = records(d, do, do + ds)
    ids_off = struct.unpack_from("<Q", d, attrs_off + struct.unpack_from("<Q", d, 16)[0] - 16)[0]
    big = max(feats, key=lambda f: f[1])
    r = lambda frac: recs[min(len(recs) - 1, int(len(recs) * frac))]
    out = [(8, "header: after the magic", True, False, True),
           (60, "header: inside event_types/features", True, False, True),
           (ids_off + 8, "attr ids", True, False, True),
           (attrs_off + attrs_size // 2, "attrs section", True, False, True),
           (do, "start of data (no record)", False, False, True),
           (recs[min(8, len(recs) - 1)][0], "record boundary (after the first 8 records)", False, False, True)]
    rr = r(0.25)
    out.append((rr[0] + rr[2] // 2, "mid-record (%d-byte type %d), 25%%" % (rr[2], rr[1]), False, False, True))
    rr = r(0.5)
    out.append((rr[0], "record boundary, 50%", False, False, True))
    rr = r(0.75)
    out.append((rr[0] + 5, "inside a record header, 75%", False, False, True))
    rr = recs[-1]
    out.append((rr[0] + rr[2] - 1, "last record, 1 byte short", False, False, True))
    out.append((do + ds, "end of data: no feature index or sections", False, True, True))
    out.append((idx + 16 * nfeat // 2 + 4, "inside the feature index", False, True, True))
    out.append((big[0] + big[1] // 2, "inside the largest feature section", False, True, True))
    out.append((len(d) - 1, "1 byte short of the end", False, True, True))
    return out, recs


def cuts_zstd(d):
    out, recs = cuts_file(d)
    comp = [x for x in recs if x[1] == 81]
    for o, _t, s in comp:
        out.append((o + 4, "inside a COMPRESSED record header", False, False, True))
        out.append((o + s // 2, "middle of a COMPRESSED payload (%d bytes)" % s, False, False, True))
    out.append((comp[-1][0] + comp[-1][2], "after the last COMPRESSED record", False, False, True))
    return out, recs


def cuts_pipe(d):
    recs = records(d, 16, len(d))
    attr = recs[0]
    feats = [x for x in recs if x[1] == 80] or [x for x in recs if x[1] == 64][1:] or [attr]
    first_feat, last_feat = feats[0], feats[-1]
    fname = {80: "HEADER_FEATURE", 64: "HEADER_ATTR"}[first_feat[1]]
    r = lambda frac: recs[min(len(recs) - 1, int(len(recs) * frac))]
    # A pipe stream has no length: cut at a record boundary it looks complete
    # (detectable False: no problem is required; --strict must then exit 0).
    out = [(8, "pipe header: after the magic", True, False, True),
           (16, "pipe header only", True, False, False),
           (attr[0] + attr[2] // 2, "inside HEADER_ATTR", True, False, True),
           (attr[0] + attr[2], "after HEADER_ATTR (record boundary)", False, False, False),
           (first_feat[0] + first_feat[2] // 2, "inside the first %s" % fname, False, False, True),
           (last_feat[0] + last_feat[2], "after the %ss (record boundary)" % fname, False, False, False)]
    rr = r(0.3)
    out.append((rr[0] + rr[2] // 2, "mid-record (%d-byte type %d), 30%%" % (rr[2], rr[1]), False, False, True))
    rr = r(0.5)
    out.append((rr[0], "record boundary, 50%", False, False, False))
    rr = r(0.8)
    out.append((rr[0] + 3, "inside a record header, 80%", False, False, True))
    for x in [x for x in recs if x[1] == 81]:
        out.append((x[0] + x[2] // 2, "middle of a COMPRESSED payload (%d bytes)" % x[2], False, False, True))
    out.append((len(d) - 1, "1 byte short of the end", False, False, True))
    return out, recs


def file_to_pipe(d):
    """A file-mode recording as a pipe stream: a HEADER_ATTR record per attr (with
    its ids), then the data records (features left out), as `perf inject -o -`
    would stream it. Gives a pipe stream with several events."""
    attr_size, attrs_off, attrs_size, do, ds = struct.unpack_from("<5Q", d, 16)
    out = bytearray(b"PERFILE2" + struct.pack("<Q", 16))
    for i in range(attrs_size // attr_size):
        a = attrs_off + i * attr_size
        asz = struct.unpack_from("<I", d, a + 4)[0] or 64
        ids_off, ids_size = struct.unpack_from("<QQ", d, a + attr_size - 16)
        body = bytes(d[a:a + asz]) + bytes(d[ids_off:ids_off + ids_size])
        out += struct.pack("<IHH", 64, 0, 8 + len(body)) + body
    out += d[do:do + ds]
    return bytes(out)


# ---- one run ----

def convert(path, tag, stdin=False):
    base = os.path.join(WORK, tag)
    stats = base + ".json"
    for ext in (".pb.gz", ".jfr", ".json"):
        if os.path.exists(base + ext):
            os.unlink(base + ext)
    args = [CONV, "-q", "--offline", "--stats=" + stats, "-o", base]
    rc, _out, err = sh(args + (["-"] if stdin else [path]), stdin=path if stdin else None)
    doc = None
    if os.path.exists(stats):
        try:
            with open(stats) as f:
                doc = json.loads(f.readline())
        except ValueError:
            doc = None
    return rc, err, doc, base


def run_cut(label, path, size, where, nothing_usable, all_data, detectable, intact, prev, rows,
            stdin=False):
    """Converts one cut file and checks it. Returns its samples per event (or None)."""
    name = "%s@%d (%s)%s" % (label, size, where, " via stdin" if stdin else "")
    rc, err, doc, base = convert(path, "run", stdin=stdin)
    if not check(name + ": finishes", rc is not None, err):
        rows.append((size, where, "hang", "", ""))
        return None
    check(name + ": no sanitizer report", "runtime error" not in err and "Sanitizer" not in err, explain(err))
    check(name + ": no '(null)' in messages", "(null)" not in err,
          [l for l in err.splitlines() if "(null)" in l][:2])
    allowed = (0, 2) if nothing_usable else (0,)
    check(name + ": exit %s" % " or ".join(map(str, allowed)), rc in allowed, "exit %s: %s" % (rc, explain(err)))
    first = ""
    got = None
    if rc == 2:
        shown = "-" if stdin else path
        check(name + ": exit 2 says why", re.search(r"conv: %s: \S" % re.escape(shown), err), err[-300:])
        check(name + ": exit 2 writes no output",
              not os.path.exists(base + ".pb.gz") and not os.path.exists(base + ".jfr"))
        first = err.strip().splitlines()[-1].split(": ", 2)[-1][:60] if err.strip() else ""
    elif rc == 0 and check(name + ": --stats written", doc is not None):
        got = doc.get("samples", {})
        probs = doc.get("problems", [])
        first = ("@%s %s" % (probs[0]["offset"], probs[0]["message"]))[:60] if probs else ""
        for ev, n in got.items():
            check(name + ": %s samples %d <= intact %d" % (ev, n, intact.get(ev, 0)), n <= intact.get(ev, 0))
        check(name + ": no event the intact recording lacks", set(got) <= set(intact), got)
        if prev is not None:
            check(name + ": not fewer samples than a shorter cut",
                  all(got.get(ev, 0) >= n for ev, n in prev.items()), "%s < %s" % (got, prev))
        if all_data:
            check(name + ": all samples kept (only features lost)", got == intact, "%s vs %s" % (got, intact))
        check(name + ": problem offsets lie inside the file",
              all(isinstance(p.get("offset"), int) and p["offset"] <= size for p in probs), probs[:3])
        if detectable:
            check(name + ": a problem with an offset in --stats", probs, probs)
            check(name + ": a warning naming an offset", re.search(r"conv: warning: .*: offset \d+", err),
                  err[-300:])
        elif not probs:
            first = "(none: looks complete)"
        outs = {o["format"]: o for o in doc.get("outputs", [])}
        for fmt, ext in (("pprof", ".pb.gz"), ("jfr", ".jfr")):
            p = base + ext
            check(name + ": %s written, size as in --stats" % fmt,
                  os.path.exists(p) and fmt in outs and outs[fmt]["bytes"] == os.path.getsize(p), outs)
        if GO and os.path.exists(base + ".pb.gz"):
            sums, why = pprof_sums(base + ".pb.gz")
            if sums is None and "profile has no samples" in why and not doc.get("samples_total"):
                sums = {}  # parsed; go refuses to show a profile without sample types
            if check(name + ": go tool pprof reads it", sums is not None, why):
                check(name + ": pprof sample sums equal --stats",
                      {e: n for e, n in sums.items() if n or e in got} == {e: n for e, n in got.items()},
                      "%s vs %s" % (sums, got))
        if JFR and os.path.exists(base + ".jfr"):
            n, why = jfr_samples(base + ".jfr")
            if check(name + ": jfr summary reads it", n is not None, why):
                check(name + ": JFR samples equal samples_total", n == doc.get("samples_total"),
                      "%s vs %s" % (n, doc.get("samples_total")))
    if rc in (0, 2):
        args = [CONV, "-q", "--offline", "--strict", "-o", os.path.join(WORK, "strict")]
        src = ["-"] if stdin else [path]
        src_in = path if stdin else None
        s_rc, s_err, _ = sh(args + src, stdin=src_in)
        want = 2 if rc == 2 else 3 if doc and doc.get("problems") else 0
        check(name + ": --strict exits %d" % want, s_rc == want, "exit %s: %s" % (s_rc, s_err[-200:]))
    total = sum(got.values()) if got is not None else "-"
    rows.append((size, where + (" [stdin]" if stdin else ""), rc, total, first))
    return got


def table(label, intact, rows):
    print("\n%s (intact: %d bytes, %s samples)" % (label, intact[0], intact[1]))
    print("%8s  %-48s %4s %8s  %s" % ("cut at", "where", "exit", "samples", "first problem"))
    for size, where, rc, total, first in rows:
        print("%8d  %-48s %4s %8s  %s" % (size, where[:48], rc, total, first))


def main():
    global GENV, JFR_SERVER
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    if JFR and shutil.which("java"):
        JFR_SERVER = jfrtool.JfrServer(WORK, "summary")
    empty = os.path.join(WORK, "empty")
    os.makedirs(empty, exist_ok=True)
    GENV = dict(os.environ, HOME=empty, PPROF_BINARY_PATH=empty, GOCACHE=os.path.join(WORK, "gocache"))
    if not GO:
        print("note: go is not installed: pprof outputs are not read back")
    if not JFR:
        print("note: jfr is not installed: JFR outputs are not read back")
    inputs = [("samples/perf.data", cuts_file), ("tests/fixtures/multi.data", cuts_file),
              ("tests/fixtures/pipe.data", cuts_pipe), ("tests/fixtures/zstd.data", cuts_zstd),
              ("tests/fixtures/pipe-zstd.data", cuts_pipe),
              ("tests/fixtures/multi.data|pipe", cuts_pipe)]
    cutdir = os.path.join(WORK, "cuts")
    os.makedirs(cutdir, exist_ok=True)
    global skipped
    for rel, how in inputs:
        rel, _, as_pipe = rel.partition("|")
        src = os.path.join(REPO, rel)
        if not os.path.isfile(src):
            print("SKIP: %s is missing" % rel)
            skipped += 1
            continue
        d = open(src, "rb").read()
        label = os.path.basename(rel)
        if as_pipe:
            d = file_to_pipe(d)
            label += "-as-pipe"
            src = os.path.join(cutdir, label)
            with open(src, "wb") as f:
                f.write(d)
        rc, err, doc, _ = convert(src, "intact")
        if not check("%s intact: converts" % label, rc == 0 and doc is not None, explain(err)):
            continue
        intact = doc["samples"]
        cuts, _recs = how(d)
        cuts = sorted({c[0]: c for c in cuts if 0 < c[0] < len(d)}.values())
        check("%s: at least 10 cut offsets" % label, len(cuts) >= 10, len(cuts))
        rows, prev = [], None
        for size, where, nothing, all_data, detectable in cuts:
            path = os.path.join(cutdir, "%s.cut%d" % (label, size))
            with open(path, "wb") as f:
                f.write(d[:size])
            got = run_cut(label, path, size, where, nothing, all_data, detectable, intact, prev, rows)
            if got is not None:
                prev = got
            if how is cuts_pipe and size in (cuts[len(cuts) // 2][0], cuts[-1][0]):
                run_cut(label, path, size, where, nothing, all_data, detectable, intact, None, rows,
                        stdin=True)
            os.unlink(path)
        table(label, (len(d), sum(intact.values())), rows)

    # data.size == 0: perf was killed before it rewrote the header
    print("\ndata.size == 0 in the header")
    for rel in ("samples/perf.data", "tests/fixtures/zstd.data"):
        src = os.path.join(REPO, rel)
        if not os.path.isfile(src):
            skipped += 1
            continue
        d = bytearray(open(src, "rb").read())
        label = os.path.basename(rel)
        _rc, _err, doc, _ = convert(src, "intact")
        intact = doc["samples"] if doc else {}
        do, ds = struct.unpack_from("<QQ", d, 40)
        z = bytearray(d)
        struct.pack_into("<Q", z, 48, 0)
        recs = records(d, do, do + ds)
        mid = next(o for o, _t, n in recs if o + n > do + ds * 3 // 4) + 3  # a record at 75% of the data
        with open(os.path.join(cutdir, "plain-mid"), "wb") as f:
            f.write(d[:mid])
        _r, _e, mdoc, _ = convert(os.path.join(cutdir, "plain-mid"), "plainmid")
        for variant, data, want in (("no feature sections", z[:do + ds], intact),
                                    ("feature sections left in place", z, intact),
                                    ("cut in the middle of the data", z[:mid],
                                     mdoc["samples"] if mdoc else None)):
            name = "%s data.size=0, %s" % (label, variant)
            path = os.path.join(cutdir, "ds0")
            with open(path, "wb") as f:
                f.write(data)
            rc, err, doc, base = convert(path, "ds0")
            check(name + ": exit 0", rc == 0, "exit %s: %s" % (rc, explain(err)))
            check(name + ": no sanitizer report, no '(null)'",
                  "runtime error" not in err and "Sanitizer" not in err and "(null)" not in err, err[-400:])
            if doc is None:
                check(name + ": --stats written", False)
                continue
            check(name + ": samples %s == %s" % (doc["samples"], want), doc["samples"] == want)
            probs = doc.get("problems", [])
            check(name + ": the problem names offset 48 (data.size)",
                  any(p["offset"] == 48 and "data size is 0" in p["message"] for p in probs), probs[:3])
            if GO:
                sums, why = pprof_sums(base + ".pb.gz")
                check(name + ": go tool pprof reads it, same samples",
                      sums is not None and {e: n for e, n in sums.items() if n} ==
                      {e: n for e, n in doc["samples"].items() if n}, why or sums)
            if JFR:
                n, why = jfr_samples(base + ".jfr")
                check(name + ": jfr summary reads it, same samples", n == doc["samples_total"], why or n)
            print("  %-55s exit %s, samples %s (intact %s), problems: %s" % (
                name, rc, doc["samples_total"], sum(intact.values()),
                "; ".join("@%d %s" % (p["offset"], p["message"][:50]) for p in probs)))
    shutil.rmtree(cutdir, ignore_errors=True)
    if JFR_SERVER:
        JFR_SERVER.close()
    print("\n%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 77 if not passed else 0


if __name__ == "__main__":
    sys.exit(main())
