#!/usr/bin/env python3
"""A stand-in for `conv info --json --top N ...`, built from perf, to test the
harness itself (test_symbolize.py --selftest) while conv's symbolizer is being
written. It is NOT a reference for conv: it only speaks the same interface.

  selftest_conv.py info --json --top N [--debug-dir DIR] [--debuginfod URL]
                   [--offline] [--cache-dir DIR] FILE

Downloads /buildid/ID/debuginfo for every build-id of FILE from URL into
DIR/ID/debuginfo (a miss is remembered as DIR/ID/missing), unless --offline or
already cached; then fills a private perf build-id cache from those files
(and from --debug-dir/.build-id/XX/REST.debug) and prints perf report's flat self samples as
{"top_functions": [{"name", "samples", "inlined"}]}.
"""
import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
import perf_reference as pr  # noqa: E402


def main():
    if len(sys.argv) < 2 or sys.argv[1] != "info":
        print("usage: selftest_conv.py info --json --top N ... FILE", file=sys.stderr)
        return 1
    ap = argparse.ArgumentParser(prog="selftest_conv.py info")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--top", type=int, required=True)
    ap.add_argument("--debug-dir")
    ap.add_argument("--debuginfod")
    ap.add_argument("--offline", action="store_true")
    ap.add_argument("--cache-dir")
    ap.add_argument("file")
    a = ap.parse_args(sys.argv[2:])
    data = os.path.abspath(a.file)
    tmp = tempfile.mkdtemp(prefix="selftest-conv-")
    try:
        env = pr.perf_env(tmp)
        ids = []
        for line in pr.run(["perf", "buildid-list", "-i", data], env=env).splitlines():
            f = line.split(None, 1)
            if len(f) == 2 and not f[1].startswith("["):
                ids.append(f[0])
        found = []
        if a.cache_dir:
            os.makedirs(a.cache_dir, exist_ok=True)
            for bid in ids:
                d = os.path.join(a.cache_dir, bid)
                path = os.path.join(d, "debuginfo")
                if os.path.exists(path):
                    found.append(path)
                    continue
                if a.offline or not a.debuginfod or os.path.exists(os.path.join(d, "missing")):
                    continue
                os.makedirs(d, exist_ok=True)
                try:
                    with urllib.request.urlopen("%s/buildid/%s/debuginfo" % (a.debuginfod, bid),
                                                timeout=10) as r:
                        body = r.read()
                    with open(path + ".tmp", "wb") as f:
                        f.write(body)
                    os.rename(path + ".tmp", path)
                    found.append(path)
                except urllib.error.HTTPError:
                    open(os.path.join(d, "missing"), "w").close()
        if a.debug_dir:
            for bid in ids:
                path = os.path.join(a.debug_dir, ".build-id", bid[:2], bid[2:] + ".debug")
                if os.path.exists(path):
                    found.append(path)
        for path in found:
            pr.run(["perf", "buildid-cache", "-a", path], env=env, check=False)
        rows = pr.report(data, env, tmp, [])
        by_name = collections.Counter()
        for dso, level, name, n, period in rows:
            by_name["[unknown]" if pr.HEX.match(name) else name] += n
        # inline frames at the leaf addresses, from the debug files found
        debug_of = {}
        for path in found:
            out = pr.run(["readelf", "-n", path], check=False)
            for l in out.splitlines():
                if "Build ID:" in l:
                    debug_of[l.split("Build ID:")[1].strip()] = path
        dso_id = {}
        for line in pr.run(["perf", "buildid-list", "-i", data], env=env).splitlines():
            f = line.split(None, 1)
            if len(f) == 2:
                dso_id[f[1]] = f[0]
        inl = collections.defaultdict(set)
        per = collections.defaultdict(list)
        for (dso, sym, off), n in pr.leaves(data, env, tmp, []).items():
            dbg = debug_of.get(dso_id.get(dso, ""))
            if dbg and sym != "[unknown]":
                per[dbg].append((sym, off))
        for dbg, keys in per.items():
            vals = pr.symbol_values(dbg)
            addrs = {k: vals[k[0]][0][0] + k[1] for k in keys if vals.get(k[0])}
            fr = pr.addr2line(dbg, sorted(set(addrs.values())))
            for k, addr in addrs.items():
                frames = fr.get(addr, [])
                for f in frames[:-1]:
                    inl[frames[-1]].add(f)
        top = sorted(by_name.items(), key=lambda kv: (-kv[1], kv[0]))[:a.top]
        json.dump({"top_functions": [{"name": n, "samples": s, "inlined": sorted(inl.get(n, ()))}
                                     for n, s in top]}, sys.stdout, indent=1)
        print()
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
