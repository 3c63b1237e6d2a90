#!/usr/bin/env python3
"""conv's JFR types have JDK 17's field layouts; its threads are keyed by OS thread id.

usage: test_jfr_layout.py CONV WORKDIR [--part fixtures|corpus]
       test_jfr_layout.py --write-reference   (rewrites jdk17-layouts.json with JDK 17)

Readers older than the JDK's own read some event types field by field in the
order JDK 17 writes them, whatever the file's metadata says: async-profiler's
converter up to 2.10 reads jdk.ActiveSetting as (startTime, duration,
eventThread, [stackTrace,] id, name, value) and fails on any other layout
("Invalid string encoding at JfrReader.readActiveSetting"). So every type conv
writes must have the layout JDK 17 gives it. This test reads conv's JFR files
with a JFR parser of its own (Python, standard library only; written from the
format notes, no JDK needed) and checks, per file and chunk:

  * every event type conv declares that JDK 17 also declares has JDK 17's
    fields: the same names, types, constant-pool flags and array dimensions in
    the same order, and the same super type. Fields after JDK 17's last are
    allowed only where listed in EXTRA_FIELDS (jdk.NativeLibrary's buildId
    and loadBias, Datadog's remote-symbolication fields: readers that read
    positionally stop before them, the others read them by the metadata);
  * every other type conv declares that JDK 17 declares (java.lang.Thread,
    jdk.types.*, java.lang.Class, the annotations) has a prefix of JDK 17's
    fields (readers read those from the metadata or a known prefix: a field
    JDK 17 adds at the end, such as Thread's group, is simply absent) and
    the same simpleType;
  * conv's own event types (perf.*) follow the rules every reader assumes:
    field 0 startTime (long), a duration field only at index 1, the thread
    in eventThread and the stack in stackTrace (constant-pool references);
  * every event record and every checkpoint decodes by the file's metadata to
    exactly its size (the bytes written follow the layout declared);
  * the java.lang.Thread pool's keys equal the entries' osThreadId (as
    async-profiler keys threads: its --threads view shows the key), except
    for the tids that cannot be keys: 0 (JFR's null reference, which
    async-profiler 2.10 refuses as a key) and those above 2^31 - 1 (perf's
    -1; async-profiler reads keys as 32-bit ints), whose keys must be
    positive 32-bit numbers that are no thread's tid; keys are unique in a
    chunk, name the same thread in every chunk, and every sample event's
    thread is in the pool;
  * per OS thread id, the sample events of the JFR equal the samples of the
    same run's pprof (its tid label): the thread keys carry the right samples.

The reference (JDK 17's layouts): a recording made here by
`java -XX:StartFlightRecording=filename=REF -version` when the installed java
is JDK 17, read with the same parser; it must equal the committed
jdk17-layouts.json (made that way with --write-reference), which serves
alone when no JDK 17 is installed.

Inputs: tests/fixtures/*.data, tests/fixtures/attr/*.data, samples/perf.data
(samples/perf.data and tests/fixtures/syswide.data also with
--jfr-chunk-size 4k, several chunks), and the shared corpus when present
(../shared/corpus or $CONV_CORPUS: quipper/, perfparser/, linux-perf-data/).
Files conv does not convert (exit 2) are skipped.

Prints ok/FAIL/SKIP lines and `N passed, M failed, K skipped`; exit 1 on a
failure, 77 (SKIP) when there is no input or no reference.
"""
import collections
import glob
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "tools"))
sys.dont_write_bytecode = True
import pprofdec  # noqa: E402

REFERENCE = os.path.join(HERE, "jdk17-layouts.json")
CORPUS = os.environ.get("CONV_CORPUS", os.path.join(os.path.dirname(REPO), "shared", "corpus"))
RECIPE = ("java -XX:StartFlightRecording=filename=REF.jfr -version with JDK 17 "
          "(Debian openjdk-17), the first chunk's metadata read by tests/jfr/test_jfr_layout.py "
          "--write-reference")
