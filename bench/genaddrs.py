#!/usr/bin/env python3
"""Address lists for symbench.sh (deterministic for a given ELF and seed).

    genaddrs.py ELF OUTDIR [--seed S] [--n 10000] [--hot-total 100000]
                [--hot-set 2000] [--hot-frac 0.8]

Reads the FUNC symbols with a size from `readelf -sW ELF` (.symtab and
.dynsym, merged), and writes:

  OUTDIR/uniform.txt  N distinct addresses, uniform over the bytes covered by
                      functions (so large functions get more samples, as in a
                      sampling profile)
  OUTDIR/hot.txt      HOT_TOTAL addresses: HOT_FRAC of them drawn from a
                      HOT_SET-address subset of uniform.txt, the rest fresh
                      uniform draws (repeats allowed), shuffled

    genaddrs.py --dwarf-versions ELF

prints how many units of .debug_info have each DWARF version.
"""
import argparse
import bisect
import os
import random
import struct
import subprocess
import sys


def dwarf_versions(elf):
    """{version: units} from the .debug_info unit headers; None if unreadable."""
    with open(elf, "rb") as fp:
        data = fp.read()
    if data[:4] != b"\x7fELF" or data[5] != 1:
        return None
    is64 = data[4] == 2
    if is64:
        shoff, = struct.unpack_from("<Q", data, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    else:
        shoff, = struct.unpack_from("<I", data, 0x20)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x2e)

    def shdr(i):
        o = shoff + i * shentsize
        if is64:
            name, _typ, flags, _addr, off, size = struct.unpack_from("<IIQQQQ", data, o)
        else:
            name, _typ, flags, _addr, off, size = struct.unpack_from("<IIIIII", data, o)
        return name, flags, off, size

    _, _, stroff, _ = shdr(shstrndx)
    for i in range(shnum):
        name, flags, off, size = shdr(i)
        end = data.index(b"\0", stroff + name)
        if data[stroff + name:end] != b".debug_info":
            continue
        if flags & 0x800:  # SHF_COMPRESSED
            return None
        vers = {}
        pos, stop = off, off + size
        while pos + 6 <= stop:
            length, = struct.unpack_from("<I", data, pos)
            hdr = 4
            if length == 0xffffffff:
                length, = struct.unpack_from("<Q", data, pos + 4)
                hdr = 12
            version, = struct.unpack_from("<H", data, pos + hdr)
            vers[version] = vers.get(version, 0) + 1
            pos += hdr + length
        return vers
    return {}


def func_intervals(elf):
    out = subprocess.run(["readelf", "-sW", elf], check=True, capture_output=True,
                         text=True).stdout
    spans = set()
    for line in out.splitlines():
        parts = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(parts) < 8 or not parts[0].endswith(":") or parts[3] != "FUNC":
            continue
        if parts[6] == "UND":
            continue
        try:
            value = int(parts[1], 16)
            size = int(parts[2], 0) if not parts[2].startswith("0x") else int(parts[2], 16)
        except ValueError:
            continue
        if value and size > 0:
            spans.add((value, value + size))
    # merge overlapping spans (aliases) so every byte counts once
    merged = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return merged


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--dwarf-versions":
        v = dwarf_versions(sys.argv[2])
        if v is None:
            print("unknown (compressed or unusual .debug_info)")
        elif not v:
            print("none (no .debug_info)")
        else:
            print(", ".join("DWARF %d: %d units" % (k, v[k]) for k in sorted(v)))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("elf")
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--hot-total", type=int, default=100000)
    ap.add_argument("--hot-set", type=int, default=2000)
    ap.add_argument("--hot-frac", type=float, default=0.8)
    a = ap.parse_args()

    ivals = func_intervals(a.elf)
    if not ivals:
        sys.exit("genaddrs: no sized FUNC symbols in %s" % a.elf)
    cum = []
    total = 0
    for lo, hi in ivals:
        total += hi - lo
        cum.append(total)
    if total < a.n:
        sys.exit("genaddrs: only %d function bytes, fewer than %d addresses" % (total, a.n))
    rng = random.Random(a.seed)

    def draw():
        k = rng.randrange(total)
        i = bisect.bisect_right(cum, k)
        before = cum[i - 1] if i else 0
        return ivals[i][0] + (k - before)

    uniform = []
    seen = set()
    while len(uniform) < a.n:
        x = draw()
        if x not in seen:
            seen.add(x)
            uniform.append(x)
    hotset = uniform[: a.hot_set]
    n_hot = int(round(a.hot_total * a.hot_frac))
    hot = [rng.choice(hotset) for _ in range(n_hot)]
    hot += [draw() for _ in range(a.hot_total - n_hot)]
    rng.shuffle(hot)

    os.makedirs(a.outdir, exist_ok=True)
    for name, lst in (("uniform.txt", uniform), ("hot.txt", hot)):
        with open(os.path.join(a.outdir, name), "w") as fp:
            fp.write("".join("0x%x\n" % x for x in lst))
    print("genaddrs: %d function spans, %d bytes; uniform %d distinct; hot %d (%d distinct)"
          % (len(ivals), total, len(uniform), len(hot), len(set(hot))))


if __name__ == "__main__":
    main()
