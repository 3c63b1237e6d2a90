#!/usr/bin/env python3
"""Write a JFR file whose native frames are "remote symbolication" frames.

usage: gen_remote_jfr.py OUT.jfr BINARY [BINARY...] --samples SPEC
                         [--conv-style [--conv-old-descriptor]] [--base NAME=0xADDR]... [--start-ns N]
                         [--dd-frame-type 7|3] [--frame-type-7 TEXT]

A test generator for `conv symbolize`: it makes the input a symbolizer of
JFR files must name, from ELF files (each with a GNU build-id) and stacks
given as ELF virtual addresses (what `addr2line -e BINARY ADDR` takes).
Python 3 standard library only.

SPEC is a JSON file (or "-" for standard input, or the JSON text itself if it
starts with "["): a list of samples, each
    {"thread": 1234, "time_ns": 1000, "frames": [["NAME", "0x1139"], ...]}
with frames leaf first; NAME is a BINARY as given on the command line or its
basename; the address is a hex ("0x...") or decimal string, or a number, and
must lie in one of the binary's PT_LOAD segments. Optional per sample:
"truncated" (bool), "thread_name" (string).

The invented process layout (per BINARY, in command-line order):
  * ET_EXEC (non-PIE): not relocated, loadBias = 0.
  * ET_DYN (PIE, shared object): loadBias = 0x7f3a12300000 + i * 0x10000000
    (i = the binary's index), rounded up to its largest PT_LOAD p_align;
    --base NAME=0xADDR sets the runtime address of file offset 0 instead.
  * image base (where file offset 0 is mapped) = loadBias + (p_vaddr -
    p_offset) of the lowest PT_LOAD; top = loadBias + end of the highest
    PT_LOAD (p_vaddr + p_memsz), page-rounded.
  * runtime address of a frame = ELF vaddr + loadBias.

The file (one chunk, JFR 2.0, layout: header | events | checkpoint | metadata):
  * jdk.NativeLibrary per binary, Datadog's fields (DataDog/java-profiler
    ddprof-lib/src/main/cpp/jfrMetadata.cpp type("jdk.NativeLibrary") and
    flightRecorder.cpp Recording::writeNativeLibraries):
      startTime long @Timestamp(TICKS), name String (absolute path),
      baseAddress long, topAddress long, buildId String (lowercase hex),
      loadBias long  (the three longs @Unsigned @MemoryAddress)
    here baseAddress = image base, topAddress = top, loadBias = runtime
    address - ELF vaddr (0 for ET_EXEC).  NB Datadog itself writes
    baseAddress/topAddress = the executable mapping's bounds and
    loadBias = the image base (libraries_linux.cpp updateBuildIds:
    setLoadBias(imageBase())); the two agree on loadBias only when file
    offset 0 has ELF address 0 (PIE, .so), never on baseAddress.
  * jdk.ExecutionSample(startTime, sampledThread, stackTrace, state =
    STATE_DEFAULT) per sample; Thread key = tid.
  * default (Datadog style, flightRecorder.cpp Lookup::fillRemoteFrameInfo
    and writeStackTraces): Method = class "<build-id>", name "<remote>",
    descriptor "0x<offset>" (no parentheses; offset = runtime address -
    image base, %lx), modifiers 0x100, hidden false; StackFrame lineNumber 0,
    bytecodeIndex -19 (BCI_NATIVE_FRAME_REMOTE, as Datadog writes the frame's
    bci), type key 7 (FRAME_NATIVE_REMOTE, frame.h). Like Datadog's
    (Recording::writeFrameTypes) the FrameType pool has keys 0-6 only, so key
    7 dangles (the JDK reads the frame's type as null); --frame-type-7 TEXT
    adds a pool entry 7 = TEXT, --dd-frame-type 3 writes Native instead.
  * --conv-style (conv's own unsymbolized frames, jfrwriter/jfr.c): the same
    class and method name, descriptor "(L0x<ELF vaddr>;)L;" (jfr print shows
    "<remote>(0x<ELF vaddr>)"), lineNumber 0, bytecodeIndex 0, type 3
    "Native"; with --conv-old-descriptor "(0x<ELF vaddr>)", as conv wrote it
    before (jfr print shows "<remote>(<unknown-descriptor-type>, ...)").
  * jdk.ActiveSetting (JDK 17 layout) event=cpu-clock, interval=1000000 and
    gen_remote_jfr.marker=MARKER, and jdk.OSInformation osVersion=MARKER text:
    events a symbolizer must copy unchanged.

Getting the ELF address back (what a symbolizer must do):
  Datadog style: vaddr = offset + baseAddress - loadBias
                       = offset + (p_vaddr - p_offset of the lowest PT_LOAD)
                 (the second form needs only the ELF file, and is right for
                 real Datadog files too, whose loadBias is the image base).
  conv style:    vaddr = the number in the descriptor.

Prints one summary line to stderr; exits 2 with a message on bad input.
"""
import argparse
import json
import os
import struct
import sys