# fields conv writes after JDK 17's last, by type (see the docstring)
EXTRA_FIELDS = {
    "jdk.NativeLibrary": [["buildId", "java.lang.String", False, 0],
                          ["loadBias", "long", False, 0]],
}
EVENT = "jdk.jfr.Event"
# the types the committed reference holds: those conv writes, and the JDK types a
# perf converter may write next (the format notes' recording-level events)
REFERENCE_TYPES = (
    "boolean", "char", "float", "double", "byte", "short", "int", "long", "java.lang.String",
    "jdk.jfr.Label", "jdk.jfr.Description", "jdk.jfr.Category", "jdk.jfr.Timestamp",
    "jdk.jfr.Timespan", "jdk.jfr.Unsigned", "jdk.jfr.MemoryAddress", "jdk.jfr.DataAmount",
    "jdk.jfr.Percentage", "java.lang.Thread", "jdk.types.ThreadGroup", "jdk.types.StackTrace",
    "jdk.types.StackFrame", "jdk.types.Method", "java.lang.Class", "jdk.types.ClassLoader",
    "jdk.types.Package", "jdk.types.Module", "jdk.types.Symbol", "jdk.types.FrameType",
    "jdk.types.ThreadState", "jdk.ExecutionSample", "jdk.NativeMethodSample",
    "jdk.ActiveSetting", "jdk.ActiveRecording", "jdk.OSInformation", "jdk.CPUInformation",
    "jdk.NativeLibrary", "jdk.JVMInformation", "jdk.InitialSystemProperty", "jdk.CPULoad")
SAMPLE_TYPES = ("jdk.ExecutionSample", "jdk.NativeMethodSample")
passed = failed = skipped = 0


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    print(("ok   " + name) if cond else ("FAIL %s  -- %s" % (name, detail)))
    sys.stdout.flush()
    return cond


def skip(name, why):
    global skipped
    skipped += 1
    print("SKIP %s: %s" % (name, why))


# ------------------------------------------------------------------ JFR parser
class Bad(Exception):
    pass


class Cur:
    """A cursor over bytes: JFR varints, bytes, strings."""

    def __init__(self, data, pos, end):
        self.d, self.p, self.end = data, pos, end

    def byte(self):
        if self.p >= self.end:
            raise Bad("read past the end at %d" % self.p)
        self.p += 1
        return self.d[self.p - 1]

    def varint(self):
        v = 0
        for i in range(9):
            c = self.byte()
            if i == 8:
                return v | c << 56
            v |= (c & 0x7f) << (7 * i)
            if c < 0x80:
                return v
        return v

    def raw(self, n):
        if n > self.end - self.p:
            raise Bad("%d bytes past the end at %d" % (n, self.p))
        self.p += n
        return self.d[self.p - n:self.p]

    def string(self):
        enc = self.byte()
        if enc == 0:
            return None
        if enc == 1:
            return ""
        if enc == 2:
            return ("string-pool", self.varint())
        if enc == 3:
            return self.raw(self.varint()).decode("utf-8")
        if enc == 4:
            return "".join(chr(self.varint()) for _ in range(self.varint()))
        if enc == 5:
            return self.raw(self.varint()).decode("latin-1")
        raise Bad("string encoding %d at %d" % (enc, self.p - 1))


def be(b, off, n):
    return int.from_bytes(b[off:off + n], "big")


def read_element(c, strs):
    name = strs[c.varint()]
    attrs = {}
    for _ in range(c.varint()):
        k = strs[c.varint()]
        attrs[k] = strs[c.varint()]
    kids = [read_element(c, strs) for _ in range(c.varint())]
    return name, attrs, kids


def read_metadata(data, pos, end):
    """{class id: dict(id, name, super, simple, fields=[dict(name, type, cp, dim)])}."""
    c = Cur(data, pos, end)
    size = c.varint()
    c.end = min(end, pos + size)
    if c.varint() != 0:
        raise Bad("the metadata offset holds no metadata record")
    c.varint(), c.varint(), c.varint()  # start, duration, metadata id
    strs = [c.string() for _ in range(c.varint())]
    name, _, kids = read_element(c, strs)
    if name != "root":
        raise Bad("metadata root element is %r" % name)
    classes = {}
    for kname, _, kkids in kids:
        if kname != "metadata":
            continue
        for cname, ca, ckids in kkids:
            if cname != "class":
                continue
            fields = [dict(name=fa["name"], type=int(fa["class"]),
                           cp=fa.get("constantPool") == "true", dim=int(fa.get("dimension", "0")))
                      for fname, fa, _ in ckids if fname == "field"]
            cid = int(ca["id"])
            classes[cid] = dict(id=cid, name=ca["name"], super=ca.get("superType"),
                                simple=ca.get("simpleType") == "true", fields=fields)
    return classes


