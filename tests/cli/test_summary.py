#!/usr/bin/env python3
"""conv's summary fits an 80-column terminal (issue 31, What 6).

usage: test_summary.py CONV WORKDIR

Recordings made here (as root, or with perf_event_paranoid <= 1; else SKIP):
  cpp      tests/cli/src/inline.cpp, built with g++ -O2 -g (templates, std::map,
           std::vector and std::sort inlined into work()), `perf record -g`
  syswide  `perf record -a --call-graph dwarf -- sleep 1`: many processes,
           stacks cut where the 8 KiB stack copy ends, objects without names

Each recording's summary is rendered on a pseudo-terminal of 80 x 24
(openpty + TIOCSWINSZ; `conv --offline -o DIR/NAME FILE`, stderr on the
terminal). What the terminal shows after the progress line is cleared is
read as a terminal would show it (each \\r\\033[K rewrites its line). Checks:
  * no line is wider than 80 columns;
  * the summary and the warnings before it take at most 40 terminal rows
    (a line wider than the terminal counts for the rows it takes);
  * no entry of the top lists is a "[truncated: ...]" frame (syswide: only
    checked where conv's own pprof has such frames, else said);
  * the written outputs are listed last (no line after the "wrote" lines
    but their continuations);
  * syswide: the stack-copy warning, when given, says the same figures as the
    summary's "cut: N stack copy ended (M with the whole copy used)": one count;
  * syswide, with -v --top 100000 (every function listed): no [truncated
    entry either, where conv's pprof has such frames;
  * SIGINT while conv waits for a debuginfod server (tests/tools/
    fake_debuginfod.py on 127.0.0.1, stalled after its headers) with its
    progress line on the terminal: exit 130, and the terminal's last bytes
    erase the progress line ("\\r\\033[K"), so a prompt starts on a clean line.
Every conv run is under a timeout. Prints ok/FAIL lines and "N passed, M
failed"; exit 1 on a failure, 77 when it cannot run here.
"""
import fcntl
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
REPO = os.path.dirname(TESTS)
sys.path.insert(0, os.path.join(TESTS, "tools"))
sys.dont_write_bytecode = True
import pprofdec  # noqa: E402
import testlib as t  # noqa: E402

CONV, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
COLS, ROWS, MAX_LINES = 80, 24, 40
HANG = 300
RECORD_TRIES = 3


def sh(cmd, timeout=HANG, **kw):
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, 124, e.stdout or b"", (e.stderr or b"") + b"\ntimed out")


def tail(b):
    return (b or b"").decode(errors="replace").strip()[-300:]


