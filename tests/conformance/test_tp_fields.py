#!/usr/bin/env python3
"""Tracepoint field labels are the values `perf script -F trace` prints.

For every recording of the part (`--part fixtures`: tests/fixtures/*.data and
tests/fixtures/attr/*.data; `--part corpus`: every perf.data of the shared
corpus, skipped with exit 77 without it) that holds samples of an event with
default field labels (sched:sched_switch: prev_state, next_comm, next_pid;
sched:sched_wakeup/waking/wakeup_new: comm, pid; raw_syscalls:sys_exit: ret;
block:*: rwbs), conv's pprof is compared with perf's view:

  * per (event, thread id, field values), conv's sample count (the event's
    `_samples` value over the samples carrying those labels) equals the
    number of perf script lines with those values (`perf script -F
    tid,event,trace`, each field's value read after "NAME=" up to the next
    " NAME=" or " ==>"). A multiset, so a wrong value moves a count and
    cannot hide;
  * `--tp-fields EVENT:F1,...` replaces the defaults (on the first such
    recording: sched_switch labelled with prev_state alone);
  * a corpus file with tracing data converts without a refused format
    (`--stats` tracepoints.refused = 0) or says which it refused.

Recordings perf cannot read (other perf versions, crafted files) are skipped
and named. usage: test_tp_fields.py CONV WORKDIR --part fixtures|corpus
"""
import argparse
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
sys.dont_write_bytecode = True
import pprofdec  # noqa: E402

CORPUS = os.environ.get("CONV_CORPUS", os.path.join(os.path.dirname(REPO), "shared", "corpus"))
HANG = 600
DEFAULTS = {  # conv's defaults (pipeline/tpfields.c); numeric ones compare as numbers
    "sched:sched_switch": ("prev_state", "next_comm", "next_pid"),
    "sched:sched_wakeup": ("comm", "pid"),
    "sched:sched_waking": ("comm", "pid"),
    "sched:sched_wakeup_new": ("comm", "pid"),
    "raw_syscalls:sys_exit": ("ret",),
}
NUMERIC = {"next_pid", "pid", "ret"}
passed = failed = skipped = 0


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    print("%s %s%s" % ("ok  " if cond else "FAIL", name, "" if cond or not detail else "  -- %s" % detail))
    return cond


def skip(name, why):
    global skipped
    skipped += 1
    print("SKIP %s  -- %s" % (name, why))


def fields_of(event):
    if event in DEFAULTS:
        return DEFAULTS[event]
    return ("rwbs",) if event.startswith("block:") else ()


def value(trace, name):
    """The text after NAME= up to the next ' WORD=' or ' ==>' (comms may hold spaces)."""
    m = re.search(r"(?:^|\s)" + re.escape(name) + r"=(.*?)(?=\s+[A-Za-z_][A-Za-z0-9_]*=|\s+==>|$)", trace)
    return m.group(1) if m else None


def perf_view(data, env):
    """Counter (event, tid, values) from perf script, or None when perf cannot read it."""
    p = subprocess.run(["perf", "script", "-i", data, "-F", "tid,event,trace"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=HANG)
    if p.returncode:
        return None
    out = collections.Counter()
    for line in p.stdout.decode("utf-8", "replace").splitlines():
        m = re.match(r"^\s*(-?\d+)\s+([\w:.-]+):\s?(.*)$", line)
        if not m:
            continue
        tid, event, trace = int(m.group(1)), m.group(2), m.group(3)
        names = fields_of(event)
        if not names:
            continue
        vals = tuple(value(trace, n) for n in names)
        if None in vals:
            continue
        vals = tuple(int(v, 0) if n in NUMERIC and re.match(r"^-?(0x)?[0-9a-f]+$", v) else v
                     for n, v in zip(names, vals))
        out[(event, tid, vals)] += 1
    return out


def conv_view(pb):
    p = pprofdec.read(pb)
    out = collections.Counter()
    for (ids, vals, _), labels in zip(p["samples"], p["labels"]):
        lab = {k: (t if t is not None else n) for k, t, n, _ in labels}
        event = lab.get("event")
        names = fields_of(event) if event else ()
        if not names or not all(n in lab for n in names):
            continue
        i = [j for j, (t, _) in enumerate(p["types"]) if t == event + "_samples"]
        n = vals[i[0]] if i and i[0] < len(vals) else 0
        tid = lab.get("tid")
        tid = tid - (1 << 32) if isinstance(tid, int) and tid >= 1 << 31 else tid
        if n:
            out[(event, tid, tuple(lab[x] for x in names))] += n
    return out


def files(part):
    if part == "fixtures":
        fx = os.path.join(REPO, "tests", "fixtures")
        return sorted(glob.glob(os.path.join(fx, "*.data")) + glob.glob(os.path.join(fx, "attr", "*.data")))
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(CORPUS) for f in fs
                  if "perf" in f and not f.endswith((".txt", ".md")))


