#!/usr/bin/env python3
"""doc/k8s-indexed-job.yaml: an Indexed Job that conv's options and the task's script make work.

  1. The manifest is YAML (python3-yaml) holding one batch/v1 Job with what an
     Indexed Job needs: completionMode Indexed, completions and parallelism
     (positive integers), a pod template whose restartPolicy is Never
     (backoffLimitPerIndex requires it; maxFailedIndexes requires that), one
     container with an image and a script; every volumeMount names a volume;
     the cache volume is mounted read-only at DEBUGINFOD_CACHE_PATH, and a
     debuginfod URL is given (DEBUGINFOD_URLS).
  2. Every option of the script's conv command is one `conv --help` lists,
     and the script selects its shard by JOB_COMPLETION_INDEX.
  3. The script itself, run by sh here for every index 0 .. ceil(N/SHARD)
     and one past the end, with the manifest's own environment but its
     paths (FILES, OUT, CACHE, DEBUGINFOD_CACHE_PATH) moved into this test's
     folder and no server (DEBUGINFOD_URLS empty) over a list of 45
     recordings (the committed x86 fixtures and the bundled sample, one path
     with a space): each index exits 0, the one past the end writes nothing;
     the stats files together hold one record per listed recording, none
     twice, each exit_code 0; every output equals one conv run over the
     whole list byte for byte; the sample's objects come from the read-only
     cache (filled first from a fake debuginfod over samples/debug: cache
     hits, no unresolved frame), which is left unchanged.

usage: test_k8s_manifest.py CONV WORKDIR
Exit 77 when python3-yaml is missing.
"""
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
import testlib as t  # noqa: E402

MANIFEST = os.path.join(REPO, "doc", "k8s-indexed-job.yaml")
N = 45


def help_options(conv):
    txt = subprocess.run([conv, "--help"], capture_output=True, timeout=30).stdout.decode()
    return set(re.findall(r"(?<![\w-])(--?[A-Za-z][\w-]*)", txt))


def conv_command(script):
    """The options of the script's conv command (continuation lines joined)."""
    joined = script.replace("\\\n", " ")
    cmds = [l.strip() for l in joined.splitlines() if re.match(r"\s*(exec\s+)?conv\s", l)]
    if len(cmds) != 1:
        return None
    words = shlex.split(cmds[0])
    words = words[words.index("conv") + 1:]
    return [w.split("=", 1)[0] for w in words if w.startswith("-") and w != "-"]


def snapshot(d):
    return sorted((os.path.relpath(os.path.join(r, f), d), os.path.getsize(os.path.join(r, f)),
                   os.stat(os.path.join(r, f)).st_mtime_ns) for r, _, fs in os.walk(d) for f in fs)


