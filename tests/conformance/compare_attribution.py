#!/usr/bin/env python3
"""Conformance: conv's per-(process, DSO) sample attribution must agree with perf's.

Usage:
    compare_attribution.py [CONV] [--part fixtures|corpus] [--table OUT.md] [--files F ...]
                           [--corpus DIR] [--threshold PCT] [--show N] [--json OUT]
    compare_attribution.py --self-test

CONV is the conv binary (argv[1], else env CONV, else <repo>/build/debug/conv).

Files: --files F..., else every tests/fixtures/attr/*.data plus, when the shared corpus
exists (env CONV_CORPUS, --corpus, default <repo>/../shared/corpus), every perf.data.*
in quipper/ (not *.buildids), the perf files of perfparser/ and linux-perf-data/.  The
acceptance files (quipper forkexit-3.4, systemwide.0-3.4, systemwide.1-3.8,
systemwide.5-3.8, piped.target-3.4, callgraph-3.8, singleprocess-3.8, remmap-3.2,
busy.0-3.8, proc.map.timeout-3.18, throttle-3.8) are among them.  --part fixtures: the
fixtures only; --part corpus: the corpus only, and when the corpus folder is absent the
script prints "SKIP: corpus not found at DIR" and exits 77 (skipped). Without --part,
both (a missing corpus is reported as a skipped part).

For each file:
  * perf's reference: tests/tools/perf_attribution.py (perf report --sort pid,dso, with
    perf script for process ids and full DSO paths; see that file for what perf prints).
    A file perf cannot read is skipped (PERF-FAILED), as is everything when perf is not
    installed.
  * conv's: `CONV info --json --dso FILE` (60 s timeout), key "dso_samples": a list of
    {"pid", "comm", "dso", "event", "samples"} (extra keys such as "tid" are allowed).
    Rows are summed per (event, pid, dso).  Negative ids printed as unsigned 32-bit
    numbers (4294967295) are read as negative (-1).
  * events are matched by name as in compare_counts.py: normalized name (modifiers
    dropped), then a loose spelling (cpu_core/cycles/ = cycles), then in order when the
    remaining lists have the same length.
  * per event: perf total, conv total, matched = sum over (pid, dso) keys of
    min(perf count, conv count), agreement = matched / max(perf total, conv total)
    (so samples conv has and perf does not count against it, like the reverse).
    An event passes when agreement >= --threshold (default 99.5 %) or both totals are 0.
    A file passes when all its events pass.
  * every (pid, dso) key whose counts differ is listed: pid, comm, dso, perf count, conv
    count, and a hint about where the other side put those samples: within one pid,
    when one side's surplus is in a single dso, the rows say "conv has them in X" /
    "perf has them in A, B" ("(balanced)" when the counts net out: the two sides chose
    different mappings for the same samples); "pid only in perf" / "pid only in conv"
    when the other side has no row for that pid at all.
  * information only (does not decide pass/fail): per-thread agreement, when conv's rows
    carry "tid": perf report's own (tid, short dso) rows against conv's rows summed per
    (tid, short name of its dso).

DSO normalization.  Applied to both sides before comparing; every rule is cosmetic (the
same mapping spelled two ways), checked against what perf 6.1 prints:
  N1 kernel modules: a path ending in .ko, .ko.gz or .ko.xz (the compressions perf 6.1's
     kmod_path__parse knows) becomes perf's
     "[name]" ('-' -> '_'): /lib/modules/3.8.11/kernel/net/mac80211-3.4/mac80211.ko ->
     [mac80211].  perf report prints modules that way; perf script prints the path.
  N2 JIT: "/tmp/perf-<N>.map" becomes "[JIT] tid <N>": the same dso, long and short
     name (perf's dso__set_basename).  perf names any anonymous executable mapping
     (//anon, /dev/zero, /anon_hugepage, [heap], [stack, /SYSV) this way, <N> being the
     pid of the process that mapped it (a forked child inherits its parent's N).
  N3 kernel: "[kernel.kallsyms]<suffix>" (the MMAP record's "[kernel.kallsyms]_text" or
     "_stext") becomes "[kernel.kallsyms]": perf's kernel dso is always named that.
  N4 short-name fallback: where perf_attribution.py could not cross-check a thread and
     had to keep perf report's short names (basename; see its notes), that pid is
     compared on short names on both sides (conv's paths reduced to their basename,
     after N1-N3).  Reported in the table note.
  Not normalized, because they are real differences: "[unknown]" vs a file, different
  paths, " (deleted)" suffixes, "[vdso]" vs "[vsyscall]", bpf_prog_* names.

Output: a table (file | event | perf | conv | matched | agreement | keys | status |
note), then the differing keys of every event (--show N per event on the console,
default 25; all of them in --table), "FAIL: ..." lines, and the last line
"N passed, M failed, K skipped".  Exit 1 if anything failed, 77 (skipped) if nothing
could be compared (no perf, or no file perf reads), 0 otherwise; 2 for usage errors (no
conv binary).  --json OUT also writes all results as JSON.

--self-test: checks the comparison logic with fake conv programs (no real conv needed):
one that prints perf's own numbers (must pass), one that moves samples to [unknown]
(must fail with the right keys listed), one with modules/JIT/kernel spelled the other way
(must pass through N1-N3).

Python 3 standard library only.
"""

