#!/usr/bin/env python3
"""Root's conv over a shared (1777) debuginfod cache another user has planted.

Runs as root only (exit 77 otherwise): the other user is `nobody`, and the
planting is done by a forked child that became nobody (setgroups, setgid,
setuid). The victims are root's files, mode 0600 with known content, in a
root-only directory (0700), and a root-only directory with files of its own.
A fake debuginfod on 127.0.0.1 serves the bundled sample's debug files and
binaries (samples/debug, as CACHE/HEX/debuginfo|executable), so a clean
entry gets the names; W is the workload's build-id, L libwork.so's.

Round 1, a new 1777 cache where nobody made
  * CACHE/W, nobody's directory (0777), holding .lock-debuginfo,
    .lock-executable, debuginfo.missing, executable.missing and debuginfo
    as symlinks to root's victims, and executable as nobody's regular file
    holding W's real binary;
  * CACHE/L, a symlink to a root-only directory with files.
  conv (root) converts the sample: W and L are misses (their frames
  unresolved, each listed with the reason "not trusted"), the folded
  output is that of a run whose server knows neither, --stats counts the
  untrusted requests, and nothing was asked of the server for W or L.
Round 2, a new 1777 cache where root made CACHE/L (0777, as conv made
  entry directories before it set the sticky bit) and nobody planted in it
  the same links for debuginfo, an executable that is nobody's copy of L's
  real binary, and executable.missing as nobody's fresh regular file:
  conv names every frame (folded output identical to a run with a private
  cache), asks the server for L's files (the planted ones are not taken),
  the links are replaced by regular files root made, and the directories
  root made are sticky.
After each round, every victim's mode, size, content and owner are
unchanged, and the root-only directory holds what it held.

usage: test_cache_hostile.py CONV WORKDIR
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import testlib as t  # noqa: E402

CONV, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(REPO, "samples", "perf.data")
DEBUG = os.path.join(REPO, "samples", "debug", ".build-id")
NOBODY = 65534

if os.geteuid() != 0:
    t.skip_all("needs root (root's conv over a cache another user planted)")
t.skip_unless_others_reach(WORK)

shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
os.chmod(WORK, 0o755)  # nobody reaches the caches here

# the server's files: CACHE layout, debuginfo = the .debug file, executable = the binary
serve = os.path.join(WORK, "served")
ids = {}
for sub in sorted(os.listdir(DEBUG)):
    for f in sorted(os.listdir(os.path.join(DEBUG, sub))):
        if f.endswith(".debug"):
            hexid = sub + f[:-len(".debug")]
            os.makedirs(os.path.join(serve, hexid))
            shutil.copy(os.path.join(DEBUG, sub, f), os.path.join(serve, hexid, "debuginfo"))
            shutil.copy(os.path.join(DEBUG, sub, f[:-len(".debug")]), os.path.join(serve, hexid, "executable"))
            ids[hexid] = open(os.path.join(serve, hexid, "executable"), "rb").read()


def conv(tag, url, cache):
    out = os.path.join(WORK, "out-" + tag)
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ, HOME=os.path.join(WORK, "home"))
    for k in ("DEBUGINFOD_URLS", "DEBUGINFOD_CACHE_PATH", "XDG_CACHE_HOME"):
        env.pop(k, None)
    p = subprocess.run([CONV, "-q", "--debuginfod", url, "--cache-dir", cache, "--stats=" + out + "/s.json",
                        "-F", "folded", "-o", out + "/p", DATA], stdin=subprocess.DEVNULL, capture_output=True,
                       env=env, timeout=120)
    st = json.loads(open(out + "/s.json").readline()) if os.path.exists(out + "/s.json") else {}
    folded = open(out + "/p.folded", "rb").read() if os.path.exists(out + "/p.folded") else b""
    return p.returncode, p.stderr.decode(errors="replace"), st, folded


def as_nobody(fn):
    """Runs fn() in a child that is nobody (no groups); fails the test if it raised."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            os.umask(0)
            fn()
            os._exit(0)
        except BaseException as e:  # noqa: BLE001 (reported through the exit status)
            sys.stderr.write("planting as nobody: %r\n" % (e,))
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


