#!/usr/bin/env python3
"""conv writes off-CPU time, and sched:sched_switch's fields as labels (issue 21).

usage: test_offcpu.py [--selftest] [--only A,B,C] CONV WORKDIR

1. tests/offcpu/src/waits.c is built into WORKDIR (gcc -O2 -g
   -fno-omit-frame-pointer -pthread): on its main thread wait_sleep()
   (N x clock_nanosleep), wait_pipe() (N blocking reads of a pipe a second
   thread fills after a delay) and burn() (a CPU loop, no system call), each
   entering the kernel by its own `syscall` instruction so that the
   frame-pointer stack taken at the switch-out shows it. The program
   measures the time it spends inside the blocking system calls
   (CLOCK_MONOTONIC just before and after each) and writes it as JSON.
2. It is recorded three ways (each with a private perf HOME under WORKDIR):
   A  per task: perf record -e sched:sched_switch -e cpu-clock --switch-events -g
   B  system-wide: perf record -a -e sched:sched_switch -e cpu-clock -g
   C  perf record --off-cpu -e cpu-clock -g, when this perf can (Debian's 6.1
      is built without BPF skeletons and ignores --off-cpu: SKIP).
   A recording is unusable when the program failed, perf lost records, or
   perf's own view (below) has no switch-out under wait_sleep or wait_pipe
   or no cpu-clock sample in burn; it is then made again, RECORD_TRIES times
   at most, and that recording's checks are skipped after that.
3. perf's view, the reference: `perf script --ns -F tid,time,event,ip,sym,
   trace,period` (A also --show-switch-events). An off-CPU interval starts
   at a sched_switch sample (the thread switched out; its stack and
   prev_state) and ends when the thread runs again: A, its next
   PERF_RECORD_SWITCH IN; B, the next sched_switch whose next_pid is the
   thread; in both, or at its next sample on any CPU, whichever is first. C:
   each offcpu-time sample is an interval of PERIOD ns with its stack.
4. conv's view: `CONV --offline -q --pprof X.pb.gz --jfr X.jfr FILE`. The
   pprof (tests/tools/pprofdec.py) has the sample types off_cpu_samples/count
   and off_cpu/nanoseconds after the per-event ones; a sample with off-CPU
   time carries the thread's labels (tid ...) and a string label `state`.
   The JFR (`jfr print --json --events perf.OffCPU`) has perf.OffCPU events
   with startTime, duration, eventThread, stackTrace and state.

Checks per recording, on the program's main thread (tid = its pid):
  * the off-CPU nanoseconds under wait_sleep (the samples whose stack holds
    the function), and under wait_pipe, are within TOLERANCE of what the
    program measured: in the pprof, and in the JFR's perf.OffCPU durations;
  * as many off-CPU intervals (off_cpu_samples, perf.OffCPU events) under
    each as perf's view has;
  * burn() has no off-CPU time in a waiting state (any but R/R+: it never
    blocks; being preempted, R, is off-CPU time too and only printed);
  * (A, B) the states of the time under each waiting function (those
    holding >= 1 % of it) are perf's prev_states;
  * (A, B) the sched_switch samples' labels prev_state (string), next_comm
    (string) and next_pid (number) are `perf script -F trace`'s for every
    sched_switch sample, compared as multisets of (tid, prev_state,
    next_comm, next_pid) since pprof aggregates;
  * the JFR's jdk.ExecutionSample events are the pprof's cpu-clock samples
    (sched_switch is no execution sample), its perf.OffCPU events the
    pprof's off_cpu_samples;
  * the views (`-v -F folded,html`): the folded stacks count cpu-clock's
    samples by default (the pprof's cpu-clock_samples per stack of named
    frames, root first), the flame graph's first view is cpu-clock, the
    summary has a top of cpu-clock samples and one of off-CPU time, and
    `--folded-value off_cpu` gives the pprof's off_cpu nanoseconds per stack.

--selftest replaces conv by perf's view itself: the intervals computed above
from perf script's output are attributed to their switch-out stacks'
functions and the same TOLERANCE checks are run. This proves the recipe (the
waits are visible under the waiting functions with -g, and the program's
own timings match perf's) and the harness; the interval count asked is then
at least one per wait, and the state, label and JFR checks have nothing to
compare and are skipped. --only makes only the recordings named.

The checks assert properties of the recording (what the program measured),
never the speed of the machine. Prints testlib's ok/FAIL/skip lines and "N
passed, M failed[, K skipped]"; exit 1 on a failure, 77 when it cannot run
here at all ("SKIP: why": no perf, no gcc, no right to record tracepoints:
root or perf_event_paranoid <= 1 and a readable tracefs) or every check was
skipped. Everything is written under WORKDIR, emptied first.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TESTS, "tools"))
import testlib as t  # noqa: E402
import pprofdec  # noqa: E402

HANG = 600            # seconds: a subprocess that takes longer is stuck, not slow
RECORD_TRIES = 3
TOLERANCE = 0.05      # off-CPU time against the program's own measurement
STATE_SHARE = 0.01    # a state holding less of a function's time is not compared
WAITS = ("wait_sleep", "wait_pipe")
BURN = "burn"
RUNNING = ("R", "R+")
SWITCH = "sched:sched_switch"
RECORDINGS = [
    # name, what, perf record options
    ("A", "per task, --switch-events",
     ["-e", SWITCH, "-e", "cpu-clock", "--switch-events", "-g"]),
    ("B", "system-wide",
     ["-a", "-e", SWITCH, "-e", "cpu-clock", "-g"]),
    ("C", "perf record --off-cpu",
     ["--off-cpu", "-e", "cpu-clock", "-g"]),
]

check, skip, note, finish, text = t.check, t.skip, t.note, t.finish, t.text
cannot_run = t.skip_all


def sh(cmd, timeout=HANG, env=None, cwd=None, stdin=None):
    return t.sh(cmd, timeout=timeout, env=env, cwd=cwd, stdin=stdin)


def ms(ns):
    return "%.2f ms" % (ns / 1e6)


def within(got, want, tol=TOLERANCE):
    return want > 0 and abs(got - want) <= tol * want


def rel(got, want):
    return "%s against %s (%+.2f %%)" % (ms(got), ms(want), 100.0 * (got - want) / want if want else 0)


def perf_env(home):
    env = dict(os.environ, HOME=home, PERF_PAGER="cat", PAGER="cat", LC_ALL="C")
    env.pop("DEBUGINFOD_URLS", None)
    return env


# -- what a view of a recording is ------------------------------------------------------

class View:
    """A recording as one tool sees it.
    offcpu:   [(tid, frozenset of the stack's function names, state or None, ns)]
    switches: Counter of (tid, prev_state, next_comm, next_pid) of the sched_switch samples
              (None: this view has none to compare)
    cpu:      the number of cpu-clock samples
    burn_samples: cpu-clock samples of the main thread with burn on the stack (perf's view)
    lost:     lost records (perf's view)"""

    def __init__(self):
        self.offcpu = []
        self.switches = collections.Counter()
        self.cpu = 0
        self.burn_samples = 0
        self.lost = 0

    def under(self, tid, func):
        """(ns, intervals, {state: ns}) of tid's off-CPU time whose stack holds func."""
        ns = n = 0
        states = collections.Counter()
        for t, names, state, d in self.offcpu:
            if t == tid and func in names:
                ns += d
                n += 1
                states[state] += d
        return ns, n, states


# -- perf's view -------------------------------------------------------------------------

HEAD = re.compile(r"^\s*(-?\d+)\s+(\d+)\.(\d+):\s+(.*)$")
FRAME = re.compile(r"^\s+([0-9a-f]+)\s+(.*)$")
EVENT = re.compile(r"^(?:(\d+)\s+)?(\S.*?):(?:\s+(.*))?$")   # [period] event: [trace]
SWITCH_REC = re.compile(r"^PERF_RECORD_SWITCH(_CPU_WIDE)?\s+(IN|OUT)\b")
TRACE = re.compile(r"prev_comm=(.*) prev_pid=(-?\d+) prev_prio=(-?\d+) prev_state=(\S+) ==> "
                   r"next_comm=(.*) next_pid=(-?\d+) next_prio=(-?\d+)\s*$")


def perf_events(data, home, switch_events):
    """perf script's events in time order: dicts kind (sample/switch/lost), tid, t (ns),
    and for samples event, rest (the trace or period), stack (names)."""
    cmd = ["perf", "script", "-i", data, "--ns", "--show-lost-events",
           "-F", "tid,time,event,ip,sym,trace,period"]
    if switch_events:
        cmd.append("--show-switch-events")
    p = sh(cmd, env=perf_env(home))
    if p.returncode:
        return None, "perf script: exit %d: %s" % (p.returncode, text(p.stderr).strip()[-300:])
    events, cur = [], None
    for line in text(p.stdout).splitlines():
        if not line.strip():
            cur = None
            continue
        if "PERF_RECORD_LOST" in line:
            events.append(dict(kind="lost"))
            cur = None
            continue
        m = HEAD.match(line)
        if m:
            tid, t = int(m.group(1)), int(m.group(2)) * 10**9 + int((m.group(3) + "000000000")[:9])
            rest = m.group(4)
            sw = SWITCH_REC.match(rest)
            if sw:
                events.append(dict(kind="switch", tid=tid, t=t, dir=sw.group(2)))
                cur = None
                continue
            e = EVENT.match(rest)
            if not e:
                continue
            cur = dict(kind="sample", tid=tid, t=t, event=e.group(2).strip(),
                       period=int(e.group(1) or 0), rest=(e.group(3) or "").strip(), stack=[])
            events.append(cur)
            continue
        f = FRAME.match(line)
        if f and cur is not None:
            cur["stack"].append(f.group(2).strip())
    return events, None


def perf_view(data, home, rec):
    """View of a recording from perf script, the intervals computed as the docstring says."""
    events, err = perf_events(data, home, rec == "A")
    if err:
        return None, err
    v = View()
    pending = {}   # tid -> (t out, names, state)

    def end(tid, t):
        p = pending.pop(tid, None)
        if p is not None and t > p[0]:
            v.offcpu.append((tid, p[1], p[2], t - p[0]))

    for e in events:
        if e["kind"] == "lost":
            v.lost += 1
            continue
        tid, t = e["tid"], e["t"]
        if e["kind"] == "switch":
            if rec == "A" and e["dir"] == "IN":
                end(tid, t)
            continue
        names = frozenset(e["stack"])
        if e["event"] == "offcpu-time":
            v.offcpu.append((tid, names, None, e["period"]))
            continue
        if tid != 0:
            end(tid, t)            # the thread runs: a sample of it
        if e["event"] == SWITCH:
            m = TRACE.search(e["rest"])
            if not m:
                continue
            state, next_comm, next_pid = m.group(4), m.group(5), int(m.group(6))
            v.switches[(tid, state, next_comm, next_pid)] += 1
            if rec == "B" and next_pid != 0:
                end(next_pid, t)   # the thread switched in
            if tid != 0:           # (the idle tasks share pid 0: no thread of theirs)
                pending[tid] = (t, names, state)
        elif e["event"] == "cpu-clock":
            v.cpu += 1
            if BURN in names:
                v.burn_samples += 1
    if rec == "C":
        v.switches = None
    return v, None


# -- conv's view -------------------------------------------------------------------------

def pprof_view(pb):
    prof = pprofdec.read(pb)
    types = prof["types"]
    v = View()
    idx = {t: i for i, t in enumerate(types)}
    oc_n, oc_ns = idx.get(("off_cpu_samples", "count")), idx.get(("off_cpu", "nanoseconds"))
    problems = []
    if oc_n is None or oc_ns is None:
        problems.append("no off_cpu_samples/count and off_cpu/nanoseconds sample types: %s" % types)
    elif oc_ns != len(types) - 1 or oc_n != len(types) - 2:
        problems.append("off_cpu_samples, off_cpu are not the last sample types: %s" % types)
    sw = idx.get((SWITCH + "_samples", "count"))
    cpu = idx.get(("cpu-clock_samples", "count"))
    missing = collections.Counter()
    for ids, vals, lab in prof["samples"]:
        names = frozenset(n for lid in ids for n in pprofdec.frame_names(prof, lid))
        if cpu is not None:
            v.cpu += vals[cpu]
        if sw is not None and vals[sw]:
            ps, nc, npid = lab.get("prev_state"), lab.get("next_comm"), lab.get("next_pid")
            if not isinstance(ps, str) or not isinstance(nc, str) or not isinstance(npid, int):
                missing["sched_switch sample without prev_state/next_comm (string), next_pid "
                        "(number): %s" % sorted(lab)] += vals[sw]
            v.switches[(lab.get("tid"), ps, nc, npid)] += vals[sw]
        if oc_ns is not None and vals[oc_ns]:
            state = lab.get("state")
            if not isinstance(lab.get("tid"), int):
                missing["off-CPU sample without a numeric tid label: %s" % sorted(lab)] += 1
            if not isinstance(state, str):
                missing["off-CPU sample without a string state label: %s" % sorted(lab)] += 1
            # one aggregated sample: vals[oc_n] intervals of vals[oc_ns] ns in all
            v.offcpu.append((lab.get("tid"), names, state, vals[oc_ns], vals[oc_n]))
    problems += ["%s (%d)" % (k, n) for k, n in missing.most_common(5)]
    return prof, v, problems


def pprof_under(v, tid, func):
    ns = n = 0
    states = collections.Counter()
    for t, names, state, d, k in v.offcpu:
        if t == tid and func in names:
            ns += d
            n += k
            states[state] += d
    return ns, n, states


DURATION = re.compile(r"^PT(?:(\d+)H)?(?:(\d+)M)?(?:(-?\d+)(?:\.(\d+))?S)?$")


def duration_ns(s):
    m = DURATION.match(s or "")
    if not m:
        return None
    h, mi, sec, frac = m.groups()
    return ((int(h or 0) * 60 + int(mi or 0)) * 60 + int(sec or 0)) * 10**9 + \
        int(((frac or "") + "000000000")[:9])


def jfr_events(jfr, event):
    p = sh(["jfr", "print", "--json", "--stack-depth", "4096", "--events", event, jfr])
    if p.returncode:
        return None, "jfr print: exit %d: %s" % (p.returncode, text(p.stderr).strip()[-300:])
    try:
        return json.loads(text(p.stdout))["recording"]["events"], None
    except (ValueError, KeyError, TypeError) as e:
        return None, "jfr print --json: %s" % e


def jfr_offcpu(jfr):
    """[(tid, names, state, ns)] of the perf.OffCPU events, problems."""
    evs, err = jfr_events(jfr, "perf.OffCPU")
    if err:
        return None, [err]
    out, problems = [], collections.Counter()
    for ev in evs:
        if ev.get("type") != "perf.OffCPU":
            continue
        val = ev.get("values") or {}
        for f in ("startTime", "duration", "eventThread", "stackTrace", "state"):
            if f not in val:
                problems["perf.OffCPU without %s" % f] += 1
        d = duration_ns(val.get("duration"))
        if d is None:
            problems["duration %r unreadable" % val.get("duration")] += 1
            continue
        tid = (val.get("eventThread") or {}).get("osThreadId")
        names = frozenset(((f.get("method") or {}).get("name") or "")
                          for f in (val.get("stackTrace") or {}).get("frames") or [])
        out.append((tid, names, val.get("state"), d))
    return out, ["%s (%d)" % (k, n) for k, n in problems.most_common(5)]


# -- recording -----------------------------------------------------------------------------

def can_record(work, home):
    p = sh(["perf", "record", "-q", "-e", SWITCH, "-e", "cpu-clock", "-o",
            os.path.join(work, "probe.data"), "--", "true"], timeout=60, env=perf_env(home))
    return None if p.returncode == 0 else text(p.stderr).strip()[-300:] or "exit %d" % p.returncode


def record(work, home, prog, rec, opts):
    data, out = os.path.join(work, rec + ".data"), os.path.join(work, rec + ".json")
    for f in (data, data + ".old", out):
        if os.path.exists(f):
            os.unlink(f)
    p = sh(["perf", "record", "-q", "-o", data] + opts + ["--", prog, out], env=perf_env(home), cwd=work)
    err = text(p.stderr)
    if p.returncode:
        return None, None, "perf record: exit %d: %s" % (p.returncode, err.strip()[-300:])
    if rec == "C":
        ev = sh(["perf", "evlist", "-i", data], env=perf_env(home))
        if "offcpu-time" not in text(ev.stdout):
            return None, None, "SKIP this perf cannot record off-CPU time (%s)" % (
                err.strip().splitlines()[0] if err.strip() else "no offcpu-time event in the file")
    try:
        with open(out) as f:
            measured = json.load(f)
    except (OSError, ValueError) as e:
        return None, None, "the program's measurements: %s" % e
    return data, measured, None


def usable(v, tid, rec):
    why = []
    if v.lost:
        why.append("perf lost %d records" % v.lost)
    for fn in WAITS:
        if not v.under(tid, fn)[1]:
            why.append("perf shows no switch-out under %s" % fn)
    if not v.burn_samples:
        why.append("no cpu-clock sample in %s" % BURN)
    return "; ".join(why)


def run_conv(conv, data, base):
    pb, jfr = base + ".pb.gz", base + ".jfr"
    for f in (pb, jfr):
        if os.path.exists(f):
            os.unlink(f)
    p = sh(conv + ["--offline", "-q", "--pprof", pb, "--jfr", jfr, data])
    if p.returncode:
        return None, None, "exit %d: %s" % (p.returncode, text(p.stderr).strip()[-600:])
    return pb, jfr, None


# -- checks ---------------------------------------------------------------------------------

def check_times(label, tid, measured, ref, under, selfref=None):
    """under(tid, func) -> (ns, intervals, states) of the view checked; ref perf's view to
    compare the intervals with, None when the view checked is perf's (selfref)."""
    for fn in WAITS:
        want = measured[fn + "_ns"]
        got, n, states = under(tid, fn)
        rns, rn, _ = (ref or selfref).under(tid, fn)
        check("%s: off-CPU time under %s within %d %% of the program's: %s in %d intervals" % (
            label, fn, TOLERANCE * 100, rel(got, want), n), within(got, want),
            "perf's view: %s in %d intervals" % (ms(rns), rn))
        if ref is not None:
            check("%s: %s: as many off-CPU intervals as perf's view (%d)" % (label, fn, rn), n == rn,
                  "%d" % n)
        else:   # perf's view itself: each wait switched out at least once
            check("%s: %s: at least one off-CPU interval per wait (%d)" % (label, fn, measured["waits"]),
                  n >= measured["waits"], "%d" % n)
    if not any(under(tid, fn)[0] for fn in WAITS):
        skip("%s: no off-CPU time in a waiting state under %s" % (label, BURN),
             "no off-CPU time under the waiting functions either: nothing to tell apart")
        return
    got, n, states = under(tid, BURN)
    waiting = {s: d for s, d in states.items() if s not in RUNNING and s is not None}
    check("%s: no off-CPU time in a waiting state under %s" % (label, BURN), not waiting,
          ", ".join("%s %s" % (s, ms(d)) for s, d in sorted(waiting.items())))
    if n:
        note("%s: %s preempted %d times, %s (%s)" % (label, BURN, n, ms(got), dict(states)))


def check_states(label, tid, ref, under):
    for fn in WAITS:
        _, _, got = under(tid, fn)
        _, _, want = ref.under(tid, fn)

        def big(c):
            total = sum(c.values())
            return sorted(s for s, d in c.items() if total and d >= STATE_SHARE * total)
        check("%s: %s's off-CPU states are perf's prev_states %s" % (label, fn, big(want)),
              big(got) == big(want), "conv: %s" % dict(got))


def check_switch_labels(label, ref, got):
    want = ref.switches
    common = sum((want & got).values())
    total = max(sum(want.values()), sum(got.values()))
    ok = check("%s: sched_switch labels (tid, prev_state, next_comm, next_pid) are perf script's "
               "for all %d samples" % (label, sum(want.values())), want == got and total > 0,
               "%d of %d agree" % (common, total))
    if not ok:
        for k, n in list((want - got).items())[:5]:
            note("%s: perf has %d x %s, conv %d" % (label, n, k, got.get(k, 0)))
        for k, n in list((got - want).items())[:5]:
            note("%s: conv has %d x %s, perf %d" % (label, n, k, want.get(k, 0)))


UNNAMED = re.compile(r"\+0x[0-9a-f]+$")


def by_named_frames(prof, col):
    """The pprof's column col summed per stack of named frames, root first (unnamed frames,
    LIB+0xOFFSET in folded stacks and [unknown] for an address in no mapping, are left out on
    both sides)."""
    out = collections.Counter()
    for ids, vals, _ in prof["samples"]:
        if vals[col] <= 0:
            continue
        names = []
        for lid in reversed(ids):
            names += [n.replace(";", ":").replace("\n", " ") for n in reversed(pprofdec.frame_names(prof, lid)) if n]
        out[tuple(names)] += vals[col]
    return out


def folded_by_named_frames(path):
    out = collections.Counter()
    for ln in open(path, encoding="utf-8", errors="surrogateescape"):
        stack, _, count = ln.rstrip("\n").rpartition(" ")
        out[tuple(f for f in stack.split(";") if not UNNAMED.search(f) and f != "[unknown]")] += int(count)
    return out


def check_views(conv, work, rec, label, data, prof):
    """The views show CPU time as CPU time: folded stacks count cpu-clock by default, the page
    opens with it, the summary has the top of CPU time and of off-CPU time apart, and
    --folded-value off_cpu is the pprof's off_cpu nanoseconds per stack."""
    idx = {t: i for i, t in enumerate(prof["types"])}
    cpu, oc = idx.get(("cpu-clock_samples", "count")), idx.get(("off_cpu", "nanoseconds"))
    if cpu is None or oc is None:
        check("%s: views: the pprof has cpu-clock_samples and off_cpu" % label, False, prof["types"])
        return
    base = os.path.join(work, rec + "-views")
    p = sh(conv + ["--offline", "-v", "-F", "folded,html", "-o", base, data])
    if not check("%s: views: conv -F folded,html converts" % label, p.returncode == 0, text(p.stderr)[-400:]):
        return
    got, want = folded_by_named_frames(base + ".folded"), by_named_frames(prof, cpu)
    check("%s: views: the default folded value is cpu-clock's sample count per stack (%d samples)" % (
        label, sum(want.values())), got == want,
        "folded %d in %d stacks, pprof cpu-clock %d in %d" % (sum(got.values()), len(got),
                                                              sum(want.values()), len(want)))
    page = open(base + ".html", encoding="utf-8").read()
    m = re.search(r'"views":\[\{"name":"([^"]*)"', page)
    check("%s: views: the flame graph opens with cpu-clock" % label, m and m.group(1) == "cpu-clock",
          m and m.group(1))
    err = " ".join(text(p.stderr).split())
    check("%s: views: the summary's top lists: cpu-clock samples, and off-CPU time apart" % label,
          "top self (cpu-clock samples" in err and "off-CPU self (off-CPU time" in err, err[-600:])
    p = sh(conv + ["--offline", "-q", "--folded", base + ".off.folded", "--folded-value", "off_cpu", data])
    if check("%s: views: --folded-value off_cpu runs" % label, p.returncode == 0, text(p.stderr)[-300:]):
        got, want = folded_by_named_frames(base + ".off.folded"), by_named_frames(prof, oc)
        check("%s: views: --folded-value off_cpu is the pprof's off_cpu nanoseconds per stack (%s)" % (
            label, ms(sum(want.values()))), got == want and want,
            "folded %d in %d stacks, pprof %d in %d" % (sum(got.values()), len(got), sum(want.values()),
                                                         len(want)))


def check_recording(conv, work, rec, what, data, measured, ref, selftest):
    tid = measured["pid"]
    label = "%s (%s)" % (rec, what)
    note("%s: the program measured wait_sleep %s, wait_pipe %s, burn %s; perf's view: %s" % (
        label, ms(measured["wait_sleep_ns"]), ms(measured["wait_pipe_ns"]), ms(measured["burn_ns"]),
        ", ".join("%s %s in %d" % (fn, ms(ref.under(tid, fn)[0]), ref.under(tid, fn)[1])
                  for fn in WAITS + (BURN,))))
    if selftest:
        check_times(label + " [perf]", tid, measured, None, ref.under, selfref=ref)
        if rec != "C":
            note("%s [perf]: states: %s" % (label, ", ".join(
                "%s %s" % (fn, {s: ms(d) for s, d in ref.under(tid, fn)[2].items()}) for fn in WAITS)))
            note("%s [perf]: %d sched_switch samples, %d distinct (tid, prev_state, next_comm, "
                 "next_pid)" % (label, sum(ref.switches.values()), len(ref.switches)))
            skip("%s: states and sched_switch labels" % label, "--selftest: perf against itself")
        skip("%s: JFR" % label, "--selftest: perf writes no JFR")
        return
    pb, jfr, err = run_conv(conv, data, os.path.join(work, rec))
    if not check("%s: conv converts" % label, err is None, err):
        return
    try:
        prof, pv, problems = pprof_view(pb)
    except (OSError, ValueError) as e:
        check("%s: pprofdec reads conv's pprof" % label, False, e)
        return
    check("%s: pprof: off-CPU sample types and labels as the contract says" % label, not problems,
          "; ".join(problems))

    def pprof_u(t, fn):
        return pprof_under(pv, t, fn)
    check_times(label + " pprof", tid, measured, ref, pprof_u)
    if rec != "C":
        check_states(label + " pprof", tid, ref, pprof_u)
        check_switch_labels(label + " pprof", ref, pv.switches)
    check_views(conv, work, rec, label, data, prof)
    # the JFR
    if not shutil.which("jfr"):
        skip("%s: JFR" % label, "jfr (JDK) not installed")
        return
    jv, problems = jfr_offcpu(jfr)
    if jv is None:
        check("%s: jfr print reads perf.OffCPU" % label, False, "; ".join(problems))
        return
    check("%s: JFR: perf.OffCPU events have startTime, duration, eventThread, stackTrace, state"
          % label, not problems and jv, "; ".join(problems) or "no perf.OffCPU event")
    jview = View()
    jview.offcpu = jv
    check_times(label + " JFR", tid, measured, ref, jview.under)
    n_oc = sum(x[4] for x in pv.offcpu)
    check("%s: JFR: as many perf.OffCPU events as the pprof's off_cpu_samples (%d)" % (label, n_oc),
          len(jv) == n_oc, "%d" % len(jv))
    evs, err = jfr_events(jfr, "jdk.ExecutionSample")
    if err:
        check("%s: jfr print reads jdk.ExecutionSample" % label, False, err)
        return
    n_ex = sum(1 for e in evs if e.get("type") == "jdk.ExecutionSample")
    check("%s: JFR: jdk.ExecutionSample events are the pprof's cpu-clock samples (%d), no sched_switch"
          % (label, pv.cpu), n_ex == pv.cpu, "%d" % n_ex)


def build(work):
    prog = os.path.join(work, "waits")
    cc = os.environ.get("CC") or "gcc"
    p = sh([cc, "-O2", "-g", "-fno-omit-frame-pointer", "-pthread", "-o", prog,
            os.path.join(HERE, "src", "waits.c")])
    if p.returncode:
        return None, "%s: exit %d: %s" % (cc, p.returncode, text(p.stderr).strip()[-300:])
    return prog, None


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1][len("usage: "):])
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--only", default="", help="recordings to make, e.g. A,B")
    ap.add_argument("conv", nargs="?")
    ap.add_argument("workdir")
    a = ap.parse_args()
    if a.selftest:
        conv = None
    elif a.conv:
        conv = [os.path.abspath(a.conv)]
    else:
        ap.error("CONV is needed without --selftest")
    work = os.path.abspath(a.workdir)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    home = os.path.join(work, "home")
    os.makedirs(home)
    for tool in ("perf", os.environ.get("CC") or "gcc"):
        if not shutil.which(tool):
            cannot_run("%s is not installed" % tool)
    prog, err = build(work)
    if err:
        cannot_run("cannot build waits.c: %s" % err)
    why = can_record(work, home)
    if why:
        cannot_run("cannot record sched:sched_switch here (root or perf_event_paranoid <= 1 and "
                   "tracefs are needed): %s" % why)
    only = set(filter(None, a.only.split(",")))
    for rec, what, opts in RECORDINGS:
        if only and rec not in only:
            continue
        label = "%s (%s)" % (rec, what)
        data = measured = ref = None
        for attempt in range(1, RECORD_TRIES + 1):
            data, measured, err = record(work, home, prog, rec, opts)
            if err and err.startswith("SKIP "):
                break
            if err:
                note("%s: recording %d: %s" % (label, attempt, err))
                continue
            ref, err = perf_view(data, home, rec)
            if err:
                note("%s: recording %d: %s" % (label, attempt, err))
                continue
            err = usable(ref, measured["pid"], rec)
            if not err:
                break
            note("%s: recording %d unusable: %s%s" % (label, attempt, err,
                                                       "; recording again" if attempt < RECORD_TRIES else ""))
        if err:
            skip(label, err[5:] if err.startswith("SKIP ") else
                 "no usable recording in %d tries: %s" % (RECORD_TRIES, err))
            continue
        check_recording(conv, work, rec, what, data, measured, ref, a.selftest)
    finish()


if __name__ == "__main__":
    main()