PAGE = 0x1000
DYN_BASE = 0x7f3a12300000
DYN_STRIDE = 0x10000000
MARKER = "gen_remote_jfr keep-me 5f1e"
OS_VERSION = "uname: Linux gen-remote-jfr 6.1.0 #1 SMP x86_64 (" + MARKER + ")"

BCI_NATIVE_FRAME_REMOTE = -19
FRAME_NATIVE = 3
FRAME_NATIVE_REMOTE = 7
ACC_NATIVE = 0x100
CONV_DESC = "(L0x%x;)L;"      # conv's remote frame descriptor (jfrwriter/jfr.c)
CONV_OLD_DESC = "(0x%x)"      # as conv wrote it before; conv symbolize still reads it
FRAME_TYPES = ["Interpreted", "JIT compiled", "Inlined", "Native", "C++", "Kernel",
               "C1 compiled"]
THREAD_STATES = ["STATE_DEFAULT", "STATE_RUNNABLE", "STATE_SLEEPING"]


class Bad(Exception):
    pass


# ---------------------------------------------------------------- ELF

class Elf:
    def __init__(self, path, index):
        self.path = path
        self.abspath = os.path.abspath(path)
        self.index = index
        try:
            with open(path, "rb") as f:
                self.data = f.read()
        except OSError as e:
            raise Bad("%s: %s" % (path, e.strerror))
        d = self.data
        if len(d) < 52 or d[:4] != b"\x7fELF":
            raise Bad("%s: not an ELF file" % path)
        cls, enc = d[4], d[5]
        if cls not in (1, 2) or enc not in (1, 2):
            raise Bad("%s: bad ELF class/encoding" % path)
        self.e = "<" if enc == 1 else ">"
        self.is64 = cls == 2
        e = self.e
        if self.is64:
            (self.etype, _mach, _ver, _entry, phoff, shoff, _flags, _ehsz, phentsz, phnum,
             shentsz, shnum, _shstrndx) = self.unpack(e + "HHIQQQIHHHHHH", 16)
        else:
            (self.etype, _mach, _ver, _entry, phoff, shoff, _flags, _ehsz, phentsz, phnum,
             shentsz, shnum, _shstrndx) = self.unpack(e + "HHIIIIIHHHHHH", 16)
        if self.etype not in (2, 3):
            raise Bad("%s: ELF type %d is neither EXEC nor DYN" % (path, self.etype))
        self.loads = []     # (p_offset, p_vaddr, p_filesz, p_memsz, p_align)
        notes = []          # (offset, size, align)
        for i in range(phnum):
            o = phoff + i * phentsz
            if self.is64:
                p_type, _fl, p_off, p_vaddr, _pa, p_filesz, p_memsz, p_align = \
                    self.unpack(e + "IIQQQQQQ", o)
            else:
                p_type, p_off, p_vaddr, _pa, p_filesz, p_memsz, _fl, p_align = \
                    self.unpack(e + "IIIIIIII", o)
            if p_type == 1:
                self.loads.append((p_off, p_vaddr, p_filesz, p_memsz, p_align))
            elif p_type == 4:
                notes.append((p_off, p_filesz, p_align))
        if not self.loads:
            raise Bad("%s: no PT_LOAD program header" % path)
        self.loads.sort(key=lambda l: l[1])
        self.build_id = None
        for off, size, align in notes:
            self.build_id = self.find_build_id(off, size, align)
            if self.build_id:
                break
        if not self.build_id:   # no PT_NOTE: look at the SHT_NOTE sections
            for i in range(shnum if shoff else 0):
                o = shoff + i * shentsz
                if self.is64:
                    _n, sh_type, _f, _a, sh_off, sh_size, _l, _i, sh_align, _es = \
                        self.unpack(e + "IIQQQQIIQQ", o)
                else:
                    _n, sh_type, _f, _a, sh_off, sh_size, _l, _i, sh_align, _es = \
                        self.unpack(e + "IIIIIIIIII", o)
                if sh_type == 7:
                    self.build_id = self.find_build_id(sh_off, sh_size, sh_align)
                    if self.build_id:
                        break
        if not self.build_id:
            raise Bad("%s: no GNU build-id note" % path)
        low = self.loads[0]
        self.file0_vaddr = low[1] - low[0]      # ELF vaddr of file offset 0
        self.end_vaddr = max(l[1] + l[3] for l in self.loads)
        self.max_align = max([PAGE] + [l[4] for l in self.loads if l[4] and
                                       l[4] & (l[4] - 1) == 0])

    def unpack(self, fmt, off):
        try:
            return struct.unpack_from(fmt, self.data, off)
        except struct.error:
            raise Bad("%s: truncated ELF file" % self.path)

    def find_build_id(self, off, size, align):
        align = 8 if align == 8 else 4
        pos, end = off, min(off + size, len(self.data))
        while pos + 12 <= end:
            namesz, descsz, ntype = self.unpack(self.e + "III", pos)
            name_at = pos + 12
            desc_at = name_at + ((namesz + align - 1) & ~(align - 1))
            nxt = desc_at + ((descsz + align - 1) & ~(align - 1))
            if nxt > end or nxt <= pos:
                break
            if ntype == 3 and self.data[name_at:name_at + namesz] == b"GNU\0" and descsz:
                return self.data[desc_at:desc_at + descsz].hex()
            pos = nxt
        return None

    def place(self, base0):
        """Sets loadBias, image base and top; base0 = runtime address of file offset 0 or None."""
        if base0 is not None:
            self.load_bias = (base0 - self.file0_vaddr) & 0xFFFFFFFFFFFFFFFF
        elif self.etype == 2:
            self.load_bias = 0
        else:
            b = DYN_BASE + self.index * DYN_STRIDE
            self.load_bias = (b + self.max_align - 1) & ~(self.max_align - 1)
        self.base = (self.load_bias + self.file0_vaddr) & 0xFFFFFFFFFFFFFFFF
        self.top = (self.load_bias + self.end_vaddr + PAGE - 1) & ~(PAGE - 1) & 0xFFFFFFFFFFFFFFFF
        if self.etype == 2 and self.load_bias:
            raise Bad("%s: an ET_EXEC file cannot be relocated (--base)" % self.path)

    def in_load(self, vaddr):
        return any(l[1] <= vaddr < l[1] + l[3] for l in self.loads)