def layouts(classes):
    """{type name: dict(super, simple, fields=[[name, type name, cp, dim]])}."""
    out = {}
    for c in classes.values():
        out[c["name"]] = dict(super=c["super"], simple=c["simple"],
                              fields=[[f["name"], classes[f["type"]]["name"]
                                       if f["type"] in classes else "#%d" % f["type"],
                                       f["cp"], f["dim"]] for f in c["fields"]])
    return out


PRIMITIVES = {"boolean", "byte", "char", "short", "int", "long", "float", "double",
              "java.lang.String"}


def read_value(c, classes, tid):
    """A value of type tid: a primitive, or the list of its fields."""
    t = classes.get(tid)
    if t is None:
        raise Bad("type %d is not declared" % tid)
    n = t["name"]
    if not t["fields"]:
        if n in ("boolean", "byte"):
            return c.byte()
        if n in ("char", "short", "int", "long"):
            return c.varint()
        if n == "float":
            return c.raw(4)
        if n == "double":
            return c.raw(8)
        if n == "java.lang.String":
            return c.string()
        raise Bad("field-less type %s is not a primitive" % n)
    return [read_field(c, classes, f) for f in t["fields"]]


def read_field(c, classes, f):
    if f["dim"]:
        return [read_one(c, classes, f) for _ in range(c.varint())]
    return read_one(c, classes, f)


def read_one(c, classes, f):
    if f["cp"]:
        return ("ref", c.varint())
    return read_value(c, classes, f["type"])


def read_chunks(data):
    """Every chunk: dict(classes, pools {type name: {key: value}}, events [(type name,
    value)], problems [str])."""
    chunks, off = [], 0
    while off < len(data):
        h = data[off:off + 68]
        if len(h) < 68 or h[:4] != b"FLR\0":
            raise Bad("no chunk header at %d" % off)
        size, cp, meta = be(h, 8, 8), be(h, 16, 8), be(h, 24, 8)
        if size < 68 or size > len(data) - off:
            raise Bad("chunk at %d: size %d" % (off, size))
        end = off + size
        ch = dict(classes=read_metadata(data, off + meta, end), pools={}, events=[],
                  problems=[])
        classes = ch["classes"]
        # the checkpoints, newest first through their deltas
        at = off + cp
        seen = set()
        while at not in seen:
            seen.add(at)
            c = Cur(data, at, end)
            rsize = c.varint()
            c.end = at + rsize
            if c.varint() != 1:
                raise Bad("no checkpoint at %d" % at)
            c.varint(), c.varint()
            delta = c.varint()
            delta = delta - (1 << 64) if delta >= 1 << 63 else delta
            c.byte()
            for _ in range(c.varint()):
                t = c.varint()
                pool = ch["pools"].setdefault(classes[t]["name"] if t in classes else "#%d" % t,
                                              {})
                for _ in range(c.varint()):
                    k = c.varint()
                    if k in pool:
                        ch["problems"].append("pool %s: key %d twice" % (classes[t]["name"], k))
                    pool[k] = read_value(c, classes, t)
            if c.p != c.end:
                ch["problems"].append("checkpoint at %d: %d bytes, its pools %d" % (
                    at - off, rsize, c.p - at))
            if delta == 0:
                break
            at += delta
        pos = off + 68
        while pos < end:
            c = Cur(data, pos, end)
            rsize = c.varint()
            if rsize == 0 or rsize > end - pos:
                raise Bad("record at %d: size %d" % (pos - off, rsize))
            c.end = pos + rsize
            t = c.varint()
            if t > 1:
                if t not in classes:
                    ch["problems"].append("event type %d is not declared" % t)
                else:
                    try:
                        v = read_value(c, classes, t)
                        if c.p != c.end:
                            ch["problems"].append("%s event at %d: %d bytes, its fields %d" % (
                                classes[t]["name"], pos - off, rsize, c.p - pos))
                        ch["events"].append((classes[t]["name"], v))
                    except Bad as e:
                        ch["problems"].append("%s event at %d: %s" % (classes[t]["name"],
                                                                      pos - off, e))
            pos += rsize
        chunks.append(ch)
        off = end
    return chunks


# ------------------------------------------------------------------ the reference
def java17():
    """The installed java if it is JDK 17, else None."""
    java = shutil.which("java")
    if not java:
        return None
    try:
        r = subprocess.run([java, "-version"], stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)', r.stderr.decode(errors="replace"))
    return java if m and m.group(1) == "17" else None


