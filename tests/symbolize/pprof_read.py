"""The view of a pprof profile the symbolization tests use, over the one
decoder of the test suite (tests/tools/pprofdec.py):

  read(path) -> {"samples":   [(location ids, leaf first; values)],
                 "locations": {id: (mapping id, address, [function name, ...])},
                 "mappings":  {id: {"start", "limit", "offset", "filename", "build_id"}}}

A location's names are in profile.proto's order: the innermost (inlined)
function first, the function the code belongs to last.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import pprofdec  # noqa: E402


def read(path):
    p = pprofdec.read(path)
    return {"samples": [(ids, vals) for ids, vals, _ in p["samples"]],
            "locations": {lid: (mid, addr, [p["funcs"].get(fid, ("",))[0] for fid, _ in lines])
                          for lid, (mid, addr, lines) in p["locs"].items()},
            "mappings": {mid: {"start": m["start"], "limit": m["limit"], "offset": m["offset"],
                               "filename": m["file"], "build_id": m["bid"]}
                         for mid, m in p["maps"].items()}}
