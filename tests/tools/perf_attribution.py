#!/usr/bin/env python3
"""Per-(process, DSO) sample counts of a perf.data file, as the installed perf sees them.

Usage:
    perf_attribution.py [--brief] FILE

Prints one JSON object:
    {"file": FILE,
     "events": {event_name: [{"pid": int, "comm": str, "dso": str, "samples": int}, ...]},
     "error": null | "why perf could not read the file",
     ...information keys, see below}

Only "events" and "error" are the contract.  event_name is the name as perf prints it in
"# Samples: N of event 'NAME'" (e.g. "cpu-clock", "cycles", "sched:sched_switch",
"cpu-clock:pppH").  Rows are sorted by samples (descending), then pid, then dso.

Reference command (perf 6.1; stdin /dev/null, LC_ALL=C, 120 s timeout):

    perf report -f -i FILE --stdio -n --sort pid,dso --no-children -g none
                --no-branch-stack --no-group --no-itrace

Why each option: see tests/tools/perf_counts.py (same options, sort key pid,dso).

What perf 6.1 really prints, and what this script does about it (all checked on the
fixtures and the shared corpus):

  * The "Pid:Command" column is the THREAD id, not the process id: sort key "pid" is
    sort_thread, compared and printed by thread->tid ("%7d:%s", tid, comm).  A process
    with several threads gives one row per thread (quipper callgraph-3.8: 13642:chrome
    and 13777:Compositor are the same process).  The comm is the thread's LAST comm
    (thread__comm_str at print time), so a child that exec'd shows its new name for
    samples taken before the exec too.  Rows of two different processes that happened to
    use the same tid are merged into one row.
  * Samples whose tid is -1 (the kernel reports tid -1 for a task in the middle of exit,
    e.g. a sched_switch sample of an exiting thread; perf script shows them as
    "6393/-1") become the thread "-1" whose comm is ":-1", printed "-1::-1".  All such
    samples of ALL processes land in that one row.  Its maps are those of the process
    of the first such sample (thread__init_maps shares the leader's maps).
  * Idle: samples with pid 0 / tid 0 show as "0:swapper" ([kernel.kallsyms]).
  * DSO column ("Shared Object") prints the dso's SHORT name: the basename of the file
    ("libc.so.6", not "/usr/lib/x86_64-linux-gnu/libc.so.6"); kernel "[kernel.kallsyms]";
    kernel modules "[name]" with the ".ko[.gz|.xz]" dropped and '-' turned into
    '_' (/lib/modules/.../videobuf2-memops.ko -> [videobuf2_memops]; 6.1
    kmod_path__parse_name); "[vdso]"; "[vsyscall]"; "[unknown]" when the IP is in no
    map (or the cpumode is not host kernel/user: hypervisor samples).
  * JIT: anonymous executable memory (//anon, /dev/zero*, /anon_hugepage*, MAP_HUGETLB,
    [heap], [stack*, /SYSV*) gets the dso long name "/tmp/perf-<PID>.map" whether or
    not that file exists, PID being the pid of the process that mapped it (map__new,
    thread->nsinfo pid); the SHORT name, i.e. what --sort dso prints, is
    "[JIT] tid <PID>" (dsos.c dso__set_basename) although the number is a pid.  A
    forked child keeps its parent's map and so shows [JIT] tid <PARENT>.  Seen in
    quipper forkexit-3.4 ("2046:chrome  [JIT] tid 2046") and callgraph_and_branch-3.4.
  * Guest samples (cpumode guest kernel/user): per the 6.1 source (thread__find_map,
    perf_guest false unless --guest) they get no map and are filtered out of the
    output, so "[guest.kernel]" does not appear with this command (no corpus file has
    guest samples to confirm it).
  * A deleted file keeps the kernel's " (deleted)" suffix ("/memfd:sealed-... (deleted)").
  * perf report -v would print long names, but it also makes the dso sort compare long
    names (different tie order) and floods stderr, so it is not used.

So this script runs a second command to get processes and full names per sample:

    perf script -f -i FILE -F event,pid,tid,ip,dso -G --no-itrace

(one line per sample: "PID/TID EVENT: IP (DSO)", DSO being dso->name: the full path
for files, "[kernel.kallsyms]", the .ko path for modules, "/tmp/perf-PID.map" for JIT,
"[unknown]").  For every event and thread, perf script's counts, with the full names
shortened as perf report shortens them (basename; module rule above), must equal perf
report's row counts exactly; then perf script's (pid, full name) counts are used.  A
thread where they do not agree keeps perf report's rows (pid = the single pid perf
script saw for that tid, else the tid; dso = the short name, and the row gets
"dso_is_short": true unless the name is in brackets) and a note says so.  If
perf script cannot print ip/dso (e.g. no IP in sample_type) it is retried with
-F event,pid,tid for the tid -> pid mapping only.

Output "dso" naming: the full path for files (as perf script prints it), and perf
report's name for everything else: "[kernel.kallsyms]", modules ("[ath9k]", not the .ko
path), "[vdso]", "[unknown]", JIT "[JIT] tid <PID>" (not /tmp/perf-<PID>.map).
"comm" is perf report's comm of the process's main thread (tid == pid), else of its
thread with the most samples.

Information keys: "perf_version", "threads" (perf report's rows as printed:
{event: [{"tid", "comm", "dso" (short), "samples"}]}), "pid_source" ("perf script" when
every thread was cross-checked, "perf report tid" when perf script was not usable,
"mixed" otherwise), "notes" (list of strings), "totals" ({event: sum of rows}),
"commands".

perf "failed" (error non-null) when: it timed out, died of a signal, exited non-zero, or
printed an error such as "failed to process sample" (perf report often exits 0 after
that).  "The ... data has no samples!" is not a failure.  A pipe-mode file that fails
with -i FILE is retried as -i - with the file on stdin.

Environment: PERF = perf binary (default "perf").  Python 3 standard library only.
"""

