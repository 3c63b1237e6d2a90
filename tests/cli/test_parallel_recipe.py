#!/usr/bin/env python3
"""The README's GNU parallel recipe, run as written over an archive, with one cache and a real debuginfod.

  1. The recipe: the ```sh block of README.md's "Many recordings at once" that
     runs `parallel --joblog`; its `mkdir`, both `parallel` lines (the run and
     the `--resume-failed` rerun) and its `cat` line are run here verbatim by
     sh, in a batch folder of this test's, with CACHE and DEBUGINFOD_URLS set
     as its `export` line sets them, `conv` on PATH and PARALLEL=-j2 (two
     tasks at once). doc/conv.1 must show the same two commands.
  2. The archive: 80 recordings, 8 copies (symbolic links under names of
     their own, programs interleaved) of 10 committed ones whose objects are
     committed too: samples/perf.data (x86-64; samples/debug) and the arm64
     recordings of tests/fixtures/arm64 and arm64/trixie (their debug/ and the
     guest's binaries under bin/). files.txt lists them: 4 shards of 20.
  3. The server: the real debuginfod (elfutils) scanning those folders, on
     127.0.0.1 in a private network namespace when the kernel allows one
     (debuginfod 0.188 listens on every interface); its log (-v) has a line
     per request answered, 200 or 404.
  4. The reference: one conv process over the whole list with a cache of its
     own (`conv -q --cache-dir REF -o ref/ FILE...`): the (build-id, kind)
     pairs it asks for, each once.
  5. The recipe on an empty cache, the server behind a relay on 127.0.0.1
     that holds each request back 0.3 s (so that the two first tasks,
     needing the same files, ask at the same time): parallel exits 0, the joblog has 4 tasks,
     exit 0; the server was asked for exactly the reference's pairs, each
     once (answers shared through the cache, 404s too); the debuginfod
     `fetched` counts of the report add up to the 200s in the log; every
     pprof and JFR equals the reference byte for byte; the report has one
     record per recording, exit_code 0; no temp file anywhere.
  6. The same on new empty caches with one task stopped while it writes an
     output (tests/tools/slow_write.c holds back that output's writes, so the
     task is caught in the middle): by SIGTERM, then in another round by
     SIGKILL. After the stop: parallel's exit is not 0, the task's joblog
     line says so, every output under its final name is absent or the
     reference's bytes. SIGTERM: no temp file left, the shard's stats file has
     its inputs in order up to one stopped record (exit_code 143, signal 15),
     the caught input not among those converted. SIGKILL: the temp files left
     are the stopped task's (its shard's outputs, its stats file) and none
     carries an output's name.
     Then the `--resume-failed` line: exit 0, only that shard run again, all
     outputs equal the reference, the report whole (80 records, exit 0, no
     signal), each pair still asked for once in the round (the rerun takes
     from the cache what the first run fetched), and no temp file after the
     README's cleanup line (SIGKILL) or at all (SIGTERM).

usage: test_parallel_recipe.py CONV WORKDIR
Exit 77 when GNU parallel, debuginfod or a C compiler is missing.
"""
import collections
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
sys.path.insert(0, os.path.join(REPO, "tests", "symbolize"))
import testlib as t  # noqa: E402
import test_symbolize as ts  # noqa: E402  (network namespace, the server's log)
import test_shared_cache_real as scr  # noqa: E402  (the relay that holds requests back)

COPIES = 8
RECORDINGS = ["samples/perf.data"] + ["tests/fixtures/arm64/%s.data" % n for n in
                                      ("fp", "syswide", "qsort", "cpp", "signal")] + \
    ["tests/fixtures/arm64/trixie/%s.data" % n for n in ("fp", "qsort", "cpp", "signal")]
SERVED = ["samples/debug", "tests/fixtures/arm64/debug", "tests/fixtures/arm64/bin",
          "tests/fixtures/arm64/trixie/debug", "tests/fixtures/arm64/trixie/bin"]
VICTIM_SHARD = 3  # of 4: two shards done or running before it, one after
HANG = 300
HOLD_S = 0.3  # the relay's hold in the recipe's first round