import argparse
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))

import perf_attribution as pa  # noqa: E402
import perf_counts as pc  # noqa: E402
import testlib as t  # noqa: E402

CONV_TIMEOUT = 60
DEFAULT_THRESHOLD = 99.5
ATTR_FIXTURES = os.path.join(REPO, "tests", "fixtures", "attr")
ACCEPTANCE = ["perf.data.forkexit-3.4", "perf.data.systemwide.0-3.4", "perf.data.systemwide.1-3.8",
              "perf.data.systemwide.5-3.8", "perf.data.piped.target-3.4", "perf.data.callgraph-3.8",
              "perf.data.singleprocess-3.8", "perf.data.remmap-3.2", "perf.data.busy.0-3.8",
              "perf.data.proc.map.timeout-3.18", "perf.data.throttle-3.8"]


# ---------------------------------------------------------------- names

def norm_dso(name):
    """Rules N1-N3 (see the module doc)."""
    if name is None:
        return "[unknown]"
    if name.startswith("[kernel.kallsyms]"):
        return "[kernel.kallsyms]"
    if name.startswith("["):
        return name
    return pa.jit_name(name) or pa.module_name(name) or name


def short_dso(name):
    """Rule N4: perf report's short name of an already normalized name."""
    if name.startswith("["):
        return name
    return pa.short_name(name)


def signed32(v):
    try:
        v = int(v)
    except (TypeError, ValueError):
        return -1
    if 2 ** 31 <= v < 2 ** 32:
        return v - 2 ** 32
    if v == 2 ** 64 - 1:
        return -1
    return v


# ---------------------------------------------------------------- files

def corpus_files(corpus):
    out = []
    q = os.path.join(corpus, "quipper")
    if os.path.isdir(q):
        for n in sorted(os.listdir(q)):
            p = os.path.join(q, n)
            if n.startswith("perf.data.") and not n.endswith(".buildids") and os.path.isfile(p):
                out.append(p)
    pp = os.path.join(corpus, "perfparser")
    if os.path.isdir(pp):
        found = []
        for d, _, names in os.walk(pp):
            for n in names:
                p = os.path.join(d, n)
                if n.endswith(".txt") or not os.path.isfile(p):
                    continue
                if n.endswith(".data") or n.startswith("perf.data") or n.endswith(".data.file") \
                        or n.endswith(".data.stream") or ".data." in n:
                    with open(p, "rb") as f:
                        if f.read(8) in (b"PERFILE2", b"2ELIFREP"):
                            found.append(p)
        out.extend(sorted(found))
    lp = os.path.join(corpus, "linux-perf-data")
    if os.path.isdir(lp):
        out.extend(os.path.join(lp, n) for n in sorted(os.listdir(lp))
                   if n.endswith(".data") and os.path.isfile(os.path.join(lp, n)))
    return out


