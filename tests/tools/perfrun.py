"""Running perf on a recording, for the conformance tools: one place for how perf
is invoked (environment, -f, pipe files through stdin), when its output means it
could not read the file, and how long it may take. Python 3 standard library only.

perf runs with a HOME of its own, empty (made once per process, removed at
exit): what it reports must not depend on a ~/.debug build-id cache that
earlier perf runs on this machine left behind, and no debuginfod server is
asked (DEBUGINFOD_URLS removed).
"""
import atexit
import os
import re
import shutil
import subprocess
import tempfile

# stderr lines that mean perf did not read the file (perf report often still exits 0).
ERROR_PATTERNS = [
    re.compile(r"failed to process", re.I),
    re.compile(r"bad event header size", re.I),
    re.compile(r"incompatible file format", re.I),
    re.compile(r"unexpected end of event stream", re.I),
    re.compile(r"wrong feature ID", re.I),
    re.compile(r"^ERROR:"),
    re.compile(r"failed to open", re.I),
    re.compile(r"can't open|cannot open|No such file", re.I),
    re.compile(r"Permission denied", re.I),
    re.compile(r"not owned by current user", re.I),
    re.compile(r"Invalid CPU", re.I),
    re.compile(r"do(es)? not have .* attribute", re.I),
    re.compile(r"Invalid field requested", re.I),
]
NO_SAMPLES = re.compile(r"data has no samples", re.I)


def perf_binary():
    return os.environ.get("PERF", "perf")


def perf_available():
    exe = perf_binary()
    if os.sep in exe:
        return os.access(exe, os.X_OK)
    for d in os.environ.get("PATH", "").split(os.pathsep):
        p = os.path.join(d or ".", exe)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return True
    return False


_HOME = []


def perf_home():
    """The empty HOME perf runs with (one per process)."""
    if not _HOME:
        _HOME.append(tempfile.mkdtemp(prefix="perfrun-home-"))
        atexit.register(shutil.rmtree, _HOME[0], True)
    return _HOME[0]


def perf_env():
    env = dict(os.environ)
    env["HOME"] = perf_home()
    env["LC_ALL"] = "C"
    env["PERF_PAGER"] = "cat"
    env["PAGER"] = "cat"
    env.pop("PERF_EXEC_PATH", None)
    env.pop("DEBUGINFOD_URLS", None)
    return env


def perf_version():
    try:
        p = subprocess.run([perf_binary(), "--version"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30,
                           env=perf_env())
        return p.stdout.decode("utf-8", "replace").strip()
    except Exception as e:  # noqa: BLE001
        return "unknown (%s)" % e


def is_pipe_file(path):
    """True for a pipe-mode perf.data (PERFILE2 header of size 16, either byte order)."""
    try:
        with open(path, "rb") as f:
            h = f.read(16)
    except OSError:
        return False
    if len(h) < 16 or h[:8] not in (b"PERFILE2", b"2ELIFREP"):
        return False
    return int.from_bytes(h[8:16], "little") == 16 or int.from_bytes(h[8:16], "big") == 16


def run(args, path, timeout, via_stdin=False, binary=False):
    """Runs `perf ARGS[0] -f -i PATH ARGS[1:]`; returns dict(cmd, rc, out, err, timed_out).
    out is bytes when binary, else text."""
    cmd = [perf_binary()] + args[:1] + ["-f", "-i", "-" if via_stdin else path] + args[1:]

    def text(b):
        return b if binary else (b or b"").decode("utf-8", "replace")

    res = {"cmd": cmd, "rc": None, "out": text(b""), "err": "", "timed_out": False}
    fh = None
    try:
        stdin = subprocess.DEVNULL
        if via_stdin:
            fh = open(path, "rb")
            stdin = fh
        p = subprocess.run(cmd, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout, env=perf_env())
        res["rc"] = p.returncode
        res["out"] = text(p.stdout)
        res["err"] = p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        res["timed_out"] = True
        res["out"] = text(e.stdout or b"")
        res["err"] = (e.stderr or b"").decode("utf-8", "replace")
    except OSError as e:
        res["rc"] = -1
        res["err"] = "cannot run %s: %s" % (cmd[0], e)
    finally:
        if fh:
            fh.close()
    return res


def failure(res, timeout):
    """None if perf read the file, else a one-line reason."""
    if res["timed_out"]:
        return "timed out after %d s" % timeout
    lines = [l.rstrip() for l in res["err"].splitlines()]
    first = None
    for i, l in enumerate(lines):
        s = l.strip()
        if not s:
            continue
        if s in ("Error:", "Error"):
            # The message is on the next non-empty line.
            nxt = next((x.strip() for x in lines[i + 1:] if x.strip()), "")
            if NO_SAMPLES.search(nxt):
                continue
            first = first or ("Error: " + nxt)
            continue
        if NO_SAMPLES.search(s):
            continue
        if any(p.search(s) for p in ERROR_PATTERNS):
            first = first or s
    rc = res["rc"]
    if rc is not None and rc < 0:
        return "killed by signal %d%s" % (-rc, ("; " + first) if first else "")
    if rc not in (0, None):
        return "exit code %d%s" % (rc, ("; " + first) if first else "")
    return first


def run_perf(args, path, timeout, binary=False):
    """Runs perf, retrying a failing pipe file through stdin. -> (res, error or None)."""
    res = run(args, path, timeout, binary=binary)
    err = failure(res, timeout)
    if err and not res["timed_out"] and is_pipe_file(path):
        res2 = run(args, path, timeout, via_stdin=True, binary=binary)
        if not failure(res2, timeout):
            return res2, None
    return res, err