# ---------------------------------------------------------------- JFR encoding

def varint(v):
    if v < 0 or v >= 1 << 64:
        raise ValueError("varint out of range: %d" % v)
    out = bytearray()
    for _ in range(8):
        if v < 0x80:
            out.append(v)
            return bytes(out)
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v & 0xFF)    # 9th byte: all 8 bits
    return bytes(out)


def vint32(v):
    """A Java int field: the unsigned 32-bit value as a varint (at most 5 bytes)."""
    return varint(v & 0xFFFFFFFF)


def padded5(v):
    return bytes([(v & 0x7F) | 0x80, ((v >> 7) & 0x7F) | 0x80, ((v >> 14) & 0x7F) | 0x80,
                  ((v >> 21) & 0x7F) | 0x80, (v >> 28) & 0x7F])


def jstr(s):
    if s is None:
        return b"\x00"
    b = s.encode("utf-8")
    return b"\x03" + varint(len(b)) + b


def record(type_id, payload):
    body = varint(type_id) + payload
    return padded5(5 + len(body)) + body


# type ids: DataDog/java-profiler jfrMetadata.h (the same scheme as async-profiler)
T_BOOLEAN, T_CHAR, T_FLOAT, T_DOUBLE, T_BYTE, T_SHORT, T_INT, T_LONG = range(4, 12)
T_STRING, T_CLASS, T_THREAD, T_CLASS_LOADER, T_FRAME_TYPE, T_THREAD_STATE = range(20, 26)
T_STACK_TRACE, T_STACK_FRAME, T_METHOD, T_PACKAGE, T_SYMBOL = range(26, 31)
T_EXECUTION_SAMPLE, T_ACTIVE_SETTING, T_OS_INFORMATION, T_NATIVE_LIBRARY = 101, 110, 111, 116
A_LABEL, A_CATEGORY, A_TIMESTAMP, A_TIMESPAN = 201, 202, 203, 204
A_MEMORY_ADDRESS, A_UNSIGNED = 206, 207