def main():
    conv, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    try:
        import yaml
    except ImportError:
        t.skip_all("python3-yaml is not installed (Debian package python3-yaml)")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    # 1. the Job
    try:
        docs = list(yaml.safe_load_all(open(MANIFEST)))
    except yaml.YAMLError as e:
        t.check("the manifest is YAML", False, e)
        t.finish()
    t.check("the manifest is YAML: one document", len(docs) == 1, len(docs))
    job = docs[0] or {}
    spec = job.get("spec", {})
    pod = spec.get("template", {}).get("spec", {})
    t.check("a batch/v1 Job", job.get("apiVersion") == "batch/v1" and job.get("kind") == "Job"
            and job.get("metadata", {}).get("name"), (job.get("apiVersion"), job.get("kind")))
    t.check("completionMode Indexed, completions and parallelism positive integers",
            spec.get("completionMode") == "Indexed" and all(
                isinstance(spec.get(k), int) and spec[k] > 0 for k in ("completions", "parallelism")),
            {k: spec.get(k) for k in ("completionMode", "completions", "parallelism")})
    t.check("restartPolicy Never (as backoffLimitPerIndex needs; maxFailedIndexes needs that)",
            pod.get("restartPolicy") == "Never" and ("maxFailedIndexes" not in spec or "backoffLimitPerIndex" in spec),
            pod.get("restartPolicy"))
    cs = pod.get("containers", [])
    if not t.check("one container with an image, a command and a script", len(cs) == 1 and cs[0].get("image")
                   and cs[0].get("command") and cs[0].get("args"), cs):
        t.finish()
    c = cs[0]
    env = {e["name"]: str(e["value"]) for e in c.get("env", [])}
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = c.get("volumeMounts", [])
    t.check("every volumeMount names a volume", mounts and all(m["name"] in vols for m in mounts), mounts)
    ro = [m for m in mounts if m.get("mountPath") == env.get("DEBUGINFOD_CACHE_PATH")]
    t.check("the cache volume is mounted read-only at DEBUGINFOD_CACHE_PATH (%s)" % env.get("DEBUGINFOD_CACHE_PATH"),
            len(ro) == 1 and ro[0].get("readOnly") is True, ro)
    t.check("a debuginfod URL is given (DEBUGINFOD_URLS)", env.get("DEBUGINFOD_URLS", "").startswith("http"), env)
    script = c["args"][-1]
    t.check("the script takes its shard by JOB_COMPLETION_INDEX", "JOB_COMPLETION_INDEX" in script)

    # 2. conv's options
    opts = conv_command(script)
    known = help_options(conv)
    if t.check("the script runs conv once", opts is not None, script):
        t.check("every conv option it uses is in conv --help (%s)" % " ".join(opts),
                opts and all(o in known for o in opts), [o for o in opts if o not in known])

    # 3. the script, index by index
    fixtures = sorted(glob.glob(os.path.join(REPO, "tests", "fixtures", "*.data")))
    sample = os.path.join(REPO, "samples", "perf.data")
    arch = os.path.join(work, "archive dir")
    os.makedirs(arch)
    paths = []
    for i in range(N):
        src = sample if i % 3 == 0 else fixtures[i % len(fixtures)]
        name = ("rec %02d.data" if i == 7 else "rec%02d.data") % i  # one name with a space
        os.symlink(src, os.path.join(arch, name))
        paths.append(os.path.join(arch, name))
    files = os.path.join(work, "files.txt")
    with open(files, "w") as f:
        f.write("".join(p + "\n" for p in paths))
    ro_cache = os.path.join(work, "ro-cache")
    # the debuginfod client cache's layout (HEX/debuginfo, HEX/executable), which the fake serves as it is
    served = os.path.join(work, "served")
    for dbg in glob.glob(os.path.join(REPO, "samples", "debug", ".build-id", "*", "*.debug")):
        hexid = os.path.basename(os.path.dirname(dbg)) + os.path.basename(dbg)[:-len(".debug")]
        os.makedirs(os.path.join(served, hexid))
        shutil.copy(dbg, os.path.join(served, hexid, "debuginfo"))
        shutil.copy(dbg[:-len(".debug")], os.path.join(served, hexid, "executable"))
    server, url = t.fake_debuginfod(served, lifetime=120)
    try:
        base_env = {k: v for k, v in os.environ.items() if not k.startswith("DEBUGINFOD_")}
        r = subprocess.run([conv, "-q", "--debuginfod", url, "--cache-dir", ro_cache, "-o",
                            os.path.join(work, "fill") + "/", sample], env=base_env, capture_output=True, timeout=120)
    finally:
        t.stop(server)
    t.check("the read-only cache is filled from a fake debuginfod over samples/debug", r.returncode == 0,
            r.stderr.decode(errors="replace")[-300:])
    before = snapshot(ro_cache)
    bindir = os.path.join(work, "bin")
    os.makedirs(bindir)
    os.symlink(conv, os.path.join(bindir, "conv"))
    moved = {"FILES": files, "OUT": os.path.join(work, "out"), "CACHE": os.path.join(work, "scratch", "conv-cache"),
             "DEBUGINFOD_CACHE_PATH": ro_cache, "DEBUGINFOD_URLS": ""}
    if not t.check("the manifest's environment names FILES, OUT, CACHE, DEBUGINFOD_CACHE_PATH, DEBUGINFOD_URLS",
                   set(moved) <= set(env), sorted(set(moved) - set(env))):
        t.finish()
    shard = int(env["SHARD"])
    last = -(-N // shard)
    runs = {}
    for idx in range(last + 1):
        e = dict(base_env, **env)
        e.update(moved, JOB_COMPLETION_INDEX=str(idx), PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
        p = subprocess.run(c["command"] + c["args"], env=e, capture_output=True, timeout=300)
        runs[idx] = (p.returncode, p.stderr.decode(errors="replace"))
    t.check("the script exits 0 for every index 0..%d and one past the end" % (last - 1),
            all(rc == 0 for rc, _ in runs.values()), {i: r for i, r in runs.items() if r[0]})
    stats = sorted(os.listdir(os.path.join(moved["OUT"], "stats.d")))
    t.check("one stats file per index with recordings, none past the end",
            stats == sorted("%d.json" % i for i in range(last)), stats)
    recs = []
    for s in stats:
        recs += [json.loads(l) for l in open(os.path.join(moved["OUT"], "stats.d", s)).read().splitlines()]
    t.check("the stats files: one record per listed recording (%d), none twice, each exit_code 0" % N,
            sorted(x["input"] for x in recs) == sorted(paths) and all(x["exit_code"] == 0 for x in recs),
            sorted(set(paths) ^ set(x["input"] for x in recs))[:4])
    ref = os.path.join(work, "ref")
    e = dict(base_env, DEBUGINFOD_CACHE_PATH=ro_cache)
    r = subprocess.run([conv, "-q", "--cache-dir", os.path.join(work, "ref-cache"), "-o", ref + "/"] + paths,
                       env=e, capture_output=True, timeout=300)
    t.check("the reference: one conv over the list", r.returncode == 0, r.stderr.decode(errors="replace")[-300:])
    differ = [n for n in sorted(os.listdir(ref))
              if open(os.path.join(ref, n), "rb").read() !=
              (open(os.path.join(moved["OUT"], "profiles", n), "rb").read()
               if os.path.exists(os.path.join(moved["OUT"], "profiles", n)) else None)]
    t.check("every output (%d) equals the single run's byte for byte" % len(os.listdir(ref)),
            len(os.listdir(ref)) == 2 * N and not differ and
            sorted(os.listdir(os.path.join(moved["OUT"], "profiles"))) == sorted(os.listdir(ref)), differ[:4])
    srecs = [x for x in recs if os.path.realpath(x["input"]) == os.path.realpath(sample)]
    t.check("the sample's %d copies: symbols from the read-only cache (hits, no unresolved frame)" % len(srecs),
            srecs and all(x["debuginfod"]["cache_hits"] > 0 and x["frames"]["unresolved"] == 0 for x in srecs),
            [(x["debuginfod"], x["frames"]) for x in srecs[:1]])
    t.check("the read-only cache is unchanged", snapshot(ro_cache) == before)
    t.finish()


if __name__ == "__main__":
    main()
