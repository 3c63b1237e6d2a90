#!/usr/bin/env python3
"""What frames shared across processes would change: bench/shared_frames.py PROFILE.pb.gz

Reads a pprof written by conv and counts its distinct stacks, locations and
the frames its distinct stacks hold, as written (a frame is a process's
mapping and runtime address, so processes mapping the same binary at
different addresses have frames and stacks of their own), and again with
each frame named by its object (build-id, else file name) and file offset,
as they would be if frames were shared across processes. A measurement aid
for issue 22's memory goals (bench/README.md), not a test; it decodes the
protobuf itself so that it needs nothing beyond Python.
"""
import gzip
import sys


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def fields(b, i, end):
    """(field number, wire type, value) of a message; a length-delimited value is its (start, end)."""
    while i < end:
        k, i = varint(b, i)
        f, t = k >> 3, k & 7
        if t == 0:
            v, i = varint(b, i)
            yield f, t, v
        elif t == 2:
            n, i = varint(b, i)
            yield f, t, (i, i + n)
            i += n
        elif t == 1:
            yield f, t, None
            i += 8
        elif t == 5:
            yield f, t, None
            i += 4
        else:
            raise ValueError(f"wire type {t} at {i}")


def packed(b, r):
    i, e = r
    out = []
    while i < e:
        v, i = varint(b, i)
        out.append(v)
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.splitlines()[0])
    b = gzip.open(sys.argv[1]).read()
    samples, maps, locs, strs = [], {}, {}, []
    for f, t, v in fields(b, 0, len(b)):
        if f == 2:  # Sample.location_id
            ids = []
            for f2, t2, v2 in fields(b, *v):
                if f2 == 1:
                    ids += packed(b, v2) if t2 == 2 else [v2]
            samples.append(tuple(ids))
        elif f in (3, 4):  # Mapping, Location: their scalar fields
            m = {f2: v2 for f2, t2, v2 in fields(b, *v) if t2 == 0}
            (maps if f == 3 else locs)[m.get(1)] = m
        elif f == 6:
            strs.append(bytes(b[v[0]:v[1]]))

    def shared(lid):
        loc = locs[lid]
        m = maps.get(loc.get(2, 0))
        if not m:
            return (b"", loc.get(3, 0))
        obj = strs[m.get(6, 0)] or strs[m.get(5, 0)]
        return (obj, loc.get(3, 0) - m.get(2, 0) + m.get(4, 0))

    stacks = set(samples)
    sstacks = {tuple(shared(x) for x in s) for s in stacks}
    print(f"{'':24}{'as written':>12}{'shared':>12}")
    print(f"{'distinct stacks':24}{len(stacks):>12}{len(sstacks):>12}")
    print(f"{'locations':24}{len(locs):>12}{len({shared(x) for x in locs}):>12}")
    print(f"{'frames in those stacks':24}{sum(map(len, stacks)):>12}{sum(map(len, sstacks)):>12}")


if __name__ == "__main__":
    main()
