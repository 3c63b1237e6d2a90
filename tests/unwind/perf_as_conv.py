#!/usr/bin/env python3
"""A stand-in for conv made of perf, to test test_unwind.py itself
(`test_unwind.py --selftest WORKDIR`): it takes conv's options and writes a
pprof of perf's own unwinding, so the comparisons must pass on it.

usage: perf_as_conv.py [conv's options] --pprof OUT.pb.gz [--jfr J] [--stats S] FILE

perf runs as test_unwind.py runs it (its perf_samples: `perf script
--no-inline --no-demangle`, names demangled with c++filt -i) with HOME =
$UNWIND_PERF_HOME, the private build-id cache test_unwind.py made. Each perf
sample becomes one pprof sample (value 1, label tid) whose locations are
perf's frames: kernel frames under a mapping [kernel.kallsyms] at their
addresses; user frames under a mapping named by perf's DSO with start 0 and
file offset 0, the address being perf's (a file offset, at return address - 1
for callers, as perf prints them), one line naming perf's symbol (with its
version suffix: test_unwind.py drops those on both sides). No truncation
frames (perf gives no reason), no JFR, and a --stats file without an
"unwind" object: test_unwind.py skips those checks with --selftest.
Python 3 standard library only.
"""
import gzip
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_unwind as tu  # noqa: E402

WITH_VALUE = {"--pprof", "--jfr", "--stats", "--debuginfod", "--cache-dir", "--jit-dir", "-d",
              "--debug-dir", "-o", "--output", "-F", "--format", "--timeout", "-j", "--jobs"}


def varint(x):
    out = bytearray()
    while True:
        b = x & 0x7f
        x >>= 7
        if x:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(num, value):
    """A protobuf field: int (varint), bytes/str (length-delimited), list of ints (packed)."""
    if isinstance(value, int):
        return varint(num << 3) + varint(value)
    if isinstance(value, str):
        value = value.encode()
    if isinstance(value, list):
        value = b"".join(varint(v) for v in value)
    return varint(num << 3 | 2) + varint(len(value)) + value


class Profile:
    def __init__(self):
        self.strings = {"": 0}
        self.body = bytearray()
        self.maps, self.funcs, self.locs = {}, {}, {}

    def s(self, text):
        if text not in self.strings:
            self.strings[text] = len(self.strings)
        return self.strings[text]

    def mapping(self, name, kernel):
        if name not in self.maps:
            mid = len(self.maps) + 1
            self.maps[name] = mid
            self.body += field(3, field(1, mid) + field(2, 0) + field(3, (1 << 64) - 1 if kernel else 1 << 47) +
                               field(4, 0) + field(5, self.s(name)))
        return self.maps[name]

    def function(self, name):
        if name not in self.funcs:
            fid = len(self.funcs) + 1
            self.funcs[name] = fid
            self.body += field(5, field(1, fid) + field(2, self.s(name)) + field(3, self.s(name)))
        return self.funcs[name]

    def location(self, mid, addr, name):
        key = (mid, addr, name)
        if key not in self.locs:
            lid = len(self.locs) + 1
            self.locs[key] = lid
            line = field(1, self.function(name))
            self.body += field(4, field(1, lid) + field(2, mid) + field(3, addr) + field(4, line))
        return self.locs[key]

    def sample(self, locs, tid):
        label = field(1, self.s("tid")) + field(3, tid)
        self.body += field(2, field(1, locs) + field(2, [1]) + field(3, label))

    def write(self, path):
        head = field(1, field(1, self.s("cpu-clock_samples")) + field(2, self.s("count")))
        strings = b"".join(field(6, t) for t, _ in sorted(self.strings.items(), key=lambda kv: kv[1]))
        with gzip.open(path, "wb") as f:
            f.write(head + bytes(self.body) + strings)


def main():
    args, opts, i = sys.argv[1:], {}, 0
    files = []
    while i < len(args):
        if args[i] in WITH_VALUE and i + 1 < len(args):
            opts[args[i]] = args[i + 1]
            i += 2
        elif args[i].startswith("-"):
            i += 1
        else:
            files.append(args[i])
            i += 1
    home = os.environ.get("UNWIND_PERF_HOME")
    if len(files) != 1 or "--pprof" not in opts or not home:
        sys.stderr.write("perf_as_conv.py: one FILE, --pprof and $UNWIND_PERF_HOME are needed\n")
        return 1
    got = tu.perf_samples(files[0], home)
    if got[0] is None:
        sys.stderr.write("perf_as_conv.py: %s\n" % got[1])
        return 2
    samples, _ = got
    prof = Profile()
    kmap = prof.mapping("[kernel.kallsyms]", True)
    for s in samples:
        locs = [prof.location(kmap, tu.KERNEL_START + k, "[kernel]") for k in range(s.kernel)]
        for name, dso, addr in s.user:
            locs.append(prof.location(prof.mapping(dso, False), addr, name))
        prof.sample(locs, s.tid)
    prof.write(opts["--pprof"])
    if "--stats" in opts:
        with open(opts["--stats"], "w") as f:
            json.dump({"samples_total": len(samples), "stand_in": "perf_as_conv.py"}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
