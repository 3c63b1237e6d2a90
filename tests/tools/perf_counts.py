#!/usr/bin/env python3
"""Per-event sample counts of a perf.data file, as the installed `perf` sees them.

Usage:
    perf_counts.py [--method report|script|stats] [--no-cross-check] FILE

Prints one JSON object:
    {"tool": "perf report" | "perf script" | "perf report --stats" | null,
     "events": {normalized_name: count, ...},
     "error": null | "first error line perf printed",
     "perf_names": {normalized_name: name exactly as perf printed it},
     "order": [normalized names in perf's output order],
     "lost_samples": int | null,
     "cross_check": {tool: {"events": {...}, "error": ...}, ...},
     "disagreements": [human-readable strings]}

Only "tool", "events" and "error" are the contract; the other keys are information.

What is counted: the number of PERF_RECORD_SAMPLE records per event (evsel) that perf
processed.  Method A (primary) is

    perf report -f -i FILE --stdio -n --sort dso --no-children -g none
                --no-branch-stack --no-group --no-itrace

with the "Samples" column summed per "# Samples: N of event 'NAME'" section.  Why the
extra options (each was checked against the shared corpus with perf 6.1):

  * The "# Samples: N" header is not usable: perf prints it through convert_unit(), so
    1753 samples show as "1K".  The summed column is exact.
  * --no-branch-stack: files with branch stacks (LBR) are otherwise reported in branch
    mode, where every branch entry of every sample is one hist entry: the column then sums
    to (samples x branches), e.g. 416 instead of 13 for quipper/perf.data.branch-4.14.
  * --no-group: files with event groups are otherwise shown as one
    "anon group { a, b }" section with interleaved columns per member.
  * --no-itrace: files with AUX area data (Intel PT) are otherwise decoded and perf adds
    synthesized samples (branches, psb, cbr, instructions...) that are not records in
    the file.
  * --no-children / -g none: with callchains, "children" mode would count a sample
    once per caller entry, and callgraph lines would clutter the output.
  * -q is NOT used: it removes the "# Samples" section headers that say which event a
    row belongs to.  --header-only is irrelevant (it prints no samples).
  * -f: perf refuses files owned by another user without it.

Method B is `perf script -f -i FILE -F event -G --no-itrace`: one line per sample,
"<name>: ", counted per name.  Method C is `perf report -f -i FILE --stats --no-itrace`
("<name> stats:" / "SAMPLE events: N"), a cheap third opinion.  By default A is the
answer, B is used when A fails, and the others are run as cross-checks.

Every perf call: stdin from /dev/null, --stdio, a 60 s timeout, LC_ALL=C, PERF_PAGER=cat,
and the perf config left alone: PERF_CONFIG=/dev/null was tried and changes perf 6.1's
behaviour (linux-perf-data/sleep.data then fails differently), and every option a
~/.perfconfig could set for this output is given explicitly anyway.  A pipe-mode file that
fails with `-i FILE` is retried as `-i -` with the file on stdin.

perf "failed" when: it timed out, died of a signal, exited nonzero, or printed an error
(perf report often exits 0 after "Error: failed to process sample").  "The ... data has
no samples!" is not a failure: it is an empty count.

Environment: PERF = perf binary (default "perf" on PATH).
Python 3 standard library only.
"""

import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perfrun import perf_available, perf_binary, perf_version  # noqa: E402,F401
import perfrun  # noqa: E402

PERF_TIMEOUT = 60

# perf 6.1 event modifier letters (parse-events.l: [ukhpPGHSDIWeb]), plus x for newer perf.
_MODIFIER_CHARS = set("ukhpPGHSDIWebx")

_REPORT_ARGS = ["report", "--stdio", "-n", "--sort", "dso", "--no-children",
                "-g", "none", "--no-branch-stack", "--no-group", "--no-itrace"]