def recipe():
    """The README's block: {'export': {var: value}, 'mkdir': cmd, 'run': cmd, 'resume': cmd, 'cat': cmd}."""
    readme = open(os.path.join(REPO, "README.md")).read()
    blocks = [b for b in re.findall(r"```sh\n(.*?)```", readme, re.S) if "parallel --joblog" in b]
    if len(blocks) != 1:
        return None, "README.md has %d sh blocks running parallel --joblog" % len(blocks)
    got = {}
    for line in blocks[0].splitlines():
        cmd = line.split("  #")[0].strip()
        if cmd.startswith("export "):
            got["export"] = dict(w.split("=", 1) for w in cmd.split()[1:])
        elif cmd.startswith("cd ") and "&&" in cmd:
            got["mkdir"] = cmd.split("&&", 1)[1].strip()
        elif cmd.startswith("parallel "):
            got["resume" if "--resume-failed" in cmd else "run"] = cmd
        elif cmd.startswith("cat "):
            got["cat"] = cmd
    missing = {"export", "mkdir", "run", "resume", "cat"} - set(got)
    if missing:
        return None, "README's parallel block lacks %s: %r" % (sorted(missing), blocks[0])
    if got["resume"].replace(" --resume-failed", "") != got["run"]:
        return None, "the --resume-failed line is not the first line with --resume-failed: %r" % got
    return got, ""


def cleanup_line():
    readme = open(os.path.join(REPO, "README.md")).read()
    m = re.search(r"\(`(find out\s+stats\.d -name '\*\.tmp\.\*' -delete)`", readme)
    return re.sub(r"\s+", " ", m.group(1)) if m else None


def man_commands():
    """The man page's lines starting with parallel, roff escapes undone."""
    txt = open(os.path.join(REPO, "doc", "conv.1")).read()
    return [l.replace("\\-", "-").replace("\\(em", "-").replace("\\e", "\\") for l in txt.splitlines()
            if l.startswith("parallel ")]


def start_server(work):
    """The real debuginfod over SERVED, ready when its first scan is done: (process, URL, log) or (None, why, log)."""
    log = os.path.join(work, "debuginfod.log")
    if os.environ.get("SYMBOLIZE_NETNS") == "1":
        port = 8002  # a fresh namespace has every port free
    else:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGINFOD_")}
    with open(log, "wb") as f:
        srv = subprocess.Popen(["debuginfod", "-F", "-d", ":memory:", "-p", str(port), "-t", "0", "-g", "0",
                                "-c", "2", "--disable-source-scan", "-v"] + [os.path.join(REPO, d) for d in SERVED],
                               stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT, env=env)
    url = "http://127.0.0.1:%d" % port
    deadline = time.time() + 120
    while time.time() < deadline and srv.poll() is None:
        try:
            m = urllib.request.urlopen(url + "/metrics", timeout=2).read().decode()
        except OSError:
            time.sleep(0.1)
            continue
        val = lambda k: (re.findall(r"^%s (\d+)" % re.escape(k), m, re.M) or ["-1"])[0]  # noqa: E731
        # what elfutils' own tests wait for: the traverse done, the scan queue empty and idle
        if int(val('thread_work_total{role="traverse"}')) >= 1 and val('thread_work_pending{role="scan"}') == "0" \
                and val('thread_busy{role="scan"}') == "0":
            return srv, url, log
        time.sleep(0.1)
    ts.stop_server(srv, 10)
    return None, "debuginfod did not come up within 120 s: " + open(log, errors="replace").read()[-300:], log


def archive(work):
    """80 symbolic links, programs interleaved; files.txt (absolute paths, one a line) and the list."""
    d = os.path.join(work, "archive")
    os.makedirs(d)
    paths = []
    for c in range(COPIES):
        for i, rel in enumerate(RECORDINGS):
            p = os.path.join(d, "c%d-%02d-%s" % (c, i, rel.replace("/", "_").replace("tests_fixtures_", "")))
            os.symlink(os.path.join(REPO, rel), p)
            paths.append(p)
    listing = os.path.join(work, "files.txt")
    with open(listing, "w") as f:
        f.write("".join(p + "\n" for p in paths))
    return listing, paths


def base(path):
    return os.path.basename(path)[:-len(".data")]


def outputs(folder, paths):
    """{base: (pprof bytes or None, JFR bytes or None)}."""
    def read(p):
        try:
            return open(p, "rb").read()
        except FileNotFoundError:
            return None
    return {base(p): tuple(read(os.path.join(folder, base(p) + e)) for e in (".pb.gz", ".jfr")) for p in paths}


def temps(*folders):
    """Temp files conv makes: outputs' and the stats file's NAME.tmp.XXXXXX, the cache's .conv-*."""
    return sorted(os.path.relpath(os.path.join(d, f), os.path.dirname(folders[0]))
                  for top in folders for d, _, fs in os.walk(top) for f in fs if ".tmp." in f or f.startswith(".conv-"))


