#!/usr/bin/env python3
"""Inflate a real perf.data file into a larger, still valid perf.data.

Usage:
    perfdata_inflate.py [--size-mb N] [--verify [--perf PERF]] INPUT OUTPUT

INPUT must be a FILE-MODE perf.data (magic 'PERFILE2', little-endian,
uncompressed), as written by `perf record` (perf 5.x/6.x).

The output is laid out like perf writes it:

    header (104 bytes) | attr id arrays | attrs | [event types] | data |
    feature index | feature payloads

The data section is rebuilt as:

    * every non-SAMPLE record of the input, once, in input order (MMAP2,
      COMM, FORK, ID_INDEX, FINISHED_INIT, ...) -- except the input's own
      FINISHED_ROUND records (dropped, new ones are written) and EXIT records
      (moved to the end, see below);
    * the input's SAMPLE records (type 9), repeated R times.  Repetition k has
      every sample's TIME field shifted by k * shift, where shift is larger
      than the time span of the input's samples, so repetitions never
      overlap in time.  A FINISHED_ROUND record (type 68, header only) follows
      every repetition, so a reader that sorts by time within rounds (like
      perf's ordered-events queue) sees increasing times across rounds;
    * the input's EXIT records, their sample_id TIME shifted by (R-1) * shift
      so that the threads exit during the last repetition, followed by a last
      FINISHED_ROUND.

R is chosen so that the output is roughly --size-mb megabytes (MiB); R >= 1.

The HEADER_SAMPLE_TIME feature (bit 21), if present, is rewritten with the
new first/last sample time; all other feature payloads are copied verbatim
(only their index offsets change).  Inputs with features that embed file
offsets (AUXTRACE, DIR_FORMAT) or compressed data are refused.

On success a JSON object is printed on stdout:

    {"samples": N, "bytes": SIZE, "repetitions": R,
     "samples_per_attr": [n0, n1, ...], "input_samples": n}

where N is the total number of SAMPLE records written and SIZE the output
file size in bytes.  With --verify the output is read back with
`perf report` (--stats, and --stdio -n --sort dso) and its per-event sample
counts must equal ours; "perf_verified": true/false is added to the JSON.
Exit status 0 on success, 1 on bad input or failed verification, 2 on usage.

Python 3 standard library only.
"""

import argparse
import json
import os
import struct
import sys

MAGIC = b"PERFILE2"
HEADER_SIZE = 104

REC_EXIT = 4
REC_SAMPLE = 9
REC_FINISHED_ROUND = 68
REC_AUXTRACE = 71
REC_COMPRESSED = 81

# sample_type bits
S_IP = 1 << 0
S_TID = 1 << 1
S_TIME = 1 << 2
S_ADDR = 1 << 3
S_ID = 1 << 6
S_CPU = 1 << 7
S_STREAM_ID = 1 << 9
S_IDENTIFIER = 1 << 16

ATTR_FLAG_SAMPLE_ID_ALL = 1 << 18

FEAT_AUXTRACE = 18
FEAT_SAMPLE_TIME = 21
FEAT_DIR_FORMAT = 24
FEAT_COMPRESSED = 27

FINISHED_ROUND = struct.pack("<IHH", REC_FINISHED_ROUND, 0, 8)

# Write repetitions in chunks of about this many bytes.
CHUNK = 4 << 20


class BadInput(Exception):
    pass


def bit(mask, b):
    return 1 if mask & b else 0