import json
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from perfrun import perf_binary, perf_version  # noqa: E402,F401  (used by compare_attribution)
import perfrun  # noqa: E402

PERF_TIMEOUT = 120

REPORT_ARGS = ["report", "--stdio", "-n", "--sort", "pid,dso", "--no-children", "-g", "none",
               "--no-branch-stack", "--no-group", "--no-itrace"]
SCRIPT_ARGS = ["script", "-F", "event,pid,tid,ip,dso", "-G", "--no-itrace"]
SCRIPT_PID_ARGS = ["script", "-F", "event,pid,tid", "-G", "--no-itrace"]

_MODULE_RE = re.compile(r"^(.*)\.ko(\.(gz|xz))?$")


def run_perf(args, path):
    """perf ARGS on path (a pipe file retried through stdin). -> (res, error); out is bytes."""
    return perfrun.run_perf(args, path, PERF_TIMEOUT, binary=True)


# ------------------------------------------------------------------ perf report parsing

_SECTION = re.compile(rb"^# Samples: +\S+ +of events? '(.*)'\s*$")
_DOTS = re.compile(rb"\.+")
_PIDCOMM = re.compile(r"^\s*(-?[0-9]+):(.*)$")


def _columns(dotline):
    """Byte spans of the columns from the '# ....  ....' line (first column from 0)."""
    spans = [[m.start(), m.end()] for m in _DOTS.finditer(dotline)]
    if spans:
        spans[0][0] = 0
        spans[-1][1] = None  # last column: to end of line
    return spans


def parse_report(out):
    """perf report --sort pid,dso -n output (bytes) -> [(event, [(tid, comm, dso, n)])]."""
    events = []
    cur = None
    spans = None
    header_seen = False
    for raw in out.split(b"\n"):
        line = raw.rstrip(b"\r")
        m = _SECTION.match(line)
        if m:
            cur = (m.group(1).decode("utf-8", "replace"), [])
            events.append(cur)
            spans = None
            header_seen = False
            continue
        if cur is None:
            continue
        if line.startswith(b"#"):
            if b"Overhead" in line and b"Samples" in line:
                header_seen = True
            elif header_seen and spans is None and re.match(rb"^# *\.", line):
                spans = _columns(line)
            continue
        if not line.strip():
            continue
        row = _parse_row(line, spans)
        if row is not None:
            cur[1].append(row)
    return events


def _parse_row(line, spans):
    if spans and len(spans) >= 4:
        cols = [line[a:b] if b is not None else line[a:] for a, b in spans]
        ov, n, pc, dso = cols[0], cols[1], cols[2], b"".join(cols[3:])
        n = n.strip()
        pcs = pc.decode("utf-8", "replace")
        m = _PIDCOMM.match(pcs)
        if n.isdigit() and m and ov.strip().endswith(b"%"):
            return (int(m.group(1)), m.group(2).rstrip(), dso.strip().decode("utf-8", "replace"),
                    int(n))
    # Fallback: columns separated by 2+ spaces (comm and dso without double spaces).
    s = line.decode("utf-8", "replace")
    m = re.match(r"^\s*-?[0-9.]+%\s+([0-9]+)\s+(-?[0-9]+):(.*?)\s{2,}(\S.*?)\s*$", s)
    if m:
        return (int(m.group(2)), m.group(3), m.group(4), int(m.group(1)))
    return None