def fixture_files():
    if not os.path.isdir(ATTR_FIXTURES):
        return []
    return [os.path.join(ATTR_FIXTURES, n) for n in sorted(os.listdir(ATTR_FIXTURES))
            if n.endswith(".data") and os.path.isfile(os.path.join(ATTR_FIXTURES, n))]


# ---------------------------------------------------------------- conv

def run_conv(conv, path):
    return t.run_json([conv, "info", "--json", "--dso", path], CONV_TIMEOUT)


def conv_problem(r):
    """None, or a one-line reason why conv's answer is unusable."""
    if r["timed_out"]:
        return "conv did not finish in %d s" % CONV_TIMEOUT
    rc = r["rc"]
    if rc is not None and rc < 0:
        return "conv killed by signal %d" % -rc
    if rc == 1 and "usage" in r["err"].lower():
        return "conv does not support `info --json --dso` (usage error)"
    if rc != 0:
        last = r["err"].splitlines()[-1] if r["err"] else ""
        return "conv exit code %s%s" % (rc, (": " + last) if last else "")
    if r["json"] is None:
        return r["err"] or "conv printed no JSON"
    if not isinstance(r["json"].get("dso_samples"), list):
        return "conv's JSON has no \"dso_samples\" list"
    return None


def conv_tables(cj):
    """-> ({event: {(pid, dso): n}}, {event: {pid: comm}}, {event: {(tid, dso): n}} or None, order)."""
    by_ev, comms, threads, order = {}, {}, {}, []
    have_tid = True
    for row in cj.get("dso_samples") or []:
        ev = str(row.get("event", "?"))
        if ev not in by_ev:
            by_ev[ev] = {}
            comms[ev] = {}
            threads[ev] = {}
            order.append(ev)
        pid = signed32(row.get("pid"))
        n = row.get("samples", 0)
        n = n if isinstance(n, int) else 0
        dso = norm_dso(row.get("dso"))
        by_ev[ev][(pid, dso)] = by_ev[ev].get((pid, dso), 0) + n
        comms[ev].setdefault(pid, str(row.get("comm", "")))
        if "tid" in row:
            k = (signed32(row["tid"]), short_dso(dso))
            threads[ev][k] = threads[ev].get(k, 0) + n
        else:
            have_tid = False
    return by_ev, comms, (threads if have_tid else None), order


# ---------------------------------------------------------------- matching

def match_event_names(pseq, cseq, ccount):
    """-> [(perf name or None, conv name or None, note)]."""
    pairs = []
    p_left, c_left = list(pseq), list(cseq)
    for keyf, note in ((pc.normalize_event_name, ""), (pc.loose_event_key, "matched by loose name")):
        cmap = {}
        for c in c_left:
            cmap.setdefault(keyf(c), []).append(c)
        for p in list(p_left):
            cands = cmap.get(keyf(p))
            if cands:
                c = cands.pop(0)
                c_left.remove(c)
                p_left.remove(p)
                pairs.append((p, c, note))
    if p_left and c_left:
        c_try = c_left if len(c_left) == len(p_left) else [c for c in c_left if ccount.get(c)]
        if len(c_try) == len(p_left):
            for p, c in zip(p_left, c_try):
                pairs.append((p, c, "names differ: matched in order"))
                c_left.remove(c)
            p_left = []
    pairs.extend((p, None, "not in conv's dso_samples") for p in p_left)
    pairs.extend((None, c, "perf shows no samples for it") for c in c_left)
    return pairs