class Attr:
    def __init__(self, raw, ids_off, ids_size, ids_raw):
        self.raw = raw              # the perf_event_attr bytes (attr_size - 16)
        self.ids_raw = ids_raw      # u64 array
        if len(raw) < 48:
            raise BadInput("perf_event_attr too short (%d bytes)" % len(raw))
        self.sample_type = struct.unpack_from("<Q", raw, 24)[0]
        self.flags = struct.unpack_from("<Q", raw, 40)[0]
        self.ids = list(struct.unpack("<%dQ" % (len(ids_raw) // 8), ids_raw))

    @property
    def sample_id_all(self):
        return bool(self.flags & ATTR_FLAG_SAMPLE_ID_ALL)


def sample_time_offset(st):
    """Offset of the TIME field in a SAMPLE record (incl. 8-byte header)."""
    if not st & S_TIME:
        return None
    return 8 + 8 * (bit(st, S_IDENTIFIER) + bit(st, S_IP) + bit(st, S_TID))


def sample_id_offset(st):
    """Offset of the event id in a SAMPLE record, or None."""
    if st & S_IDENTIFIER:
        return 8
    if st & S_ID:
        return 8 + 8 * (bit(st, S_IP) + bit(st, S_TID) + bit(st, S_TIME)
                        + bit(st, S_ADDR))
    return None


def trailer_time_offset_from_end(st):
    """For non-sample kernel records with sample_id_all: the sample_id
    trailer is {TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER} (those set) at the
    end of the record.  Returns the distance of TIME from the record end."""
    if not st & S_TIME:
        return None
    n = (bit(st, S_TID) + bit(st, S_TIME) + bit(st, S_ID) + bit(st, S_STREAM_ID)
         + bit(st, S_CPU) + bit(st, S_IDENTIFIER))
    return 8 * n - 8 * bit(st, S_TID)


def read_exact(f, off, size):
    f.seek(off)
    b = f.read(size)
    if len(b) != size:
        raise BadInput("truncated file: wanted %d bytes at %d, got %d"
                       % (size, off, len(b)))
    return b


def parse_input(path):
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        fsize = f.tell()
        hdr = read_exact(f, 0, HEADER_SIZE)
        if hdr[:8] != MAGIC:
            if hdr[:8] == MAGIC[::-1]:
                raise BadInput("big-endian perf.data is not supported")
            raise BadInput("not a perf.data file (magic %r)" % hdr[:8])
        (hsize, attr_size, attrs_off, attrs_size, data_off, data_size,
         et_off, et_size) = struct.unpack_from("<8Q", hdr, 8)
        if hsize == 16:
            raise BadInput("pipe-mode perf.data is not supported")
        if hsize != HEADER_SIZE:
            raise BadInput("unexpected header size %d" % hsize)
        feat_words = struct.unpack_from("<4Q", hdr, 72)
        features = [i for i in range(256) if feat_words[i // 64] >> (i % 64) & 1]
        for bad, name in ((FEAT_AUXTRACE, "AUXTRACE"),
                          (FEAT_DIR_FORMAT, "DIR_FORMAT"),
                          (FEAT_COMPRESSED, "COMPRESSED")):
            if bad in features:
                raise BadInput("input has the %s feature; not supported" % name)
        if attr_size < 16 + 48 or attrs_size % attr_size:
            raise BadInput("bad attr_size %d / attrs.size %d" % (attr_size, attrs_size))
        if data_off + data_size > fsize:
            raise BadInput("data section runs past end of file")

        attrs = []
        raw_attrs = read_exact(f, attrs_off, attrs_size)
        for i in range(attrs_size // attr_size):
            entry = raw_attrs[i * attr_size:(i + 1) * attr_size]
            ids_off, ids_size = struct.unpack_from("<2Q", entry, attr_size - 16)
            ids_raw = read_exact(f, ids_off, ids_size) if ids_size else b""
            attrs.append(Attr(entry[:attr_size - 16], ids_off, ids_size, ids_raw))
        if not attrs:
            raise BadInput("no attrs")

        event_types = read_exact(f, et_off, et_size) if et_size else b""

        # Feature index and payloads.
        feat_payloads = []
        idx_off = data_off + data_size
        if features:
            idx = read_exact(f, idx_off, 16 * len(features))
            for n, feat in enumerate(features):
                off, size = struct.unpack_from("<2Q", idx, 16 * n)
                feat_payloads.append((feat, read_exact(f, off, size)))

        data = read_exact(f, data_off, data_size)

    return {
        "attr_size": attr_size,
        "attrs": attrs,
        "event_types": event_types,
        "features": feat_payloads,
        "feat_words": feat_words,
        "data": data,
        "hdr": hdr,
    }


def split_records(inp):
    """Split the data section into head records, sample records and tail
    (EXIT) records.  Returns (head, samples, tail) where samples is a list of
    (offset_in_data, size) and head/tail are lists of bytes objects."""
    data = inp["data"]
    attrs = inp["attrs"]
    head, samples, tail = [], [], []
    pos, end = 0, len(data)
    while pos < end:
        if end - pos < 8:
            raise BadInput("truncated record header at data+%d" % pos)
        rtype, misc, size = struct.unpack_from("<IHH", data, pos)
        if size < 8 or pos + size > end:
            raise BadInput("bad record size %d (type %d) at data+%d" % (size, rtype, pos))
        if rtype in (REC_COMPRESSED, REC_AUXTRACE):
            raise BadInput("record type %d (compressed/auxtrace) not supported" % rtype)
        if rtype == REC_SAMPLE:
            samples.append((pos, size))
        elif rtype == REC_FINISHED_ROUND:
            pass
        elif rtype == REC_EXIT:
            tail.append(data[pos:pos + size])
        else:
            head.append(data[pos:pos + size])
        pos += size
    if len(attrs) > 1 and sample_id_offset(attrs[0].sample_type) is None:
        raise BadInput("several attrs but samples carry no ID/IDENTIFIER")
    return head, samples, tail


def build(inp, target_bytes, out_path):
    attrs = inp["attrs"]
    st = attrs[0].sample_type
    for a in attrs[1:]:
        # perf requires a common sample_id layout; TIME offset must match.
        if sample_time_offset(a.sample_type) != sample_time_offset(st):
            raise BadInput("attrs disagree on the TIME field position")
    data = inp["data"]
    head, samples, tail = split_records(inp)
    if not samples:
        raise BadInput("input has no SAMPLE records")

    t_off = sample_time_offset(st)
    id_off = sample_id_offset(st)

    # Concatenate the samples into one blob and note time/attr of each.
    blob = bytearray()
    time_pos = []           # offsets of TIME fields inside blob
    times = []
    per_attr_one = [0] * len(attrs)
    id2attr = {}
    for i, a in enumerate(attrs):
        for x in a.ids:
            id2attr[x] = i
    for pos, size in samples:
        rec = data[pos:pos + size]
        if t_off is not None:
            if t_off + 8 > size:
                raise BadInput("SAMPLE record too short for TIME field")
            time_pos.append(len(blob) + t_off)
            times.append(struct.unpack_from("<Q", rec, t_off)[0])
        if len(attrs) == 1:
            per_attr_one[0] += 1
        else:
            sid = struct.unpack_from("<Q", rec, id_off)[0]
            if sid not in id2attr:
                raise BadInput("SAMPLE with unknown id %d" % sid)
            per_attr_one[id2attr[sid]] += 1
        blob += rec
    blob = bytes(blob)

    if times:
        tmin, tmax = min(times), max(times)
        span = tmax - tmin
        # Gap between repetitions ~ the mean sample interval.
        gap = span // max(1, len(times) - 1) if len(times) > 1 else 1000
        shift = span + max(gap, 1)
    else:
        tmin = tmax = shift = 0

    attr_size = inp["attr_size"]
    event_types = inp["event_types"]
    features = inp["features"]
    ids_total = sum(len(a.ids_raw) for a in attrs)
    head_bytes = sum(len(r) for r in head)
    tail_bytes = sum(len(r) for r in tail)
    fixed = (HEADER_SIZE + ids_total + attr_size * len(attrs) + len(event_types)
             + head_bytes + tail_bytes + 8
             + 16 * len(features) + sum(len(p) for _, p in features))
    per_rep = len(blob) + 8
    reps = max(1, -(-(target_bytes - fixed) // per_rep)) if target_bytes > fixed else 1

    # Layout.
    off = HEADER_SIZE
    ids_offsets = []
    for a in attrs:
        ids_offsets.append(off)
        off += len(a.ids_raw)
    attrs_off = off
    off += attr_size * len(attrs)
    et_off = off if event_types else 0
    off += len(event_types)
    data_off = off
    data_size = head_bytes + reps * per_rep + tail_bytes
    feat_idx_off = data_off + data_size

    # Rewrite SAMPLE_TIME payload.
    new_features = []
    for feat, payload in features:
        if feat == FEAT_SAMPLE_TIME and len(payload) == 16 and times:
            payload = struct.pack("<2Q", tmin, tmax + (reps - 1) * shift)
        new_features.append((feat, payload))

    hdr = bytearray(inp["hdr"])
    struct.pack_into("<8Q", hdr, 8, HEADER_SIZE, attr_size,
                     attrs_off, attr_size * len(attrs),
                     data_off, data_size,
                     et_off, len(event_types))

    tmp_path = out_path + ".tmp%d" % os.getpid()
    try:
        with open(tmp_path, "wb") as f:
            f.write(hdr)
            for a in attrs:
                f.write(a.ids_raw)
            for a, io in zip(attrs, ids_offsets):
                f.write(a.raw)
                f.write(struct.pack("<2Q", io if a.ids_raw else 0, len(a.ids_raw)))
            f.write(event_types)
            assert f.tell() == data_off
            for r in head:
                f.write(r)

            # Samples, repeated.  Several repetitions per write() for speed.
            reps_per_chunk = max(1, CHUNK // per_rep)
            rep = 0
            pack_into = struct.pack_into
            while rep < reps:
                n = min(reps_per_chunk, reps - rep)
                buf = bytearray((blob + FINISHED_ROUND) * n)
                if times:
                    for j in range(n):
                        d = (rep + j) * shift
                        if d:
                            base = j * per_rep
                            for p, t in zip(time_pos, times):
                                pack_into("<Q", buf, base + p, t + d)
                rep += n
                if rep == reps:
                    # The last repetition's FINISHED_ROUND goes after the
                    # tail records, so they share the final round.
                    del buf[-8:]
                f.write(buf)

            # EXIT records, moved into the last repetition's time range.
            tail_shift = (reps - 1) * shift
            for r in tail:
                r = bytearray(r)
                if attrs[0].sample_id_all and tail_shift:
                    back = trailer_time_offset_from_end(st)
                    if back is not None and len(r) - back >= 8:
                        t = struct.unpack_from("<Q", r, len(r) - back)[0]
                        if t:
                            struct.pack_into("<Q", r, len(r) - back, t + tail_shift)
                f.write(r)
            f.write(FINISHED_ROUND)
            assert f.tell() == feat_idx_off, (f.tell(), feat_idx_off)

            # Feature index + payloads.
            off = feat_idx_off + 16 * len(new_features)
            for feat, payload in new_features:
                f.write(struct.pack("<2Q", off, len(payload)))
                off += len(payload)
            for feat, payload in new_features:
                f.write(payload)
            total = f.tell()
        os.replace(tmp_path, out_path)
    except BaseException:
        try:
            os.unlink(tmp_path)
        except OSError:
            pass
        raise

    per_attr = [n * reps for n in per_attr_one]
    return {
        "samples": len(samples) * reps,
        "bytes": total,
        "repetitions": reps,
        "samples_per_attr": per_attr,
        "input_samples": len(samples),
    }


def perf_abbrev(n):
    """perf report's '# Samples: %lu%c' rendering (util/util.c convert_unit)."""
    unit = ""
    for u in "KMG":
        if n > 1000:
            n //= 1000
            unit = u
    return "%d%s" % (n, unit)


def verify_with_perf(out_path, res, perf="perf"):
    """Read OUT back with perf; return a list of problems (empty = OK).

    Checks: `perf report --stats` per-event SAMPLE counts equal
    samples_per_attr; `perf report --stdio -n --sort dso` succeeds, its
    '# Samples:' headers equal perf's rendering of our counts, and the sum of
    its Samples column per event equals our counts."""
    import re
    import subprocess
    problems = []
    p = subprocess.run([perf, "report", "-i", out_path, "--stats"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        return ["perf report --stats exited %d: %s" % (p.returncode, p.stderr.strip()[-500:])]
    stats = [int(m) for m in re.findall(
        r"^\S.* stats:\n\s*SAMPLE events:\s*(\d+)", p.stdout, re.M)]
    # perf lists only events that have samples (e.g. no 'dummy').
    want = [n for n in res["samples_per_attr"] if n]
    if stats != want:
        problems.append("perf --stats SAMPLE events %s != written %s"
                        % (stats, want))
    p = subprocess.run([perf, "report", "-i", out_path, "--stdio", "-n",
                        "--sort", "dso", "--no-children", "-g", "none"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        return problems + ["perf report exited %d: %s" % (p.returncode, p.stderr.strip()[-500:])]
    headers, sums = [], []
    for line in p.stdout.splitlines():
        m = re.match(r"# Samples: (\S+) of event", line)
        if m:
            headers.append(m.group(1))
            sums.append(0)
            continue
        m = re.match(r"\s+[\d.]+%\s+(\d+)\s", line)
        if m and sums:
            sums[-1] += int(m.group(1))
    if headers != [perf_abbrev(n) for n in want]:
        problems.append("perf '# Samples:' headers %s != expected %s"
                        % (headers, [perf_abbrev(n) for n in want]))
    if sums != want:
        problems.append("perf Samples column sums %s != written %s" % (sums, want))
    if "out of order" in p.stderr:
        problems.append("perf reported out of order events")
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Inflate a perf.data file by repeating its SAMPLE records.")
    ap.add_argument("input", help="source perf.data (file mode, little-endian)")
    ap.add_argument("output", help="where to write the inflated perf.data")
    ap.add_argument("--size-mb", type=float, default=100.0,
                    help="approximate output size in MiB (default 100)")
    ap.add_argument("--verify", action="store_true",
                    help="read the output back with `perf report` and check "
                         "its sample counts equal ours (exit 1 if not)")
    ap.add_argument("--perf", default="perf", help="perf binary for --verify")
    args = ap.parse_args(argv)
    if args.size_mb <= 0:
        ap.error("--size-mb must be > 0")
    try:
        inp = parse_input(args.input)
        res = build(inp, int(args.size_mb * (1 << 20)), args.output)
    except BadInput as e:
        print("perfdata_inflate: %s: %s" % (args.input, e), file=sys.stderr)
        return 1
    except OSError as e:
        print("perfdata_inflate: %s" % e, file=sys.stderr)
        return 1
    rc = 0
    if args.verify:
        try:
            problems = verify_with_perf(args.output, res, args.perf)
        except OSError as e:
            problems = ["cannot run perf: %s" % e]
        for msg in problems:
            print("perfdata_inflate: verify: %s" % msg, file=sys.stderr)
        res["perf_verified"] = not problems
        rc = 1 if problems else 0
    print(json.dumps(res))
    return rc


if __name__ == "__main__":
    sys.exit(main())