_SCRIPT_ARGS = ["script", "-F", "event", "-G", "--no-itrace"]
_STATS_ARGS = ["report", "--stats", "--no-itrace"]

TOOL_REPORT = "perf report"
TOOL_SCRIPT = "perf script"
TOOL_STATS = "perf report --stats"

def _is_modifier(s):
    return len(s) > 0 and all(c in _MODIFIER_CHARS for c in s)


def normalize_event_name(name):
    """Event name without perf's ':modifiers' suffix.

    cycles:ppp -> cycles, cpu-clock:pppH -> cpu-clock, page-faults -> page-faults,
    sched:sched_switch -> sched:sched_switch (tracepoint sys:name, kept),
    sched:sched_switch:k -> sched:sched_switch (two colons: last part is modifiers),
    cpu_core/cycles:ppp/ -> cpu_core/cycles/, cpu/event=0x3c/u -> cpu/event=0x3c/,
    raw 0x1234 / rc4 -> unchanged.
    A single-colon name is a tracepoint unless everything after the colon is modifier
    letters (probe_x:main is a tracepoint; cycles:u is not).
    """
    n = name.strip()
    m = re.match(r"^([A-Za-z0-9_.\-]+)/(.*)/(?::?([A-Za-z]*))$", n)
    if m and (m.group(3) == "" or _is_modifier(m.group(3))):
        inner = m.group(2)
        im = re.match(r"^(.*):([A-Za-z]+)$", inner)
        if im and _is_modifier(im.group(2)) and "=" not in im.group(2):
            inner = im.group(1)
        return "%s/%s/" % (m.group(1), inner)
    parts = n.split(":")
    if len(parts) >= 3 and _is_modifier(parts[-1]):
        return ":".join(parts[:-1])
    if len(parts) == 2 and _is_modifier(parts[1]) and parts[0]:
        return parts[0]
    return n


def loose_event_key(name):
    """A looser key for matching spellings: normalized, PMU wrapper removed, lowercase.

    cpu_core/cycles:ppp/ -> cycles, cpu/cycles/ -> cycles.
    """
    n = normalize_event_name(name)
    m = re.match(r"^[A-Za-z0-9_.\-]+/([A-Za-z0-9_.\-]+)/$", n)
    if m:
        n = m.group(1)
    return n.lower()


_SECTION = re.compile(r"^# Samples: +\S+ +of events? '(.*)'\s*$")
_ROW = re.compile(r"^\s*-?[0-9.]+%\s+([0-9]+)\s")
_LOST = re.compile(r"^# Total Lost Samples: +([0-9]+)")


def parse_report(text):
    """perf report --stdio -n output -> (ordered [(name, summed samples)], lost)."""
    events = []
    cur = None
    lost = None
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            cur = [m.group(1), 0]
            events.append(cur)
            continue
        m = _LOST.match(line)
        if m:
            lost = (lost or 0) + int(m.group(1))
            continue
        if cur is None or line.startswith("#"):
            continue
        m = _ROW.match(line)
        if m:
            cur[1] += int(m.group(1))
    return [(n, c) for n, c in events], lost


_SCRIPT_LINE = re.compile(r"^\s*(\S.*?):\s*$")


def parse_script(text):
    """perf script -F event output -> ordered [(name, lines)]."""
    counts = {}
    order = []
    for line in text.splitlines():
        m = _SCRIPT_LINE.match(line)
        if not m:
            continue
        n = m.group(1)
        if n not in counts:
            counts[n] = 0
            order.append(n)
        counts[n] += 1
    return [(n, counts[n]) for n in order]


_STATS_HDR = re.compile(r"^(\S.*) stats:\s*$")
_STATS_SAMPLE = re.compile(r"^\s*SAMPLE events:\s+([0-9]+)")


