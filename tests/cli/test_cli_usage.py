#!/usr/bin/env python3
"""conv as a new user meets it (issue 19, items 5-14): never destroy an input,
never drop an output or a sample silently, say things plainly.

usage: test_cli_usage.py CONV WORKDIR

Runs the real binary on the committed recordings (samples/perf.data and
tests/fixtures: tracepoint.data, dwarf.data); nothing is recorded here.
Terminal behaviour runs in a pseudo-terminal with a set window size. Options
are taken from `conv --help`, not from the source: a check whose option the
help does not list is skipped.

  5  an output that is an input (same name, symbolic link, hard link, --stats,
     standard output appended to it) is refused before any work, input intact
  6  several inputs of one name into one -o DIR, or one input twice: refused
  7  -o x.pb.gz / -o x.jfr: the suffix is taken off
  8  contradicting options are usage errors naming both: -F pprof --jfr,
     -q -v, --offline --debuginfod, -n --debuginfod, -o with every output named
  9  filters that keep nothing are refused (exit 1, nothing written), also with
     -q (--pid, --time, -e sched on a tracepoint recording: one matcher for the
     filter and the refusal)
 10  no server asked (--offline, none configured): said so, with what helps;
     counted as not asked, not as not found
 11  a --call-graph dwarf recording: leaf-only stacks said (stderr with -q,
     summary, --stats)
 12  missing file: one plain line; unknown option: one line and where help
     is; --stats FILE; conv info takes every Symbols/Run option of conv's
     help, --opt=V, defaults to perf.data, lists --mappings/--jit as text
 13  the progress line fits the terminal (TIOCGWINSZ, $COLUMNS); '-' from a
     terminal and binary output to a terminal refused; the progress line's
     debuginfod counters equal the summary's
 14  no event without samples in the summary, "1 process", one unit rule,
     no "(1 time)", the JFR hint with --stack-depth

Prints ok/FAIL/skip lines and `N passed, M failed, K skipped`; exit 1 when a
check failed, 77 (with `SKIP: ...`) when it cannot run at all.
"""
import fcntl
import gzip
import json
import os
import re
import select
import shutil
import socket
import struct
import subprocess
import sys
import termios
import time

if len(sys.argv) != 3:
    print("usage: test_cli_usage.py CONV WORKDIR")
    sys.exit(2)
CONV, WORK0 = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FIX = os.path.join(REPO, "tests", "fixtures")
SAMPLE = os.path.join(REPO, "samples", "perf.data")
TRACE = os.path.join(FIX, "tracepoint.data")
DWARF = os.path.join(FIX, "dwarf.data")

for f in (CONV, SAMPLE, TRACE, DWARF):
    if not os.path.exists(f):
        print("SKIP: %s is missing" % f)
        sys.exit(77)

WORK = os.path.join(WORK0, "run")
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
HOME = os.path.join(WORK, "home")
os.makedirs(HOME)
# no servers, no caches of the user's: what conv finds is what this test made
ENV = dict(os.environ, HOME=HOME, TMPDIR=WORK, LC_ALL="C")
for k in ("DEBUGINFOD_URLS", "DEBUGINFOD_CACHE_PATH", "XDG_CACHE_HOME", "COLUMNS"):
    ENV.pop(k, None)

passed = failed = skipped = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print("ok %s" % name)
    else:
        failed += 1
        print("FAIL %s -- %s" % (name, str(detail)[-600:]))
    sys.stdout.flush()
    return bool(cond)


def skip(name, why):
    global skipped
    skipped += 1
    print("skip %s -- %s" % (name, why))


def conv(*args, cwd=None, env=None, timeout=60, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE):
    try:
        return subprocess.run([CONV] + [str(a) for a in args], stdin=stdin, stdout=stdout,
                              stderr=subprocess.PIPE, timeout=timeout, cwd=cwd, env=env or ENV)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(args, -999, e.stdout or b"", (e.stderr or b"") + b"TIMEOUT")


def err(r):
    return r.stderr.decode("utf-8", "replace")


