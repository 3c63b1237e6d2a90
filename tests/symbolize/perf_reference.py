#!/usr/bin/env python3
"""perf's own view of OUTDIR/NAME.data with the split debug info installed.

The recorded binaries (OUTDIR/bin) are stripped; their debug info is in
OUTDIR/debug/NAME.debug. perf 6.1 finds it by build-id when it sits in a
build-id cache, so this makes a private one: HOME=OUTDIR/perf-home and
`perf buildid-cache -a OUTDIR/debug/X.debug` for every .debug file (perf keys
the copy by the build-id note the .debug file carries, the same as the
stripped binary's). perf then loads .symtab from the cached .debug file and
the program headers from the stripped binary at the recorded path. Nothing
outside OUTDIR is read or written for our binaries; system libraries (libc,
ld.so) are named from their own files as usual.

  top      `perf report --stdio -n --sort dso,sym --no-children -g none`: flat
           self samples per symbol, summed per name over DSOs, sorted by
           samples (desc) then name. Unresolved addresses (perf prints a hex
           address) are listed apart under "unresolved".
  inline   perf 6.1 adds inline frames only to DWARF-unwound call chains
           (--call-graph dwarf), never to frame-pointer ones (-g), so
           `perf script --inline` shows none here. Instead every sample's leaf
           (perf's symbol + offset, from `perf script -F ip,sym,symoff,dso`)
           becomes an address in the .debug file (st_value + offset), and
           `addr2line -f -i -C` on that file lists the inline frames there:
           {"function": {"inline frame": samples}}. Its outermost frame must
           be perf's symbol ("inline_mismatch" lists any that are not).
  artifacts  samples perf names after a symbol that does not cover them:
           their address is in no sized symbol (addr2line says ??), and perf
           stretched the size-less symbol before it: the PLT header after
           .init becomes "_init+0x26" (non-PIE, lazy binding). Nothing a
           symbolizer can be held to; test_symbolize.py ignores these names.

--method symfs instead puts the UNSTRIPPED binaries at the recorded paths under
OUTDIR/symfs and runs perf with --symfs: the ground truth the build-id cache
method is checked against (system libraries are then unresolved).

usage: perf_reference.py [--method buildid-cache|symfs] OUTDIR NAME
prints one JSON object.
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import vdso  # noqa: E402

SEP = "\x1f"


def run(cmd, env=None, cwd=None, check=True):
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, cwd=cwd, timeout=600)  # against hangs only
    if check and p.returncode:
        raise SystemExit("perf_reference: %s failed (%d): %s" % (
            " ".join(cmd), p.returncode, p.stderr.decode(errors="replace")[-2000:]))
    return p.stdout.decode(errors="replace")


def perf_env(home):
    env = dict(os.environ)
    env["HOME"] = home
    env.pop("DEBUGINFOD_URLS", None)
    env["PERF_PAGER"] = "cat"
    return env


def buildids(out):
    ids = {}
    with open(os.path.join(out, "buildids")) as f:
        for line in f:
            name, bid = line.split()
            ids[name] = bid
    return ids


def setup_buildid_cache(out):
    """OUTDIR/perf-home/.debug holds every .debug file, keyed by build-id."""
    home = os.path.join(out, "perf-home")
    stamp = os.path.join(home, "populated")
    ids = buildids(out)
    want = "\n".join("%s %s" % kv for kv in sorted(ids.items()))
    if os.path.exists(stamp) and open(stamp).read() == want:
        return home
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    env = perf_env(home)
    for name in sorted(ids):
        run(["perf", "buildid-cache", "-a", os.path.join(out, "debug", name + ".debug")], env=env)
    # (`perf buildid-cache -l` leaves out ids shorter than 20 bytes, like lld's
    # 8-byte default, though perf report uses them: look at the link itself.)
    for name, bid in ids.items():
        link = os.path.join(home, ".debug", ".build-id", bid[:2], bid[2:])
        if not os.path.exists(link):
            raise SystemExit("perf_reference: %s (%s) is not in the build-id cache: no %s" % (name, bid, link))
    with open(stamp, "w") as f:
        f.write(want)
    return home


def setup_symfs(out):
    """OUTDIR/symfs/<recorded path of bin/X> = the unstripped X."""
    root = os.path.join(out, "symfs")
    shutil.rmtree(root, ignore_errors=True)
    dst = os.path.join(root, os.path.join(out, "bin").lstrip("/"))
    os.makedirs(dst)
    for name in buildids(out):
        shutil.copy2(os.path.join(out, "unstripped", name), os.path.join(dst, name))
    home = os.path.join(out, "perf-home-empty")
    shutil.rmtree(home, ignore_errors=True)
    os.makedirs(home)
    return home, root


HEX = re.compile(r"^0x[0-9a-f]+$")


def report(data, env, cwd, extra):
    """[(dso, level, name, samples, period)] from perf report --sort dso,sym."""
    txt = run(["perf", "report", "-i", data, "--stdio", "--no-children", "-g", "none", "-t", SEP,
               "-F", "overhead,sample,period,dso,sym"] + extra, env=env, cwd=cwd)
    rows = []
    for line in txt.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        f = [x.strip() for x in line.split(SEP)]
        if len(f) < 5:
            continue
        m = re.match(r"^\[(.)\]\s+(.*)$", f[4])
        if not m:
            continue
        rows.append((f[3], m.group(1), m.group(2).strip(), int(f[1]), int(f[2])))
    return rows


def leaves(data, env, cwd, extra):
    """Counter of (dso path, raw symbol, offset) of every sample's leaf."""
    txt = run(["perf", "script", "-i", data, "--no-demangle", "-G", "-F", "ip,sym,symoff,dso"] + extra,
              env=env, cwd=cwd)
    c = collections.Counter()
    pat = re.compile(r"^\s*[0-9a-f]+\s+(.*?)(?:\+0x([0-9a-f]+))?\s+\((.*)\)\s*$")
    for line in txt.splitlines():
        m = pat.match(line)
        if m:
            c[(m.group(3), m.group(1), int(m.group(2) or "0", 16))] += 1
    return c


