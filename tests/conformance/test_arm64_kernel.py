#!/usr/bin/env python3
"""arm64 recordings: kernel and vDSO frames named as perf names them in the guest (issue 34).

For every X.data in the arm64 fixture folder (tests/fixtures/arm64, or
CONV_A64_DIR) that has perf's own view beside it (truth/X.script.txt, `perf
script -F comm,pid,tid,time,ip,sym,dso,symoff` run in the recording guest),
conv converts it with the guest's kallsyms (kallsyms or kallsyms.xz there),
its binaries (bin/, a sysroot) and debug files (debug/, perf's cache layout
with the vDSO under [vdso]/BUILDID/vdso). Then:

  * per sample, the kernel part of the chain (frames in [kernel.kallsyms] or a
    module: perf 6.1 without the .ko files shows ext4_lookup in
    [kernel.kallsyms], conv in ext4.ko by kallsyms' [ext4]) is the same list of (address, function) as perf's: the same
    multiset of (tid, frames) over the whole file. conv gives a caller frame
    at its return address - 1 (the call), perf at the return address: perf's
    caller addresses are compared - 1, and where a return address is a
    symbol's first byte (a noreturn call was the caller's last instruction:
    rest_init -> arch_call_rest_init, do_group_exit from
    __arm64_sys_exit_group) perf names the next function and conv the caller;
    those perf frames are renamed from kallsyms at address - 1, and counted.
  * every vDSO frame conv names has the name perf gives that vDSO offset, and
    conv names at least one (the vDSO found by its build-id in debug/).

usage: test_arm64_kernel.py CONV WORKDIR. Exit 77 when the folder has no
kallsyms or no recording with a truth file.
"""
import bisect
import collections
import lzma
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
sys.dont_write_bytecode = True
import pprofdec  # noqa: E402
import testlib as t  # noqa: E402

DIR = os.environ.get("CONV_A64_DIR", os.path.join(REPO, "tests", "fixtures", "arm64"))
HEAD = re.compile(r"^\S.*?\s+(-?\d+)/(-?\d+)\s+[\d.]+:\s*$")
FRAME = re.compile(r"^\s+([0-9a-f]+) (.*) \((.*)\)$")
KERNEL_HALF = 1 << 63


def kernel_dso(dso):
    return dso == "[kernel.kallsyms]" or (dso.startswith("[") and dso not in ("[unknown]", "[vdso]"))


class Kallsyms:
    """Text symbols by address, mapping symbols left out, as perf loads them."""

    def __init__(self, text):
        syms = []
        for line in text.splitlines():
            p = line.split()
            if len(p) >= 3 and p[1] in "tTwW" and not p[2].startswith("$"):
                syms.append((int(p[0], 16), p[2]))
        syms.sort(key=lambda s: s[0])
        self.addr = [a for a, _ in syms]
        self.name = [n for _, n in syms]

    def at(self, addr):
        i = bisect.bisect_right(self.addr, addr) - 1
        return self.name[i] if i >= 0 else None


def perf_view(path, ks):
    """(Counter of (tid, ((addr, name), ...)) kernel parts, {vdso offset: name}, frames renamed)."""
    kern = collections.Counter()
    vdso = {}
    renamed = 0
    cur = None

    def flush():
        if cur is not None:
            kern[(cur[0], tuple(cur[1]))] += 1

    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        m = HEAD.match(line)
        if m:
            flush()
            cur = (int(m.group(2)), [], [0])
            continue
        m = FRAME.match(line)
        if not m or cur is None:
            continue
        addr, sym, dso = int(m.group(1), 16), m.group(2), m.group(3)
        caller = cur[2][0] > 0
        cur[2][0] += 1
        name = re.sub(r"\+0x[0-9a-f]+$", "", sym)
        if dso == "[vdso]" and name != "[unknown]":
            vdso[addr - 1 if caller else addr] = name
        if not kernel_dso(dso):
            continue
        if caller:
            addr -= 1
            if sym.endswith("+0x0"):
                name = ks.at(addr)
                renamed += 1
        cur[1].append((addr, name))
    flush()
    return kern, vdso, renamed


