#!/usr/bin/env python3
"""Outputs where people send them, and mistakes that destroy nothing (issue 31, What 2, 3, 5, 9).

usage: test_outputs_special.py CONV WORKDIR

On the committed fixtures (tests/fixtures/*.data; see their README); nothing
recorded but an empty recording, made with perf when it is there.

  A  special outputs are written in place, never replaced, never read, and
     nothing hangs (every run under a timeout): for --pprof, --jfr, --folded,
     --html, --stats=FILE and conv symbolize -o,
       * a character device node made here (mknod, /dev/null's numbers; root
         only): still that device afterwards, nothing else left in its
         directory, exit 0; -o naming it is that file for one output and
         refused (exit 1) for two, nothing made beside it;
       * a FIFO with a reader thread: the reader gets the bytes a regular
         file run writes;
       * /dev/stdout into a pipe: the pipe gets those bytes;
       * a process substitution (bash -c 'conv --folded >(gzip > x.gz) ...'):
         x.gz inflates to those bytes;
     and -o - -F folded is standard output, -o DIR/ is a directory made for
     one input.
  B  every refusal leaves the directory as it was (listing and each file's
     hash, old outputs included), writes nothing to stdout, exits 1 and says
     why: -e/--comm/--pid/--tid/--time naming what the recording lacks (file
     and pipe mode), filters that together keep nothing, --folded-value of an
     event the recording lacks, -o FILE with several inputs, -o - with two
     outputs or several inputs; with --stats=FILE the record says exit_code 1
     and no outputs.
  C  an empty recording (0 samples) is written with a warning, exit 0, as
     perf report takes it; an unknown option names the one it is a typo of in
     conv, conv info and conv symbolize; conv --stats c.data says --stats=FILE;
     a missing or read-only output directory is exit 4 before the input is
     read (stdin a pipe that never ends); -n -d DIR is accepted.
"""
import gzip
import hashlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
import testlib as t  # noqa: E402

CONV, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
FIX = os.path.join(REPO, "tests", "fixtures")
FG, PLAIN, SYSWIDE, PIPE = (os.path.join(FIX, n) for n in ("fg.data", "plain.data", "syswide.data",
                                                           "pipe.data"))
TIMEOUT = 20
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
ENV = dict(os.environ, HOME=os.path.join(WORK, "home"), TMPDIR=WORK, LC_ALL="C")
for k in ("DEBUGINFOD_URLS", "DEBUGINFOD_CACHE_PATH", "XDG_CACHE_HOME"):
    ENV.pop(k, None)
skipped = 0


def skip(name, why):
    global skipped
    skipped += 1
    print("skip %s -- %s" % (name, why), flush=True)


def run(args, cwd=WORK, stdin=subprocess.DEVNULL, timeout=TIMEOUT, shell=False):
    """(exit code or None on timeout, stdout bytes, stderr text). On a timeout the whole
    process group goes (a conv under bash -c included)."""
    cmd = args if shell else [CONV] + [str(a) for a in args]
    p = subprocess.Popen(cmd, cwd=cwd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV,
                         start_new_session=True)
    try:
        out, e = p.communicate(timeout=timeout)
        return p.returncode, out, e.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, e = p.communicate()
        return None, out or b"", (e or b"").decode("utf-8", "replace") + " TIMEOUT"


def read(path):
    with open(path, "rb") as f:
        return f.read()