def desc(r):
    return "exit %s, stderr %r" % (r.returncode, err(r)[-500:])


def fresh(name):
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    return d


def copy(src, dst):
    shutil.copyfile(src, dst)
    return dst


def read(path):
    with open(path, "rb") as f:
        return f.read()


def on_pty(args, cols=80, rows=24, pty_fds=(0, 1, 2), env=None, timeout=30, cwd=None, stdin_data=None):
    """Runs conv with the given standard fds on a pseudo-terminal of cols x rows.
    Returns (exit code or None on timeout, bytes the terminal got, bytes of a piped stdout)."""
    m, s = os.openpty()
    fcntl.ioctl(m, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    fds = [s if i in pty_fds else (subprocess.PIPE if i else subprocess.DEVNULL) for i in range(3)]
    p = subprocess.Popen([CONV] + [str(a) for a in args], stdin=fds[0], stdout=fds[1], stderr=fds[2],
                         env=env or ENV, cwd=cwd, start_new_session=True)
    os.close(s)
    term, piped, end = b"", b"", time.monotonic() + timeout
    watch = [m] + ([p.stdout] if p.stdout else []) + ([p.stderr] if p.stderr else [])
    while watch and time.monotonic() < end:
        r, _, _ = select.select(watch, [], [], 0.2)
        for fd in r:
            try:
                d = os.read(fd if isinstance(fd, int) else fd.fileno(), 65536)
            except OSError:
                d = b""
            if not d:
                watch.remove(fd)
            elif fd is m:
                term += d
            else:
                piped += d
        if p.poll() is not None and not r:
            break
    try:
        rc = p.wait(timeout=max(0.1, end - time.monotonic()))
    except subprocess.TimeoutExpired:
        rc = None
        p.kill()
        p.wait()
    os.close(m)
    return rc, term, piped


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# ---------------------------------------------------------------------------
# the options, as conv --help lists them

r = conv("--help")
HELP = r.stdout.decode("utf-8", "replace")
if r.returncode != 0 or "usage" not in HELP:
    print("SKIP: conv --help does not work: %s" % desc(r))
    sys.exit(77)
OPT_RE = re.compile(r"(?:(?<![\w-])(-[a-zA-Z]), )?(?<![\w-])(--[a-z][a-z-]*)(?: \[?([A-Z][A-Z,]*)\]?)?")
LONGS = {m.group(2) for m in OPT_RE.finditer(HELP)}
SHORTS = set(re.findall(r"(?<![\w-])(-[a-zA-Z])\b", HELP))


def has(*opts):
    """Whether conv's help lists every option (a check needing one it lacks is skipped)."""
    return all(o in (LONGS if o.startswith("--") else SHORTS) for o in opts)


def needs(name, *opts):
    if has(*opts):
        return True
    skip(name, "conv --help lists no %s" % " ".join(o for o in opts if not has(o)))
    return False


def help_section(title):
    """The lines of a section of conv --help ("Symbols:" up to the next title)."""
    out, on = [], False
    for line in HELP.splitlines():
        if re.match(r"^[A-Z][\w ]*[:(]", line):
            on = line.startswith(title + ":")
            continue
        if on:
            out.append(line)
    return "\n".join(out)


def stats_json(text):
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                pass
    return {}


# ===========================================================================
# 5. an output that is an input

d = fresh("same")
same = os.path.join(d, "same.data")
orig = read(SAMPLE)
# a fresh copy for each check: a conv that destroyed it must not fail the next one for that
if needs("5: --pprof same.data same.data", "--pprof", "--jfr"):
    copy(SAMPLE, same)
    other = os.path.join(d, "other.jfr")
    r = conv("--offline", "--pprof", same, "--jfr", other, same)
    check("5: --pprof IN IN: refused (exit 1) naming it, input intact, no other output written",
          r.returncode == 1 and "same.data" in err(r) and read(same) == orig and
          not os.path.exists(other), (desc(r), os.listdir(d)))
    copy(SAMPLE, same)
    link = os.path.join(d, "link.pb.gz")
    os.symlink(same, link)
    r = conv("--offline", "--pprof", link, same)
    check("5: an output that is a symbolic link to the input: refused, link and input intact",
          r.returncode == 1 and os.path.islink(link) and read(same) == orig, desc(r))
    os.unlink(link)
if needs("5: hard link", "-o"):
    copy(SAMPLE, same)
    hard = os.path.join(d, "hard.pb.gz")
    os.link(same, hard)
    r = conv("--offline", "-o", os.path.join(d, "hard"), same)
    check("5: an output that is a hard link of the input (-o BASE): refused, input intact",
          r.returncode == 1 and read(same) == orig and os.stat(hard).st_nlink == 2 and
          not os.path.exists(os.path.join(d, "hard.jfr")), desc(r))
    os.unlink(hard)
if needs("5: --stats=IN", "--stats", "-o"):
    copy(SAMPLE, same)
    r = conv("-q", "--offline", "--stats=" + same, "-o", os.path.join(d, "st"), same)
    check("5: --stats=IN: refused, input intact, nothing written",
          r.returncode == 1 and read(same) == orig and not os.path.exists(os.path.join(d, "st.pb.gz")),
          desc(r))
if needs("5: --pprof - >> IN", "--pprof"):
    copy(SAMPLE, same)
    with open(same, "ab") as out:
        r = conv("-q", "--offline", "--pprof", "-", same, stdout=out)
    check("5: --pprof - with standard output appending to the input: refused, input intact",
          r.returncode == 1 and read(same) == orig, desc(r))

# ===========================================================================
# 6. outputs that would be one file

if needs("6: -o DIR/ with inputs of one name", "-o"):
    d = fresh("collide")
    for sub in ("a", "b"):
        os.makedirs(os.path.join(d, sub))
        copy(SAMPLE, os.path.join(d, sub, "perf.data"))
    col = os.path.join(d, "col")
    r = conv("-q", "--offline", "-o", col + "/", os.path.join(d, "a", "perf.data"),
             os.path.join(d, "b", "perf.data"))
    written = os.listdir(col) if os.path.isdir(col) else []
    # and inputs of different names still go into one directory, each apart
    apart = os.path.join(d, "apart")
    ins = [copy(SAMPLE, os.path.join(d, n + ".data")) for n in ("x", "y", "z")]
    r2 = conv("-q", "--offline", "-o", apart + "/", "--stats=" + os.path.join(d, "s.json"), *ins)
    check("6: -o col/ a/perf.data b/perf.data: refused (exit 1) naming both inputs, nothing written "
          "(x.data y.data z.data into one -o DIR: written apart)",
          r.returncode == 1 and "a/perf.data" in err(r) and "b/perf.data" in err(r) and not written and
          r2.returncode == 0 and len(os.listdir(apart)) == 6, (desc(r), written, desc(r2)))
    one = os.path.join(d, "a", "perf.data")
    r = conv("-q", "--offline", "-o", os.path.join(d, "twice"), one, one)
    check("6: one input given twice: refused, nothing written",
          r.returncode == 1 and not os.path.exists(os.path.join(d, "twice")), desc(r))
    r = conv("-q", "--offline", "-o", "", one, one)
    check("6: -o '' (DIR/NAME would be /NAME): refused, said", r.returncode == 1 and "empty path" in err(r), desc(r))

# ===========================================================================
# 7. a known suffix on -o

if needs("7: -o x.pb.gz", "-o"):
    d = fresh("suffix")
    r1 = conv("-q", "--offline", "-o", os.path.join(d, "foo.pb.gz"), SAMPLE)
    r2 = conv("-q", "--offline", "-o", os.path.join(d, "bar.jfr"), SAMPLE)
    check("7: -o foo.pb.gz and -o bar.jfr write foo.{pb.gz,jfr} and bar.{pb.gz,jfr}",
          r1.returncode == 0 and r2.returncode == 0 and
          sorted(os.listdir(d)) == ["bar.jfr", "bar.pb.gz", "foo.jfr", "foo.pb.gz"],
          (desc(r1), desc(r2), sorted(os.listdir(d))))

# ===========================================================================
# 8. options that contradict each other

CONFLICTS = [
    ("-F pprof --jfr x.jfr", ["-F", "pprof", "--jfr", "x.jfr"], ("--jfr", "-F")),
    ("-F jfr --pprof x.pb.gz", ["-F", "jfr", "--pprof", "x.pb.gz"], ("--pprof", "-F")),
    ("-q -v", ["-q", "-v", "-o", "x"], ("-q", "-v")),
    ("--offline --debuginfod URL", ["--offline", "--debuginfod", "http://127.0.0.1:1", "-o", "x"],
     ("--offline", "--debuginfod")),
    # (-n -d DIR is no conflict: -n still takes the binaries' program headers from DIR)
    ("-n --debuginfod URL", ["-n", "--debuginfod", "http://127.0.0.1:1", "-o", "x"],
     ("-n", "--debuginfod")),
    ("-o with --pprof and --jfr naming every output", ["-o", "x", "--pprof", "p.pb.gz", "--jfr", "j.jfr"],
     ("-o", "--pprof")),
]
for name, args, named in CONFLICTS:
    opts = [a for a in args if a.startswith("-")]
    if not needs("8: " + name, *opts):
        continue
    d = fresh("conflict-" + re.sub(r"\W+", "_", name))
    r = conv(*args, SAMPLE, cwd=d)
    first = err(r).strip().splitlines()[:1]
    check("8: %s: usage error (exit 1) naming both, nothing written" % name,
          r.returncode == 1 and first and all(n in first[0] for n in named) and not os.listdir(d),
          (desc(r), os.listdir(d)))

# ===========================================================================
# 9. filters that keep nothing

if needs("9: filters", "--pid", "--time", "-e", "--stats", "-o"):
    d = fresh("filters")
    for name, args, word in (("--pid 99999", ["--pid", "99999"], "99999"),
                             ("--time 100,200 (a 0.2 s recording)", ["--time", "100,200"], "--time")):
        r = conv("-q", "--offline", "--stats", "-o", os.path.join(d, "f"), *args, SAMPLE)
        st = stats_json(r.stdout.decode())
        check("9: %s keeps nothing: a usage error naming it, also with -q, nothing written" % name,
              r.returncode == 1 and st.get("exit_code") == 1 and word in err(r) and
              not [n for n in os.listdir(d) if n.startswith("f.")], (desc(r), os.listdir(d)))
    r = conv("-q", "--offline", "--stats", "-o", os.path.join(d, "t"), "-e", "sched", TRACE)
    st = stats_json(r.stdout.decode())
    r2 = conv("-q", "--offline", "--stats", "-o", os.path.join(d, "t2"), "-e", "sched:sched_switch", TRACE)
    st2 = stats_json(r2.stdout.decode())
    check("9: -e sched on a tracepoint recording: refused, naming the events it has (one matcher); "
          "-e sched:sched_switch keeps all 61 without a warning",
          r.returncode == 1 and "sched:sched_switch" in err(r) and
          st2.get("samples_total") == 61 and "warning" not in err(r2), (desc(r), st, desc(r2), st2))

# ===========================================================================
# 10. no debuginfod server asked

if needs("10: --offline", "--offline", "-v", "--stats", "-o"):
    d = fresh("noserver")
    r = conv("-v", "--offline", "--stats", "-o", os.path.join(d, "off"), SAMPLE)
    st = stats_json(r.stdout.decode())
    dfd = st.get("debuginfod", {})
    unres = st.get("unresolved_objects", [])
    if not unres:
        skip("10: --offline", "every object of samples/perf.data resolved on this machine")
    else:
        check("10: --offline: the summary says no server was asked and what would help",
              r.returncode == 0 and "no debuginfod server was asked (--offline)" in err(r) and
              "try -d DIR" in err(r) and "--debuginfod URL" in err(r) and "not found on any server" not in err(r),
              desc(r))
        check("10: --offline: counted as not asked, not as not found (--stats and the summary)",
              dfd.get("not_found") == 0 and dfd.get("not_asked", 0) > 0 and
              not re.search(r"debuginfod .*[1-9]\d* not found", err(r)), (dfd, desc(r)))
        r = conv("-v", "-o", os.path.join(d, "none"), SAMPLE)
        check("10: no server configured: the summary says so and what would help",
              r.returncode == 0 and "no debuginfod server was asked (none configured)" in err(r) and
              "not found on any server" not in err(r), desc(r))

# ===========================================================================
# 11. --call-graph dwarf

if needs("11: dwarf", "-q", "-v", "--stats", "-o"):
    d = fresh("dwarf")
    r = conv("-q", "--offline", "-o", os.path.join(d, "q"), DWARF)
    rg = conv("-q", "--offline", "-o", os.path.join(d, "g"), SAMPLE)
    # issue 20 unwinds these stacks: what is said now is what the walks did. The fixture's
    # 2048-byte copies end before one sample's root: said on stderr, also with -q, with
    # the option that helps; a -g recording says nothing of the kind
    check("11: a --call-graph dwarf recording whose copies ran out: stderr says so, also with -q, "
          "and how to record deeper (a -g recording: no such word)",
          r.returncode == 0 and "stack copy" in err(r) and "--call-graph dwarf,65528" in err(r)
          and "dwarf" not in err(rg), (desc(r), desc(rg)))
    r = conv("-v", "--offline", "--stats", "-o", os.path.join(d, "v"), DWARF)
    st = stats_json(r.stdout.decode())
    uw = st.get("unwind", {})
    summary = [l for l in err(r).splitlines() if not l.startswith("conv:")]
    check("11: the summary says what unwinding did, and --stats counts it (28 samples: to the root "
          "and truncated add up)",
          any(l.strip().startswith("unwound") for l in summary) and uw.get("samples") == 28 and
          uw.get("to_root", 0) + sum(uw.get("truncated", {}).values()) == 28, (desc(r), uw))

# ===========================================================================
# 12. plain words, one option set

d = fresh("words")
r = conv(os.path.join(d, "nonexist.data"))
lines = err(r).strip().splitlines()
check("12: a missing file: exit 2, one plain line with the system's reason",
      r.returncode == 2 and len(lines) == 1 and "No such file or directory" in lines[0] and
      "input/output error" not in lines[0], desc(r))
for cmd in ([], ["info"]):
    who = " ".join(["conv"] + cmd)
    r = conv(*cmd, "--no-such-option", SAMPLE)
    lines = err(r).strip().splitlines()
    check("12: %s --no-such-option: exit 1, one line naming it and 'try '%s --help''" % (who, who),
          r.returncode == 1 and len(lines) == 1 and "--no-such-option" in lines[0] and
          "try '%s --help'" % who in lines[0], desc(r))
if has("-o"):
    r = conv("-o")
    lines = err(r).strip().splitlines()
    check("12: conv -o (no value): exit 1, one line saying -o needs a value",
          r.returncode == 1 and len(lines) == 1 and "-o" in lines[0] and "try 'conv --help'" in lines[0],
          desc(r))
if needs("12: --stats FILE", "--stats", "-o"):
    sj = os.path.join(d, "s.json")
    r = conv("-q", "--offline", "--stats", sj, "-o", os.path.join(d, "st"), SAMPLE)
    try:
        with open(sj) as f:
            sf = json.loads(f.readline())
    except (OSError, ValueError):
        sf = {}
    check("12: --stats s.json takes s.json as the stats file (as --stats=s.json)",
          r.returncode == 0 and sf.get("samples_total", 0) > 0 and r.stdout == b"", desc(r))

# conv info: every Symbols and Run option of conv's help, both forms
KALL = os.path.join(d, "kallsyms")
with open(KALL, "w") as f:
    f.write("ffffffff81000000 T _stext\nffffffff81000100 T do_work\n")
VALUES = {"DIR": HOME, "URL": "http://127.0.0.1:%d" % closed_port(), "FILE": KALL, "N": "2", "S": "5"}
section = help_section("Symbols") + "\n" + help_section("Run")
# --help and --version are each command's own
shared = [(m.group(1), m.group(2), m.group(3)) for m in OPT_RE.finditer(section)
          if m.group(2) not in ("--help", "--version")]
if not shared:
    skip("12: conv info takes conv's Symbols and Run options", "no Symbols:/Run: section in conv --help")
else:
    refused, tried = [], []
    for short, long_, val in shared:
        for form in [f for f in (long_, short) if f]:
            args = [form] + ([VALUES.get(val, "1")] if val else [])
            tried.append(form)
            r = conv("info", *args, SAMPLE)
            if r.returncode != 0 or "file:" not in r.stdout.decode():
                refused.append((" ".join(args), err(r).strip()[:80]))
    check("12: conv info takes each of conv's Symbols and Run options, short and long (%d)" % len(tried),
          not refused, refused)
if has("--debug-dir"):
    r = conv("info", "--top=3", "--debug-dir=" + HOME, SAMPLE)
    check("12: conv info --top=3 --debug-dir=DIR: values after '='",
          r.returncode == 0 and "top functions" in r.stdout.decode(), desc(r))
d2 = fresh("info-default")
copy(SAMPLE, os.path.join(d2, "perf.data"))
r = conv("info", cwd=d2)
check("12: conv info without FILE reads perf.data, as conv does",
      r.returncode == 0 and "file:" in r.stdout.decode() and "perf.data" in r.stdout.decode(), desc(r))
plain = conv("info", SAMPLE).stdout.decode()
r = conv("info", "--mappings", SAMPLE)
out = r.stdout.decode()
added = [l for l in out.splitlines() if l not in plain.splitlines()]
check("12: conv info --mappings without --json lists the mappings (path and build-id)",
      r.returncode == 0 and any("/tmp/conv-sample-build/libwork.so" in l and re.search(r"[0-9a-f]{40}", l)
                                for l in added), (desc(r), added[:4]))
r = conv("info", "--jit", SAMPLE)
check("12: conv info --jit without --json adds its listing (here no JIT symbol)",
      r.returncode == 0 and r.stdout.decode() != plain, desc(r))

# ===========================================================================
# 13. terminals


def progress_parts(term):
    """Every state of the progress line: the parts of a line that a later '\\r' replaced."""
    parts = []
    for line in term.replace(b"\r\n", b"\n").split(b"\n"):
        pieces = line.split(b"\r")
        parts += [re.sub(rb"\x1b\[[0-9;]*[A-Za-z]", b"", p).decode("utf-8", "replace")
                  for p in pieces[:-1]]
    return [p for p in parts if p]


def summary_lines(term):
    return [line.split(b"\r")[-1].replace(b"\x1b[K", b"").decode("utf-8", "replace")
            for line in term.replace(b"\r\n", b"\n").split(b"\n")]


d = fresh("tty")
longname = os.path.join(d, "a-recording-with-a-rather-long-name-to-show-the-progress-line.data")
copy(SAMPLE, longname)
for cols, env, how in ((50, None, "TIOCGWINSZ 50 columns"),
                       (0, dict(ENV, COLUMNS="44"), "no window size, COLUMNS=44")):
    rc, term, _ = on_pty(["--offline", "-o", os.path.join(d, "w%d" % cols), longname], cols=cols, env=env)
    width = cols or 44
    parts = progress_parts(term)
    too_long = [p for p in parts if len(p) > width]
    check("13: progress line within the terminal (%s): %d states, none wider" % (how, len(parts)),
          rc == 0 and parts and not too_long, (rc, too_long[:3], term[-300:]))
for args, name in ((["-"], "conv -"), (["info", "-"], "conv info -")):
    # nothing is ever typed: a conv that read the terminal would wait until on_pty's
    # deadline and be killed (rc None), whatever the machine's speed
    rc, term, _ = on_pty(args, timeout=60)
    check("13: %s with a terminal as standard input: refused without reading it (exit 1), said" % name,
          rc == 1 and b"terminal" in term, (rc, term[-300:]))
for opt in ("--pprof", "--jfr"):
    if not needs("13: %s - to a terminal" % opt, opt):
        continue
    rc, term, _ = on_pty(["--offline", opt, "-", SAMPLE], timeout=20)
    check("13: %s - with a terminal as standard output: refused (exit 1), no binary data on it" % opt,
          rc == 1 and b"\x1f\x8b" not in term and b"FLR\0" not in term and b"terminal" in term,
          (rc, term[:200]))
if needs("13: debuginfod counters", "--debuginfod", "--cache-dir", "-o"):
    url = "http://127.0.0.1:%d" % closed_port()
    rc, term, _ = on_pty(["--debuginfod", url, "--cache-dir", fresh("tty-cache"), "-o",
                          os.path.join(d, "dfd"), SAMPLE], cols=250, timeout=60)
    prog = [p for p in progress_parts(term) if "fetched" in p]
    summ = [l for l in summary_lines(term) if re.match(r"\s+debuginfod\s", l)]
    pf = re.findall(r"(\d+) fetched", prog[-1]) if prog else []
    sf = re.findall(r"(\d+) fetched", summ[0]) if summ else []
    pe = re.findall(r"(\d+) errors?\b", prog[-1]) if prog else []
    se = re.findall(r"(\d+) errors?\b", summ[0]) if summ else []
    check("13: the progress line's debuginfod counters equal the summary's (a server that refuses)",
          rc == 0 and prog and summ and pf == sf and pe == se,
          (rc, prog[-1:] if prog else term[-400:], summ))

# ===========================================================================
# 14. small things

if needs("14", "-v", "-o", "--pid"):
    d = fresh("small")
    r = conv("-v", "--offline", "-o", os.path.join(d, "t"), TRACE)
    first = err(r).splitlines()[0] if err(r) else ""
    check("14: the summary lists no event without samples (dummy:HG)",
          r.returncode == 0 and "sched:sched_switch 61" in first and "dummy" not in first, first)
    ri = conv("info", "--json", SAMPLE)
    try:
        procs = json.loads(ri.stdout)["processes"]["samples_per_process"]
    except (ValueError, KeyError):
        procs = []
    if procs:
        r = conv("-v", "--offline", "--pid", procs[0]["pid"], "-o", os.path.join(d, "p"), SAMPLE)
        first = err(r).splitlines()[0] if err(r) else ""
        check("14: one process kept: '1 process', not '1 processes'",
              r.returncode == 0 and " 1 process," in first, first)
    else:
        skip("14: 1 process", "conv info --json lists no process: %s" % desc(ri))
    r = conv("-v", "--offline", "-o", os.path.join(d, "u"), SAMPLE)
    sizes = re.findall(r"\(([\d.]+) (B|kB|MB|GB)\)", "\n".join(l for l in err(r).splitlines() if ".pb.gz" in l
                                                              or ".jfr" in l))
    check("14: sizes in one unit rule: under 1000 of the largest unit that keeps 1 or more",
          r.returncode == 0 and len(sizes) == 2 and
          all(1 <= float(n) < 1000 or (u == "B" and float(n) < 1000) for n, u in sizes), sizes)
    check("14: the JFR hint shows deep stacks (jfr print --stack-depth 64)",
          "jfr print --stack-depth 64" in err(r), desc(r))
    cut = os.path.join(d, "cut.data")
    with open(cut, "wb") as f:
        f.write(orig[:30000])
    r = conv("-q", "--offline", "-o", os.path.join(d, "c"), cut)
    warns = [l for l in err(r).splitlines() if "warning" in l]
    check("14: warnings of a cut recording say no '(1 time)'",
          r.returncode == 0 and warns and not any("(1 time)" in l for l in warns), desc(r))

print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
sys.exit(1 if failed else 0)