TICKS = ("ts", "TICKS")
SPAN = ("span", "TICKS")
ADDR = ("addr", None)


def fld(name, cls, label=None, cp=False, array=False, ann=None):
    return (name, cls, label, cp, array, ann)


def type_defs(conv_style):
    cls_fields = [fld("classLoader", T_CLASS_LOADER, "Class Loader", cp=True),
                  fld("name", T_SYMBOL, "Name", cp=True),
                  fld("package", T_PACKAGE, "Package", cp=True),
                  fld("modifiers", T_INT, "Access Modifiers")]
    if conv_style:  # conv (and JDK 17) also have hidden; Datadog stops at modifiers
        cls_fields.append(fld("hidden", T_BOOLEAN, "Hidden"))
    start = fld("startTime", T_LONG, "Start Time", ann=TICKS)
    prim = [(i, n, None, None, None, []) for i, n in
            [(T_BOOLEAN, "boolean"), (T_CHAR, "char"), (T_FLOAT, "float"),
             (T_DOUBLE, "double"), (T_BYTE, "byte"), (T_SHORT, "short"), (T_INT, "int"),
             (T_LONG, "long"), (T_STRING, "java.lang.String")]]
    # (id, name, superType, simple, (label, categories), fields)
    return prim + [
        (T_CLASS, "java.lang.Class", None, False, ("Java Class", None), cls_fields),
        (T_THREAD, "java.lang.Thread", None, False, ("Thread", None),
         [fld("osName", T_STRING, "OS Thread Name"), fld("osThreadId", T_LONG, "OS Thread Id"),
          fld("javaName", T_STRING, "Java Thread Name"),
          fld("javaThreadId", T_LONG, "Java Thread Id")]),
        (T_CLASS_LOADER, "jdk.types.ClassLoader", None, False, ("Java Class Loader", None),
         [fld("type", T_CLASS, "Type", cp=True), fld("name", T_SYMBOL, "Name", cp=True)]),
        (T_FRAME_TYPE, "jdk.types.FrameType", None, True, ("Frame type", None),
         [fld("description", T_STRING, "Description")]),
        (T_THREAD_STATE, "jdk.types.ThreadState", None, True, ("Java Thread State", None),
         [fld("name", T_STRING, "Name")]),
        (T_STACK_TRACE, "jdk.types.StackTrace", None, False, ("Stacktrace", None),
         [fld("truncated", T_BOOLEAN, "Truncated"),
          fld("frames", T_STACK_FRAME, "Stack Frames", array=True)]),
        (T_STACK_FRAME, "jdk.types.StackFrame", None, False, (None, None),
         [fld("method", T_METHOD, "Java Method", cp=True),
          fld("lineNumber", T_INT, "Line Number"),
          fld("bytecodeIndex", T_INT, "Bytecode Index"),
          fld("type", T_FRAME_TYPE, "Frame Type", cp=True)]),
        (T_METHOD, "jdk.types.Method", None, False, ("Java Method", None),
         [fld("type", T_CLASS, "Type", cp=True), fld("name", T_SYMBOL, "Name", cp=True),
          fld("descriptor", T_SYMBOL, "Descriptor", cp=True),
          fld("modifiers", T_INT, "Access Modifiers"), fld("hidden", T_BOOLEAN, "Hidden")]),
        (T_PACKAGE, "jdk.types.Package", None, False, ("Package", None),
         [fld("name", T_SYMBOL, "Name", cp=True)]),
        (T_SYMBOL, "jdk.types.Symbol", None, True, ("Symbol", None),
         [fld("string", T_STRING, "String")]),
        (T_EXECUTION_SAMPLE, "jdk.ExecutionSample", "jdk.jfr.Event", False,
         ("Method Profiling Sample", ["Java Virtual Machine", "Profiling"]),
         [start, fld("sampledThread", T_THREAD, "Thread", cp=True),
          fld("stackTrace", T_STACK_TRACE, "Stack Trace", cp=True),
          fld("state", T_THREAD_STATE, "Thread State", cp=True)]),
        (T_ACTIVE_SETTING, "jdk.ActiveSetting", "jdk.jfr.Event", False,
         ("Recording Setting", ["Flight Recorder"]),
         [start, fld("duration", T_LONG, "Duration", ann=SPAN),
          fld("eventThread", T_THREAD, "Event Thread", cp=True),
          fld("stackTrace", T_STACK_TRACE, "Stack Trace", cp=True),
          fld("id", T_LONG, "Event Id"), fld("name", T_STRING, "Setting Name"),
          fld("value", T_STRING, "Setting Value")]),
        (T_OS_INFORMATION, "jdk.OSInformation", "jdk.jfr.Event", False,
         ("OS Information", ["Operating System"]),
         [start, fld("osVersion", T_STRING, "OS Version")]),
        (T_NATIVE_LIBRARY, "jdk.NativeLibrary", "jdk.jfr.Event", False,
         ("Native Library", ["Java Virtual Machine", "Runtime"]),
         [start, fld("name", T_STRING, "Name"),
          fld("baseAddress", T_LONG, "Base Address", ann=ADDR),
          fld("topAddress", T_LONG, "Top Address", ann=ADDR),
          fld("buildId", T_STRING, "GNU Build ID"),
          fld("loadBias", T_LONG, "Load Bias", ann=ADDR)]),
        (A_LABEL, "jdk.jfr.Label", "java.lang.annotation.Annotation", False, (None, None),
         [fld("value", T_STRING)]),
        (A_CATEGORY, "jdk.jfr.Category", "java.lang.annotation.Annotation", False, (None, None),
         [fld("value", T_STRING, array=True)]),
        (A_TIMESTAMP, "jdk.jfr.Timestamp", "java.lang.annotation.Annotation", False,
         ("Timestamp", None), [fld("value", T_STRING)]),
        (A_TIMESPAN, "jdk.jfr.Timespan", "java.lang.annotation.Annotation", False,
         ("Timespan", None), [fld("value", T_STRING)]),
        (A_MEMORY_ADDRESS, "jdk.jfr.MemoryAddress", "java.lang.annotation.Annotation", False,
         ("Memory Address", None), []),
        (A_UNSIGNED, "jdk.jfr.Unsigned", "java.lang.annotation.Annotation", False,
         ("Unsigned Value", None), []),
    ]