def fresh(name):
    d = os.path.join(WORK, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def state(d):
    """The directory's names and each regular file's hash (what a refusal must not change)."""
    out = {}
    for n in sorted(os.listdir(d)):
        p = os.path.join(d, n)
        out[n] = hashlib.sha256(read(p)).hexdigest() if os.path.isfile(p) else "dir"
    return out


# ---- references: the same outputs written to regular files ----

FORMATS = {"pprof": ".pb.gz", "jfr": ".jfr", "folded": ".folded", "html": ".html"}
ref_dir = fresh("ref")
REF = {}
for fmt, ext in FORMATS.items():
    rc, _, e = run(["-q", "--offline", "--" + fmt, os.path.join(ref_dir, "r" + ext), FG])
    t.check("reference --%s to a regular file: exit 0" % fmt, rc == 0, e)
    REF[fmt] = read(os.path.join(ref_dir, "r" + ext)) if rc == 0 else None
# conv symbolize's input: a --no-symbolize pprof, and the rewrite to a regular file
SYM_IN = os.path.join(ref_dir, "n.pb.gz")
rc, _, e = run(["-q", "--offline", "-n", "--pprof", SYM_IN, FG])
rc2, _, e2 = run(["symbolize", "-q", "--offline", "-o", os.path.join(ref_dir, "n.sym.pb.gz"), SYM_IN])
SYM_IN2 = os.path.join(ref_dir, "p.pb.gz")
rc3, _, e3 = run(["-q", "--offline", "-n", "--pprof", SYM_IN2, PLAIN])
t.check("reference conv symbolize to a regular file: exit 0", rc == 0 and rc2 == 0 and rc3 == 0, e + e2 + e3)
REF["symbolize"] = read(os.path.join(ref_dir, "n.sym.pb.gz")) if rc2 == 0 else None


def out_args(kind, path):
    """The arguments that send output `kind` to path."""
    if kind == "symbolize":
        return ["symbolize", "-q", "--offline", "-o", path, SYM_IN]
    if kind == "stats":
        return ["-q", "--offline", "--stats=" + path, "-F", "folded", "-o", os.path.join(WORK, "st", "s"), FG]
    return ["-q", "--offline", "--" + kind, path, FG]


def stats_ok(data):
    try:
        doc = json.loads(data.decode().splitlines()[0])
    except (ValueError, IndexError, UnicodeDecodeError):
        return False
    return doc.get("input") == FG and doc.get("exit_code") == 0


KINDS = list(FORMATS) + ["stats", "symbolize"]
os.makedirs(os.path.join(WORK, "st"), exist_ok=True)


def bytes_ok(kind, got):
    return stats_ok(got) if kind == "stats" else got == REF[kind]


# ---- A1: a character device node ----

if os.geteuid() != 0:
    skip("A1: character device node", "mknod needs root")
else:
    rdev = os.stat("/dev/null").st_rdev
    for kind in KINDS:
        d = fresh("node-" + kind)
        node = os.path.join(d, "null")
        os.mknod(node, 0o666 | stat.S_IFCHR, rdev)
        rc, out, e = run(out_args(kind, node))
        st = os.lstat(node)
        t.check("A1 %s to a device node: exit 0, still the device, nothing else in its directory" % kind,
                rc == 0 and stat.S_ISCHR(st.st_mode) and st.st_rdev == rdev and os.listdir(d) == ["null"],
                "exit %s, mode %o, listing %s: %s" % (rc, st.st_mode, os.listdir(d), e[-300:]))

    # -o naming the node: that file for one output, never null.pb.gz beside it; two outputs refused
    d = fresh("node-o")
    node = os.path.join(d, "null")
    os.mknod(node, 0o666 | stat.S_IFCHR, rdev)
    rc, out, e = run(["-q", "--offline", "-F", "pprof", "-o", node, FG])
    t.check("A1 -o a device node -F pprof: exit 0, written there, nothing beside it",
            rc == 0 and stat.S_ISCHR(os.lstat(node).st_mode) and os.listdir(d) == ["null"],
            "exit %s, listing %s: %s" % (rc, os.listdir(d), e[-300:]))
    rc, out, e = run(["-q", "--offline", "-o", node, FG])
    t.check("A1 -o a device node with two outputs: exit 1 in one line, nothing beside it",
            rc == 1 and len(e.strip().splitlines()) == 1 and os.listdir(d) == ["null"],
            "exit %s, listing %s: %s" % (rc, os.listdir(d), e[-300:]))


# ---- A2: a FIFO with a reader thread ----

def fifo_run(kind):
    d = fresh("fifo-" + kind)
    fifo = os.path.join(d, "f")
    os.mkfifo(fifo)
    got = []

    def reader():
        with open(fifo, "rb") as f:
            got.append(f.read())

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    rc, _, e = run(out_args(kind, fifo))
    if th.is_alive():
        # conv never opened it for writing: let the reader go
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
        except OSError:
            pass
    th.join(10)
    data = got[0] if got else b""
    t.check("A2 %s to a FIFO: exit 0, the reader gets a regular file run's bytes, still a FIFO" % kind,
            rc == 0 and bytes_ok(kind, data) and stat.S_ISFIFO(os.lstat(fifo).st_mode) and
            os.listdir(d) == ["f"], "exit %s, %d bytes, listing %s: %s" % (rc, len(data), os.listdir(d), e[-300:]))


for kind in KINDS:
    fifo_run(kind)

# ---- A3: /dev/stdout into a pipe ----

for kind in KINDS:
    rc, out, e = run(out_args(kind, "/dev/stdout"))
    t.check("A3 %s to /dev/stdout (a pipe): exit 0, the pipe gets a regular file run's bytes" % kind,
            rc == 0 and bytes_ok(kind, out), "exit %s, %d bytes: %s" % (rc, len(out), e[-300:]))
t.check("A3 /dev/stdout is still the link it was", os.path.islink("/dev/stdout"))

# ---- A4: a process substitution ----

if not shutil.which("bash") or not shutil.which("gzip"):
    skip("A4: process substitution", "no bash or gzip")
else:
    for kind in ("folded", "jfr", "pprof"):
        d = fresh("procsub-" + kind)
        gz = os.path.join(d, "x.gz")
        # wait $! waits for the substitution's gzip (bash 4.4 and later)
        script = '"$0" -q --offline --%s >(gzip > "$1") "$2"; rc=$?; wait $!; exit $rc' % kind
        rc, _, e = run(["bash", "-c", script, CONV, gz, FG], shell=True)
        try:
            data = gzip.decompress(read(gz))
        except (OSError, EOFError):
            data = None
        t.check("A4 --%s >(gzip > x.gz): exit 0, x.gz inflates to a regular file run's bytes" % kind,
                rc == 0 and data == REF[kind] and os.listdir(d) == ["x.gz"],
                "exit %s, %s bytes, listing %s: %s" % (rc, None if data is None else len(data),
                                                      os.listdir(d), e[-300:]))

# ---- A5: -o - and -o DIR/ ----

rc, out, e = run(["-q", "--offline", "-o", "-", "-F", "folded", FG])
t.check("A5 -o - -F folded: the folded stacks on standard output, no file made",
        rc == 0 and out == REF["folded"] and not [n for n in os.listdir(WORK) if n.startswith("-")],
        "exit %s, %d bytes: %s" % (rc, len(out), e[-300:]))
d = fresh("dirslash")
rc, out, e = run(["-q", "--offline", "-o", "new/", FG], cwd=d)
t.check("A5 -o new/ with one input: the directory is made and holds fg.pb.gz and fg.jfr",
        rc == 0 and os.path.isdir(os.path.join(d, "new")) and
        sorted(os.listdir(os.path.join(d, "new"))) == ["fg.jfr", "fg.pb.gz"],
        "exit %s: %s" % (rc, e[-300:]))

# ---- B: refusals write nothing ----

OLD = {"out.pb.gz": b"old pprof\n", "out.jfr": b"old jfr\n", "out.folded": b"old folded\n"}


def refusal(name, args, words=(), stdin_file=None, want_rc=1):
    d = fresh("refuse")
    for n, b in OLD.items():
        with open(os.path.join(d, n), "wb") as f:
            f.write(b)
    before = state(d)
    if stdin_file:
        with open(stdin_file, "rb") as f:
            rc, out, e = run(args, cwd=d, stdin=f)
    else:
        rc, out, e = run(args, cwd=d)
    after = state(d)
    t.check("B %s: exit %d, said (%s), existing outputs byte-identical, nothing written" %
            (name, want_rc, ", ".join(words)),
            rc == want_rc and before == after and not out and all(w in e for w in words) and
            "Sanitizer" not in e, "exit %s, listing %s -> %s, %d bytes on stdout: %s" % (
                rc, sorted(before), sorted(after), len(out), e[-400:]))
    return d, e


BASEOUT = ["-q", "--offline", "-F", "pprof,jfr,folded", "-o", "out"]
refusal("-e cycles on a cpu-clock recording", BASEOUT + ["-e", "cycles", FG], ("cycles", "cpu-clock"))
refusal("-e cycles, pipe mode", BASEOUT + ["-e", "cycles", "-"], ("cycles", "cpu-clock"), stdin_file=PIPE)
refusal("--comm nosuch", BASEOUT + ["--comm", "nosuch", FG], ("nosuch", "workload"))
refusal("--comm workload,nosuch (one of two lacking)", BASEOUT + ["--comm", "workload,nosuch", FG],
        ("nosuch",))
refusal("--comm nosuch, pipe mode", BASEOUT + ["--comm", "nosuch", "-"], ("nosuch",), stdin_file=PIPE)
refusal("--pid 99999", BASEOUT + ["--pid", "99999", FG], ("99999", " to "))
refusal("--tid 99999", BASEOUT + ["--tid", "99999", FG], ("99999", " to "))
refusal("--time 100,200 (a 0.2 s recording)", BASEOUT + ["--time", "100,200", FG], ("--time", "span"))
refusal("--time @1,@2 (before the recording)", BASEOUT + ["--time", "@1,@2", FG], ("--time", "span @"))
# syswide.data: pid 6421 has thread 6421 only, thread 6420 is pid 6417's (perf script -F pid,tid)
refusal("--pid 6421 --tid 6420: each in the recording, none together",
        BASEOUT + ["--pid", "6421", "--tid", "6420", SYSWIDE], ("keep none",))
refusal("--folded-value nosuch", BASEOUT + ["--folded-value", "nosuch", FG], ("nosuch",))
refusal("-o out.pb.gz with two inputs", ["-q", "--offline", "-o", "out.pb.gz", FG, PLAIN], ("out.pb.gz/",))
refusal("-o newname with two inputs (no such directory, no slash)",
        ["-q", "--offline", "-o", "newname", FG, PLAIN], ("newname/",))
refusal("-o - with two outputs (pprof, jfr)", ["-q", "--offline", "-o", "-", FG], ("-F pprof", "-F jfr"))
refusal("-o - -F folded with two inputs", ["-q", "--offline", "-o", "-", "-F", "folded", FG, PLAIN],
        ("several inputs",))
refusal("conv symbolize -o x.pb.gz with two inputs",
        ["symbolize", "-q", "--offline", "-o", "x.pb.gz", SYM_IN, SYM_IN2], ("x.pb.gz/",))
d, e = refusal("--comm nosuch --stats=s.json (the record only)",
               BASEOUT + ["--comm", "nosuch", "--stats=" + os.path.join(WORK, "s.json"), FG], ("nosuch",))
try:
    doc = json.loads(read(os.path.join(WORK, "s.json")).decode().splitlines()[0])
except (OSError, ValueError, IndexError):
    doc = {}
t.check("B --stats record of a refused filter: exit_code 1, no outputs",
        doc.get("exit_code") == 1 and doc.get("outputs") == [], doc)

# ---- C: an empty recording, typos, --stats c.data, read-only directories, -n -d ----

empty = os.path.join(WORK, "empty.data")
perf = shutil.which("perf")
if perf:
    subprocess.run([perf, "record", "-N", "-q", "-o", empty, "-e", "cpu-clock", "-c", "1000000000", "--",
                    "true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, env=ENV)
if not perf or not os.path.isfile(empty):
    skip("C: empty recording", "perf record did not make one")
else:
    d = fresh("empty")
    rc, out, e = run(["-q", "--offline", "-o", "e", empty], cwd=d)
    rcp = subprocess.run([perf, "report", "-i", empty, "--stdio"], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=60).returncode
    t.check("C a recording without samples: written (exit 0, as perf report's %d), with a warning" % rcp,
            rc == 0 and rcp == 0 and sorted(os.listdir(d)) == ["e.jfr", "e.pb.gz"] and "no samples" in e, e)

for cmd, typo, meant in (([], "--ouput", "--output"), (["info"], "--jsno", "--json"),
                         (["symbolize"], "--ouput", "--output")):
    rc, _, e = run(cmd + [typo, "x", FG])
    t.check("C %s %s: exit 1, did you mean %s?" % (" ".join(["conv"] + cmd), typo, meant),
            rc == 1 and ("did you mean %s?" % meant) in e and len(e.strip().splitlines()) == 1, e)
rc, _, e = run(["--fo", "x", FG])
t.check("C conv --fo: the options it abbreviates", rc == 1 and "--folded" in e and "--format" in e, e)

d = fresh("statsword")
shutil.copyfile(FG, os.path.join(d, "c.data"))
before = state(d)
rc, _, e = run(["-q", "--offline", "--stats", "c.data"], cwd=d)
t.check("C conv --stats c.data: exit 1, says --stats=FILE, nothing written",
        rc == 1 and "--stats=FILE" in e and state(d) == before, "exit %s: %s" % (rc, e))


def before_reading(name, outdir):
    """conv -o OUTDIR/out - with stdin a pipe that never ends: exit 4 at once, each output named."""
    r, w = os.pipe()
    try:
        rc, _, e = run(["-q", "--offline", "-o", os.path.join(outdir, "out"), "-"], stdin=r, timeout=20)
    finally:
        os.close(r)
        os.close(w)
    t.check("C %s: exit 4 before the input is read, naming both outputs" % name,
            rc == 4 and "out.pb.gz" in e and "out.jfr" in e, "exit %s: %s" % (rc, e[-300:]))


before_reading("a missing output directory", os.path.join(WORK, "missing", "sub"))
ro = os.path.join(WORK, "ro")
os.makedirs(ro)
mounted = os.geteuid() == 0 and shutil.which("mount") and subprocess.run(
    ["mount", "-t", "tmpfs", "-o", "size=64k,ro", "tmpfs", ro], stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL, timeout=30).returncode == 0
if mounted:
    try:
        before_reading("a read-only output directory (tmpfs mounted ro)", ro)
    finally:
        subprocess.run(["umount", ro], timeout=30)
elif os.geteuid() != 0:
    os.chmod(ro, 0o555)
    before_reading("a read-only output directory (chmod 555)", ro)
    os.chmod(ro, 0o755)
else:
    skip("C: read-only output directory", "root without mount")

d = fresh("nd")
rc, _, e = run(["-q", "--offline", "-n", "-d", d, "-o", os.path.join(d, "x"), FG])
t.check("C -n -d DIR: accepted (-d says where the binaries are for ELF addresses)", rc == 0, e)



def on_terminal(name, args):
    """conv with standard output a pseudo-terminal: a binary output named by /dev/stdout (or
    the terminal's own node) is refused as "-" is, and nothing reaches the terminal."""
    import pty
    master, slave = pty.openpty()
    try:
        args = [a.replace("@TTY@", os.ttyname(slave)) for a in args]
        p = subprocess.Popen([CONV] + args, cwd=WORK, stdin=subprocess.DEVNULL, stdout=slave,
                             stderr=subprocess.PIPE, env=ENV, start_new_session=True)
        try:
            _, e = p.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
        os.set_blocking(master, False)
        try:
            shown = os.read(master, 65536)
        except (BlockingIOError, OSError):
            shown = b""
    finally:
        os.close(slave)
        os.close(master)
    e = e.decode("utf-8", "replace") if isinstance(e, bytes) else ""
    t.check("C %s: refused (exit 1), nothing written to the terminal" % name,
            p.returncode == 1 and "terminal" in e and not shown, "exit %s: %s; %d bytes shown" % (
                p.returncode, e[-200:], len(shown)))


on_terminal("--pprof /dev/stdout on a terminal", ["-q", "--offline", "--pprof", "/dev/stdout", FG])
on_terminal("--jfr /dev/fd/1 on a terminal", ["-q", "--offline", "--jfr", "/dev/fd/1", FG])
on_terminal("--pprof naming the terminal's node", ["-q", "--offline", "--pprof", "@TTY@", FG])

if skipped:
    print("%d skipped" % skipped)
t.finish()
