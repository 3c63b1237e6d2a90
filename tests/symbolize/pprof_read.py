"""A small reader of pprof profiles (profile.proto, gzipped or not) for the
symbolization tests: what conv wrote at each address, with its inline frames.
Python 3 standard library only.

  read(path) -> {"samples":   [(location ids, leaf first; values)],
                 "locations": {id: (mapping id, address, [function name, ...])},
                 "mappings":  {id: {"start", "limit", "offset", "filename", "build_id"}}}

A location's names are in profile.proto's order: the innermost (inlined)
function first, the function the code belongs to last.
"""
import gzip


def _varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def _fields(b):
    i = 0
    while i < len(b):
        k, i = _varint(b, i)
        f, w = k >> 3, k & 7
        if w == 0:
            v, i = _varint(b, i)
        elif w == 2:
            n, i = _varint(b, i)
            v = b[i:i + n]
            i += n
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % w)
        yield f, w, v


def _ints(w, v):
    """A repeated integer field, packed (wire type 2) or not."""
    if w == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = _varint(v, i)
        out.append(x)
    return out


def parse(data):
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    strings, raw_samples, raw_locs, raw_maps, funcs = [], [], [], [], {}
    for f, w, v in _fields(data):
        if f == 2:
            raw_samples.append(v)
        elif f == 3:
            raw_maps.append(v)
        elif f == 4:
            raw_locs.append(v)
        elif f == 5:
            fid = name = 0
            for g, w2, x in _fields(v):
                if g == 1:
                    fid = x
                elif g == 2:
                    name = x
            funcs[fid] = name
        elif f == 6:
            strings.append(v.decode("utf-8", "replace"))
    samples = []
    for v in raw_samples:
        locs, vals = [], []
        for g, w, x in _fields(v):
            if g == 1:
                locs += _ints(w, x)
            elif g == 2:
                vals += _ints(w, x)
        samples.append((locs, vals))
    mappings = {}
    for v in raw_maps:
        m = {}
        for g, w, x in _fields(v):
            if w == 0:
                m[g] = x
        mappings[m.get(1, 0)] = {"start": m.get(2, 0), "limit": m.get(3, 0), "offset": m.get(4, 0),
                                 "filename": strings[m.get(5, 0)], "build_id": strings[m.get(6, 0)]}
    locations = {}
    for v in raw_locs:
        lid = mid = addr = 0
        names = []
        for g, w, x in _fields(v):
            if g == 1:
                lid = x
            elif g == 2:
                mid = x
            elif g == 3:
                addr = x
            elif g == 4:
                fid = 0
                for h, w3, y in _fields(x):
                    if h == 1:
                        fid = y
                names.append(strings[funcs.get(fid, 0)])
        locations[lid] = (mid, addr, names)
    return {"samples": samples, "locations": locations, "mappings": mappings}


def read(path):
    with open(path, "rb") as f:
        return parse(f.read())