def compare_event(prows, crows, short_pids=()):
    """prows/crows: {(pid, dso): n}.  -> dict with totals, matched, diffs."""
    def fold(rows):
        out = {}
        for (pid, dso), n in rows.items():
            k = (pid, short_dso(dso) if pid in short_pids else dso)
            out[k] = out.get(k, 0) + n
        return out
    p, c = fold(prows), fold(crows)
    ptot, ctot = sum(p.values()), sum(c.values())
    matched = sum(min(p.get(k, 0), c.get(k, 0)) for k in set(p) | set(c))
    total = max(ptot, ctot)
    diffs = [(k, p.get(k, 0), c.get(k, 0)) for k in set(p) | set(c) if p.get(k, 0) != c.get(k, 0)]
    # hints
    p_pids = {k[0] for k in p}
    c_pids = {k[0] for k in c}
    hints = {}
    by_pid = {}
    for k, pn, cn in diffs:
        by_pid.setdefault(k[0], []).append((k, pn, cn))
    for pid, lst in by_pid.items():
        if pid not in c_pids:
            for k, _, _ in lst:
                hints[k] = "pid only in perf"
            continue
        if pid not in p_pids:
            for k, _, _ in lst:
                hints[k] = "pid only in conv"
            continue
        more_p = [(k, pn - cn) for k, pn, cn in lst if pn > cn]
        more_c = [(k, cn - pn) for k, pn, cn in lst if cn > pn]
        sp, sc = sum(n for _, n in more_p), sum(n for _, n in more_c)
        bal = " (balanced)" if sp == sc else " (perf -%d, conv +%d)" % (sp, sc)
        if len(more_c) == 1 and more_p:
            x = more_c[0][0]
            for k, _ in more_p:
                hints[k] = "conv has them in %s%s" % (x[1], bal if len(more_p) == 1 else "")
            hints[x] = "perf has them in %s%s" % (", ".join(k[1] for k, _ in more_p), bal)
        elif len(more_p) == 1 and more_c:
            x = more_p[0][0]
            for k, _ in more_c:
                hints[k] = "perf has them in %s%s" % (x[1], bal if len(more_c) == 1 else "")
            hints[x] = "conv has them in %s%s" % (", ".join(k[1] for k, _ in more_c), bal)
        else:
            for k, _ in more_p + more_c:
                hints[k] = "same pid: perf-only surplus %d, conv-only surplus %d" % (sp, sc)
    diffs.sort(key=lambda d: (-abs(d[1] - d[2]), d[0][0], d[0][1]))
    return {"perf": ptot, "conv": ctot, "matched": matched, "total": total,
            "agreement": 100.0 if total == 0 else 100.0 * matched / total,
            "keys_perf": len(p), "keys_conv": len(c), "diffs": diffs, "hints": hints}


def compare_threads(pthreads, cthreads):
    """Information only: perf report (tid, short dso) rows vs conv's."""
    p = {}
    for r in pthreads:
        k = (r["tid"], norm_dso(r["dso"]))
        p[k] = p.get(k, 0) + r["samples"]
    matched = sum(min(p.get(k, 0), cthreads.get(k, 0)) for k in set(p) | set(cthreads))
    total = max(sum(p.values()), sum(cthreads.values()))
    return 100.0 if total == 0 else 100.0 * matched / total


def pct(x):
    return "%.2f%%" % x if x < 100.0 else "100%"


# ---------------------------------------------------------------- driver

class Results:
    def __init__(self):
        self.rows = []      # [file, event, perf, conv, matched, agreement, keys, status, note]
        self.details = []   # (file, event, [diff rows])
        self.failures = []
        self.passed = self.failed = self.skipped = 0
        self.json = []

    def add(self, *cols):
        self.rows.append([("-" if c is None else str(c)) for c in cols])


HDR = ["file", "event", "perf", "conv", "matched", "agreement", "keys p/c/diff", "status", "note"]


