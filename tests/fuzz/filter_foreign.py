#!/usr/bin/env python3
"""Removes from a corpus directory the inputs that are mostly foreign files.

usage: filter_foreign.py CORPUS_DIR FOREIGN...

FOREIGN are files or directories (searched recursively) whose contents must
not be committed: the shared corpus of other projects' recordings, system
libraries used as seeds. An input is dropped when more than half of its
content-defined samples (16-byte windows whose hash falls in 1/8 of the hash
space, so that a sample survives insertions and deletions around it) occur in
some foreign file. Windows of a single repeated byte are ignored. Inputs with
no sample (tiny ones) are kept.
"""
import hashlib
import os
import sys
import zlib

W = 16


def samples(data):
    out = set()
    for i in range(len(data) - W + 1):
        w = data[i:i + W]
        if w.count(w[0]) == W:
            continue
        h = zlib.crc32(w)
        if h % 8 == 0:
            out.add(h)
    return out


def files(paths):
    for p in paths:
        if os.path.isdir(p):
            for d, _, names in os.walk(p):
                for n in names:
                    yield os.path.join(d, n)
        elif os.path.isfile(p):
            yield p


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    corpus = sys.argv[1]
    foreign = set()
    exact = set()
    for p in files(sys.argv[2:]):
        with open(p, 'rb') as f:
            data = f.read()
        exact.add(hashlib.sha1(data).hexdigest())
        foreign |= samples(data)
    dropped = kept = 0
    for n in sorted(os.listdir(corpus)):
        p = os.path.join(corpus, n)
        with open(p, 'rb') as f:
            data = f.read()
        s = samples(data)
        if hashlib.sha1(data).hexdigest() in exact or \
                (s and len(s & foreign) * 2 > len(s)):
            os.unlink(p)
            dropped += 1
        else:
            kept += 1
    print(f'filter_foreign: {corpus}: kept {kept}, dropped {dropped}', file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
