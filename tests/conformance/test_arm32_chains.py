#!/usr/bin/env python3
"""32-bit ARM recordings: conv's per-sample chains equal perf script's (issue 34).

The shared corpus's quipper/perf.data.armv7-3.4 (perf 3.4 on an armv7l
Chromebook, six hardware events, -a, no call graph: sample_type
IP|TID|TIME|ID|CPU|PERIOD) is read by this machine's perf and by conv. For
every sample perf script prints its thread, event and chain
(`-F tid,event,ip`: the IP, or the recorded callchain without its
PERF_CONTEXT markers, which 32-bit ARM writes as u64 like every arch), and
the pprof conv writes must hold the same multiset of (tid, event, addresses
leaf first): the same addresses, the same number of frames per sample, the
same count of samples. (This file's chains are one frame each; a file with
recorded callchains would need conv's caller frames, written at the return
address - 1, put back before comparing.) The file's kernel is not this machine's, so frames
stay addresses on both sides; what is compared is the reading of the
records, not names.

conv info must name the recording's architecture (armv7l) as the header
says.

usage: test_arm32_chains.py CONV WORKDIR. Exit 77 without ../shared/corpus
(CONV_CORPUS) or without perf.
"""
import collections
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
sys.dont_write_bytecode = True
import perfrun  # noqa: E402
import pprofdec  # noqa: E402
import testlib as t  # noqa: E402

CORPUS = os.environ.get("CONV_CORPUS", os.path.join(os.path.dirname(REPO), "shared", "corpus"))
FILES = ["quipper/perf.data.armv7-3.4"]
HEAD = re.compile(r"^\s*(-?\d+)\s+(\S+):\s*([0-9a-f]+)?\s*$")
ENTRY = re.compile(r"^\s+([0-9a-f]+)\s*$")


def perf_chains(path):
    """Counter of (tid, event, (addr, ...)) from perf script; None and why when perf fails."""
    res = perfrun.run(["script", "-F", "tid,event,ip"], path, 300)
    why = perfrun.failure(res, 300)
    if why:
        return None, why
    out = collections.Counter()
    cur = None
    for line in res["out"].splitlines():
        m = HEAD.match(line)
        if m:
            if cur:
                out[(cur[0], cur[1], tuple(cur[2]))] += 1
            cur = (int(m.group(1)), m.group(2), [int(m.group(3), 16)] if m.group(3) else [])
            continue
        m = ENTRY.match(line)
        if m and cur:
            cur[2].append(int(m.group(1), 16))
        elif line.strip():
            return None, "perf script line not understood: %r" % line
    if cur:
        out[(cur[0], cur[1], tuple(cur[2]))] += 1
    return out, None


def conv_chains(pb):
    """The same Counter from conv's pprof: one sample count per *_samples value."""
    d = pprofdec.read(pb)
    events = [(i, ty[:-len("_samples")]) for i, (ty, _) in enumerate(d["types"]) if ty.endswith("_samples")]
    out = collections.Counter()
    for locs, vals, labels in d["samples"]:
        addrs = tuple(d["locs"][l][1] for l in locs)
        for i, ev in events:
            if vals[i]:
                out[(labels.get("tid"), ev, addrs)] += vals[i]
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    conv, work = sys.argv[1], sys.argv[2]
    if not os.path.isdir(CORPUS):
        t.skip_all("no shared corpus at %s" % CORPUS)
    if not perfrun.perf_available():
        t.skip_all("no perf")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    for rel in FILES:
        path = os.path.join(CORPUS, rel)
        if not os.path.exists(path):
            t.skip(rel, "not in the corpus")
            continue
        info = t.run_json([conv, "info", "--json", path], 60)
        arch = (info["json"] or {}).get("arch")
        t.check(rel + ": conv info names the arch", arch == "armv7l", "arch %r (rc %s)" % (arch, info["rc"]))
        want, why = perf_chains(path)
        if want is None:
            t.skip(rel, "perf: %s" % why)
            continue
        base = os.path.join(work, os.path.basename(rel))
        p = t.sh([conv, "-q", "--offline", "-F", "pprof", "-o", base, path], timeout=300)
        if not t.check(rel + ": conv converts it", p.returncode == 0, t.text(p.stderr)[-400:]):
            continue
        got = conv_chains(base + ".pb.gz")
        n_want, n_got = sum(want.values()), sum(got.values())
        t.check(rel + ": %d samples in both" % n_want, n_want == n_got, "perf %d, conv %d" % (n_want, n_got))
        depth_w = collections.Counter()
        depth_g = collections.Counter()
        for k, c in want.items():
            depth_w[len(k[2])] += c
        for k, c in got.items():
            depth_g[len(k[2])] += c
        t.check(rel + ": frames per sample %s" % dict(sorted(depth_w.items())), depth_w == depth_g,
                "perf %s, conv %s" % (dict(depth_w), dict(depth_g)))
        same = sum((want & got).values())
        diff = [(k, want[k], got[k]) for k in set(want) | set(got) if want[k] != got[k]]
        diff.sort(key=lambda x: -abs(x[1] - x[2]))
        t.check(rel + ": %d of %d samples with perf's (tid, event, chain)" % (same, n_want), same == n_want,
                "first differences (key, perf, conv): %s" % [(k[0], k[1], [hex(a) for a in k[2]], w, g)
                                                             for k, w, g in diff[:5]])
    t.finish()


main()
