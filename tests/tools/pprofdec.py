"""A small independent decoder of pprof profiles (profile.proto), gzipped or not.

read(path) or parse(data) -> dict(strings, types, samples, labels, locs, funcs, maps):
  types:   [(type, unit)] of the sample types
  samples: [(location ids leaf first, values, {label key: str or int})]
  labels:  per sample, its labels in order: [(key, str or None, num, num_unit)]
  locs:    {id: (mapping id, address, [(function id, line)] innermost first)}
  funcs:   {id: (name, system_name, filename)}
  maps:    {id: dict(start, limit, offset, file, bid)}
Strings are decoded as UTF-8 with the given error handler (the default,
surrogateescape, keeps every byte: s.encode("utf-8", "surrogateescape")).
A profile that breaks the .proto's rules the decoder relies on (a string index
past the table, a mapping, location or function id that is 0 or repeated)
raises ValueError. Standard library only; written from the .proto, not from
conv's writer.

For tests that craft profiles: varint(x) and field(num, v) encode (v an int: a
varint field; bytes: a length-delimited one).
"""
import gzip


def varint(x):
    out = bytearray()
    while True:
        c = x & 0x7F
        x >>= 7
        if not x:
            out.append(c)
            return bytes(out)
        out.append(c | 0x80)


def field(num, v):
    if isinstance(v, int):
        return varint(num << 3) + varint(v)
    return varint(num << 3 | 2) + varint(len(v)) + v


def _varint(b, i):
    x = shift = 0
    while True:
        c = b[i]
        i += 1
        x |= (c & 0x7f) << shift
        if c < 0x80:
            return x, i
        shift += 7


def fields(b):
    """(field number, wire type, value) of a message; value is int or bytes."""
    i, n = 0, len(b)
    while i < n:
        key, i = _varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            ln, i = _varint(b, i)
            v = b[i:i + ln]
            i += ln
        elif wt == 1:
            v = int.from_bytes(b[i:i + 8], "little")
            i += 8
        elif wt == 5:
            v = int.from_bytes(b[i:i + 4], "little")
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
        yield f, wt, v


def _ints(wt, v):
    if wt == 0:
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = _varint(v, i)
        out.append(x)
    return out


def _signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def _put(table, what, key, value):
    if key == 0 or key in table:
        raise ValueError("%s id %d %s" % (what, key, "repeated" if key else "is 0"))
    table[key] = value


def read(path, errors="surrogateescape"):
    with open(path, "rb") as f:
        return parse(f.read(), errors)


def parse(data, errors="surrogateescape"):
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    strings, types, raw_samples, locs, funcs, maps = [], [], [], {}, {}, {}
    for f, wt, v in fields(data):
        if f == 6:
            strings.append(v.decode("utf-8", errors=errors))
        elif f == 1:
            d = {k: x for k, _, x in fields(v)}
            types.append((d.get(1, 0), d.get(2, 0)))
        elif f == 2:
            ids, vals, labels = [], [], []
            for k, w, x in fields(v):
                if k == 1:
                    ids += _ints(w, x)
                elif k == 2:
                    vals += [_signed(y) for y in _ints(w, x)]
                elif k == 3:
                    labels.append({kk: xx for kk, _, xx in fields(x)})
            raw_samples.append((ids, vals, labels))
        elif f == 4:
            lid, mid, addr, lines = 0, 0, 0, []
            for k, _, x in fields(v):
                if k == 1:
                    lid = x
                elif k == 2:
                    mid = x
                elif k == 3:
                    addr = x
                elif k == 4:
                    d = {kk: xx for kk, _, xx in fields(x)}
                    lines.append((d.get(1, 0), _signed(d.get(2, 0))))
            _put(locs, "location", lid, (mid, addr, lines))
        elif f == 5:
            d = {k: x for k, _, x in fields(v)}
            _put(funcs, "function", d.get(1, 0), (d.get(2, 0), d.get(3, 0), d.get(4, 0)))
        elif f == 3:
            d = {k: x for k, _, x in fields(v)}
            _put(maps, "mapping", d.get(1, 0), d)

    def s(i):
        if i >= len(strings):
            raise ValueError("string index %d of a table of %d" % (i, len(strings)))
        return strings[i]

    samples, sample_labels = [], []
    for ids, vals, labels in raw_samples:
        lab, raw = {}, []
        for l in labels:
            key, text, num = s(l.get(1, 0)), s(l[2]) if l.get(2) else None, _signed(l.get(3, 0))
            raw.append((key, text, num, s(l.get(4, 0))))
            lab[key] = num if text is None else text
        samples.append((ids, vals, lab))
        sample_labels.append(raw)
    return dict(
        strings=strings,
        types=[(s(t), s(u)) for t, u in types],
        samples=samples,
        labels=sample_labels,
        locs=locs,
        funcs={k: (s(n), s(sn), s(fn)) for k, (n, sn, fn) in funcs.items()},
        maps={k: dict(start=d.get(2, 0), limit=d.get(3, 0), offset=d.get(4, 0),
                      file=s(d.get(5, 0)), bid=s(d.get(6, 0))) for k, d in maps.items()})


def frame_names(prof, loc_id):
    """Function names of a location, innermost first ([] when unnamed)."""
    _, _, lines = prof["locs"][loc_id]
    return [prof["funcs"][fid][0] for fid, _ in lines]
