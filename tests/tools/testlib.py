"""What the Python tests share: their ok/FAIL lines and counts, and a fake debuginfod to talk to.

    import testlib as t
    t.check("name", cond, detail)     # prints "ok   name" or "FAIL name  -- detail"; returns cond
    t.skip("name", "why")             # one check that cannot be made here: counted as skipped
    t.skip_all("why")                 # prints the SKIP line CTest expects and exits 77 (1 after a FAIL)
    t.skip_unless_others_reach(WORK)  # skip_all when another user cannot enter WORK's parents
    t.finish()                        # prints "N passed, M failed[, K skipped]" and exits 1 on a failure,
                                      # 77 when every check was skipped
    t.note("text")                    # an indented line between the checks
    p = t.sh(argv, timeout=600)       # subprocess.run, output captured; exit 124 when it hangs
    t.text(p.stdout)                  # bytes (or None) as text
    t.run_json([conv, "info", "--json", f], 30)   # dict(rc, json, err, timed_out)
    server, url = t.fake_debuginfod(DIR, faults=("*=drip:0.1:2048",))
    t.server_stats(url)["requests"]; t.server_get(url, "/__reset")
    t.stop(server)

Scripts find it with sys.path.insert(0, <tests/tools>).
"""
import json
import os
import subprocess
import sys
import urllib.request

passed = failed = skipped = 0
quiet_ok = False  # True: print failures only (tests with hundreds of checks)
FAKE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_debuginfod.py")


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    if not cond or not quiet_ok:
        print(("ok   " if cond else "FAIL ") + name + ("" if cond else "  -- %s" % (detail,)), flush=True)
    return cond


def skip(name, why):
    """One check that cannot be made here: said, and counted in the closing line."""
    global skipped
    skipped += 1
    print("skip %s  -- %s" % (name, why), flush=True)


def skip_all(why):
    """Exits 77 (skipped) for the rest; a check that already failed keeps the test failed (exit 1)."""
    print("SKIP: %s\n%d passed, %d failed, 1 skipped" % (why, passed, failed), flush=True)
    sys.exit(1 if failed else 77)


def skip_unless_others_reach(path, who="nobody"):
    """Skips the test when another user cannot enter path's parents (a checkout under a 0700
    directory, as mktemp -d makes): tests that act as that user need to reach their work directory."""
    up = os.path.dirname(os.path.abspath(path))
    while up != "/":
        if os.path.isdir(up) and not os.stat(up).st_mode & 0o001:
            skip_all("%s cannot enter %s (mode %o), above the work directory"
                     % (who, up, os.stat(up).st_mode & 0o7777))
        up = os.path.dirname(up)


def finish():
    print("%d passed, %d failed%s" % (passed, failed, ", %d skipped" % skipped if skipped else ""), flush=True)
    sys.exit(1 if failed else 77 if skipped and not passed else 0)


def note(msg):
    print("     " + msg, flush=True)


def sh(cmd, timeout=600, env=None, cwd=None, stdin=None):
    """subprocess.run with stdout and stderr captured (stdin: bytes to send, else /dev/null);
    a command past timeout s is stuck, not slow: exit status 124, "timed out" in stderr."""
    try:
        return subprocess.run(cmd, stdin=subprocess.DEVNULL if stdin is None else None,
                              input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout, env=env, cwd=cwd)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, 124, e.stdout or b"", (e.stderr or b"") + b"\ntimed out")


def text(b):
    return (b or b"").decode("utf-8", "replace")


def run_json(argv, timeout):
    """Runs a command that prints JSON (conv info --json): dict(rc, json, err, timed_out), rc -1
    when it could not start, json None unless it exited 0 with valid JSON (err then says why)."""
    r = {"rc": None, "json": None, "err": "", "timed_out": False}
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        r["timed_out"] = True
        return r
    except OSError as e:
        r["rc"] = -1
        r["err"] = str(e)
        return r
    r["rc"] = p.returncode
    r["err"] = p.stderr.decode("utf-8", "replace").strip()
    if p.returncode == 0:
        try:
            r["json"] = json.loads(p.stdout.decode("utf-8", "replace"))
        except ValueError as e:
            r["err"] = "conv printed invalid JSON: %s" % e
    return r


def fake_debuginfod(serve_dir, faults=(), lifetime=600):
    """Starts fake_debuginfod.py over serve_dir on 127.0.0.1: (process, URL). It ends with
    stop(), or by itself when this process dies (its stdin reaches EOF) or after lifetime s."""
    args = [sys.executable, FAKE, "--dir", serve_dir, "--port", "0", "--lifetime", str(lifetime),
            "--exit-on-stdin-eof"]
    for f in faults:
        args += ["--fault", f]
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    line = p.stdout.readline().decode()
    if not line.startswith("PORT "):
        p.kill()
        raise RuntimeError("fake_debuginfod did not start: %r" % line)
    return p, "http://127.0.0.1:%s" % line.split()[1]


def server_get(url, path, timeout=10):
    """The body of GET url+path: the fake server's controls (/__fault?..., /__reset)."""
    with urllib.request.urlopen(url + path, timeout=timeout) as r:
        return r.read()


def server_stats(url, timeout=10):
    """The fake server's counters (/__stats): requests, in_flight, paths {path: count}, ..."""
    return json.loads(server_get(url, "/__stats", timeout))


def stop(server):
    server.stdin.close()
    try:
        server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