# ------------------------------------------------------------------ perf script parsing

_SCRIPT_FULL = re.compile(r"^\s*(-?[0-9]+)/(-?[0-9]+)\s+(.+?):\s+([0-9a-fA-F]+)\s+\((.*)\)\s*$")
_SCRIPT_PID = re.compile(r"^\s*(-?[0-9]+)/(-?[0-9]+)\s+(.+?):\s*$")


def parse_script(out, full):
    """-> ({(event, pid, tid, dso): n}, unparsed_lines)."""
    counts = {}
    bad = 0
    rx = _SCRIPT_FULL if full else _SCRIPT_PID
    for raw in out.split(b"\n"):
        s = raw.decode("utf-8", "replace").rstrip("\r")
        if not s.strip():
            continue
        m = rx.match(s)
        if not m:
            bad += 1
            continue
        k = (m.group(3).strip(), int(m.group(1)), int(m.group(2)), m.group(5) if full else None)
        counts[k] = counts.get(k, 0) + 1
    return counts, bad


# ------------------------------------------------------------------ names

def module_name(path):
    """'/lib/modules/x/kernel/foo-bar.ko.xz' -> '[foo_bar]', else None."""
    base = path.rsplit("/", 1)[-1]
    m = _MODULE_RE.match(base)
    if not m or not m.group(1):
        return None
    return "[%s]" % m.group(1).replace("-", "_")


_JIT_RE = re.compile(r"^/tmp/perf-\s*([-+]?[0-9]+)")


def jit_name(name):
    """'/tmp/perf-1234.map' -> '[JIT] tid 1234' (6.1 dso__set_basename: sscanf
    "/tmp/perf-%d.map", so anything after the number is not checked), else None."""
    m = _JIT_RE.match(name)
    return "[JIT] tid %d" % int(m.group(1)) if m else None


def short_name(name):
    """perf's dso short name for a dso->name as perf script prints it."""
    if name.startswith("["):
        return name
    jit = jit_name(name)
    if jit:
        return jit
    mod = module_name(name)
    if mod:
        return mod
    base = name.rstrip("/").rsplit("/", 1)[-1] if name.rstrip("/") else name
    return base


def display_name(name):
    """The 'dso' of our output: full path for files, perf report's name for the rest."""
    if name.startswith("["):
        return name
    return jit_name(name) or module_name(name) or name


def _norm_event(name):
    """Event name without ':modifiers' (perf_counts.normalize_event_name)."""
    try:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import perf_counts
        return perf_counts.normalize_event_name(name)
    except Exception:  # noqa: BLE001
        return name.strip()


# ------------------------------------------------------------------ main logic