def table_text(rows):
    w = [max([len(HDR[i])] + [len(r[i]) for r in rows]) for i in range(len(HDR))]
    out = [" | ".join(h.ljust(w[i]) for i, h in enumerate(HDR)).rstrip(),
           "-+-".join("-" * x for x in w)]
    out += [" | ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip() for r in rows]
    return "\n".join(out)


def table_md(rows, hdr=HDR):
    esc = lambda s: s.replace("|", "\\|")  # noqa: E731
    out = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
    out += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def check_file(conv, path, label, res, threshold):
    perf = pa.perf_attribution(path)
    if perf.get("error"):
        cr = run_conv(conv, path)
        prob = conv_problem(cr)
        crash = cr["timed_out"] or (cr["rc"] is not None and cr["rc"] < 0)
        if crash:
            res.add(label, "(all)", None, None, None, None, None, "CRASH", prob)
            res.failed += 1
            res.failures.append("%s: %s" % (label, prob))
        else:
            res.add(label, "(all)", None, None, None, None, None, "PERF-FAILED",
                    "perf: %s; conv: %s" % (perf["error"], prob or "exit 0"))
            res.skipped += 1
        res.json.append({"file": label, "status": "skipped", "perf_error": perf["error"]})
        return
    cr = run_conv(conv, path)
    prob = conv_problem(cr)
    if prob:
        res.add(label, "(all)", sum(perf["totals"].values()), None, None, None, None, "FAIL", prob)
        res.failed += 1
        res.failures.append("%s: %s" % (label, prob))
        res.json.append({"file": label, "status": "failed", "conv_error": prob})
        return
    cby, ccomm, cthreads, corder = conv_tables(cr["json"])
    pevents = perf["events"]
    pseq = list(pevents)
    ccount = {e: sum(v.values()) for e, v in cby.items()}
    pairs = match_event_names(pseq, corder, ccount)
    ok = True
    jfile = {"file": label, "events": [], "perf_notes": perf.get("notes", []),
             "pid_source": perf.get("pid_source")}
    short_pids_by_ev = {}
    for ev, rows in pevents.items():
        short_pids_by_ev[ev] = {r["pid"] for r in rows if r.get("dso_is_short")}
    if not pairs:
        res.add(label, "(no samples)", 0, 0, 0, "100%", "0/0/0", "OK", "")
    for p, c, note in pairs:
        prows, pcomm = {}, {}
        for r in pevents.get(p, []) if p else []:
            k = (r["pid"], norm_dso(r["dso"]))
            prows[k] = prows.get(k, 0) + r["samples"]
            pcomm.setdefault(r["pid"], r["comm"])
        crows = cby.get(c, {}) if c else {}
        short_pids = short_pids_by_ev.get(p, set()) if p else set()
        cmpr = compare_event(prows, crows, short_pids)
        evlabel = p if (p == c or c is None) else ("%s = conv %s" % (p, c) if p else "conv " + c)
        passed_ev = cmpr["total"] == 0 or cmpr["agreement"] >= threshold
        notes = [note] if note else []
        if short_pids:
            notes.append("pids %s compared on short names (N4)" % sorted(short_pids))
        if cthreads is not None and p and c:
            ta = compare_threads(perf["threads"].get(p, []), cthreads.get(c, {}))
            notes.append("threads %s" % pct(ta))
        if not passed_ev:
            ok = False
        res.add(label, evlabel, cmpr["perf"], cmpr["conv"], cmpr["matched"], pct(cmpr["agreement"]),
                "%d/%d/%d" % (cmpr["keys_perf"], cmpr["keys_conv"], len(cmpr["diffs"])),
                "OK" if passed_ev else "DIFF", "; ".join(notes))
        drows = []
        for (pid, dso), pn, cn in cmpr["diffs"]:
            comm = pcomm.get(pid) or ccomm.get(c, {}).get(pid, "")
            drows.append([str(pid), comm, dso, str(pn), str(cn), "%+d" % (cn - pn),
                          cmpr["hints"].get((pid, dso), "")])
        if drows:
            res.details.append((label, evlabel, drows))
        jfile["events"].append({"perf_event": p, "conv_event": c, "perf": cmpr["perf"],
                                "conv": cmpr["conv"], "matched": cmpr["matched"],
                                "agreement": cmpr["agreement"], "passed": passed_ev,
                                "diffs": [{"pid": d[0][0], "dso": d[0][1], "perf": d[1], "conv": d[2],
                                           "hint": cmpr["hints"].get(d[0], "")}
                                          for d in cmpr["diffs"]]})
    if perf.get("notes"):
        res.rows[-1][8] += ("; " if res.rows[-1][8] != "-" and res.rows[-1][8] else "") + \
            "perf_attribution notes: %d (see --json)" % len(perf["notes"])
    if ok:
        res.passed += 1
        jfile["status"] = "passed"
    else:
        res.failed += 1
        res.failures.append("%s: attribution differs from perf's" % label)
        jfile["status"] = "failed"
    res.json.append(jfile)


DHDR = ["pid", "comm", "dso", "perf", "conv", "conv-perf", "hint"]


def run(conv, files, corpus, table, threshold, show, json_out):
    res = Results()
    print("conv: %s" % conv)
    if not pa.perf_binary() or not pc.perf_available():
        print("SKIP: perf is not installed; nothing to compare")
        print("0 passed, 0 failed, 1 skipped")
        return 77
    print("perf: %s" % pa.perf_version())
    for path, label in files:
        check_file(conv, path, label, res, threshold)
    print(table_text(res.rows))
    for f, ev, drows in res.details:
        print("\n%s, %s: %d differing (pid, dso) keys%s" % (
            f, ev, len(drows), "" if len(drows) <= show else " (first %d)" % show))
        print(table_text_generic(DHDR, drows[:show]))
    if table:
        with open(table, "w") as fh:
            fh.write("# conv info --dso vs perf report --sort pid,dso\n\n")
            fh.write("conv: `%s`; perf: %s; threshold %.2f%%\n\n" % (conv, pa.perf_version(), threshold))
            fh.write(table_md(res.rows))
            fh.write("\n")
            for f, ev, drows in res.details:
                fh.write("\n## %s, %s: %d differing keys\n\n" % (f, ev, len(drows)))
                fh.write(table_md(drows, DHDR))
                fh.write("\n")
            fh.write("\n%d passed, %d failed, %d skipped\n" % (res.passed, res.failed, res.skipped))
    if json_out:
        with open(json_out, "w") as fh:
            json.dump(res.json, fh, indent=1)
            fh.write("\n")
    for x in res.failures:
        print("FAIL: %s" % x)
    print("%d passed, %d failed, %d skipped" % (res.passed, res.failed, res.skipped))
    return 1 if res.failed else 77 if not res.passed else 0


def table_text_generic(hdr, rows):
    w = [max([len(hdr[i])] + [len(r[i]) for r in rows]) for i in range(len(hdr))]
    out = ["  " + " | ".join(h.ljust(w[i]) for i, h in enumerate(hdr)).rstrip()]
    out += ["  " + " | ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip() for r in rows]
    return "\n".join(out)


# ---------------------------------------------------------------- self test

_FAKE = r'''#!/usr/bin/env python3
# fake conv for compare_attribution.py --self-test: prints perf's own attribution
import json, os, sys
sys.dont_write_bytecode = True
sys.path.insert(0, %(tools)r)
import perf_attribution as pa
mode = %(mode)r
if len(sys.argv) < 5 or sys.argv[1:4] != ["info", "--json", "--dso"]:
    sys.stderr.write("usage: conv info [--json] [--dso] FILE\n"); sys.exit(1)
r = pa.perf_attribution(sys.argv[4])
if r["error"]:
    sys.exit(2)
rows = []
moved = 0
for ev, lst in r["events"].items():
    for x in lst:
        dso, n = x["dso"], x["samples"]
        if mode == "respell":
            if dso == "[kernel.kallsyms]":
                dso = "[kernel.kallsyms]_text"
            elif dso.startswith("[JIT] tid "):
                dso = "/tmp/perf-%%s.map" %% dso.split()[-1]
            elif dso.startswith("[") and dso not in ("[vdso]", "[unknown]", "[vsyscall]"):
                dso = "/lib/modules/x/" + dso[1:-1] + ".ko"
        if mode == "move" and not dso.startswith("[") and n >= 2 and moved < 3:
            rows.append({"pid": x["pid"] & 0xffffffff, "comm": x["comm"], "dso": "[unknown]",
                         "event": ev, "samples": n // 2})
            n -= n // 2
            moved += 1
        rows.append({"pid": x["pid"] & 0xffffffff, "comm": x["comm"], "dso": dso, "event": ev,
                     "samples": n})
print(json.dumps({"dso_samples": rows}))
'''


def self_test(files):
    tools = os.path.join(REPO, "tests", "tools")
    if not pc.perf_available():
        print("SKIP: perf is not installed\n0 passed, 0 failed, 1 skipped")
        return 77
    if not files:
        print("SKIP: no files for the self-test\n0 passed, 0 failed, 1 skipped")
        return 77
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        fakes = {}
        for mode in ("same", "move", "respell"):
            p = os.path.join(d, "conv-" + mode)
            with open(p, "w") as f:
                f.write(_FAKE % {"tools": tools, "mode": mode})
            os.chmod(p, 0o755)
            fakes[mode] = p
        good_n = skipped = 0
        for path, label in files:
            ref = pa.perf_attribution(path)
            movable = any(not x["dso"].startswith("[") and x["samples"] >= 2
                          for rows in ref["events"].values() for x in rows)
            for mode, want_ok in (("same", True), ("respell", True), ("move", False)):
                res = Results()
                check_file(fakes[mode], path, label, res, DEFAULT_THRESHOLD)
                if res.skipped:
                    print("self-test %-8s %s: skipped (%s)" % (mode, label, res.rows[-1][8]))
                    skipped += 1
                    continue
                got_ok = res.failed == 0
                if mode == "move":
                    moved_rows = sum(1 for _, _, dr in res.details for r in dr if r[2] == "[unknown]")
                    # must pass exactly when every event stays above the threshold, list
                    # the moved keys, and give each differing key a hint
                    exp_ok = all(r[5] == "-" or float(r[5].rstrip("%")) >= DEFAULT_THRESHOLD
                                 for r in res.rows)
                    good = (moved_rows > 0) == movable and got_ok == exp_ok and \
                        all(r[6] for _, _, dr in res.details for r in dr)
                else:
                    good = got_ok == want_ok and not res.details
                print("self-test %-8s %s: %s" % (mode, label, "ok" if good else "WRONG"))
                if good:
                    good_n += 1
                else:
                    bad += 1
                    print(table_text(res.rows))
                    for f, ev, dr in res.details:
                        print(table_text_generic(DHDR, dr))
    print("%d passed, %d failed, %d skipped" % (good_n, bad, skipped))
    return 1 if bad else 0


# ---------------------------------------------------------------- main

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("conv", nargs="?", default=None)
    ap.add_argument("--part", choices=("fixtures", "corpus"),
                    help="only tests/fixtures/attr, or only the shared corpus (default: both)")
    ap.add_argument("--table", metavar="OUT.md")
    ap.add_argument("--files", nargs="+", metavar="F")
    ap.add_argument("--corpus")
    ap.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD)
    ap.add_argument("--show", type=int, default=25, help="differing keys shown per event (console)")
    ap.add_argument("--json", metavar="OUT")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args(argv)

    corpus = a.corpus or os.environ.get("CONV_CORPUS") or \
        os.path.join(os.path.dirname(REPO), "shared", "corpus")
    files = []
    if a.files:
        files = [(os.path.abspath(f), f) for f in a.files]
    else:
        if a.part != "corpus":
            files = [(f, os.path.relpath(f, REPO)) for f in fixture_files()]
            if not files:
                print("note: no fixtures in %s" % os.path.relpath(ATTR_FIXTURES, REPO))
        if a.part == "fixtures":
            pass
        elif os.path.isdir(corpus):
            print("corpus: %s" % corpus)
            files += [(f, os.path.relpath(f, corpus)) for f in corpus_files(corpus)]
        elif a.part == "corpus":
            print("SKIP: corpus not found at %s (set CONV_CORPUS)" % corpus)
            print("0 passed, 0 failed, 1 skipped")
            return 77
        else:
            print("SKIP corpus part: corpus not found at %s (set CONV_CORPUS); comparing fixtures only"
                  % corpus)

    if a.self_test:
        return self_test(files)

    conv = a.conv or os.environ.get("CONV") or os.path.join(REPO, "build", "debug", "conv")
    if not (os.path.isfile(conv) and os.access(conv, os.X_OK)):
        print("ERROR: conv binary not found or not executable: %s" % conv, file=sys.stderr)
        return 2
    return run(conv, files, corpus, a.table, a.threshold, a.show, a.json)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
