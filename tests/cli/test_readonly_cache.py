#!/usr/bin/env python3
"""A read-only, pre-filled cache (the README's cluster recipe) is used as it is.

A fake debuginfod on 127.0.0.1 serves the bundled sample's debug files. One
run fills a cache (--cache-dir C, a directory the user made 0755 first, as
for a cache others are to read) and gives the reference outputs: its
entries take C's access (directories 0755, files 0644) whatever the umask
(077 here), while a cache directory conv makes itself stays private (0700,
files 0600). Then C is
made read-only for the runs that follow: they run as user nobody when this
test runs as root (root may write anywhere), else C's directories lose their
write bits. Checks:
  * a run on the read-only cache: exit 0, outputs byte-identical to the
    reference, every file a cache hit (no request reached the server), and
    the cache unchanged (its files, sizes and dates);
  * the same with one entry removed before the cache was made read-only:
    exit 0, both outputs written, the entries there still used, and the
    object whose entry is missing listed in --stats unresolved_objects with
    a reason naming the cache; nothing written into the cache.

usage: test_readonly_cache.py CONV WORKDIR
"""
import json
import os
import shutil
import stat
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import testlib as t  # noqa: E402

CONV, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(REPO, "samples", "perf.data")


def snapshot(cache):
    return sorted((os.path.relpath(os.path.join(d, f), cache), os.lstat(os.path.join(d, f)).st_size,
                   os.lstat(os.path.join(d, f)).st_mtime_ns)
                  for d, _, fs in os.walk(cache) for f in fs)


def read_only(cache, as_root):
    for d, _, _ in os.walk(cache):
        os.chmod(d, 0o755 if as_root else 0o555)


as_root = os.geteuid() == 0
if as_root and not shutil.which("setpriv"):
    t.skip_all("running as root and no setpriv to drop to nobody")
if as_root:
    t.skip_unless_others_reach(WORK)
if os.path.exists(WORK):
    for d, _, _ in os.walk(WORK):
        os.chmod(d, 0o755)
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
os.chmod(WORK, 0o755)
out = os.path.join(WORK, "out")
os.makedirs(out)
os.chmod(out, 0o777)  # nobody writes its outputs and home here
server, url = t.fake_debuginfod(os.path.join(REPO, "samples", "debug"), lifetime=300)
try:

    def requests():
        return t.server_stats(url)["requests"]

    def run(cache, tag, drop=False):
        env = dict(os.environ, HOME=os.path.join(out, "home-" + tag))
        env.pop("DEBUGINFOD_URLS", None)
        env.pop("DEBUGINFOD_CACHE_PATH", None)
        env.pop("XDG_CACHE_HOME", None)
        cmd = [CONV, "-q", "--debuginfod", url, "--cache-dir", cache, "--stats=" + os.path.join(out, tag + ".json"),
               "-o", os.path.join(out, tag), DATA]
        if drop:
            cmd = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + cmd
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=120)
        st = json.loads(open(os.path.join(out, tag + ".json")).readline()) \
            if os.path.exists(os.path.join(out, tag + ".json")) else {}
        return p.returncode, p.stderr.decode(errors="replace"), st

    def outputs(tag):
        return [open(os.path.join(out, tag + e), "rb").read() for e in (".pb.gz", ".jfr")]

    def modes(cache):
        return sorted({("d" if os.path.isdir(os.path.join(d, f)) else "f",
                        "%04o" % stat.S_IMODE(os.lstat(os.path.join(d, f)).st_mode))
                       for d, ds, fs in os.walk(cache) for f in ds + fs})

    old_umask = os.umask(0o077)
    try:
        private = os.path.join(WORK, "private")
        rc, err, st = run(private, "private")
        t.check("a cache directory conv makes is private: %s" % modes(private),
                rc == 0 and stat.S_IMODE(os.stat(private).st_mode) == 0o700 and
                modes(private) == [("d", "0700"), ("f", "0600")], err[-300:])
        cache = os.path.join(WORK, "cache")
        os.mkdir(cache)
        os.chmod(cache, 0o755)
        rc, err, st = run(cache, "ref")
    finally:
        os.umask(old_umask)
    t.check("entries of a cache directory made 0755 are readable by all: %s" % modes(cache),
            modes(cache) == [("d", "0755"), ("f", "0644")])
    if not t.check("a run fills the cache", rc == 0 and st["debuginfod"]["fetched"] > 0, err[-300:]):
        sys.exit(1)
    ref = outputs("ref")
    entries = sorted(e for e in os.listdir(cache) if not e.startswith("."))
    t.check("the cache holds the sample's objects (%d)" % len(entries), len(entries) >= 2, entries)
    spare = os.path.join(WORK, "cache-partial")
    shutil.copytree(cache, spare)
    read_only(cache, as_root)
    who = "as nobody" if as_root else "without write permission"

    before, snap = requests(), snapshot(cache)
    rc, err, st = run(cache, "ro", as_root)
    dfd = st.get("debuginfod", {})
    t.check("read-only cache (%s): exit 0" % who, rc == 0, err[-300:])
    t.check("read-only cache: outputs byte-identical to the run that filled it",
            rc == 0 and outputs("ro") == ref)
    t.check("read-only cache: every file a cache hit, no request (%s)" % dfd,
            dfd.get("cache_hits", 0) > 0 and dfd.get("fetched", 1) == 0 and requests() == before, dfd)
    t.check("read-only cache: unchanged", snapshot(cache) == snap)

    # one entry missing from a read-only cache
    gone = entries[0]
    shutil.rmtree(os.path.join(spare, gone))
    read_only(spare, as_root)
    snap = snapshot(spare)
    rc, err, st = run(spare, "partial", as_root)
    sym = st
    t.check("read-only cache lacking %s: exit 0, both outputs written" % gone[:12],
            rc == 0 and all(os.path.getsize(os.path.join(out, "partial" + e)) > 0 for e in (".pb.gz", ".jfr")),
            err[-300:])
    t.check("... the entries there are still used", sym.get("debuginfod", {}).get("cache_hits", 0) > 0, sym)
    u = [o for o in st.get("unresolved_objects", []) if o.get("build_id") == gone]
    t.check("... the missing one is in unresolved_objects with a reason naming the cache",
            u and "cache" in u[0].get("reason", ""), st.get("unresolved_objects"))
    t.check("... nothing written into the cache", snapshot(spare) == snap)
finally:
    t.stop(server)
    for d, _, _ in os.walk(WORK):
        os.chmod(d, 0o755)
t.finish()