def conv_view(pb):
    d = pprofdec.read(pb)
    events = [i for i, (ty, _) in enumerate(d["types"]) if ty.endswith("_samples")]
    kern = collections.Counter()
    vdso = collections.Counter()
    for locs, vals, labels in d["samples"]:
        n = sum(vals[i] for i in events)
        frames = []
        for lid in locs:
            mid, addr, lines = d["locs"][lid]
            m = d["maps"].get(mid) if mid else None
            names = [d["funcs"][f][0] for f, _ in lines]
            if m and m["file"] == "[vdso]":
                vdso[(addr - m["start"] + m["offset"], names[-1] if names else None)] += n
            if m and addr >= KERNEL_HALF:  # the kernel or a module (ext4.ko); truncation frames have no mapping
                frames.append((addr, names[-1] if names else None))
        kern[(labels.get("tid"), tuple(frames))] += n
    return kern, vdso


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    conv, work = sys.argv[1], sys.argv[2]
    ks_path = None
    for name in ("kallsyms", "kallsyms.xz"):
        if os.path.exists(os.path.join(DIR, name)):
            ks_path = os.path.join(DIR, name)
            break
    if not ks_path:
        t.skip_all("no kallsyms in %s (the guest's /proc/kallsyms is what names its kernel)" % DIR)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    raw = open(ks_path, "rb").read()
    text = (lzma.decompress(raw) if ks_path.endswith(".xz") else raw).decode("utf-8", "replace")
    ks_file = os.path.join(work, "kallsyms")
    with open(ks_file, "w") as f:
        f.write(text)
    ks = Kallsyms(text)
    cases = sorted(n[:-5] for n in os.listdir(DIR)
                   if n.endswith(".data") and os.path.exists(os.path.join(DIR, "truth", n[:-5] + ".script.txt")))
    if not cases:
        t.skip_all("no X.data with truth/X.script.txt in %s" % DIR)
    vdso_named = 0
    for case in cases:
        argv = [conv, "-q", "--offline", "-k", ks_file, "-F", "pprof", "-o", os.path.join(work, case)]
        for sub in ("debug", "bin"):
            if os.path.isdir(os.path.join(DIR, sub)):
                argv += ["-d", os.path.join(DIR, sub)]
        p = t.sh(argv + [os.path.join(DIR, case + ".data")], timeout=300)
        if not t.check(case + ": conv converts it", p.returncode == 0, t.text(p.stderr)[-400:]):
            continue
        want, want_vdso, renamed = perf_view(os.path.join(DIR, "truth", case + ".script.txt"), ks)
        got, got_vdso = conv_view(os.path.join(work, case + ".pb.gz"))
        with_k = sum(c for k, c in want.items() if k[1])
        same = sum(c for k, c in (want & got).items() if k[1])
        diff = sorted(((k, want[k], got[k]) for k in set(want) | set(got) if k[1] and want[k] != got[k]),
                      key=lambda x: -abs(x[1] - x[2]))
        t.check("%s: %d of %d samples' kernel frames (address, name) as perf's (%d perf frames at a "
                "symbol's first byte named at address - 1)" % (case, same, with_k, renamed),
                same == with_k and sum(c for k, c in got.items() if k[1]) == with_k,
                "first differences (tid, frames, perf, conv): %s"
                % [(k[0], ["%x %s" % f for f in k[1]], w, g) for k, w, g in diff[:2]])
        bad = [(hex(off), name, want_vdso[off]) for (off, name), _ in got_vdso.items()
               if name and off in want_vdso and want_vdso[off] != name]
        vdso_named += sum(c for (off, name), c in got_vdso.items() if name)
        t.check("%s: vDSO frames named as perf names them (%d named)"
                % (case, sum(c for (_, name), c in got_vdso.items() if name)), not bad, bad[:5])
    t.check("conv names vDSO frames (found by build-id in debug/)", vdso_named > 0, "none named")
    t.finish()


main()