def symbol_values(debug):
    vals = collections.defaultdict(list)
    for line in run(["nm", "-S", "--defined-only", debug]).splitlines():
        f = line.split()
        if len(f) == 4:
            vals[f[3]].append((int(f[0], 16), int(f[1], 16)))
        elif len(f) == 3:
            vals[f[2]].append((int(f[0], 16), 0))
    return vals


def addr2line(debug, addrs):
    """{addr: [function, ... outermost]} from addr2line -a -f -i -C."""
    if not addrs:
        return {}
    txt = run(["addr2line", "-a", "-f", "-i", "-C", "-e", debug] + ["0x%x" % a for a in addrs])
    res, cur = {}, None
    lines = txt.splitlines()
    i = 0
    while i < len(lines):
        l = lines[i]
        if re.match(r"^0x[0-9a-f]+$", l):
            cur = int(l, 16)
            res[cur] = []
            i += 1
            continue
        # function line, then file:line
        res[cur].append(l)
        i += 2
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--method", choices=["buildid-cache", "symfs"], default="buildid-cache")
    ap.add_argument("outdir")
    ap.add_argument("name")
    a = ap.parse_args()
    out = os.path.abspath(a.outdir)
    data = os.path.join(out, a.name + ".data")
    if a.method == "buildid-cache":
        home = setup_buildid_cache(out)
        extra = []
        method = ("HOME=%s perf report (private build-id cache filled by perf buildid-cache -a "
                  "OUTDIR/debug/*.debug)" % home)
    else:
        home, symfs = setup_symfs(out)
        extra = ["--symfs", symfs]
        method = "perf report --symfs %s (unstripped binaries at the recorded paths)" % symfs
    env = perf_env(home)
    # The recording is made with -N (no build-id cache), so perf would leave [vdso]
    # unnamed where perf record alone keeps its image; conv takes this kernel's vDSO
    # when the build-ids match, so perf gets it too, in its cache (per recording).
    vdso.install_for_recording(data, os.path.join(home, ".debug"), env=env)
    rows = report(data, env, out, extra)

    by_name = collections.defaultdict(lambda: {"samples": 0, "period": 0, "dsos": set(),
                                               "kernel": False})
    unresolved = []
    total = 0
    for dso, level, name, n, period in rows:
        total += n
        if HEX.match(name):
            unresolved.append({"dso": dso, "addr": name, "samples": n})
            continue
        e = by_name[name]
        e["samples"] += n
        e["period"] += period
        e["dsos"].add(dso)
        e["kernel"] = e["kernel"] or level == "k"
    top = [{"name": k, "samples": v["samples"], "period": v["period"], "dsos": sorted(v["dsos"]),
            "kernel": v["kernel"]} for k, v in by_name.items()]
    top.sort(key=lambda e: (-e["samples"], e["name"]))

    # Inline frames at the leaf addresses, for the binaries built here.
    bindir = os.path.join(out, "bin") + "/"
    ids = buildids(out)
    leaf = leaves(data, env, out, extra)
    per_dso = collections.defaultdict(collections.Counter)
    for (dso, sym, off), n in leaf.items():
        if dso.startswith(bindir) and os.path.basename(dso) in ids and sym != "[unknown]":
            per_dso[os.path.basename(dso)][(sym, off)] += n
    inline = collections.defaultdict(collections.Counter)
    mismatch = []
    leaf_funcs = collections.Counter()
    artifacts = collections.Counter()
    for name, c in sorted(per_dso.items()):
        debug = os.path.join(out, "debug", name + ".debug")
        vals = symbol_values(debug)
        addr_of = {}
        for (sym, off) in c:
            cand = vals.get(sym, [])
            fit = [v for v, size in cand if size == 0 or off < size] or [v for v, _ in cand]
            if fit:
                addr_of[(sym, off)] = fit[0] + off
        frames = addr2line(debug, sorted(set(addr_of.values())))
        for key, n in c.items():
            if key not in addr_of:
                continue
            fr = frames.get(addr_of[key], [])
            if not fr:
                continue
            outer = fr[-1]
            if outer == "??":
                # No sized symbol covers the address: perf stretched the
                # size-less symbol before it (e.g. _init over the PLT header
                # that follows .init). Its name there is perf's invention.
                artifacts[key[0]] += n
                continue
            leaf_funcs[outer] += n
            for f in fr[:-1]:
                inline[outer][f] += n
    # The outermost frame names the function perf named (both demangled).
    for name, n in leaf_funcs.items():
        if name not in by_name or by_name[name]["samples"] != n:
            mismatch.append({"addr2line": name, "samples": n,
                             "perf": by_name[name]["samples"] if name in by_name else None})

    perf_version = run(["perf", "--version"]).strip()
    json.dump({
        "file": data,
        "name": a.name,
        "method": method,
        "perf": perf_version,
        "total_samples": total,
        "top": top,
        "unresolved": unresolved,
        "inline": {k: dict(sorted(v.items(), key=lambda kv: (-kv[1], kv[0]))) for k, v in sorted(inline.items())},
        "inline_mismatch": mismatch,
        "artifacts": [{"name": k, "samples": v} for k, v in sorted(artifacts.items())],
    }, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