def perf_attribution(path):
    result = {"file": path, "perf_version": perf_version(), "events": {}, "error": None,
              "threads": {}, "totals": {}, "pid_source": None, "notes": [], "commands": []}
    if not os.path.isfile(path):
        result["error"] = "no such file: %s" % path
        return result
    rep, err = run_perf(REPORT_ARGS, path)
    result["commands"].append(" ".join(rep["cmd"]))
    sections = parse_report(rep["out"])
    if err:
        result["error"] = err
        result["partial_threads"] = {ev: [_trow(r) for r in rows] for ev, rows in sections}
        return result

    # perf report rows, merged by event name (several evsels can share a name).
    rep_rows = {}
    order = []
    for ev, rows in sections:
        if ev not in rep_rows:
            rep_rows[ev] = {}
            order.append(ev)
        for tid, comm, dso, n in rows:
            k = (tid, dso)
            c0, n0 = rep_rows[ev].get(k, (comm, 0))
            rep_rows[ev][k] = (c0, n0 + n)
    for ev in order:
        result["threads"][ev] = sorted(
            ({"tid": t, "comm": c, "dso": d, "samples": n} for (t, d), (c, n) in rep_rows[ev].items()),
            key=lambda r: (-r["samples"], r["tid"], r["dso"]))
        result["totals"][ev] = sum(n for _, n in rep_rows[ev].values())

    # perf script: per-sample pid and full dso name.
    full = True
    scr, serr = run_perf(SCRIPT_ARGS, path)
    result["commands"].append(" ".join(scr["cmd"]))
    if serr:
        result["notes"].append("perf script -F event,pid,tid,ip,dso failed (%s); "
                               "retrying with -F event,pid,tid" % serr)
        full = False
        scr, serr = run_perf(SCRIPT_PID_ARGS, path)
        result["commands"].append(" ".join(scr["cmd"]))
    script = {}
    if serr:
        result["notes"].append("perf script failed too (%s): pids are perf report's tids" % serr)
    else:
        script, bad = parse_script(scr["out"], full)
        if bad:
            result["notes"].append("%d perf script lines not understood" % bad)

    # Map script event names onto report section names.
    sev_map = {}
    for (sev, _, _, _) in script:
        if sev in sev_map:
            continue
        if sev in rep_rows:
            sev_map[sev] = sev
        else:
            cands = [e for e in order if _norm_event(e) == _norm_event(sev)]
            sev_map[sev] = cands[0] if len(cands) == 1 else None
            if sev_map[sev] is None:
                result["notes"].append("perf script event %r matches no perf report section" % sev)

    # Per event, per tid: {(pid, fullname): n} from script.
    by_ev_tid = {}
    for (sev, pid, tid, dso), n in script.items():
        ev = sev_map.get(sev)
        if ev is None:
            continue
        d = by_ev_tid.setdefault(ev, {}).setdefault(tid, {})
        d[(pid, dso)] = d.get((pid, dso), 0) + n

    checked = unchecked = 0
    for ev in order:
        rep_by_tid = {}
        for (tid, dso), (comm, n) in rep_rows[ev].items():
            rep_by_tid.setdefault(tid, {})[dso] = rep_by_tid.get(tid, {}).get(dso, 0) + n
        comm_of_tid = {tid: comm for (tid, _), (comm, _) in rep_rows[ev].items()}
        scr_ev = by_ev_tid.get(ev, {})
        out = {}  # (pid, dso) -> n
        pid_tids = {}  # pid -> {tid: samples}

        short_keys = set()  # rows that kept perf report's short dso name

        def add(pid, tid, dso, n, short=False):
            out[(pid, dso)] = out.get((pid, dso), 0) + n
            if short and not dso.startswith("["):
                short_keys.add((pid, dso))
            t = pid_tids.setdefault(pid, {})
            t[tid] = t.get(tid, 0) + n

        for tid in sorted(set(rep_by_tid) | set(scr_ev)):
            rt = rep_by_tid.get(tid, {})
            st = scr_ev.get(tid, {})
            ok = False
            if full and st:
                agg = {}
                for (pid, dso), n in st.items():
                    agg[short_name(dso)] = agg.get(short_name(dso), 0) + n
                ok = agg == rt
                if not ok and rt:
                    result["notes"].append(
                        "%s: tid %d: perf script %s != perf report %s; using perf report's rows"
                        % (ev, tid, json.dumps(agg, sort_keys=True), json.dumps(rt, sort_keys=True)))
                elif not ok:
                    result["notes"].append("%s: tid %d only in perf script (%d samples), ignored"
                                           % (ev, tid, sum(st.values())))
            if ok:
                checked += 1
                for (pid, dso), n in st.items():
                    add(pid, tid, display_name(dso), n)
                continue
            if not rt:
                continue
            unchecked += 1
            pids = sorted({pid for (pid, _) in st})
            if len(pids) == 1:
                pid = pids[0]
            else:
                pid = tid
                if len(pids) > 1:
                    result["notes"].append("%s: tid %d belongs to several pids %s in perf script; "
                                           "its rows are given pid %d" % (ev, tid, pids, tid))
            for dso, n in rt.items():
                add(pid, tid, dso, n, short=True)

        rows = []
        for (pid, dso), n in out.items():
            tids = pid_tids.get(pid, {})
            if pid in tids and pid in comm_of_tid:
                comm = comm_of_tid[pid]
            else:
                best = sorted(tids.items(), key=lambda kv: (-kv[1], kv[0]))
                comm = next((comm_of_tid[t] for t, _ in best if t in comm_of_tid), "")
            row = {"pid": pid, "comm": comm, "dso": dso, "samples": n}
            if (pid, dso) in short_keys:
                row["dso_is_short"] = True
            rows.append(row)
        rows.sort(key=lambda r: (-r["samples"], r["pid"], r["dso"]))
        result["events"][ev] = rows
    if checked and not unchecked:
        result["pid_source"] = "perf script"
    elif unchecked and not checked:
        result["pid_source"] = "perf report tid"
    elif checked or unchecked:
        result["pid_source"] = "mixed"
    return result


def _trow(r):
    return {"tid": r[0], "comm": r[1], "dso": r[2], "samples": r[3]}


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description="Per-(pid, dso) sample counts as perf sees them (JSON).")
    ap.add_argument("file")
    ap.add_argument("--brief", action="store_true", help="print only events and error")
    a = ap.parse_args(argv)
    r = perf_attribution(a.file)
    if a.brief:
        r = {"events": r["events"], "error": r["error"]}
    json.dump(r, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
