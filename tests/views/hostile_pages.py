#!/usr/bin/env python3
"""Recordings made to overload a flame-graph page: perf.data files written here
from nothing (the layout of tests/unit/pdbuild.c: file mode, one cpu-clock
attr, COMM, one MMAP and SAMPLE records with user call chains).

    deep(path)   300 samples, each a stack of 8183 frames under a context
                 marker (a record of 65 520 bytes: 8184 call-chain entries, about
                 the most a SAMPLE's 16-bit size holds); frames 0..6512 are one
                 function calling itself, then each stack goes its own way: a
                 call tree of 507 513 nodes from 1 701 distinct addresses
    wide(path)   200 000 samples, main <- work <- leaf_i for 200 000
                 distinct leaves, one sample each

The frames are addresses in /nonexistent/hostile.so (no such file: conv names
each "hostile.so+0xOFFSET", a distinct function per address), so nothing is
looked up. Python standard library only.

usage (by hand): hostile_pages.py deep FILE [STACKS FRAMES SHARED POOL] | wide FILE
"""
import struct
import sys

PID = 4242
MAP_START = 0x400000
MAP_LEN = 0x4000000            # 64 MiB of addresses, 16 bytes apart
PERF_CONTEXT_USER = (1 << 64) - 512
SAMPLE_TYPE = 0x1 | 0x2 | 0x4 | 0x100 | 0x20   # IP, TID, TIME, PERIOD, CALLCHAIN
MISC_USER = 2


def _attr():
    """perf_event_attr (128 bytes, PERF_ATTR_SIZE_VER7): software cpu-clock, period 1."""
    a = struct.pack("<IIQQQQQ", 1, 128, 0, 1, SAMPLE_TYPE, 0, 0)
    return a + b"\0" * (128 - len(a))


def _rec(rtype, body, misc=MISC_USER):
    return struct.pack("<IHH", rtype, misc, 8 + len(body)) + body


def _str8(s):
    b = s.encode() + b"\0"
    return b + b"\0" * (-len(b) % 8)


def _sample(time, frames):
    """A SAMPLE of period 1 whose call chain is frames (leaf first) under PERF_CONTEXT_USER."""
    chain = [PERF_CONTEXT_USER] + frames
    body = struct.pack("<QIIQQQ", frames[0], PID, PID, time, 1, len(chain))
    return _rec(9, body + struct.pack("<%dQ" % len(chain), *chain))


def _write(path, samples):
    data = bytearray()
    data += _rec(3, struct.pack("<II", PID, PID) + _str8("hostile"))
    data += _rec(1, struct.pack("<IIQQQ", PID, PID, MAP_START, MAP_LEN, 0) + _str8("/nonexistent/hostile.so"))
    for s in samples:
        data += s
    head = 104
    attrs_off = head
    attr = _attr() + struct.pack("<QQ", 0, 0)       # no ids: one event
    data_off = attrs_off + len(attr)
    hdr = b"PERFILE2" + struct.pack("<QQ", 104, len(attr))
    hdr += struct.pack("<QQQQQQ", attrs_off, len(attr), data_off, len(data), 0, 0)
    hdr += b"\0" * 32                                 # no features
    with open(path, "wb") as f:
        f.write(hdr + attr + data)


def addr(n):
    return MAP_START + 16 * (n + 1)   # a caller's address - 1 stays in the mapping


DEEP_STACKS, DEEP_FRAMES, DEEP_SHARED, DEEP_POOL = 300, 8183, 6513, 1700


def deep(path, stacks=DEEP_STACKS, frames=DEEP_FRAMES, shared=DEEP_SHARED, pool=DEEP_POOL):
    """Stack i (root first): frames 0..shared-1 are one function calling itself (function 0),
    frame d >= shared is function 1 + (i + d) % pool: with pool >= stacks, each stack leaves
    the others at depth `shared` and no two share a frame above it (a call tree of
    shared + stacks * (frames - shared) nodes) from 1 + pool distinct addresses."""
    samples = []
    for i in range(stacks):
        root_first = [addr(0) if d < shared else addr(1 + (i + d) % pool) for d in range(frames)]
        samples.append(_sample(1000 + i, root_first[::-1]))
    _write(path, samples)


WIDE_LEAVES = 200000


def wide(path):
    """main (function 0) <- work (1) <- leaf i (function 2 + i), one sample each."""
    _write(path, (_sample(1000 + i, [addr(2 + i), addr(1), addr(0)]) for i in range(WIDE_LEAVES)))


if __name__ == "__main__":
    {"deep": deep, "wide": wide}[sys.argv[1]](sys.argv[2], *map(int, sys.argv[3:]))
