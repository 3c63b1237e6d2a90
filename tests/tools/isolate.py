#!/usr/bin/env python3
"""Runs one test in a private HOME and TMPDIR, so that it depends on no earlier run.

usage: isolate.py [--name NAME] [--] CMD [ARGS...]

Every script test of CTest runs through this (tests/CMakeLists.txt, conv_script_test;
also debuginfod_real_server and valgrind). Each run gets a fresh directory
$TMPDIR/conv-test-NAME-XXXXXX (TMPDIR of the caller, else /tmp) holding

    home/   the test's HOME: perf's build-id cache (~/.debug) and ~/.perfconfig, conv's
            default cache directory, go's build cache and GOPATH, java's preferences and
            anything else a tool keeps under $HOME start empty, and what a test leaves
            there goes away with it
    tmp/    the test's TMPDIR (Python's tempfile, mktemp, go, conv's spool files)

and these are removed from the environment, since each would let a test use or fill a
cache shared with other runs: DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH, XDG_CACHE_HOME,
XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_STATE_HOME, PERF_BUILDID_DIR, GOCACHE, GOPATH.
Tool installations that live under the caller's HOME stay usable (they are programs,
not caches): RUSTUP_HOME, CARGO_HOME and PYENV_ROOT point at the caller's ~/.rustup,
~/.cargo and ~/.pyenv when those exist and the variables are not set.
PYTHONDONTWRITEBYTECODE=1 keeps __pycache__ out of the source tree.

Not covered, because the programs do not look at TMPDIR: JIT maps are written to
/tmp/perf-<pid>.map by the JVM and CPython and read from there by perf; a test must
consider only the maps of the processes it started (and remove them).

The command's exit status is passed through unchanged (77, CTest's SKIP_RETURN_CODE,
stays 77); killed by a signal, the status is 128 + the signal number. SIGTERM, SIGINT
and SIGHUP are forwarded to the command (SIGINT from a terminal reaches it directly:
this script then waits for it); the directory is removed
afterwards in every case but SIGKILL of this script, and the directories of such runs
(whose isolate.py is gone) are removed by the next run.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

PREFIX = "conv-test-"
UNSET = ("DEBUGINFOD_URLS", "DEBUGINFOD_CACHE_PATH", "XDG_CACHE_HOME", "XDG_CONFIG_HOME",
         "XDG_DATA_HOME", "XDG_STATE_HOME", "PERF_BUILDID_DIR", "GOCACHE", "GOPATH")
TOOL_HOMES = (("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo"), ("PYENV_ROOT", ".pyenv"))


def usage():
    sys.stderr.write("usage: isolate.py [--name NAME] [--] CMD [ARGS...]\n")
    sys.exit(2)


def alive(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return b"isolate.py" in f.read()
    except OSError:
        return False


def remove_stale(base):
    """Directories of earlier runs whose isolate.py was killed (SIGKILL: CTest's timeout)."""
    try:
        names = os.listdir(base)
    except OSError:
        return
    for n in names:
        d = os.path.join(base, n)
        if not n.startswith(PREFIX) or not os.path.isdir(d) or os.path.islink(d):
            continue
        try:
            with open(os.path.join(d, "owner")) as f:
                pid = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # not ours, or being created right now
        if not alive(pid):
            shutil.rmtree(d, ignore_errors=True)


def main(argv):
    name = "run"
    while argv and argv[0].startswith("--"):
        if argv[0] == "--":
            argv = argv[1:]
            break
        if argv[0] == "--name" and len(argv) > 1:
            name, argv = argv[1], argv[2:]
        else:
            usage()
    if not argv:
        usage()

    base = os.environ.get("TMPDIR") or "/tmp"
    if not os.path.isdir(base):
        base = "/tmp"
    remove_stale(base)
    root = tempfile.mkdtemp(prefix="%s%s-" % (PREFIX, "".join(c if c.isalnum() or c in "_-" else "_"
                                                               for c in name)), dir=base)
    with open(os.path.join(root, "owner"), "w") as f:
        f.write("%d\n" % os.getpid())
    home, tmp = os.path.join(root, "home"), os.path.join(root, "tmp")
    os.mkdir(home)
    os.mkdir(tmp)

    env = dict(os.environ)
    real_home = env.get("HOME") or os.path.expanduser("~")
    for var, sub in TOOL_HOMES:
        if var not in env and real_home and os.path.isdir(os.path.join(real_home, sub)):
            env[var] = os.path.join(real_home, sub)
    for var in UNSET:
        env.pop(var, None)
    env["HOME"] = home
    env["TMPDIR"] = tmp
    env["PYTHONDONTWRITEBYTECODE"] = "1"

    child = None

    def forward(signum, _frame):
        if child is not None and child.poll() is None:
            try:
                os.kill(child.pid, signum)
            except OSError:
                pass

    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, forward)
    signal.signal(signal.SIGINT, signal.SIG_IGN if sys.stdin.isatty() else forward)
    try:
        try:
            child = subprocess.Popen(argv, env=env,
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        except OSError as e:
            sys.stderr.write("isolate.py: cannot run %s: %s\n" % (argv[0], e))
            return 127
        while True:
            try:
                rc = child.wait()
                break
            except InterruptedError:
                continue
    finally:
        if child is not None and child.poll() is None:
            try:
                os.kill(child.pid, signal.SIGKILL)
            except OSError:
                pass
            child.wait()
        shutil.rmtree(root, ignore_errors=True)
        if os.path.exists(root):  # a test left a read-only directory: make it writable
            for d, dirs, _files in os.walk(root):
                for x in dirs:
                    try:
                        os.chmod(os.path.join(d, x), 0o700)
                    except OSError:
                        pass
            shutil.rmtree(root, ignore_errors=True)
    return rc if rc >= 0 else 128 - rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