def refused_format(conv, work):
    """The fixture with its sched_switch format spoilt ('(' -> '{' in the print fmt, a shape
    tracefmt refuses before libtraceevent sees it): conv says so in a warning, labels no field,
    loses no sample."""
    src = os.path.join(REPO, "tests", "fixtures", "tracepoint.data")
    if not os.path.exists(src):
        return
    with open(src, "rb") as f:
        b = bytearray(f.read())
    i = b.find(b"print fmt:")
    j = b.find(b"(", i) if i >= 0 else -1
    if j < 0:
        skip("a refused format", "no print fmt in %s" % src)
        return
    b[j:j + 1] = b"{"
    bad = os.path.join(work, "refused.data")
    with open(bad, "wb") as f:
        f.write(b)
    pb, st = os.path.join(work, "refused.pb.gz"), os.path.join(work, "refused.json")
    ok_pb, ok_st = os.path.join(work, "ok.pb.gz"), os.path.join(work, "ok.json")
    r = subprocess.run([conv, "--offline", "-n", "--pprof", pb, "--stats", st, bad],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=HANG)
    subprocess.run([conv, "-q", "--offline", "-n", "--pprof", ok_pb, "--stats", ok_st, src],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=HANG)
    e = r.stderr.decode("utf-8", "replace")
    with open(st) as f:
        j1 = json.load(f)
    with open(ok_st) as f:
        j0 = json.load(f)
    keys = {k for labels in pprofdec.read(pb)["labels"] for k, _, _, _ in labels}
    check("a refused sched_switch format: exit 0, a warning, counted; no field labels; as many samples",
          r.returncode == 0 and "tracepoint formats not decoded" in e and
          j1.get("tracepoints", {}).get("refused") == 1 and not keys & {"prev_state", "next_comm", "next_pid"}
          and j1.get("samples") == j0.get("samples"),
          "exit %d, stderr %r, tracepoints %s, labels %s, samples %s vs %s" % (
              r.returncode, e[-300:], j1.get("tracepoints"), sorted(keys), j1.get("samples"), j0.get("samples")))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("conv")
    ap.add_argument("work")
    ap.add_argument("--part", choices=("fixtures", "corpus"), default="fixtures")
    a = ap.parse_args()
    if shutil.which("perf") is None:
        print("SKIP: perf is not installed")
        return 77
    if a.part == "corpus" and not os.path.isdir(CORPUS):
        print("SKIP: no corpus at %s" % CORPUS)
        return 77
    work = os.path.join(a.work, "run")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(work, "home"))
    env = dict(os.environ, HOME=os.path.join(work, "home"), LC_ALL="C", PAGER="cat", PERF_PAGER="cat")
    compared = 0
    tp_fields_done = False
    for i, data in enumerate(files(a.part)):
        name = os.path.relpath(data, os.path.dirname(REPO))
        pb, st = os.path.join(work, "%d.pb.gz" % i), os.path.join(work, "%d.json" % i)
        r = subprocess.run([a.conv, "-q", "--offline", "-n", "--pprof", pb, "--stats", st, data],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=HANG)
        if r.returncode not in (0, 3) or not os.path.exists(pb):
            continue  # crafted and broken inputs are other tests' business
        got = conv_view(pb)
        with open(st) as f:
            tp = json.load(f).get("tracepoints", {})
        if tp.get("formats"):
            check("%s: every tracepoint format decoded (%d of %d)" % (name, tp.get("decoded", 0),
                  tp["formats"]), not tp.get("refused"), tp)
        want = perf_view(data, env)
        if want is None:
            if got:
                skip("%s: field labels against perf" % name, "perf script cannot read it")
            continue
        if not want and not got:
            continue
        compared += 1
        diff = (want - got) + (got - want)
        check("%s: field labels equal perf script -F trace's for %d samples" % (name, sum(want.values())),
              want == got, "perf-only %s; conv-only %s" % (list((want - got).items())[:3],
                                                          list((got - want).items())[:3]))
        if not tp_fields_done and any(k[0] == "sched:sched_switch" for k in want):
            tp_fields_done = True
            pb2 = os.path.join(work, "%d.tp.pb.gz" % i)
            subprocess.run([a.conv, "-q", "--offline", "-n", "--tp-fields", "sched:sched_switch:prev_state",
                            "--pprof", pb2, data], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=HANG)
            p = pprofdec.read(pb2)
            keys = {k for labels in p["labels"] for k, _, _, _ in labels}
            states = collections.Counter()
            for k, n in want.items():
                if k[0] == "sched:sched_switch":
                    states[k[2][0]] += n
            gotstates = collections.Counter()
            for (ids, vals, lab) in p["samples"]:
                if lab.get("event") == "sched:sched_switch" and "prev_state" in lab:
                    i2 = [j for j, (t, _) in enumerate(p["types"]) if t == "sched:sched_switch_samples"]
                    gotstates[lab["prev_state"]] += vals[i2[0]]
            check("%s: --tp-fields sched:sched_switch:prev_state: prev_state alone, perf's counts" % name,
                  "prev_state" in keys and "next_comm" not in keys and "next_pid" not in keys and
                  gotstates == states, (sorted(keys), dict(gotstates), dict(states)))
    refused_format(a.conv, work)
    if not compared:
        print("SKIP: no recording here has samples with field labels that perf reads")
        return 77
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
