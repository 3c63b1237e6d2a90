#!/usr/bin/env python3
"""Hostile sizes: files that claim huge sizes, decompression bombs, endless
records. Peak memory stays within 100 MB of the same binary's on the intact
recording, conv never loops, it exits cleanly and says where the file is wrong.

usage: test_hostile_sizes.py CONV WORKDIR

Every input is crafted here from a real recording (samples/perf.data,
tests/fixtures/pipe.data, zstd.data, pipe-zstd.data):
  * file header: data.size 1 TB and 2^64-1, data.offset 2^62, attrs.size
    1 TB, attr_size 1 TB and 8 (below the 16 bytes of the ids section),
    the attr's ids section 1 TB and at 2^64-8, perf_event_attr.size 4 GB;
  * feature sections: every size 1 TB; offsets that wrap around 2^64;
    counts and string lengths of 4 G inside HOSTNAME, CMDLINE, EVENT_DESC,
    PMU_MAPPINGS, GROUP_DESC, BUILD_ID, CPU_TOPOLOGY, CACHE;
  * attrs: 8192 events of the same name (file and pipe mode);
  * records: 1024 SAMPLE records of size 65535 filled with 0xff (callchain
    nr 2^64-1 ...); 1024 MMAP2 records of size 65535 whose file name has
    no NUL, each at a new address; a last record claiming 65535 bytes with
    the file ending; ID_INDEX and THREAD_MAP with nr 2^60; a callchain
    with nr 2^60; AUXTRACE with a payload of 2^62 and of 2^64-8 bytes;
    COMPRESSED2 with data_size 2^63;
  * pipe mode: 1024 HEADER_ATTR records of 65528 bytes (8174 distinct ids
    each: 8.4 M ids); a HEADER_ATTR whose attr.size is 4 GB; a
    HEADER_TRACING_DATA announcing 4 GB of payload; a HEADER_FEATURE with a
    4 G string length;
  * zstd bombs (hand-made frames of RLE blocks, no zstd needed): COMPRESSED
    records whose frame inflates to 4 GiB of valid (unknown-type) records
    in file and pipe mode; the same with a 128 MiB window (the most
    ZSTD_d_windowLogMax 27 admits) and 64 MiB; a frame declaring a content
    size of 1 PiB.

Per input, `CONV -q --offline --stats=S -o OUT FILE` (both outputs):
  * finishes within TIMEOUT seconds (no endless loop; 30 s, 60 s for an
    ASan build, or $CONV_TEST_TIMEOUT);
  * exits 0 or 2 (2 only when nothing usable is left), with no sanitizer
    report and no "(null)" in its messages;
  * says what is wrong with an offset: exit 0 -> a problem in --stats with
    an offset and a "conv: warning: FILE: offset N" line; exit 2 -> a
    "conv: FILE: ..." line on stderr;
  * peak RSS (conv's own ru_maxrss, measured as tests/conformance/
    test_memory.py does: wait4 on a child forked from /bin/sh) is at most
    100 MB above the same binary's peak RSS on the intact samples/perf.data
    in the same run (a figure relative to this build, this machine and its
    transparent-huge-page setting, ASan's shadow and allocator included):
    the inputs claim terabytes or inflate to gigabytes, so memory that
    followed the claims would be far above that;
  * with --strict, exit 3 where the plain run gave 0 (data was lost), 2
    where it gave 2.
A table (case, exit, peak RSS, seconds, first problem) is printed, then
`N passed, M failed, K skipped`. Crafted files are kept in WORKDIR/inputs
(removed on success unless CONV_KEEP=1). Python 3 standard library only.
"""
import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys

CONV, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TIMEOUT = float(os.environ.get("CONV_TEST_TIMEOUT", "0")) or None  # default: 30 s, 60 s for ASan
LIMIT_MB = 100.0
passed = failed = skipped = 0


# inputs that are well formed, only large: a pipe stream with 8192 HEADER_ATTR records of one
# event (perf emits one per event; a stream may carry many) must convert quickly, without a
# problem to report
VALID_BUT_LARGE = {"pipe_attrs_8192_same_event"}

def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    if not cond:
        print("FAIL " + name + "  -- %s" % (detail,))
    sys.stdout.flush()
    return cond