class Metadata:
    def __init__(self):
        self.strings = []
        self.index = {}

    def s(self, text):
        text = str(text)
        if text not in self.index:
            self.index[text] = len(self.strings)
            self.strings.append(text)
        return self.index[text]

    def el(self, name, attrs, children):
        out = varint(self.s(name)) + varint(len(attrs))
        for k, v in attrs:
            out += varint(self.s(k)) + varint(self.s(v))
        out += varint(len(children))
        for c in children:
            out += c
        return out

    def ann(self, cls, values=None):
        attrs = [("class", cls)]
        if isinstance(values, list):
            attrs += [("value-%d" % i, v) for i, v in enumerate(values)]
        elif values is not None:
            attrs.append(("value", values))
        return self.el("annotation", attrs, [])

    def build(self, defs, start_ticks, metadata_id):
        classes = []
        for tid, name, sup, simple, labels, fields in defs:
            attrs = [("id", tid), ("name", name)]
            if sup:
                attrs.append(("superType", sup))
            if simple:
                attrs.append(("simpleType", "true"))
            kids = []
            for fname, fcls, flabel, cp, array, ann in fields:
                fa = [("name", fname), ("class", fcls)]
                if cp:
                    fa.append(("constantPool", "true"))
                if array:
                    fa.append(("dimension", "1"))
                fk = []
                if flabel:
                    fk.append(self.ann(A_LABEL, flabel))
                if ann == TICKS:
                    fk.append(self.ann(A_TIMESTAMP, "TICKS"))
                elif ann == SPAN:
                    fk.append(self.ann(A_TIMESPAN, "TICKS"))
                elif ann == ADDR:
                    fk += [self.ann(A_UNSIGNED), self.ann(A_MEMORY_ADDRESS)]
                kids.append(self.el("field", fa, fk))
            if labels and labels[0]:
                kids.append(self.ann(A_LABEL, labels[0]))
            if labels and labels[1]:
                kids.append(self.ann(A_CATEGORY, labels[1]))
            classes.append(self.el("class", attrs, kids))
        root = self.el("root", [], [
            self.el("metadata", [], classes),
            self.el("region", [("locale", "en_US"), ("gmtOffset", "0")], [])])
        payload = varint(start_ticks) + varint(0) + varint(metadata_id)
        payload += varint(len(self.strings)) + b"".join(jstr(x) for x in self.strings)
        return record(0, payload + root)


