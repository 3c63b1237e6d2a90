#!/usr/bin/env python3
"""Conformance: conv's per-event sample counts must equal perf's.

Usage:
    compare_counts.py [CONV] [--part fixtures|corpus] [--table OUT.md] [--corpus DIR]
                      [--cross-check]
    compare_counts.py --write-expected

CONV is the conv binary (argv[1], else env CONV, else <repo>/build/debug/conv).
For every file of the shared corpus (--corpus, env CONV_CORPUS, default
<repo>/../shared/corpus) and every <repo>/tests/fixtures/*.data (--part fixtures: only
those; --part corpus: only the corpus; default both):

  * perf's counts come from tests/tools/perf_counts.py when `perf` is on PATH; without
    perf, fixtures use the committed tests/fixtures/expected/<stem>.json and the corpus
    comparison is skipped (conv still runs on every file for the crash check);
  * `CONV info --json FILE` is run (30 s timeout) and its events[].samples compared per
    event.  Events are matched by normalized name, then by a looser spelling
    (cpu_core/cycles/ = cycles), and, when names still do not match but both lists have
    the same length, in order (the table says so).  Several evsels with the same
    normalized name are summed on both sides.  An event perf does not list has 0 samples
    for perf (perf report hides empty events).

quipper-fuzz/ inputs are not compared: conv only has to exit 0 or 2 on them, in time.

Table columns: file | perf tool | event | perf count | conv count | status, status one of
OK, DIFF, PERF-FAILED (perf cannot read the file: not compared), CRASH, TIMEOUT.
Files count as passed (all events OK, or a fuzz/perf-failed input conv survived... see
below), failed (any DIFF on a file perf read, or conv crashed / timed out / exited other
than 0 and 2 on any file), or skipped (perf could not read it or no reference exists,
and conv did not crash).  Fuzz inputs conv survives count as passed.

Exit status 1 if anything failed, 77 (skipped) if nothing could be compared, else 0.
--part corpus prints "SKIP: corpus not found at DIR" and exits 77 when the corpus folder
is absent; without --part that part is reported as skipped and the fixtures are compared.
The last line is "N passed, M failed, K skipped".

--write-expected runs perf_counts.py on every fixture and writes
tests/fixtures/expected/<stem>.json (no conv needed).

Python 3 standard library only.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))

import perf_counts as pc  # noqa: E402
import testlib as t  # noqa: E402

CONV_TIMEOUT = 30
FIXTURES = os.path.join(REPO, "tests", "fixtures")
EXPECTED = os.path.join(FIXTURES, "expected")


# ---------------------------------------------------------------- file lists

def _is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def corpus_files(corpus):
    """[(group, path)] with group 'compare' or 'fuzz', sorted."""
    out = []
    q = os.path.join(corpus, "quipper")
    if os.path.isdir(q):
        for n in sorted(os.listdir(q)):
            p = os.path.join(q, n)
            if n.startswith("perf.data.") and not n.endswith(".buildids") and os.path.isfile(p):
                out.append(("compare", p))
    pp = os.path.join(corpus, "perfparser")
    if os.path.isdir(pp):
        found = []
        for d, _, names in os.walk(pp):
            for n in names:
                p = os.path.join(d, n)
                if n.endswith(".expected.txt") or not os.path.isfile(p) or _is_elf(p):
                    continue
                if (n.endswith(".data") or n.startswith("perf.data") or n.endswith(".data.file")
                        or n.endswith(".data.stream")):
                    found.append(p)
        out.extend(("compare", p) for p in sorted(found))
    lp = os.path.join(corpus, "linux-perf-data")
    if os.path.isdir(lp):
        for n in sorted(os.listdir(lp)):
            p = os.path.join(lp, n)
            if n.endswith(".data") and os.path.isfile(p):
                out.append(("compare", p))
    fz = os.path.join(corpus, "quipper-fuzz")
    if os.path.isdir(fz):
        for n in sorted(os.listdir(fz)):
            p = os.path.join(fz, n)
            if os.path.isfile(p):
                out.append(("fuzz", p))
    return out


def fixture_files():
    if not os.path.isdir(FIXTURES):
        return []
    return [os.path.join(FIXTURES, n) for n in sorted(os.listdir(FIXTURES))
            if n.endswith(".data") and os.path.isfile(os.path.join(FIXTURES, n))]


def expected_path(fixture):
    stem = os.path.basename(fixture)
    if stem.endswith(".data"):
        stem = stem[:-5]
    return os.path.join(EXPECTED, stem + ".json")


def load_expected(fixture):
    for p in (expected_path(fixture), os.path.join(EXPECTED, os.path.basename(fixture) + ".json")):
        if os.path.isfile(p):
            with open(p) as f:
                return json.load(f)
    return None


# ---------------------------------------------------------------- running conv

def run_conv(conv, path):
    """-> dict(rc, json, err, timed_out)."""
    return t.run_json([conv, "info", "--json", path], CONV_TIMEOUT)


def conv_crashed(r):
    """None, or 'CRASH'/'TIMEOUT' with a reason."""
    if r["timed_out"]:
        return "TIMEOUT", "conv did not finish in %d s" % CONV_TIMEOUT
    rc = r["rc"]
    if rc in (0, 2):
        return None
    if rc is not None and rc < 0:
        return "CRASH", "conv killed by signal %d" % -rc
    return "CRASH", "conv exit code %s" % rc


# ---------------------------------------------------------------- matching

def perf_by_name(perf):
    """{normalized name: count} and the order, from a perf_counts result."""
    names = perf.get("perf_names") or {}
    order = perf.get("order") or list(perf["events"])
    counts, seq = {}, []
    for k in order:
        n = pc.normalize_event_name(names.get(k, k))
        if n not in counts:
            counts[n] = 0
            seq.append(n)
        counts[n] += perf["events"][k]
    for k, v in perf["events"].items():  # keys not in order (hand-written expected files)
        if k not in order:
            n = pc.normalize_event_name(names.get(k, k))
            if n not in counts:
                counts[n] = 0
                seq.append(n)
            counts[n] += v
    return counts, seq


def conv_by_name(cj):
    counts, seq, dup = {}, [], set()
    for ev in cj.get("events") or []:
        n = pc.normalize_event_name(str(ev.get("name", "")))
        s = ev.get("samples", 0)
        if not isinstance(s, int):
            s = 0
        if n in counts:
            dup.add(n)
        else:
            counts[n] = 0
            seq.append(n)
        counts[n] += s
    return counts, seq, dup


def match_events(perf, cj):
    """-> [(event label, perf count, conv count, note)]."""
    pcount, pseq = perf_by_name(perf)
    ccount, cseq, dup = conv_by_name(cj)
    rows = []
    p_left = list(pseq)
    c_left = list(cseq)
    # 1: normalized names; 2: loose spelling.
    for keyf, note in ((lambda n: n, ""), (pc.loose_event_key, "matched by loose name")):
        cmap = {}
        for c in c_left:
            cmap.setdefault(keyf(c), []).append(c)
        for p in list(p_left):
            cands = cmap.get(keyf(p))
            if cands:
                c = cands.pop(0)
                c_left.remove(c)
                p_left.remove(p)
                label = p if p == c else "%s = conv %s" % (p, c)
                n = note
                if c in dup:
                    n = (n + "; " if n else "") + "conv evsels with this name summed"
                rows.append((label, pcount[p], ccount[c], n))
    # 3: in order, when the rest has the same length.
    if p_left and c_left:
        c_try = c_left
        if len(c_try) != len(p_left):
            c_try = [c for c in c_left if ccount[c] > 0]
        if len(c_try) == len(p_left):
            for p, c in zip(p_left, c_try):
                rows.append(("%s = conv %s" % (p, c), pcount[p], ccount[c],
                             "names differ: matched in order"))
                c_left.remove(c)
            p_left = []
    for p in p_left:
        rows.append((p, pcount[p], None, "not in conv's events"))
    for c in c_left:
        rows.append((c, 0, ccount[c], "" if ccount[c] == 0 else "perf shows no samples for it"))
    # Keep perf's order, conv-only events last.
    order = {n: i for i, n in enumerate(pseq)}
    rows.sort(key=lambda r: order.get(r[0].split(" = ")[0], len(order)))
    return rows


# ---------------------------------------------------------------- main

class Table:
    def __init__(self):
        self.rows = []

    def add(self, file, tool, event, pcount, ccount, status, note=""):
        self.rows.append([file, tool or "-", event, "-" if pcount is None else str(pcount),
                          "-" if ccount is None else str(ccount), status, note])

    def text(self):
        hdr = ["file", "perf tool", "event", "perf count", "conv count", "status", "note"]
        w = [max(len(hdr[i]), *(len(r[i]) for r in self.rows)) if self.rows else len(hdr[i])
             for i in range(len(hdr))]
        lines = [" | ".join(h.ljust(w[i]) for i, h in enumerate(hdr)).rstrip(),
                 "-+-".join("-" * x for x in w)]
        for r in self.rows:
            lines.append(" | ".join(c.ljust(w[i]) for i, c in enumerate(r)).rstrip())
        return "\n".join(lines)

    def markdown(self):
        hdr = ["file", "perf tool", "event", "perf count", "conv count", "status", "note"]
        esc = lambda s: s.replace("|", "\\|")  # noqa: E731
        lines = ["| " + " | ".join(hdr) + " |", "|" + "---|" * len(hdr)]
        for r in self.rows:
            lines.append("| " + " | ".join(esc(c) for c in r) + " |")
        return "\n".join(lines)


def write_expected(files):
    if not pc.perf_available():
        print("ERROR: perf is not on PATH; cannot write expected files", file=sys.stderr)
        return 2
    os.makedirs(EXPECTED, exist_ok=True)
    ver = pc.perf_version()
    for f in files:
        r = pc.perf_counts(f, cross_check=True)
        out = {"file": os.path.basename(f), "perf_version": ver, "tool": r["tool"],
               "events": r["events"], "error": r["error"], "perf_names": r["perf_names"],
               "order": r["order"]}
        if r["disagreements"]:
            out["disagreements"] = r["disagreements"]
        p = expected_path(f)
        with open(p, "w") as fh:
            json.dump(out, fh, indent=1)
            fh.write("\n")
        print("wrote %s: %s%s" % (os.path.relpath(p, REPO), json.dumps(r["events"]),
                                  ("  ERROR " + r["error"]) if r["error"] else ""))
    return 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("conv", nargs="?", default=None, help="conv binary (default: env CONV)")
    ap.add_argument("--part", choices=("fixtures", "corpus"),
                    help="only the repository's fixtures, or only the shared corpus (default: both)")
    ap.add_argument("--table", metavar="OUT", help="also write the table as markdown here")
    ap.add_argument("--corpus", help="corpus folder (default: env CONV_CORPUS or <repo>/../shared/corpus)")
    ap.add_argument("--cross-check", action="store_true",
                    help="let perf_counts cross-check perf report with perf script / --stats")
    ap.add_argument("--write-expected", action="store_true",
                    help="write tests/fixtures/expected/<stem>.json with perf's counts and exit")
    a = ap.parse_args(argv)

    fixtures = fixture_files()
    if a.write_expected:
        return write_expected(fixtures)

    conv = a.conv or os.environ.get("CONV") or os.path.join(REPO, "build", "debug", "conv")
    if not (os.path.isfile(conv) and os.access(conv, os.X_OK)):
        print("ERROR: conv binary not found or not executable: %s (pass it as argv[1] or env CONV)"
              % conv, file=sys.stderr)
        return 2

    corpus = a.corpus or os.environ.get("CONV_CORPUS") or os.path.join(os.path.dirname(REPO), "shared", "corpus")
    have_perf = pc.perf_available()
    print("conv: %s" % conv)
    print("perf: %s" % (pc.perf_version() if have_perf else "not installed (fixtures use committed expected counts; corpus comparison skipped)"))

    files = []  # (kind, path) kind in compare/fuzz/fixture
    if a.part != "fixtures":
        if os.path.isdir(corpus):
            print("corpus: %s" % corpus)
            files.extend(corpus_files(corpus))
        elif a.part == "corpus":
            print("SKIP: corpus not found at %s (set CONV_CORPUS)" % corpus)
            print("0 passed, 0 failed, 1 skipped")
            return 77
        else:
            print("SKIP corpus part: corpus not found at %s (set CONV_CORPUS); comparing fixtures only"
                  % corpus)
    if a.part != "corpus":
        files.extend(("fixture", f) for f in fixtures)
        if not fixtures:
            print("note: no fixtures in %s" % FIXTURES)

    table = Table()
    passed = failed = skipped = 0
    failures = []

    def label(path):
        if os.path.isdir(corpus) and os.path.abspath(path).startswith(os.path.abspath(corpus) + os.sep):
            return os.path.relpath(path, corpus)
        return os.path.relpath(path, REPO)

    for kind, path in files:
        name = label(path)
        cr = run_conv(conv, path)
        crash = conv_crashed(cr)
        if kind == "fuzz":
            if crash:
                table.add(name, None, "(crash check)", None, None, crash[0], crash[1])
                failed += 1
                failures.append("%s: %s" % (name, crash[1]))
            else:
                table.add(name, None, "(crash check)", None, None, "OK",
                          "conv exit %d (fuzz input: not compared)" % cr["rc"])
                passed += 1
            continue

        # perf's reference
        if have_perf:
            perf = pc.perf_counts(path, cross_check=a.cross_check)
        elif kind == "fixture":
            perf = load_expected(path)
            if perf is not None:
                perf = dict(perf)
                perf["tool"] = "%s (expected json)" % perf.get("tool")
        else:
            perf = None

        if crash:
            table.add(name, perf and perf.get("tool"), "(all)", None, None, crash[0], crash[1])
            failed += 1
            failures.append("%s: %s" % (name, crash[1]))
            continue

        if perf is None:
            why = "no perf and no %s" % os.path.relpath(expected_path(path), REPO) if kind == "fixture" \
                else "perf not installed"
            table.add(name, None, "(all)", None, None, "SKIP", "%s; conv exit %d" % (why, cr["rc"]))
            skipped += 1
            continue

        if perf.get("error"):
            table.add(name, perf.get("tool"), "(all)", None,
                      None if cr["json"] is None else sum(
                          e.get("samples", 0) for e in cr["json"].get("events") or []
                          if isinstance(e.get("samples", 0), int)),
                      "PERF-FAILED", "perf: %s; conv exit %d" % (perf["error"], cr["rc"]))
            skipped += 1
            continue

        if cr["rc"] != 0 or cr["json"] is None:
            pcount, pseq = perf_by_name(perf)
            why = "conv exit %s%s" % (cr["rc"], (": " + cr["err"].splitlines()[-1]) if cr["err"] else "")
            if not pseq:
                pseq = ["(none)"]
                pcount = {"(none)": 0}
            for n in pseq:
                table.add(name, perf.get("tool"), n, pcount[n], None, "DIFF", why)
            failed += 1
            failures.append("%s: perf read it, %s" % (name, why))
            continue

        rows = match_events(perf, cr["json"])
        ok = True
        if not rows:
            table.add(name, perf.get("tool"), "(no events)", 0, 0, "OK", "")
        for ev, pcnt, ccnt, note in rows:
            st = "OK" if ccnt is not None and pcnt == ccnt else "DIFF"
            if st == "DIFF":
                ok = False
            table.add(name, perf.get("tool"), ev, pcnt, ccnt, st, note)
        if perf.get("disagreements"):
            table.rows[-1][6] += (" " if table.rows[-1][6] else "") + "[perf methods disagree: %s]" % "; ".join(perf["disagreements"])
        if have_perf and kind == "fixture":
            exp = load_expected(path)
            if exp is not None and exp.get("events") != perf.get("events"):
                table.rows[-1][6] += (" " if table.rows[-1][6] else "") + \
                    "[committed expected json differs from live perf: %s]" % json.dumps(exp.get("events"))
        if ok:
            passed += 1
        else:
            failed += 1
            failures.append("%s: sample counts differ" % name)

    print(table.text())
    if a.table:
        with open(a.table, "w") as f:
            f.write("# conv info vs perf: per-event sample counts\n\n")
            f.write("conv: `%s`; perf: %s\n\n" % (conv, pc.perf_version() if have_perf else "not installed"))
            f.write(table.markdown())
            f.write("\n\n%d passed, %d failed, %d skipped\n" % (passed, failed, skipped))
    for x in failures:
        print("FAIL: %s" % x)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 77 if not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
