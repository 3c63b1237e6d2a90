"""The samples of a pprof profile as comparable values, for tests that check
two profiles of one recording name the same frames (conv symbolize against a
direct conversion): per sample its labels, its values and its stack, each
frame its address and its lines innermost first, each line (function name,
system name, file name, line, column). Built on pprofdec (an independent
decoder); standard library only.
"""
import collections

import pprofdec


def _lines(prof, loc_id):
    _, addr, lines = prof["locs"][loc_id]
    out = []
    for fid, line in lines:
        name, system_name, filename = prof["funcs"][fid]
        out.append((name, system_name, filename, line))
    return addr, tuple(out)


def samples(path):
    """A Counter of (labels, values, stack) of the profile at path."""
    prof = pprofdec.read(path)
    out = collections.Counter()
    for locs, values, labels in prof["samples"]:
        stack = tuple(_lines(prof, lid) for lid in locs)
        out[(tuple(sorted(labels.items())), tuple(values), stack)] += 1
    return out


def diff(a, b, n=3):
    """Up to n samples of a that b lacks and n of b that a lacks, for messages."""
    return {"only in the first": list((a - b).keys())[:n], "only in the second": list((b - a).keys())[:n]}