class Keys:
    """A constant pool: value -> key, in first-use order."""

    def __init__(self, first=1):
        self.map = {}
        self.first = first

    def __call__(self, value):
        if value not in self.map:
            self.map[value] = len(self.map) + self.first
        return self.map[value]

    def items(self):
        return sorted(((k, v) for v, k in self.map.items()))


def parse_addr(x):
    if isinstance(x, bool):
        raise ValueError
    if isinstance(x, int):
        return x
    if isinstance(x, str):
        return int(x, 16) if x.lower().startswith("0x") else int(x, 10)
    raise ValueError


def load_samples(spec):
    try:
        if spec.lstrip().startswith("["):
            data = json.loads(spec)
        elif spec == "-":
            data = json.load(sys.stdin)
        else:
            with open(spec) as f:
                data = json.load(f)
    except OSError as e:
        raise Bad("--samples %s: %s" % (spec, e.strerror))
    except ValueError as e:
        raise Bad("--samples: not JSON: %s" % e)
    if not isinstance(data, list) or not data:
        raise Bad("--samples: expected a non-empty JSON list of samples")
    return data


def generate(out, binaries, samples, conv_style=False, bases=None, start_ns=None,
             dd_frame_type=FRAME_NATIVE_REMOTE, frame_type_7=None, conv_desc=CONV_DESC):
    """Writes OUT; returns a dict describing what was written (for tests)."""
    bases = bases or {}
    elfs = [Elf(p, i) for i, p in enumerate(binaries)]
    by_name = {}
    for e in elfs:
        for n in {e.path, os.path.basename(e.path), e.abspath}:
            if n in by_name and by_name[n] is not e:
                by_name[n] = None   # ambiguous
            else:
                by_name[n] = e
    for n, b in bases.items():
        if by_name.get(n) is None:
            raise Bad("--base %s: no such binary (or ambiguous)" % n)
    for e in elfs:
        base = None
        for n in {e.path, os.path.basename(e.path), e.abspath}:
            if n in bases:
                base = bases[n]
        e.place(base)
    spans = sorted((e.base, e.top, e.path) for e in elfs)
    for a, b in zip(spans, spans[1:]):
        if b[0] < a[1]:
            raise Bad("%s and %s overlap at run time" % (a[2], b[2]))

    threads = {}
    stacks = Keys()
    methods = Keys()
    classes = Keys()
    symbols = Keys()
    events = []
    times = []
    frames_total = 0
    parsed = []
    for si, s in enumerate(samples):
        where = "--samples[%d]" % si
        if not isinstance(s, dict):
            raise Bad("%s: not an object" % where)
        tid, t, fr = s.get("thread"), s.get("time_ns"), s.get("frames")
        if not isinstance(tid, int) or isinstance(tid, bool) or not 0 < tid < 1 << 31:
            raise Bad("%s: thread must be an integer in 1..2^31-1" % where)
        if not isinstance(t, int) or isinstance(t, bool) or not 0 <= t < 1 << 63:
            raise Bad("%s: time_ns must be a non-negative integer" % where)
        if not isinstance(fr, list) or not fr:
            raise Bad("%s: frames must be a non-empty list" % where)
        tname = s.get("thread_name", "thread-%d" % tid)
        if not isinstance(tname, str):
            raise Bad("%s: thread_name must be a string" % where)
        if threads.setdefault(tid, tname) != tname:
            raise Bad("%s: thread %d has two names" % (where, tid))
        stack = []
        for fi, f in enumerate(fr):
            w = "%s.frames[%d]" % (where, fi)
            if not isinstance(f, list) or len(f) != 2 or not isinstance(f[0], str):
                raise Bad("%s: expected [\"BINARY\", \"0xADDR\"]" % w)
            e = by_name.get(f[0])
            if e is None:
                raise Bad("%s: %r is not one of the binaries (or is ambiguous)" % (w, f[0]))
            try:
                vaddr = parse_addr(f[1])
            except ValueError:
                raise Bad("%s: bad address %r" % (w, f[1]))
            if not e.in_load(vaddr):
                raise Bad("%s: 0x%x is in no PT_LOAD segment of %s" % (w, vaddr, e.path))
            runtime = (vaddr + e.load_bias) & 0xFFFFFFFFFFFFFFFF
            if conv_style:
                desc, ftype, bci = conv_desc % vaddr, FRAME_NATIVE, 0
            else:
                desc, ftype, bci = "0x%x" % (runtime - e.base), dd_frame_type, \
                    BCI_NATIVE_FRAME_REMOTE
            ck = classes(e.build_id)
            symbols(e.build_id)
            mk = methods((ck, symbols("<remote>"), symbols(desc)))
            stack.append((mk, 0, bci, ftype))
        frames_total += len(stack)
        trunc = bool(s.get("truncated", False))
        sk = stacks((trunc, tuple(stack)))
        times.append(t)
        parsed.append((t, tid, sk))

    t0 = min(times)
    t1 = max(times)
    if start_ns is None:
        start_ns = 1700000000000000000 + t0     # a fixed wall clock, deterministic
    body = bytearray()
    for e in elfs:
        body += record(T_NATIVE_LIBRARY, varint(t0) + jstr(e.abspath) + varint(e.base) +
                       varint(e.top) + jstr(e.build_id) + varint(e.load_bias))
    for name, value in (("event", "cpu-clock"), ("interval", "1000000"),
                        ("gen_remote_jfr.marker", MARKER)):
        body += record(T_ACTIVE_SETTING, varint(t0) + varint(0) + varint(0) + varint(0) +
                       varint(T_EXECUTION_SAMPLE) + jstr(name) + jstr(value))
    body += record(T_OS_INFORMATION, varint(t0) + jstr(OS_VERSION))
    for t, tid, sk in parsed:
        body += record(T_EXECUTION_SAMPLE, varint(t) + varint(tid) + varint(sk) + varint(0))

    # checkpoint: every pool non-empty
    pools = []
    ft = list(enumerate(FRAME_TYPES))
    if frame_type_7 is not None:
        ft.append((FRAME_NATIVE_REMOTE, frame_type_7))
    pools.append((T_FRAME_TYPE, [varint(k) + jstr(v) for k, v in ft]))
    pools.append((T_THREAD_STATE, [varint(k) + jstr(v) for k, v in enumerate(THREAD_STATES)]))
    pools.append((T_THREAD, [varint(tid) + jstr(n) + varint(tid) + jstr(None) + varint(0)
                             for tid, n in sorted(threads.items())]))
    pools.append((T_STACK_TRACE, [
        varint(k) + bytes([1 if tr else 0]) + varint(len(fs)) +
        b"".join(varint(m) + vint32(ln) + vint32(bc) + varint(ty) for m, ln, bc, ty in fs)
        for k, (tr, fs) in stacks.items()]))
    pools.append((T_METHOD, [varint(k) + varint(c) + varint(n) + varint(d) +
                             vint32(ACC_NATIVE) + b"\x00"
                             for k, (c, n, d) in methods.items()]))
    pools.append((T_CLASS, [varint(k) + varint(0) + varint(symbols(name)) + varint(0) +
                            varint(0) + (b"\x00" if conv_style else b"")
                            for k, name in classes.items()]))
    pools.append((T_SYMBOL, [varint(k) + jstr(v) for k, v in symbols.items()]))
    cp = varint(t0) + varint(0) + varint(0) + b"\x01" + varint(len(pools))
    for tid, entries in pools:
        cp += varint(tid) + varint(len(entries)) + b"".join(entries)
    checkpoint = record(1, cp)
    meta = Metadata().build(type_defs(conv_style), t0, 1)

    cp_off = 68 + len(body)
    meta_off = cp_off + len(checkpoint)
    size = meta_off + len(meta)
    header = b"FLR\0" + struct.pack(">HHqqqqqqq", 2, 0, size, cp_off, meta_off, start_ns,
                                    t1 - t0 + 1, t0, 1000000000) + b"\x00\x00\x00\x03"
    assert len(header) == 68
    data = header + bytes(body) + checkpoint + meta
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, out)
    return {
        "style": "conv" if conv_style else "dd",
        "samples": len(parsed), "stacks": len(stacks.map), "frames": frames_total,
        "methods": len(methods.map),
        "libraries": [{"path": e.abspath, "build_id": e.build_id, "etype": e.etype,
                       "base": e.base, "top": e.top, "load_bias": e.load_bias,
                       "file0_vaddr": e.file0_vaddr} for e in elfs],
    }