def on_pty(args, stdin=subprocess.DEVNULL, timeout=HANG, until=None, then=None):
    """Runs args with stdout and stderr on a COLS x ROWS pseudo-terminal: (exit code or None
    on timeout, the terminal's bytes). until: called with the bytes so far; once true,
    then(process) is called once."""
    m, s = os.openpty()
    fcntl.ioctl(m, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    p = subprocess.Popen(args, stdin=stdin, stdout=s, stderr=s, env=env, start_new_session=True)
    os.close(s)
    out, end, fired = b"", time.monotonic() + timeout, False
    while time.monotonic() < end:
        r, _, _ = select.select([m], [], [], 0.2)
        if r:
            try:
                d = os.read(m, 65536)
            except OSError:
                d = b""
            if not d:
                break
            out += d
        elif p.poll() is not None:
            break
        if until and not fired and until(out):
            fired = True
            then(p)
    try:
        rc = p.wait(timeout=max(0.1, end - time.monotonic()))
    except subprocess.TimeoutExpired:
        rc = None
        p.kill()
        p.wait()
    os.close(m)
    return rc, out


def screen_lines(raw):
    """The lines as a terminal shows them: a \\r returns to the line's start, ESC[K erases the
    rest of the line (the progress line is rewritten so); other escapes are dropped."""
    text = raw.decode("utf-8", "replace").replace("\r\n", "\n")
    lines, cur = [], ""
    for tok in re.split(r"(\r|\n|\x1b\[K|\x1b\[[0-9;?]*[A-Za-z])", text):
        if tok == "\n":
            lines.append(cur)
            cur = ""
        elif tok == "\r" or tok == "\x1b[K":
            cur = "" if tok == "\x1b[K" else cur
        elif tok and not tok.startswith("\x1b"):
            cur += tok
    if cur:
        lines.append(cur)
    return lines


def words(lines):
    return " ".join(" ".join(lines).split())


def top_entries(lines):
    """The rows of the top lists: between a "top self"/"off-CPU self" header and "wrote"."""
    rows, inside = [], False
    for ln in lines:
        if re.match(r"  (top|off-CPU) (self|total)", ln):
            inside = True
            continue
        if ln.startswith("  wrote"):
            inside = False
        if inside:
            rows.append(ln)
    return rows


def has_truncated_frames(pb):
    try:
        prof = pprofdec.read(pb)
    except Exception:  # noqa: BLE001
        return False
    return any(n.startswith("[truncated") for n, *_ in prof["funcs"].values())


def written(lines, path):
    """path among the words of lines, also when a long path was wrapped mid-name onto the next lines."""
    return path in words(lines) or path in "".join(ln.strip() for ln in lines)


def check_summary(name, data, outbase):
    rc, raw = on_pty([CONV, "--offline", "-o", outbase, data])
    lines = screen_lines(raw)
    shown = [ln for ln in lines if ln.strip()]
    if not t.check("%s: conv converts on a terminal (exit 0)" % name, rc == 0, "exit %s: %s" % (rc, lines[-5:])):
        return None
    wide = [ln for ln in lines if len(ln) > COLS]
    t.check("%s: no line wider than %d columns (%d lines, widest %d)" % (
        name, COLS, len(shown), max(len(ln) for ln in lines)), not wide, wide[:3])
    rows = sum(max(1, -(-len(ln) // COLS)) for ln in shown)  # a wider line takes more rows
    t.check("%s: the summary fits in %d terminal rows (%d)" % (name, MAX_LINES, rows),
            rows <= MAX_LINES, "\n" + "\n".join(shown))
    entries = top_entries(lines)
    t.check("%s: the top lists have entries, none of them [truncated ...] (%d rows)" % (name, len(entries)),
            entries and not [r for r in entries if "[truncated" in r], entries)
    w = [i for i, ln in enumerate(lines) if ln.startswith("  wrote")]
    after = lines[w[0] + 1:] if w else []
    t.check("%s: what was written comes last" % name,
            w and all(ln.startswith("     ") or not ln.strip() for ln in after) and
            written(lines[w[0]:], outbase + ".pb.gz") and written(lines[w[0]:], outbase + ".jfr"),
            lines[-8:])
    return lines


def record(cmd, data, ok=lambda: True):
    why = ""
    for _ in range(RECORD_TRIES):
        r = sh(["perf", "record", "-q", "-o", data] + cmd, cwd=WORK)
        if r.returncode:
            why = "perf record: exit %d: %s" % (r.returncode, tail(r.stderr))
            continue
        if ok():
            return ""
        why = "the recording lacks what the checks need"
    return why


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
if not shutil.which("perf") or not shutil.which("g++"):
    t.skip_all("needs perf and g++")
prog = os.path.join(WORK, "inline")
r = sh(["g++", "-O2", "-g", "-fno-omit-frame-pointer", "-o", prog, os.path.join(HERE, "src", "inline.cpp")])
if r.returncode:
    t.skip_all("g++ failed: %s" % tail(r.stderr))
probe = sh(["perf", "record", "-q", "-o", os.path.join(WORK, "probe.data"), "-a", "--", "true"])
if probe.returncode:
    t.skip_all("cannot record system-wide here: %s" % tail(probe.stderr))

# 1. a C++ program with inlining
cpp = os.path.join(WORK, "cpp.data")
why = record(["-g", "--", prog, "400"], cpp)
if why:
    t.check("cpp: recorded", False, why)
else:
    check_summary("cpp", cpp, os.path.join(WORK, "cpp"))

# 2. system-wide, --call-graph dwarf
sysd = os.path.join(WORK, "syswide.data")
why = record(["-a", "--call-graph", "dwarf", "--", "sleep", "1"], sysd)
if why:
    t.check("syswide: recorded", False, why)
else:
    base = os.path.join(WORK, "syswide")
    lines = check_summary("syswide", sysd, base)
    if lines is not None:
        if not has_truncated_frames(base + ".pb.gz"):
            print("     (syswide: no stack was cut: the [truncated check had nothing to leave out)")
        else:
            # every function in the lists (-v --top 100000): the cut stacks' marker frames are
            # in the pprof, never among the functions
            r = sh([CONV, "-v", "--offline", "--top", "100000", "-F", "pprof", "-o", base + "-all", sysd])
            entries = top_entries(screen_lines(r.stderr))
            t.check("syswide: -v --top 100000: %d rows, no [truncated ...] among them" % len(entries),
                    r.returncode == 0 and entries and not [e for e in entries if "[truncated" in e],
                    [e for e in entries if "[truncated" in e][:3] or tail(r.stderr))
        text = words(lines)
        warn = re.search(r"warning: \S+ (\d+) of the (\d+) unwound samples? cut where the stack copy ended", text)
        summ = re.search(r"cut: (?:[^;]*, )?(\d+) stack copy ended(?: \((\d+) with the whole copy used\))?", text)
        if summ or warn or "stack copy ended" in text or "stack copy did" in text:
            t.check("syswide: the stack-copy warning and the summary say the same figures",
                    bool(summ) and (not warn or (warn.group(2) == summ.group(1) and
                                                 warn.group(1) == summ.group(2))),
                    "warning %s, summary %s" % (warn and warn.group(0), summ and summ.group(0)))
        else:
            print("     (syswide: no stack ended at the stack copy's end: nothing to compare)")

# 3. SIGINT while the progress line is shown: conv waits for a debuginfod server that sends
# headers and then nothing (the cpp recording's libstdc++ has no debug file here)
if os.path.exists(cpp):
    served = os.path.join(WORK, "served")
    os.makedirs(served, exist_ok=True)
    server, url = t.fake_debuginfod(served, faults=("*=stall:120",))
    try:
        rc, raw = on_pty([CONV, "--debuginfod", url, "--cache-dir", os.path.join(WORK, "cache"),
                          "-o", os.path.join(WORK, "int"), cpp], timeout=60,
                         until=lambda out: b"\x1b[Kconv: " in out and b"debuginfod" in out,
                         then=lambda p: os.kill(p.pid, signal.SIGINT))
    finally:
        t.stop(server)
    shown = b"\x1b[Kconv: " in raw
    if t.check("SIGINT: conv showed its progress line, then stopped (exit 130)",
               shown and rc == 128 + signal.SIGINT, "exit %s, %r" % (rc, raw[-200:])):
        last_progress = raw.rfind(b"\x1b[Kconv: ")
        t.check("SIGINT: the progress line is erased before conv ends (ends with \\r ESC[K)",
                raw.endswith(b"\r\x1b[K") and raw.rfind(b"\r\x1b[K") > last_progress, repr(raw[-200:]))

# 4. many inputs on a terminal (issue 35): the batch line (inputs done / all, files per second,
# the input waited for) within the 80 columns, erased at the end; the inputs' summaries in
# input order at -j 2 too
sample = os.path.join(REPO, "samples", "perf.data")
if os.path.exists(sample):
    many = os.path.join(WORK, "many")
    os.makedirs(many, exist_ok=True)
    names = []
    for i in range(12):
        names.append(os.path.join(many, "in%02d.data" % i))
        if not os.path.exists(names[-1]):
            os.symlink(sample, names[-1])
    rc, raw = on_pty([CONV, "--offline", "-j", "2", "-d", os.path.join(REPO, "samples", "debug"),
                      "-o", os.path.join(WORK, "many-out") + "/", *names])
    shown = [ln for ln in re.split(r"\r|\n|\x1b\[K", raw.decode("utf-8", "replace"))
             if re.match(r"conv: \d+/12 inputs", ln)]
    t.check("12 inputs: the batch line says inputs done of 12 and files per second (%d shown)" % len(shown),
            rc == 0 and shown and all("files/s" in ln for ln in shown), (rc, shown[:2], tail(raw)))
    t.check("12 inputs: the batch line fits 80 columns",
            shown and max(len(ln) for ln in shown) <= COLS, [ln for ln in shown if len(ln) > COLS][:1])
    t.check("12 inputs: the batch line is erased before conv ends", raw.endswith(b"\r\x1b[K") or
            raw.rfind(b"\r\x1b[K") > raw.rfind(b" inputs ["), repr(raw[-120:]))
    # (a long WORK path wraps the line at 80 columns between the count and "samples")
    order = [m for m in re.findall(rb"(in\d\d)\.data: \d+\s+samples", raw)]
    t.check("12 inputs at -j 2: the summaries in input order",
            order == [b"in%02d" % i for i in range(12)], order)
t.finish()