def joblog(path):
    """[(seq, exitval, signal)] in the order written."""
    rows = []
    for line in open(path).read().splitlines()[1:]:
        c = line.split("\t")
        rows.append((int(c[0]), int(c[6]), int(c[7])))
    return rows


def report(batch):
    return [json.loads(l) for l in open(os.path.join(batch, "report.jsonl")).read().splitlines()]


class Batch:
    """A batch folder, its cache and the environment the README's commands run in."""

    def __init__(self, work, name, conv, url, listing):
        self.dir = os.path.join(work, name)
        self.cache = os.path.join(work, name + "-cache")
        os.makedirs(self.dir)
        shutil.copy(listing, os.path.join(self.dir, "files.txt"))
        bindir = os.path.join(work, "bin")
        os.makedirs(bindir, exist_ok=True)
        if not os.path.exists(os.path.join(bindir, "conv")):
            os.symlink(conv, os.path.join(bindir, "conv"))
        self.env = dict(os.environ, CACHE=self.cache, DEBUGINFOD_URLS=url, PARALLEL="-j2",
                        PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
        self.env.pop("DEBUGINFOD_CACHE_PATH", None)

    def sh(self, cmd, extra=None):
        env = dict(self.env, **(extra or {}))
        return subprocess.Popen(["sh", "-c", cmd], cwd=self.dir, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def run(self, cmd, extra=None):
        p = self.sh(cmd, extra)
        out, err = p.communicate(timeout=HANG)
        return p.returncode, (out + err).decode(errors="replace")


def holder(path_part):
    """The pid of a process with a file open whose path contains path_part, or None."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            for fd in os.listdir("/proc/%s/fd" % pid):
                if path_part in os.readlink("/proc/%s/fd/%s" % (pid, fd)):
                    return int(pid)
        except OSError:
            continue
    return None


def asked(log, at, url):
    return collections.Counter((b, k) for b, k, _ in ts.debuginfod_requests(log, at, url))


def plain_round(conv, work, url, log, listing, paths, rec, ref, wanted):
    # the server answers in a millisecond: held back, the two first tasks ask for the same files at once
    scr.HOLD_S = HOLD_S
    rsrv, rurl = scr.relay(url)
    try:
        plain_run(conv, work, url, rurl, log, listing, paths, rec, ref, wanted)
    finally:
        rsrv.shutdown()


def plain_run(conv, work, url, rurl, log, listing, paths, rec, ref, wanted):
    b = Batch(work, "plain", conv, rurl, listing)
    at = ts.log_size(log)
    rc, out = b.run(rec["mkdir"])
    rc, out = b.run(rec["run"])
    if not t.check("the recipe: parallel exits 0", rc == 0, out[-600:]):
        return
    jl = joblog(os.path.join(b.dir, "joblog"))
    t.check("the joblog: 4 tasks (80 recordings, 20 a shard), each exit 0",
            sorted(s for s, _, _ in jl) == [1, 2, 3, 4] and all(e == 0 and s == 0 for _, e, s in jl), jl)
    reqs = ts.debuginfod_requests(log, at, url)
    got = collections.Counter((bid, k) for bid, k, _ in reqs)
    t.check("the recipe: the server was asked for each of the reference's %d files once (%d requests: %s)" % (
        len(wanted), sum(got.values()), dict(collections.Counter(st for _, _, st in reqs))),
        set(got) == wanted and all(n == 1 for n in got.values()),
        {k: n for k, n in got.items() if n != 1 or k not in wanted} or sorted(wanted - set(got))[:4])
    rc, out = b.run(rec["cat"])
    recs = report(b.dir)
    t.check("the report: one record per recording, each exit_code 0 with its two outputs",
            sorted(r["input"] for r in recs) == sorted(paths)
            and all(r["exit_code"] == 0 and len(r["outputs"]) == 2 for r in recs), len(recs))
    fetched = sum(r["debuginfod"]["fetched"] for r in recs)
    by_input = {r["input"]: r["debuginfod"] for r in recs}
    t.note("the first recording of shards 1 and 2 (started together): fetched, cache hits %s" % [
        (by_input[paths[i]]["fetched"], by_input[paths[i]]["cache_hits"]) for i in (0, 20)])
    ok200 = sum(1 for _, _, st in reqs if st == "200")
    t.check("the report's debuginfod fetched counts add up to the server's 200 answers (%d)" % ok200,
            fetched == ok200, fetched)
    got_out = outputs(os.path.join(b.dir, "out"), paths)
    differ = [k for k in ref if got_out[k] != ref[k]]
    t.check("the recipe: all %d pprof and JFR outputs equal the single-process run's byte for byte" % (2 * len(ref)),
            not differ, differ[:4])
    left = temps(b.dir, b.cache)
    t.check("the recipe: no temp file in the batch folder or the cache", not left, left[:6])


def killed_round(conv, work, url, log, listing, paths, rec, ref, wanted, sig, shim):
    name = "sig%s" % signal.Signals(sig).name[3:].lower()
    what = "a task stopped by %s" % signal.Signals(sig).name
    victim = base(paths[(VICTIM_SHARD - 1) * 20 + 10])
    marker = "/%s/out/%s.jfr.tmp." % (name, victim)
    b = Batch(work, name, conv, url, listing)
    at = ts.log_size(log)
    b.run(rec["mkdir"])
    slow = {"LD_PRELOAD": shim, "SLOW_WRITE_BEFORE": marker, "SLOW_WRITE_BEFORE_MS": "300",
            # an ASan build (the CI's) refuses to start with a library preloaded before its runtime
            "ASAN_OPTIONS": ":".join(x for x in (os.environ.get("ASAN_OPTIONS"), "verify_asan_link_order=0") if x)}
    p = b.sh(rec["run"], slow)
    deadline, pid = time.time() + HANG, None
    while time.time() < deadline and p.poll() is None and pid is None:
        pid = holder(marker)
        if pid is None:
            time.sleep(0.01)
    if not t.check("%s: caught writing %s.jfr" % (what, victim), pid is not None, "parallel exited %s" % p.poll()):
        p.kill()
        p.wait()
        return
    os.kill(pid, sig)
    out, err = p.communicate(timeout=HANG)
    t.check("%s: parallel's exit is not 0" % what, p.returncode != 0, p.returncode)
    jl = joblog(os.path.join(b.dir, "joblog"))
    bad = [r for r in jl if r[1] or r[2]]
    t.check("%s: the joblog says shard %d failed, the others ran (%s)" % (what, VICTIM_SHARD, bad),
            [r[0] for r in bad] == [VICTIM_SHARD] and sorted(r[0] for r in jl) == [1, 2, 3, 4], jl)
    got_out = outputs(os.path.join(b.dir, "out"), paths)
    torn = [k for k in ref for i in (0, 1) if got_out[k][i] is not None and got_out[k][i] != ref[k][i]]
    t.check("%s: every output under its final name is absent or the reference's bytes" % what, not torn, torn[:4])
    t.check("%s: the stopped input's JFR is not in place" % what, got_out[victim][1] is None,
            len(got_out[victim][1] or b""))
    left = temps(b.dir, b.cache)
    if sig == signal.SIGTERM:
        t.check("%s: no temp file left" % what, not left, left)
        st = os.path.join(b.dir, "stats.d", "%d.json" % VICTIM_SHARD)
        recs = [json.loads(l) for l in open(st).read().splitlines()] if os.path.exists(st) else []
        shard = paths[(VICTIM_SHARD - 1) * 20:VICTIM_SHARD * 20]
        ins = [r.get("input") for r in recs]
        # conv -j N converts inputs side by side but records them in input order: the stopped record is
        # the first input not finished (the one caught or one before it), and nothing after it
        t.check("%s: the shard's stats file is its inputs in order up to one stopped record (exit_code 143, "
                "signal 15), the caught input not recorded as converted (%s)" % (
                    what, [(base(r["input"])[:5], r["exit_code"], r.get("signal")) for r in recs[-2:]]),
                recs and ins == shard[:len(ins)] and all(r["exit_code"] == 0 and "signal" not in r for r in recs[:-1])
                and recs[-1]["exit_code"] == 143 and recs[-1].get("signal") == 15
                and os.path.join(os.path.dirname(shard[0]), victim + ".data") in shard[len(ins) - 1:], ins[-3:])
    else:
        finals = [f for f in left if not re.search(r"\.tmp\.[A-Za-z0-9]{6}$", f)]
        # the task's: outputs of its shard's inputs (conv -j converts several side by side) and its stats file
        shard = {base(q) for q in paths[(VICTIM_SHARD - 1) * 20:VICTIM_SHARD * 20]}
        mine = [f for f in left if "/%d.json.tmp." % VICTIM_SHARD in "/" + f or
                (f.split("/")[-2] == "out" and re.sub(r"\.(pb\.gz|jfr)\.tmp\.\w+$", "", f.split("/")[-1]) in shard)]
        t.note("temp files the SIGKILL left: %s" % left)
        t.check("%s: the temp files left are the stopped task's, none under an output's name" % what,
                left and not finals and sorted(mine) == left, left)
    rc, out = b.run(rec["resume"])
    t.check("%s: the --resume-failed line exits 0" % what, rc == 0, out[-600:])
    jl2 = joblog(os.path.join(b.dir, "joblog"))
    again = jl2[len(jl):]
    t.check("%s: only shard %d ran again, exit 0" % (what, VICTIM_SHARD), again == [(VICTIM_SHARD, 0, 0)], again)
    got_out = outputs(os.path.join(b.dir, "out"), paths)
    differ = [k for k in ref if got_out[k] != ref[k]]
    t.check("%s, then resumed: all %d outputs equal the single-process run's byte for byte" % (what, 2 * len(ref)),
            not differ, differ[:4])
    b.run(rec["cat"])
    recs = report(b.dir)
    t.check("%s, then resumed: the report has one record per recording, exit_code 0, none stopped" % what,
            sorted(r["input"] for r in recs) == sorted(paths)
            and all(r["exit_code"] == 0 and "signal" not in r for r in recs), len(recs))
    got = asked(log, at, url)
    t.check("%s, then resumed: each file asked for once in the round (%d requests)" % (what, sum(got.values())),
            set(got) == wanted and all(n == 1 for n in got.values()),
            {k: n for k, n in got.items() if n != 1 or k not in wanted} or sorted(wanted - set(got))[:4])
    if sig != signal.SIGTERM:
        line = cleanup_line()
        if t.check("the README says how to remove a killed task's temp files", line, "no find ... -delete line"):
            b.run(line)
    left = temps(b.dir, b.cache)
    t.check("%s, then resumed%s: no temp file anywhere" % (what, ", and the README's cleanup run" if
                                                           sig != signal.SIGTERM else ""), not left, left)


def main():
    conv, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    where = ts.enter_netns()
    for tool, pkg in (("parallel", "parallel"), ("debuginfod", "debuginfod")):
        if not shutil.which(tool):
            t.skip_all("%s is not installed (Debian package %s)" % (tool, pkg))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    t.note("network: " + where)
    rec, why = recipe()
    if not t.check("README.md shows the GNU parallel recipe: run, --resume-failed rerun, report", rec, why):
        t.finish()
    t.note("run:    " + rec["run"])
    man = man_commands()
    t.check("doc/conv.1 shows the same two parallel commands", sorted(man) == sorted([rec["run"], rec["resume"]]),
            man)
    shim = os.path.join(work, "slow_write.so")
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if not cc or subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", shim, os.path.join(REPO, "tests", "tools",
                                 "slow_write.c"), "-ldl"], capture_output=True).returncode:
        t.skip_all("no C compiler to build tests/tools/slow_write.c")
    listing, paths = archive(work)
    srv, url, log = start_server(work)
    if not t.check("debuginfod serves the committed debug files and binaries", srv, url):
        t.finish()
    try:
        env = dict(os.environ, DEBUGINFOD_URLS=url)
        env.pop("DEBUGINFOD_CACHE_PATH", None)
        at = ts.log_size(log)
        r = subprocess.run([conv, "-q", "--cache-dir", os.path.join(work, "ref-cache"), "-o",
                            os.path.join(work, "ref") + "/"] + paths, env=env, capture_output=True, timeout=HANG)
        if not t.check("the reference: one conv over the 80 recordings exits 0", r.returncode == 0,
                       r.stderr.decode(errors="replace")[-400:]):
            t.finish()
        got = asked(log, at, url)
        wanted = set(got)
        t.check("the reference asks for each of its %d files once (%d answered 200)" % (
            len(wanted), sum(1 for b, k, st in ts.debuginfod_requests(log, at, url) if st == "200")),
            wanted and all(n == 1 for n in got.values()), dict(got))
        ref = outputs(os.path.join(work, "ref"), paths)
        plain_round(conv, work, url, log, listing, paths, rec, ref, wanted)
        killed_round(conv, work, url, log, listing, paths, rec, ref, wanted, signal.SIGTERM, shim)
        killed_round(conv, work, url, log, listing, paths, rec, ref, wanted, signal.SIGKILL, shim)
    finally:
        ts.stop_server(srv)
    t.finish()


if __name__ == "__main__":
    main()