def main(argv):
    ap = argparse.ArgumentParser(
        prog="gen_remote_jfr.py",
        description="Write a JFR file with remote-symbolication native frames (test input).")
    ap.add_argument("out", metavar="OUT.jfr")
    ap.add_argument("binaries", metavar="BINARY", nargs="+")
    ap.add_argument("--samples", required=True, metavar="SPEC",
                    help="JSON file, '-' for stdin, or inline JSON list")
    ap.add_argument("--conv-style", action="store_true",
                    help="frames as conv writes them: descriptor (L0x<ELF vaddr>;)L;, type Native")
    ap.add_argument("--conv-old-descriptor", action="store_true",
                    help="with --conv-style: the descriptor (0x<ELF vaddr>) of earlier conv versions")
    ap.add_argument("--base", action="append", default=[], metavar="NAME=0xADDR",
                    help="runtime address of file offset 0 of a PIE/shared object")
    ap.add_argument("--start-ns", type=int, default=None,
                    help="chunk start, ns since the epoch (default fixed)")
    ap.add_argument("--dd-frame-type", type=int, choices=(3, 7), default=FRAME_NATIVE_REMOTE,
                    help="frame type key of Datadog-style frames (default 7 FRAME_NATIVE_REMOTE)")
    ap.add_argument("--frame-type-7", metavar="TEXT", default=None,
                    help="add FrameType pool entry 7 = TEXT (Datadog writes none)")
    args = ap.parse_args(argv)
    try:
        bases = {}
        for b in args.base:
            n, sep, v = b.rpartition("=")
            try:
                addr = int(v, 0)
            except ValueError:
                addr = -1
            if not sep or not n or addr < 0 or addr % PAGE:
                raise Bad("--base %s: expected NAME=0xADDR, page-aligned" % b)
            bases[n] = addr
        info = generate(args.out, args.binaries, load_samples(args.samples), args.conv_style,
                        bases, args.start_ns, args.dd_frame_type, args.frame_type_7,
                        CONV_OLD_DESC if args.conv_old_descriptor else CONV_DESC)
    except Bad as e:
        print("gen_remote_jfr: %s" % e, file=sys.stderr)
        return 2
    except OSError as e:
        print("gen_remote_jfr: %s: %s" % (args.out, e.strerror), file=sys.stderr)
        return 2
    libs = ", ".join("%s %s base=0x%x bias=0x%x" % (os.path.basename(l["path"]), l["build_id"],
                                                     l["base"], l["load_bias"])
                     for l in info["libraries"])
    print("gen_remote_jfr: wrote %s (%s style): %d samples, %d stacks, %d frames; %s"
          % (args.out, info["style"], info["samples"], info["stacks"], info["frames"], libs),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