def load_memory_tools():
    path = os.path.join(REPO, "tests", "conformance", "test_memory.py")
    spec = importlib.util.spec_from_file_location("conv_test_memory", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ---- perf.data pieces ----

def u64(d, o):
    return struct.unpack_from("<Q", d, o)[0]


def records(d, start, end):
    """[(offset, type, size)] of the records in d[start:end] (stops at a size < 8)."""
    out, p = [], start
    while p + 8 <= end:
        t, _m, s = struct.unpack_from("<IHH", d, p)
        if s < 8:
            break
        out.append((p, t, s))
        if t == 66:  # pipe HEADER_TRACING_DATA: payload outside header.size
            s += struct.unpack_from("<I", d, p + 8)[0]
        p += s
    return out


class FileMode:
    """A file-mode recording split into header+attrs, data records and features."""

    def __init__(self, path):
        self.d = bytearray(open(path, "rb").read())
        d = self.d
        self.data_off, self.data_size = u64(d, 40), u64(d, 48)
        self.attrs_off = u64(d, 24)
        words = struct.unpack_from("<4Q", d, 72)
        self.bits = [i for i in range(256) if words[i // 64] >> (i % 64) & 1]
        idx = self.data_off + self.data_size
        self.feats = {b: struct.unpack_from("<QQ", d, idx + 16 * i) for i, b in enumerate(self.bits)}
        self.recs = records(d, self.data_off, self.data_off + self.data_size)

    def data(self):
        return bytes(self.d[self.data_off:self.data_off + self.data_size])

    def rebuild(self, data):
        """The same recording with its data section replaced; features moved after it."""
        out = bytearray(self.d[:self.data_off]) + data
        struct.pack_into("<Q", out, 48, len(data))
        idx = len(out)
        out += b"\0" * (16 * len(self.bits))
        for i, b in enumerate(self.bits):
            off, size = self.feats[b]
            struct.pack_into("<QQ", out, idx + 16 * i, len(out), size)
            out += self.d[off:off + size]
        return bytes(out)

    def patched(self, *edits):
        out = bytearray(self.d)
        for fmt, off, val in edits:
            struct.pack_into(fmt, out, off, val)
        return bytes(out)


def rec(rtype, body, misc=0, size=None):
    return struct.pack("<IHH", rtype, misc, size if size is not None else 8 + len(body)) + body


def rle_zstd_frame(byte, total, window_log=17, content_size=None):
    """A zstd frame of RLE blocks of 128 KiB: `total` bytes equal to `byte`.
    Byte 0x48 makes a stream of records of type 0x48484848 (unknown) and size
    0x4848, one after the other: valid framing, 4 KiB of frame per 128 MiB."""
    fhd = (3 << 6) if content_size is not None else 0
    out = struct.pack("<IBB", 0xFD2FB528, fhd, (window_log - 10) << 3)
    if content_size is not None:
        out += struct.pack("<Q", content_size)
    block = 1 << 17
    n = total // block
    hdr = (block << 3) | (1 << 1)
    mid = struct.pack("<I", hdr)[:3] + bytes([byte])
    last = struct.pack("<I", hdr | 1)[:3] + bytes([byte])
    return out + mid * (n - 1) + last


def compressed_records(payload):
    out = b""
    for i in range(0, len(payload), 65520):
        out += rec(81, payload[i:i + 65520])
    return out


# ---- the hostile inputs ----

def build_cases():
    P = FileMode(os.path.join(REPO, "samples", "perf.data"))
    Z = FileMode(os.path.join(REPO, "tests", "fixtures", "zstd.data"))
    Q = open(os.path.join(REPO, "tests", "fixtures", "pipe.data"), "rb").read()
    QZ = open(os.path.join(REPO, "tests", "fixtures", "pipe-zstd.data"), "rb").read()
    TB, G4 = 1 << 40, 0xFFFFFFFF
    a0 = P.attrs_off                       # the first attrs entry
    attr_size = u64(P.d, 16)
    ids_at = a0 + attr_size - 16           # its {ids.offset, ids.size}
    cases = []

    def add(name, data):
        cases.append((name, data))

    # header
    add("hdr_data_size_1TB", P.patched(("<Q", 48, TB)))
    add("hdr_data_size_2^64-1", P.patched(("<Q", 48, (1 << 64) - 1)))
    add("hdr_data_offset_2^62", P.patched(("<Q", 40, 1 << 62)))
    add("hdr_attrs_size_1TB", P.patched(("<Q", 32, TB)))
    add("hdr_attr_size_1TB", P.patched(("<Q", 16, TB)))
    add("hdr_attr_size_8", P.patched(("<Q", 16, 8)))
    add("attr_ids_size_1TB", P.patched(("<Q", ids_at + 8, TB)))
    add("attr_ids_offset_2^64-8", P.patched(("<Q", ids_at, (1 << 64) - 8)))
    add("attr_struct_size_4GB", P.patched(("<I", a0 + 4, G4)))
    # feature sections
    idx = P.data_off + P.data_size
    add("feat_sizes_1TB", P.patched(*[("<Q", idx + 16 * i + 8, TB) for i in range(len(P.bits))]))
    add("feat_offsets_wrap", P.patched(*[e for i in range(len(P.bits))
                                          for e in (("<Q", idx + 16 * i, (1 << 64) - 16),
                                                    ("<Q", idx + 16 * i + 8, 32))]))
    edits = []
    for bit in (3, 4, 5, 6, 8, 9, 11, 12, 13, 16, 17, 20):  # strings, lists, EVENT_DESC, topology...
        if bit in P.feats:
            off, size = P.feats[bit]
            edits.append(("<I", off, G4))
            if bit == 12 and size >= 8:
                edits.append(("<I", off + 4, G4))        # EVENT_DESC attr_size too
    if 2 in P.feats:                                     # BUILD_ID: first record claims 65535
        edits.append(("<H", P.feats[2][0] + 6, 0xFFFF))
    add("feat_counts_4G", P.patched(*edits))
    # records
    base = P.data()
    big = bytearray(rec(9, b"\xff" * (65535 - 8), size=65535))
    add("rec_sample_65535_x1024", P.rebuild(base + bytes(big) * 1024))
    mm = []
    for i in range(1024):   # MMAP2 pid 1, addr i<<32, len 4 GB, file name without a NUL
        body = struct.pack("<IIQQQ", 1, 1, i << 32, 1 << 32, 0) + b"\0" * 32
        mm.append(rec(10, body + b"A" * (65535 - 8 - len(body)), misc=2, size=65535))
    add("rec_mmap2_name_65535_x1024", P.rebuild(base + b"".join(mm)))
    add("rec_last_claims_65535", P.rebuild(base + rec(9, b"\x01" * 100, size=65535)))
    ii = next(o for o, t, _ in P.recs if t == 69)
    tm = next(o for o, t, _ in P.recs if t == 73)
    add("id_index_nr_2^60", P.patched(("<Q", ii + 8, 1 << 60)))
    add("thread_map_nr_2^60", P.patched(("<Q", tm + 8, 1 << 60)))
    s0 = next(o for o, t, _ in P.recs if t == 9)
    add("callchain_nr_2^60", P.patched(("<Q", s0 + 40, 1 << 60)))  # sample_type 0x127
    first = P.recs[4][0] - P.data_off
    for name, n in (("auxtrace_payload_2^62", 1 << 62), ("auxtrace_payload_2^64-8", (1 << 64) - 8)):
        aux = rec(71, struct.pack("<QQQIIII", n, 0, 0, 0, 0, 0, 0))
        add(name, P.rebuild(base[:first] + aux + base[first:]))
    add("compressed2_size_2^63", P.rebuild(base[:first] + rec(83, struct.pack("<Q", 1 << 63) + b"\0" * 64)
                                           + base[first:]))
    # 8192 events of the same name (an attrs section of 1.2 MB, at the end of the file)
    entry = bytearray(P.d[a0:a0 + attr_size])
    struct.pack_into("<QQ", entry, attr_size - 16, 0, 0)
    many = bytearray(P.d)
    struct.pack_into("<QQ", many, 24, len(many), attr_size * 8192)
    add("attrs_8192_same_event", bytes(many + entry * 8192))
    # pipe mode
    qrecs = records(Q, 16, len(Q))
    attr_rec = qrecs[0]
    assert attr_rec[1] == 64
    attr_body = Q[attr_rec[0] + 8:attr_rec[0] + 8 + 128]
    nid = (65528 - 8 - 128) // 8
    attrs = []
    for i in range(1024):
        ids = struct.pack("<%dQ" % nid, *range(1000000 + i * nid, 1000000 + (i + 1) * nid))
        attrs.append(rec(64, attr_body + ids))
    cut = attr_rec[0] + attr_rec[2]
    add("pipe_attr_ids_8M", Q[:cut] + b"".join(attrs) + Q[cut:])
    bad = bytearray(Q)
    struct.pack_into("<I", bad, attr_rec[0] + 8 + 4, G4)
    add("pipe_attrs_8192_same_event", Q[:cut] + b"".join(
        rec(64, attr_body + struct.pack("<Q", 5000000 + i)) for i in range(8192)) + Q[cut:])
    add("pipe_attr_struct_size_4GB", bytes(bad))
    add("pipe_tracing_data_4GB", Q[:cut] + rec(66, struct.pack("<II", G4, 0)) + Q[cut:])
    feat = next(r for r in qrecs if r[1] == 80 and r[2] > 24)
    bad = bytearray(Q)
    struct.pack_into("<I", bad, feat[0] + 16, G4)
    add("pipe_feature_string_4G", bytes(bad))
    # zstd bombs: the fixture's records before its first COMPRESSED, then the bomb
    zc = next(o for o, t, _ in Z.recs if t == 81)
    zpre = bytes(Z.d[Z.data_off:zc])
    fin = rec(68, b"")
    add("zstd_bomb_4GiB", Z.rebuild(zpre + compressed_records(rle_zstd_frame(0x48, 4 << 30)) + fin))
    add("zstd_bomb_window_64MiB", Z.rebuild(zpre + compressed_records(
        rle_zstd_frame(0x48, 1 << 30, window_log=26)) + fin))
    add("zstd_bomb_window_128MiB", Z.rebuild(zpre + compressed_records(
        rle_zstd_frame(0x48, 1 << 30, window_log=27)) + fin))
    add("zstd_content_size_1PiB", Z.rebuild(zpre + compressed_records(
        rle_zstd_frame(0x48, 64 << 20, content_size=1 << 50)) + fin))
    qz = records(QZ, 16, len(QZ))
    qc = next(o for o, t, _ in qz if t == 81)
    add("pipe_zstd_bomb_4GiB", QZ[:qc] + compressed_records(rle_zstd_frame(0x48, 4 << 30)) + fin)
    return cases


def main():
    global skipped, TIMEOUT
    for f in ("samples/perf.data", "tests/fixtures/zstd.data", "tests/fixtures/pipe.data",
              "tests/fixtures/pipe-zstd.data"):
        if not os.path.isfile(os.path.join(REPO, f)):
            print("SKIP: %s is missing\n0 passed, 0 failed, 1 skipped" % f)
            return 77
    mem = load_memory_tools()
    shutil.rmtree(WORK, ignore_errors=True)
    inputs = os.path.join(WORK, "inputs")
    os.makedirs(inputs)
    subreaper = mem.set_subreaper()
    env, note = mem.asan_env(CONV)
    if note:
        print(note)
    TIMEOUT = TIMEOUT or (60.0 if env is not None else 30.0)
    mem.TIMEOUT_S = TIMEOUT
    if not subreaper:
        print("note: no PR_SET_CHILD_SUBREAPER: RSS figures include the launcher")

    def run(argv, tag):
        out, err = os.path.join(WORK, tag + ".out"), os.path.join(WORK, tag + ".err")
        r = mem.run_measured(argv, out, err, subreaper, env)
        with open(err, "rb") as f:
            r["stderr"] = f.read().decode("utf-8", "replace")
        return r

    # the reference: the intact recording
    ref_stats = os.path.join(WORK, "ref.json")
    ref = run([CONV, "-q", "--offline", "--stats=" + ref_stats, "-o", os.path.join(WORK, "ref"),
               os.path.join(REPO, "samples", "perf.data")], "ref")
    check("intact samples/perf.data converts", ref["exit"] == 0, ref["stderr"][-300:])
    limit = LIMIT_MB + ref["maxrss_kb"] / 1024.0
    print("intact samples/perf.data: peak RSS %.1f MB; limit per hostile file %.0f MB"
          % (ref["maxrss_kb"] / 1024.0, limit))

    rows = []
    for name, data in build_cases():
        path = os.path.join(inputs, name + ".data")
        with open(path, "wb") as f:
            f.write(data)
        stats = os.path.join(WORK, name + ".json")
        outbase = os.path.join(WORK, "out-" + name)
        r = run([CONV, "-q", "--offline", "--stats=" + stats, "-o", outbase, path], name)
        err = r["stderr"]
        rss = r["maxrss_kb"] / 1024.0
        first = ""
        if not check("%s: exits within %gs" % (name, TIMEOUT), not r["timed_out"]):
            rows.append((name, "hang", rss, r["wall"], ""))
            continue
        check("%s: exit 0 or 2" % name, r["exit"] in (0, 2), "exit %d: %s" % (r["exit"], err[-400:]))
        check("%s: no sanitizer report" % name,
              "runtime error" not in err and "Sanitizer" not in err, err[-600:])
        check("%s: no '(null)' in its messages" % name, "(null)" not in err,
              [l for l in err.splitlines() if "(null)" in l][:2])
        check("%s: peak RSS %.1f MB < %.0f MB" % (name, rss, limit), rss < limit, "%.1f MB" % rss)
        doc = None
        try:
            with open(stats) as f:
                doc = json.loads(f.readline())
        except (OSError, ValueError) as e:
            check("%s: --stats is JSON" % name, False, e)
        if r["exit"] == 0 and doc is not None and name in VALID_BUT_LARGE:
            # well-formed, only big: converted without complaint, outputs readable
            check("%s: converted (%d samples), nothing to report" % (name, doc.get("samples_total", 0)),
                  doc.get("samples_total", 0) > 0, doc.get("problems", [])[:3])
            for fmt, ext in (("pprof", ".pb.gz"), ("jfr", ".jfr")):
                check("%s: %s output written" % (name, fmt), os.path.getsize(outbase + ext) > 0)
        elif r["exit"] == 0 and doc is not None:
            probs = doc.get("problems", [])
            first = probs[0]["message"][:70] if probs else ""
            check("%s: a problem with an offset in --stats" % name,
                  probs and all(isinstance(p.get("offset"), int) for p in probs), probs[:3])
            check("%s: a warning naming an offset on stderr" % name,
                  re.search(r"conv: warning: .*: offset \d+", err), err[-300:])
            for fmt, ext in (("pprof", ".pb.gz"), ("jfr", ".jfr")):
                check("%s: %s output written" % (name, fmt), os.path.getsize(outbase + ext) > 0)
        elif r["exit"] == 2:
            first = err.strip().splitlines()[-1][:70] if err.strip() else ""
            check("%s: exit 2 says why" % name, re.search(r"conv: .*%s: \S" % re.escape(path), err),
                  err[-300:])
            check("%s: exit 2 leaves no output" % name,
                  not os.path.exists(outbase + ".pb.gz") and not os.path.exists(outbase + ".jfr"))
        s = run([CONV, "-q", "--offline", "--strict", "-o", outbase + "-strict", path], name + "-strict")
        want = {0: 0 if name in VALID_BUT_LARGE else 3, 2: 2}.get(r["exit"])
        if want is not None:
            check("%s: --strict exits %d" % (name, want), s["exit"] == want and not s["timed_out"],
                  "exit %d%s" % (s["exit"], " (timeout)" if s["timed_out"] else ""))
        rows.append((name, r["exit"], rss, r["wall"], first))
        for ext in (".pb.gz", ".jfr", "-strict.pb.gz", "-strict.jfr"):
            try:
                os.unlink(outbase + ext)
            except OSError:
                pass

    print()
    print("%-30s %5s %8s %7s  %s" % ("input", "exit", "RSS MB", "sec", "first problem"))
    for name, code, rss, wall, first in rows:
        print("%-30s %5s %8.1f %7.2f  %s" % (name, code, rss, wall, first))
    print()
    if failed == 0 and not os.environ.get("CONV_KEEP"):
        shutil.rmtree(inputs, ignore_errors=True)
    else:
        print("crafted inputs kept in %s" % inputs)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