def parse_stats(text):
    """perf report --stats output -> ordered [(name, SAMPLE events)]."""
    events = []
    cur = None
    for line in text.splitlines():
        m = _STATS_HDR.match(line)
        if m:
            if m.group(1).startswith("Aggregated"):
                cur = None
            else:
                cur = [m.group(1), 0]
                events.append(cur)
            continue
        m = _STATS_SAMPLE.match(line)
        if m and cur is not None:
            cur[1] = int(m.group(1))
    return [(n, c) for n, c in events if c > 0]


_METHODS = {
    "report": (TOOL_REPORT, _REPORT_ARGS, lambda t: parse_report(t)[0]),
    "script": (TOOL_SCRIPT, _SCRIPT_ARGS, parse_script),
    "stats": (TOOL_STATS, _STATS_ARGS, parse_stats),
}


def run_method(path, method):
    """Returns {"tool", "events" (normalized), "perf_names", "order", "error", "lost_samples"}."""
    tool, args, parse = _METHODS[method]
    res, err = perfrun.run_perf(args, path, PERF_TIMEOUT)
    pairs = parse(res["out"])
    events, names, order = {}, {}, []
    for n, c in pairs:
        k = normalize_event_name(n)
        if k in events:
            # Two evsels with the same normalized name (e.g. cycles:u and cycles:k):
            # keep them apart under their exact names.
            k = n
        events[k] = events.get(k, 0) + c
        names[k] = n
        order.append(k)
    lost = parse_report(res["out"])[1] if method == "report" else None
    out = {"tool": tool, "events": events, "perf_names": names, "order": order,
           "error": err, "lost_samples": lost}
    if err:
        out["partial"] = True
    return out


def perf_counts(path, method=None, cross_check=True):
    """Per-event sample counts of PATH as perf sees them (see module doc)."""
    result = {"file": path, "tool": None, "events": {}, "error": None, "perf_names": {},
              "order": [], "lost_samples": None, "cross_check": {}, "disagreements": []}
    if not perf_available():
        result["error"] = "perf not found (PERF=%s)" % perf_binary()
        return result
    if not os.path.isfile(path):
        result["error"] = "no such file: %s" % path
        return result
    methods = [method] if method else ["report", "script"]
    results = {}
    chosen = None
    for m in methods:
        r = run_method(path, m)
        results[m] = r
        if not r["error"]:
            chosen = m
            break
    if chosen is None:
        # Everything failed: report the first method's error (and nothing counted).
        first = results[methods[0]]
        result["tool"] = first["tool"]
        result["error"] = first["error"]
        result["partial_events"] = first["events"]
        for m in methods[1:]:
            result["cross_check"][results[m]["tool"]] = {"events": results[m]["events"],
                                                        "error": results[m]["error"]}
        return result
    r = results[chosen]
    for k in ("tool", "events", "perf_names", "order", "lost_samples"):
        result[k] = r[k]
    if cross_check and method is None:
        for m in ("report", "script", "stats"):
            if m == chosen:
                continue
            o = results.get(m) or run_method(path, m)
            result["cross_check"][o["tool"]] = {"events": o["events"], "error": o["error"]}
            if o["error"]:
                continue
            if o["events"] != r["events"]:
                result["disagreements"].append(
                    "%s says %s, %s says %s" % (r["tool"], json.dumps(r["events"], sort_keys=True),
                                                o["tool"], json.dumps(o["events"], sort_keys=True)))
    return result


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description="Per-event sample counts as perf sees them (JSON).")
    ap.add_argument("file")
    ap.add_argument("--method", choices=sorted(_METHODS), default=None,
                    help="use only this method (default: report, falling back to script)")
    ap.add_argument("--no-cross-check", action="store_true",
                    help="do not run the other methods as cross-checks")
    ap.add_argument("--brief", action="store_true",
                    help="print only tool, events and error")
    a = ap.parse_args(argv)
    r = perf_counts(a.file, method=a.method, cross_check=not a.no_cross_check)
    if a.brief:
        r = {"tool": r["tool"], "events": r["events"], "error": r["error"]}
    json.dump(r, sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