def jdk17_layouts(work):
    """(layouts, JDK version, "") of a JDK 17 recording made here, or (None, None, why)."""
    java = java17()
    if not java:
        return None, None, "the installed java is not JDK 17"
    ref = os.path.join(work, "jdk17.jfr")
    try:
        r = subprocess.run([java, "-XX:StartFlightRecording=filename=" + ref, "-version"],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, None, "java -XX:StartFlightRecording timed out"
    if r.returncode != 0 or not os.path.exists(ref):
        return None, None, "java -XX:StartFlightRecording: exit %d" % r.returncode
    ver = re.search(r"\(build ([^)]+)\)", r.stderr.decode(errors="replace"))
    with open(ref, "rb") as f:
        data = f.read()
    try:
        chunk = read_chunks(data)[0]
    except (Bad, KeyError, ValueError, IndexError) as e:
        return None, None, "the JDK 17 recording does not parse: %s" % e
    return layouts(chunk["classes"]), ver.group(1) if ver else "17", ""


def write_reference():
    work = tempfile.mkdtemp(prefix="jfr-layout-ref.")
    try:
        lay, ver, why = jdk17_layouts(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if lay is None:
        sys.stderr.write("cannot make the reference: %s\n" % why)
        return 1
    # one type a line: a readable diff when the reference changes
    lay = {t: lay[t] for t in REFERENCE_TYPES if t in lay}
    lines = ['{"recipe": %s,' % json.dumps(RECIPE), ' "jdk": %s,' % json.dumps(ver),
             ' "types": {']
    names = sorted(lay)
    for i, n in enumerate(names):
        lines.append("  %s: %s%s" % (json.dumps(n), json.dumps(lay[n], sort_keys=True),
                                     "," if i + 1 < len(names) else ""))
    lines.append(" }}")
    with open(REFERENCE, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %s: %d types of JDK %s" % (REFERENCE, len(names), ver))
    return 0


# ------------------------------------------------------------------ pprof: samples per tid
def pprof_samples_by_tid(path):
    """Counter tid -> samples (the sum of the *_samples values), from the pprof's tid label
    (tests/tools/pprofdec.py reads the gzipped profile)."""
    with gzip.open(path, "rb") as f:
        p = pprofdec.parse(f.read(), errors="replace")
    counts = [i for i, (t, _) in enumerate(p["types"]) if t.endswith("_samples")]
    out = collections.Counter()
    for (_, vals, _), labels in zip(p["samples"], p["labels"]):
        tid = [num for key, _, num, _ in labels if key == "tid"]
        n = sum(vals[i] for i in counts if i < len(vals))
        if tid and n:
            # a 32-bit thread id: perf's -1 (a task at exit, as perf script prints it) is
            # the JFR's osThreadId 4294967295
            out[tid[0] % (1 << 32)] += n
    return out


# ------------------------------------------------------------------ checks of one file
def check_types(name, chunks, ref, complete):
    """The layout checks of every chunk's metadata (one line per kind of check); complete:
    ref holds every JDK 17 type (else only REFERENCE_TYPES)."""
    events, others, own, unknown = [], [], [], []
    seen = set()
    for ch in chunks:
        for t, lay in sorted(layouts(ch["classes"]).items()):
            key = (t, json.dumps(lay, sort_keys=True))
            if key in seen:
                continue
            seen.add(key)
            r = ref.get(t)
            if r is None and not complete and t.startswith(("jdk.", "java.")):
                unknown.append(t)
            elif lay["super"] == EVENT and r is not None:
                want = r["fields"] + EXTRA_FIELDS.get(t, [])
                n = len(r["fields"])
                ok = (lay["super"] == r["super"] and lay["fields"][:n] == r["fields"] and
                      lay["fields"][n:] in (want[n:], []))
                events.append((t, ok, "conv %s; JDK 17 %s" % (lay["fields"], r["fields"])))
            elif r is not None:
                n = len(lay["fields"])
                ok = (lay["super"] == r["super"] and lay["simple"] == r["simple"] and
                      lay["fields"] == r["fields"][:n])
                others.append((t, ok, "conv %s simple=%s; JDK 17 %s simple=%s" % (
                    lay["fields"], lay["simple"], r["fields"], r["simple"])))
            elif lay["super"] == EVENT:
                f = lay["fields"]
                why = []
                if not f or f[0][:2] != ["startTime", "long"]:
                    why.append("field 0 is not startTime (long)")
                if any(x[0] == "duration" for x in f[2:]) or (
                        len(f) > 1 and f[1][0] == "duration" and f[1][1] != "long"):
                    why.append("duration elsewhere than field 1 (long)")
                for x in f:
                    if x[1] == "java.lang.Thread" and (x[0] != "eventThread" or not x[2]):
                        why.append("thread field %s" % x)
                    if x[1] == "jdk.types.StackTrace" and (x[0] != "stackTrace" or not x[2]):
                        why.append("stack field %s" % x)
                own.append((t, not why, "; ".join(why) + " in %s" % f))
    check("%s: every JDK-named type is in the reference" % name, not unknown,
          "%s: add them to REFERENCE_TYPES, then --write-reference with JDK 17" % unknown)
    for kind, lst in (("event types as JDK 17 has them", events),
                      ("other types a prefix of JDK 17's", others),
                      ("conv's own event types follow the readers' rules", own)):
        bad = [(t, d) for t, ok, d in lst if not ok]
        check("%s: %s (%s)" % (name, kind, ", ".join(sorted({t for t, _, _ in lst})) or "none"),
              not bad, " | ".join("%s: %s" % x for x in bad[:4]))


def check_threads(name, chunks, pprof):
    """Thread keys: a thread's key is its osThreadId, but for the tids that cannot be keys
    (0, JFR's null reference; above 2^31 - 1, where async-profiler reads keys as 32-bit ints),
    whose keys are other positive 32-bit numbers that are no thread's tid. A key names the
    same thread in every chunk; every sample event's thread is in its chunk's pool."""
    problems, sample_tids, odd = [], collections.Counter(), {}
    key_tid = {}  # over all chunks
    for i, ch in enumerate(chunks):
        cls = {c["name"]: c for c in ch["classes"].values()}
        th = cls.get("java.lang.Thread")
        pool = ch["pools"].get("java.lang.Thread", {})
        if th is None:
            continue
        fn = [f["name"] for f in th["fields"]]
        if "osThreadId" not in fn:
            problems.append("chunk %d: java.lang.Thread has no osThreadId" % i)
            continue
        k_os = fn.index("osThreadId")
        tids = {v[k_os] for v in pool.values()}
        for k, v in sorted(pool.items()):
            tid = v[k_os]
            if key_tid.setdefault(k, tid) != tid:
                problems.append("chunk %d: thread key %d has osThreadId %d, %d before" % (
                    i, k, tid, key_tid[k]))
            if 0 < tid < 1 << 31:
                if k != tid:
                    problems.append("chunk %d: thread key %d has osThreadId %d" % (i, k, tid))
            elif not 0 < k < 1 << 31 or k in tids:
                problems.append("chunk %d: thread key %d for osThreadId %d is not a free "
                                "positive 32-bit number" % (i, k, tid))
            else:
                odd[tid] = k
        for t, v in ch["events"]:
            c = cls[t]
            if c["super"] != EVENT:
                continue
            names = [f["name"] for f in c["fields"]]
            tf = "sampledThread" if "sampledThread" in names else "eventThread"
            if t not in SAMPLE_TYPES and not t.startswith("perf.") or tf not in names:
                continue  # not a sample (settings, system facts)
            ref = v[names.index(tf)]
            if ref[1] not in pool:
                problems.append("chunk %d: %s event's thread %d is not in the pool" % (
                    i, t, ref[1]))
                continue
            sample_tids[pool[ref[1]][k_os]] += 1
    check("%s: thread keys are OS thread ids (%d threads with samples%s)" % (
        name, len(sample_tids), "; tid -> key %s" % dict(sorted(odd.items())) if odd else ""),
          not problems, "; ".join(problems[:4]))
    if pprof is not None:
        diff = {t: (sample_tids.get(t, 0), pprof.get(t, 0))
                for t in set(sample_tids) | set(pprof) if sample_tids.get(t, 0) != pprof.get(t, 0)}
        check("%s: sample events per thread equal pprof's samples per tid (%d samples)" % (
            name, sum(sample_tids.values())), not diff,
              "tid: (jfr, pprof) %s" % dict(sorted(diff.items())[:6]))


def inputs(part):
    files = []
    if part != "corpus":
        files = sorted(glob.glob(os.path.join(REPO, "tests", "fixtures", "*.data")) +
                       glob.glob(os.path.join(REPO, "tests", "fixtures", "attr", "*.data")))
        files.append(os.path.join(REPO, "samples", "perf.data"))
        files = [f for f in files if os.path.isfile(f)]
    if part == "fixtures":
        pass
    elif os.path.isdir(CORPUS):
        for d in ("quipper", "perfparser", "linux-perf-data"):
            for f in sorted(glob.glob(os.path.join(CORPUS, d, "**", "*"), recursive=True)):
                if os.path.isfile(f):
                    with open(f, "rb") as fh:
                        if fh.read(8) in (b"PERFILE2", b"2ELIFREP"):
                            files.append(f)
    else:
        skip("shared corpus", "no directory %s (repo recordings only)" % CORPUS)
    return files


CHUNKED = ("samples/perf.data", "tests/fixtures/syswide.data")


def main():
    a = sys.argv[1:]
    if a == ["--write-reference"]:
        return write_reference()
    part = None  # --part fixtures|corpus: the repository's recordings or the shared corpus
    if "--part" in a:
        i = a.index("--part")
        part = a[i + 1] if i + 1 < len(a) else ""
        del a[i:i + 2]
        if part not in ("fixtures", "corpus"):
            sys.stderr.write("--part takes fixtures or corpus\n")
            return 2
    if part == "corpus" and not os.path.isdir(CORPUS):
        print("SKIP: corpus not found at %s\n0 passed, 0 failed, 1 skipped" % CORPUS)
        return 77
    if len(a) != 2:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    conv, work = os.path.abspath(a[0]), os.path.abspath(a[1])
    t0 = time.monotonic()
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    no_jit = os.path.join(work, "no-jit")  # no perf map of /tmp plays a part
    os.makedirs(no_jit)
    committed = None
    if os.path.exists(REFERENCE):
        with open(REFERENCE) as f:
            committed = json.load(f)["types"]
    live, ver, why = jdk17_layouts(work)
    if live is not None and committed is not None:
        diff = sorted(t for t in set(REFERENCE_TYPES) | set(committed)
                      if live.get(t) != committed.get(t))
        check("jdk17-layouts.json is JDK %s's (%d types)" % (ver, len(committed)), not diff,
              "differs in %s (rewrite with --write-reference)" % diff[:8])
    elif live is None:
        skip("a JDK 17 recording as the reference", why + "; the committed reference serves")
    ref = live if live is not None else committed
    if ref is None:
        print("SKIP: no JDK 17 and no %s\n0 passed, 0 failed, 1 skipped" % REFERENCE)
        return 77
    files = inputs(part)
    if not files:
        print("SKIP: no input files\n0 passed, 0 failed, 1 skipped")
        return 77
    nfiles = 0
    for i, f in enumerate(files):
        name = os.path.relpath(f, os.path.dirname(REPO))
        runs = [("", [])]
        if any(f.endswith(x) for x in CHUNKED):
            runs.append((" --jfr-chunk-size 4k", ["--jfr-chunk-size", "4k"]))
        for label, extra in runs:
            jf = os.path.join(work, "f%03d.jfr" % i)
            pp = os.path.join(work, "f%03d.pb.gz" % i)
            r = subprocess.run([conv, "-q", "--offline", "--jit-dir", no_jit] + extra +
                               ["--jfr", jf, "--pprof", pp, f], stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=300)
            if r.returncode == 2:
                skip(name, "conv exits 2 (not convertible)")
                break
            if not check("%s%s: conv writes JFR and pprof" % (name, label),
                         r.returncode == 0 and os.path.exists(jf) and os.path.exists(pp),
                         "exit %d: %s" % (r.returncode, r.stderr.decode(errors="replace")[-300:])):
                break
            with open(jf, "rb") as fh:
                data = fh.read()
            try:
                chunks = read_chunks(data)
            except (Bad, KeyError, ValueError, IndexError) as e:
                check("%s%s: the JFR parses" % (name, label), False, repr(e))
                continue
            probs = [p for ch in chunks for p in ch["problems"]]
            check("%s%s: %d chunk(s), %d events: every record decodes by the metadata to its "
                  "size" % (name, label, len(chunks), sum(len(c["events"]) for c in chunks)),
                  not probs, "; ".join(probs[:4]))
            check_types(name + label, chunks, ref, live is not None)
            try:
                pprof = pprof_samples_by_tid(pp)
            except (OSError, ValueError, IndexError) as e:
                check("%s%s: the pprof parses" % (name, label), False, repr(e))
                pprof = None
            check_threads(name + label, chunks, pprof)
            nfiles += 1
            for x in (jf, pp):
                os.unlink(x)
    print("%d outputs read; %.0fs" % (nfiles, time.monotonic() - t0))
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