# root's victims
vdir = os.path.join(WORK, "rootonly")
os.mkdir(vdir, 0o700)
victims = {}
for name in ("lock-debuginfo", "lock-executable", "missing-debuginfo", "missing-executable", "file-debuginfo"):
    p = os.path.join(vdir, name)
    with open(p, "wb") as f:
        f.write(b"root's %s: must stay as it is\n" % name.encode())
    os.chmod(p, 0o600)
    victims[p] = None
secret = os.path.join(vdir, "secret")
os.mkdir(secret, 0o700)
for name, data in (("debuginfo", b"root's own file\n"), ("notes", b"root's notes\n" * 10)):
    with open(os.path.join(secret, name), "wb") as f:
        f.write(data)
    os.chmod(os.path.join(secret, name), 0o600)


def state(path):
    st = os.lstat(path)
    return (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid, st.st_size,
            open(path, "rb").read() if stat.S_ISREG(st.st_mode) else None)


def snapshot():
    snap = {p: state(p) for p in victims}
    snap[secret] = state(secret) + (sorted(os.listdir(secret)),)
    for n in os.listdir(secret):
        snap[os.path.join(secret, n)] = state(os.path.join(secret, n))
    return snap


before = snapshot()

server, url = t.fake_debuginfod(serve, lifetime=600)
empty_dir = os.path.join(WORK, "served-empty")
os.mkdir(empty_dir)
empty, empty_url = t.fake_debuginfod(empty_dir, lifetime=600)
try:
    W = next(h for h in ids if h.startswith("85"))
    L = next(h for h in ids if h.startswith("16"))

    def asked(hexid):
        paths = t.server_stats(url)["paths"]
        return sum(n for p, n in paths.items() if p.startswith("/buildid/%s/" % hexid))

    def plant_links(d, kinds_file=("debuginfo",)):
        for kind in ("debuginfo", "executable"):
            os.symlink(os.path.join(vdir, "lock-" + kind), os.path.join(d, ".lock-" + kind))
            os.symlink(os.path.join(vdir, "missing-" + kind), os.path.join(d, kind + ".missing"))
        for kind in kinds_file:
            os.symlink(os.path.join(vdir, "file-" + kind), os.path.join(d, kind))

    def check_victims(when):
        after = snapshot()
        changed = [p for p in before if after.get(p) != before[p]]
        t.check("%s: root's victims unchanged (%d files: mode, owner, size, content; the root-only "
                "directory's listing)" % (when, len(before)), not changed,
                [(p, before[p][:4], after.get(p, (None,))[:4]) for p in changed])

    # references: a private cache (every frame named), and a server that knows nothing
    rc, err, st, ref_named = conv("ref", url, os.path.join(WORK, "cache-ref"))
    if not t.check("reference run with a private cache", rc == 0 and st["frames"]["unresolved"] == 0
                   and ref_named, (rc, err[-300:], st.get("frames"))):
        sys.exit(1)
    rc, err, st, ref_unknown = conv("ref-empty", empty_url, os.path.join(WORK, "cache-ref-empty"))
    t.check("reference run against a server without the files", rc == 0 and ref_unknown and
            ref_unknown != ref_named, (rc, err[-300:]))

    # ---- round 1 ----
    cache = os.path.join(WORK, "cache-1")
    os.mkdir(cache)
    os.chmod(cache, 0o1777)
    w_exe = ids[W]

    def plant1():
        d = os.path.join(cache, W)
        os.mkdir(d)
        os.chmod(d, 0o777)
        plant_links(d)
        with open(os.path.join(d, "executable"), "wb") as f:
            f.write(w_exe)
        os.symlink(secret, os.path.join(cache, L))

    if not t.check("round 1: nobody planted the links and directories", as_nobody(plant1)):
        sys.exit(1)
    t.server_get(url, "/__reset")
    rc, err, st, folded = conv("r1", url, cache)
    t.check("round 1: conv exits 0", rc == 0, err[-500:])
    unresolved = {u["build_id"]: u.get("reason", "") for u in st.get("unresolved_objects", [])}
    for h, what in ((W, "nobody's entry directory"), (L, "an entry directory linked elsewhere")):
        t.check("round 1: %s (%s) is a miss, its reason says not trusted" % (what, h[:8]),
                h in unresolved and "not trusted" in unresolved[h], unresolved.get(h))
    t.check("round 1: output as with a server that has neither file", folded == ref_unknown,
            "%d vs %d bytes" % (len(folded), len(ref_unknown)))
    dfd = st.get("debuginfod", {})
    t.check("round 1: --stats counts the untrusted requests (>= 4: two kinds of two objects): %s"
            % dfd.get("untrusted"), dfd.get("untrusted", 0) >= 4 and dfd.get("cache_hits") == 0, dfd)
    t.check("round 1: nothing asked for W or L (nothing can be stored for them)",
            asked(W) == 0 and asked(L) == 0, t.server_stats(url)["paths"])
    check_victims("round 1")
    t.check("round 1: nobody's executable not replaced, nothing added to W's directory",
            sorted(os.listdir(os.path.join(cache, W))) ==
            sorted([".lock-debuginfo", ".lock-executable", "debuginfo.missing", "executable.missing",
                    "debuginfo", "executable"]), os.listdir(os.path.join(cache, W)))

    # ---- round 2 ----
    cache = os.path.join(WORK, "cache-2")
    os.mkdir(cache)
    os.chmod(cache, 0o1777)
    ldir = os.path.join(cache, L)
    os.mkdir(ldir)
    os.chmod(ldir, 0o777)
    l_exe = ids[L]

    def plant2():
        plant_links(ldir)
        # a .lock-executable link is planted above; the missing marker: nobody's fresh regular file
        os.unlink(os.path.join(ldir, "executable.missing"))
        open(os.path.join(ldir, "executable.missing"), "wb").close()
        with open(os.path.join(ldir, "executable"), "wb") as f:
            f.write(l_exe)

    if not t.check("round 2: nobody planted in root's entry directory", as_nobody(plant2)):
        sys.exit(1)
    t.server_get(url, "/__reset")
    rc, err, st, folded = conv("r2", url, cache)
    t.check("round 2: conv exits 0", rc == 0, err[-500:])
    t.check("round 2: every frame named, output identical to the private cache's",
            folded == ref_named and st["frames"]["unresolved"] == 0,
            (st.get("frames"), st.get("unresolved_objects")))
    paths = t.server_stats(url)["paths"]
    t.check("round 2: L's debuginfo and executable asked of the server (planted ones not taken)",
            paths.get("/buildid/%s/debuginfo" % L) == 1 and paths.get("/buildid/%s/executable" % L) == 1,
            paths)
    dfd = st.get("debuginfod", {})
    t.check("round 2: --stats untrusted %s (L's two requests)" % dfd.get("untrusted"),
            dfd.get("untrusted") == 2, dfd)
    for kind in ("debuginfo", "executable"):
        p = os.path.join(ldir, kind)
        s = os.lstat(p) if os.path.lexists(p) else None
        t.check("round 2: L's %s is now root's regular file with the server's bytes" % kind,
                s and stat.S_ISREG(s.st_mode) and s.st_uid == 0 and
                open(p, "rb").read() == open(os.path.join(serve, L, kind), "rb").read(),
                s and (stat.S_IFMT(s.st_mode), s.st_uid))
    modes = {d: stat.S_IMODE(os.lstat(os.path.join(cache, d)).st_mode) for d in os.listdir(cache)}
    t.check("round 2: entry directories root made or owns are sticky: %s"
            % {d[:8]: "%04o" % m for d, m in modes.items()}, all(m & stat.S_ISVTX for m in modes.values()),
            modes)
    check_victims("round 2")
    t.check("round 2: no temporary file left", not [f for _, _, fs in os.walk(cache) for f in fs
                                                     if f.startswith(".conv-")])
finally:
    t.stop(server)
    t.stop(empty)
t.finish()
