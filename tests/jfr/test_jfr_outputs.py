#!/usr/bin/env python3
"""conv's JFR output, read by JDK 17's own tools, agrees with its pprof output.

usage: test_jfr_outputs.py CONV WORKDIR [--part fixtures|corpus]

Inputs (--part fixtures): tests/fixtures/*.data, tests/fixtures/attr/*.data,
samples/perf.data and, when perf can record here, a Java recording with a
HotSpot perf map (tests/jfr/JfrJitWork.java), so that JIT frames are
compared too. (--part corpus): every perf.data file of the shared corpus
(../shared/corpus, or $CONV_CORPUS: quipper/, perfparser/ (all levels),
linux-perf-data/; quipper-fuzz/ is left out); without the corpus the part
is skipped (exit 77). Without --part: both. Files conv does not convert
(exit 2: not a perf.data file) are counted as skipped. WORKDIR is emptied
first.

Per file, with `CONV -q --offline --jit-dir EMPTY --pprof P --jfr J FILE`
(the Java recording: the default --jit-dir /tmp, where its JVM wrote its map):
  * jfr summary, jfr print --stack-depth 64 and jfr print --json
    --stack-depth 64 exit 0 within a timeout, print no error or exception
    text, and the JSON parses (when under 64 MiB); the jfr tool's own code
    (jdk.jfr.internal.tool.Main) runs in a JVM that stays for every call
    (JfrCollapse.java --serve), not in one JVM per call;
  * the JFR event type names of the file's perf events are distinct;
  * the number of jdk.ExecutionSample and of each perf.<Name> event in
    jfr summary equals conv info's sample count of that perf event (the
    CPU-time event cpu-clock, task-clock, cycles or ref-cycles, if any, is
    jdk.ExecutionSample; the others perf.<Name>, <Name> the event's base
    name with anything but [A-Za-z0-9_] as '_' and the first letter upper
    case; events of the same name are summed);
  * the collapsed stacks that tests/jfr/JfrCollapse.java makes from the JFR
    (with jdk.jfr.consumer.RecordingFile) equal those made here from the
    pprof (tests/tools/pprofdec.py): per event, the <event>_samples value of
    every sample, frames root first; the same keys and the same counts. No
    frame, method, class, thread or stack trace of the JFR is unresolved;
  * writing the same input again (same command) gives a byte-identical JFR;
  * jdk.NativeLibrary's loadBias is runtime address - ELF address for every
    library whose file is on this machine with the recorded build-id
    (segments read here from the ELF program headers).

Frame names (the same rule on both sides; JfrCollapse.java documents the
JFR side): `<class>.<method>` or `<method>` when the class is empty, the
descriptor appended for `<remote>` methods, `:<line>` appended when the line
is > 0. From a pprof Location:
  * with Lines, one frame per Line (innermost first): kernel mappings
    ([kernel.kallsyms]*, vmlinux, modules): the function name; JIT mappings
    (anonymous memory) whose name is a Java method in HotSpot's form
    `<ret> <pkg.Class>.<method>(<params>)` or the agents' form
    `L<pkg/Class>;::<method>[<descriptor>]`: `<pkg.Class>.<method>`; any
    other: `<basename of the mapping>.<function>` (no mapping: `<function>`);
  * without Lines: kernel mappings: `0x<address>`; other mappings either
    `<build-id>.<remote>(0x<address - loadBias>)` (the object's ELF address,
    loadBias being jdk.NativeLibrary's for that mapping) or
    `<basename>.0x<address>` (no mapping: `0x<address>`). Which of the two
    depends on whether conv had the object's program headers; the test does
    not guess that (what files conv finds is conv's business): a mapping's
    frames are remote when the JFR holds the remote form of them, and then
    every frame of that mapping must be (one address form per mapping, with
    the mapping's build-id and a single loadBias). A remote frame's address
    must be an ELF address: inside a PT_LOAD of the object when it is here
    with that build-id (the recorded path, /usr/lib/debug, $HOME/.debug, or
    for the vDSO this kernel's own image), and for a vDSO inside the image
    (below the mapping's size) always.
Strings the JFR writer cannot store (invalid UTF-8) have every non-ASCII byte
as '?'.

Multi-chunk: the 3 inputs of the part with the most samples (over 1000) and
samples/perf.data (fixtures part) are written again with --jfr-chunk-size 16k (smaller if
that gives fewer than 3 chunks): jfr summary shows >= 3 chunks and the
right counts, jfr print reads it, the collapsed stacks equal the
single-chunk file's, every frame and thread resolves, and it is written
byte-identically twice.

Prints ok/FAIL/SKIP lines and `N passed, M failed, K skipped`; exit 1 on
failure. Python 3 standard library only; java and jfr from PATH (JDK 17).
"""
import atexit
import collections
import concurrent.futures
import glob
import gzip
import json
import os
import queue
import re
import shutil
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import pprofdec  # noqa: E402
import vdso  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jfrtool  # noqa: E402


def _args():
    a = sys.argv[1:]
    part = None
    if "--part" in a:
        i = a.index("--part")
        part = a[i + 1] if i + 1 < len(a) else ""
        del a[i:i + 2]
    if len(a) != 2 or part not in (None, "fixtures", "corpus"):
        sys.stderr.write("usage: test_jfr_outputs.py CONV WORKDIR [--part fixtures|corpus]\n")
        sys.exit(2)
    return os.path.abspath(a[0]), os.path.abspath(a[1]), part


CONV, WORK, PART = _args()
HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.environ.get("CONV_CORPUS", os.path.join(os.path.dirname(REPO), "shared", "corpus"))
COLLAPSE = os.path.join(HERE, "JfrCollapse.java")
JIT_SRC = os.path.join(HERE, "JfrJitWork.java")
CHUNK_FILES = 3          # corpus inputs with the most samples that get a multi-chunk run
CHUNK_MIN_SAMPLES = 1000
JFR_TIMEOUT = 120
passed = failed = skipped = 0
T0 = time.monotonic()


def check(name, cond, detail=""):
    global passed, failed
    passed += bool(cond)
    failed += not cond
    if cond:
        print("ok   " + name)
    else:
        print("FAIL " + name + "  -- %s" % (detail,))
    sys.stdout.flush()
    return cond


def skip(name, why):
    global skipped
    skipped += 1
    print("SKIP %s: %s" % (name, why))


def sh(cmd, timeout=120, **kw):
    kw.setdefault("stdout", subprocess.PIPE)
    return subprocess.run(cmd, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          timeout=timeout, **kw)


def tail(b, n=400):
    return (b or b"").decode(errors="replace")[-n:].strip()


# ------------------------------------------------------------------ pprof decoding
def read_pprof(path):
    """The profile (gzipped) as plain dicts, over tests/tools/pprofdec.py: types [(type,
    unit)], samples [(loc ids, values)], maps {id: {start, limit, offset, file (bytes),
    bid}}, locs {id: (mapping id, address, [(function id, line)])}, funcs {id: name bytes}."""
    with gzip.open(path, "rb") as f:
        p = pprofdec.parse(f.read())
    raw = lambda s: s.encode("utf-8", "surrogateescape")  # noqa: E731 (the bytes conv wrote)
    text = lambda s: raw(s).decode(errors="replace")  # noqa: E731
    return dict(types=[(text(t), text(u)) for t, u in p["types"]],
                samples=[(ids, vals) for ids, vals, _ in p["samples"]],
                maps={k: dict(m, file=raw(m["file"]), bid=text(m["bid"]))
                      for k, m in p["maps"].items()},
                locs=p["locs"], funcs={k: raw(name) for k, (name, _, _) in p["funcs"].items()})


# ------------------------------------------------------------------ naming (both sides' rule)
def _utf8_ok(b):
    """conv's JFR writer's UTF-8 check (jfr.c utf8_valid)."""
    i, n = 0, len(b)
    while i < n:
        c = b[i]
        if c < 0x80:
            i += 1
            continue
        if 0xc2 <= c <= 0xdf:
            k = 1
        elif 0xe0 <= c <= 0xef:
            k = 2
        elif 0xf0 <= c <= 0xf4:
            k = 3
        else:
            return False
        if k > n - i - 1:
            return False
        if any(b[i + j] & 0xc0 != 0x80 for j in range(1, k + 1)):
            return False
        i += k + 1
    return True


def jstr(b):
    """A string as the JFR reader gets it from conv's writer."""
    if _utf8_ok(b):
        return b.decode("utf-8", errors="replace")
    return "".join(chr(c) if c < 0x80 else "?" for c in b)


def esc(s):
    return (s.replace("\\", "\\\\").replace(";", "\\;").replace("\n", "\\n")
            .replace("\r", "\\r"))


def frame(cls, method, line=0, desc=None):
    cls = cls.replace("/", ".")  # RecordedClass.getName()
    s = (esc(cls) + "." if cls else "") + esc(method)
    if method == "<remote>":
        s += esc(desc)
    if 0 < line <= 0x7fffffff:
        s += ":%d" % line
    return s


def basename(b):
    return b.rsplit(b"/", 1)[-1]


def is_kernel_map(name):
    """The kernel or a kernel module (conv's procmap: is_kernel_name, module paths)."""
    n = name.decode(errors="replace")
    if n.startswith("[kernel.kallsyms]") or n.endswith("vmlinux") or "/vmlinux" in n:
        return True
    if re.search(r"\.ko(\.xz|\.gz|\.zst)?\]?$", n):
        return True
    user_special = ("[vdso]", "[vdso32]", "[vdsox32]", "[vsyscall]", "[heap]", "[uprobes]",
                    "[vvar]", "[vectors]", "[sigpage]")
    return (re.fullmatch(r"\[[^\[\]/]+\]", n) is not None and n not in user_special
            and not n.startswith(("[stack", "[anon")))


def is_anon_map(name):
    """Anonymous memory: JIT code when executable (conv's procmap classify)."""
    n = name.decode(errors="replace")
    return (n == "//anon" or n.startswith(("/dev/zero", "/anon_hugepage", "[stack", "/SYSV",
                                           "[anon")) or n == "[heap]" or n == "")


_PRIM = ("int", "long", "boolean", "byte", "char", "short", "float", "double", "void")


def _java_type_ok(t):
    t = t.strip(" ")
    while t.endswith("[]"):
        t = t[:-2]
    if not t:
        return False
    return t in _PRIM or not any(c in t for c in " ();,")


def java_method(name):
    """(class, method) of a JIT name that conv's JFR writer makes a Java method, else None
    (jfr.c java_method)."""
    k = name.find(";::")
    if name.startswith("L") and k > 1:
        m = name[k + 3:]
        p = m.find("(")
        meth = m[:p] if p >= 0 else m
        return (name[1:k], meth) if meth else None
    sp, op = name.find(" "), name.find("(")
    cp = name.find(")", op) if op >= 0 else -1
    if sp < 0 or op < 0 or cp < 0 or sp > op or cp != len(name) - 1:
        return None
    dot = name.rfind(".", sp + 1, op + 1)
    if dot <= sp + 1 or dot + 1 == op:
        return None
    cls = name[sp + 1:dot]
    if " " in cls:
        return None
    params = name[op + 1:cp]
    if params and not all(_java_type_ok(a) for a in params.split(",")):
        return None
    if not _java_type_ok(name[:sp]):
        return None
    return cls, name[dot + 1:op]


REMOTE_RE = re.compile(r"(?:^|;)([0-9a-f]{2,128})\.<remote>\(0x([0-9a-f]+)\)(?=;|:|$)")


def jfr_remote_frames(stacks):
    """{(build-id, ELF address)} of the JFR's <remote> frames."""
    out = set()
    for k in stacks:
        for m in REMOTE_RE.finditer(k):
            out.add((m.group(1), int(m.group(2), 16)))
    return out


class Namer:
    """Frame names of pprof locations, as conv's JFR writer names the same frames."""

    def __init__(self, prof, remote, libs):
        self.p = prof
        self.jfr_remote = remote          # {(build-id, ELF address)} the JFR holds
        self.libs = libs                  # (file, start, limit) -> set of loadBias
        self.cache = {}
        self.remote = 0
        self.forms = collections.defaultdict(set)  # mapping id -> {True (remote), False}
        self.problems = []

    def unsymbolized(self, mid, m, addr):
        """The frame of a location without lines in a user mapping."""
        fname = m["file"]
        bias = self.libs.get((jstr(fname), m["start"], m["limit"]), set())
        if m["bid"] and len(bias) == 1:
            b = next(iter(bias))
            elf = (addr - b) % (1 << 64)
            if (m["bid"], elf) in self.jfr_remote:
                self.forms[mid].add(True)
                why = elf_address_problem(m, elf)
                if why:
                    self.problems.append("%s [%#x): <remote>(%#x) for %#x is not an ELF "
                                         "address: %s" % (jstr(fname), m["start"], elf, addr, why))
                self.remote += 1
                return frame(m["bid"], "<remote>", 0, "(0x%x)" % elf)
        self.forms[mid].add(False)
        return frame(jstr(basename(fname)), "0x%x" % addr)

    def loc(self, lid):
        if lid in self.cache:
            return self.cache[lid]
        mid, addr, lines = self.p["locs"][lid]
        m = self.p["maps"].get(mid) if mid else None
        fname = m["file"] if m else b""
        kernel = m is not None and is_kernel_map(fname)
        jit = m is not None and not kernel and is_anon_map(fname)
        lib = jstr(basename(fname)) if m else ""
        out = []
        if not lines:
            if kernel:
                out.append(frame("", "0x%x" % addr))
            elif m:
                out.append(self.unsymbolized(mid, m, addr))
            else:
                out.append(frame("", "0x%x" % addr))
        for fid, line in lines:
            name = jstr(self.p["funcs"].get(fid, b""))
            if kernel:
                out.append(frame("", name, line))
            elif jit and java_method(name):
                c, meth = java_method(name)
                out.append(frame(c, meth, line))
            elif jit:
                out.append(frame("", name, line))
            else:
                out.append(frame(lib, name, line))
        self.cache[lid] = out
        return out

    def mixed_forms(self):
        """Mappings whose unnamed frames are written in both forms."""
        out = []
        for mid, f in sorted(self.forms.items()):
            if len(f) > 1:
                m = self.p["maps"][mid]
                out.append("%s [%#x, %#x) build-id %s: some frames <remote>, some not"
                           % (jstr(m["file"]), m["start"], m["limit"], m["bid"] or "none"))
        return out


def primary_event(events):
    """Index of the event conv writes as jdk.ExecutionSample (pipeline/convert.c): the
    CPU-time event (cpu-clock, task-clock, then cycles or ref-cycles), or None."""
    for i, e in enumerate(events):
        if e.get("type") == 1 and e.get("config") in (0, 1):
            return i
    for i, e in enumerate(events):
        if e.get("type") == 0 and (e.get("config", -1) & 0xffffffff) in (0, 9):
            return i
    return None


def perf_type_name(base):
    n = "perf." + re.sub(r"[^A-Za-z0-9_]", "_", base)
    if "a" <= n[5:6] <= "z":
        n = n[:5] + n[5].upper() + n[6:]
    return n


def pprof_collapse(prof, names, namer):
    """Counter 'TYPE;root;...;leaf' -> samples, per event: its <event>_samples value."""
    out = collections.Counter()
    for ids, vals in prof["samples"]:
        frames = []
        for lid in ids:
            frames += namer.loc(lid)
        stack = ";".join(reversed(frames))
        for i, t in enumerate(names):
            if 2 * i < len(vals) and vals[2 * i]:
                out[esc(t) + (";" + stack if stack else "")] += vals[2 * i]
    return out


# ------------------------------------------------------------------ ELF (load bias check)
def elf_info(path):
    """(build-id hex, [(offset, vaddr, filesz, exec)]) of an ELF file, or None."""
    try:
        with open(path, "rb") as f:
            h = f.read(64)
            if h[:4] != b"\x7fELF":
                return None
            c64, le = h[4] == 2, h[5] == 1
            e = "<" if le else ">"
            if c64:
                phoff, = struct.unpack_from(e + "Q", h, 32)
                phentsize, phnum = struct.unpack_from(e + "HH", h, 54)
            else:
                phoff, = struct.unpack_from(e + "I", h, 28)
                phentsize, phnum = struct.unpack_from(e + "HH", h, 42)
            f.seek(phoff)
            ph = f.read(phentsize * phnum)
            segs, notes = [], []
            for k in range(phnum):
                if c64:
                    typ, flags, off, va, _, fsz = struct.unpack_from(e + "IIQQQQ", ph, k * phentsize)
                else:
                    typ, off, va, _, fsz, _, flags = struct.unpack_from(e + "IIIIIII", ph,
                                                                          k * phentsize)
                if typ == 1:
                    segs.append((off, va, fsz, bool(flags & 1)))
                elif typ == 4:
                    notes.append((off, fsz))
            bid = None
            for off, sz in notes:
                f.seek(off)
                d = f.read(sz)
                i = 0
                while i + 12 <= len(d):
                    nsz, dsz, nt = struct.unpack_from(e + "III", d, i)
                    name = d[i + 12:i + 12 + nsz]
                    dstart = i + 12 + ((nsz + 3) & ~3)
                    if nt == 3 and name.rstrip(b"\0") == b"GNU":
                        bid = d[dstart:dstart + dsz].hex()
                    i = dstart + ((dsz + 3) & ~3)
            return bid, segs
    except (OSError, struct.error):
        return None


VDSO_NAMES = (b"[vdso]", b"[vdso32]", b"[vdsox32]")
_elf_found = {}


def running_vdso():
    """(build-id hex, segments) of this kernel's vDSO, read from this process, or None."""
    img = vdso.image()
    if not img:
        return None
    path = os.path.join(WORK, "running-vdso.img")
    with open(path, "wb") as out:
        out.write(img)
    return elf_info(path)


def find_elf(path, bid):
    """Segments of the object with this build-id where it may be here: the recorded path,
    /usr/lib/debug/.build-id, perf's cache in $HOME/.debug, this kernel's vDSO; or None."""
    key = (path, bid)
    if key not in _elf_found:
        p = path.decode(errors="surrogateescape")
        home = os.environ.get("HOME", "")
        cands = []
        if p.startswith("/"):
            cands.append(p)
        if len(bid) >= 4:
            cands.append("/usr/lib/debug/.build-id/%s/%s" % (bid[:2], bid[2:]))
            if home:
                for leaf in ("elf", "vdso"):
                    cands.append(os.path.join(home, ".debug", ".build-id", bid[:2], bid[2:],
                                              leaf))
        if home and p[:1] in ("/", "["):
            for leaf in ("elf", "vdso"):
                cands.append(os.path.join(home, ".debug") + ("" if p[0] == "/" else "/") + p +
                             "/" + bid + "/" + leaf)
        _elf_found[key] = None
        for c in cands:
            ei = elf_info(c) if os.path.isfile(c) else None
            if ei and ei[0] == bid:
                _elf_found[key] = ei[1]
                break
        if _elf_found[key] is None and path in VDSO_NAMES:
            ei = running_vdso()
            if ei and ei[0] == bid:
                _elf_found[key] = ei[1]
    return _elf_found[key]


def elf_address_problem(m, elf):
    """Why `elf` cannot be an ELF address of mapping m's object ("" when it can)."""
    if m["file"] in VDSO_NAMES and elf >= m["limit"] - m["start"]:
        return "past the vDSO image (%#x bytes)" % (m["limit"] - m["start"])
    segs = find_elf(m["file"], m["bid"])
    if segs is not None and not any(va <= elf < va + fsz for _, va, fsz, _ in segs):
        return "in no PT_LOAD of the object %s" % [(hex(va), hex(fsz)) for _, va, fsz, _ in segs]
    return ""


def expected_bias(segs, start, pgoff):
    """runtime - ELF address for a mapping (symbolize.c sym_file_normalize)."""
    f_off = pgoff  # the mapping's first byte
    for pass_ in (0, 1):
        for off, va, fsz, ex in segs:
            down = off & ~0xfff
            if pass_ == 0 and not ex:
                continue
            if down <= pgoff < off + fsz and down <= f_off < off + fsz:
                return (start - (f_off - off + va)) % (1 << 64)
    return None


# ------------------------------------------------------------------ JFR tools
# error text of the JDK tools: on stderr anything like it; on stdout (where the jfr tool
# prints its own errors) only whole lines of it, as frame names may say "Exception"
BAD_STDERR = re.compile(r"Exception|Error|could not|^\s+at [\w$.]+\(", re.M)
BAD_STDOUT = re.compile(r"^(jfr (summary|print|metadata)\b.*|Exception in thread .*|"
                        r"\s+at (java|jdk|sun)\.[\w$.]+\(.*)$", re.M)


JFR_SERVERS = queue.Queue()


def jfr_tool(args, out_path=None):
    """(ok, detail, stdout bytes or None) of a jfr command; stdout to out_path if given."""
    srv = JFR_SERVERS.get()
    try:
        rc, out, err = srv.run(args, JFR_TIMEOUT, out_path)
    finally:
        JFR_SERVERS.put(srv)
    if rc is None:
        return False, "timed out after %ds" % JFR_TIMEOUT, None
    err = err.decode(errors="replace")
    if rc != 0 or BAD_STDERR.search(err):
        return False, "exit %d, stderr %r, stdout %r" % (rc, err[-400:], tail(out)), None
    if not out_path and BAD_STDOUT.search(out.decode(errors="replace")):
        return False, "error text on stdout: %r" % tail(out), None
    return True, "", out


def jfr_summary(path):
    ok, why, out = jfr_tool(["summary", path])
    if not ok:
        return None, why
    text = out.decode(errors="replace")
    m = re.search(r"^\s*Chunks:\s*(\d+)", text, re.M)
    counts = {}
    for line in text.splitlines():
        mm = re.match(r"^\s*([\w.$]+)\s+(\d+)\s+(\d+)\s*$", line)
        if mm:  # a name listed twice (two types of the same name) counts for both
            counts[mm.group(1)] = counts.get(mm.group(1), 0) + int(mm.group(2))
    return dict(chunks=int(m.group(1)) if m else None, counts=counts), ""


def jfr_prints(path):
    """Problems of `jfr print` and `jfr print --json` (stack depth 64) on the file."""
    problems = []
    txt = path + ".txt"
    ok, why, _ = jfr_tool(["print", "--stack-depth", "64", path], txt)
    if not ok:
        problems.append("jfr print: " + why)
    else:
        with open(txt, "rb") as f:
            f.seek(max(0, os.path.getsize(txt) - 4096))
            if BAD_STDOUT.search(f.read().decode(errors="replace")):
                problems.append("jfr print: error text at the end of its output")
    js = path + ".json"
    ok, why, _ = jfr_tool(["print", "--json", "--stack-depth", "64", path], js)
    if not ok:
        problems.append("jfr print --json: " + why)
    elif os.path.getsize(js) < 64 << 20:
        try:
            with open(js, "rb") as f:
                d = json.loads(f.read())
            if "recording" not in d:
                problems.append("jfr print --json: no recording object")
        except ValueError as e:
            problems.append("jfr print --json: not JSON: %s" % e)
    for x in (txt, js):
        if os.path.exists(x):
            os.unlink(x)
    return problems


def collapse_all(paths):
    """JfrCollapse.java over the files: {path: dict(stacks, counts, libs, errors, ...)}."""
    res = {p: None for p in paths}
    why = ""
    try:
        r = sh(["java", "-Xss4m", COLLAPSE] + list(paths), timeout=600)
        text = r.stdout.decode("utf-8", errors="replace")
        why = "exit %d: %s" % (r.returncode, tail(r.stderr, 800))
    except subprocess.TimeoutExpired:
        return res, "JfrCollapse timed out"
    cur = None
    for line in text.split("\n"):
        if line.startswith("# FILE "):
            cur = dict(stacks=collections.Counter(), counts={}, libs={}, errors=[], end=None)
            res[line[7:]] = cur
        elif cur is None or not line:
            continue
        elif line.startswith("# COUNT "):
            t, n = line[8:].rsplit(" ", 1)
            cur["counts"][t] = int(n)
        elif line.startswith("# LIB "):
            name, base, top, bid, bias = line[6:].rsplit("|", 4)
            cur["libs"].setdefault((name, int(base) % (1 << 64), int(top) % (1 << 64)),
                                   set()).add(int(bias) % (1 << 64))
        elif line.startswith("# ERROR "):
            cur["errors"].append(line[8:])
        elif line.startswith("# END "):
            cur["end"] = line
        else:
            k, n = line.rsplit(" ", 1)
            cur["stacks"][k] += int(n)
    return res, why


def diff_stacks(a, b, na="jfr", nb="pprof"):
    keys = sorted(set(a) | set(b), key=lambda k: -(a.get(k, 0) + b.get(k, 0)))
    out = []
    for k in keys:
        if a.get(k, 0) != b.get(k, 0):
            out.append("%s=%d %s=%d %s" % (na, a.get(k, 0), nb, b.get(k, 0),
                                         k if len(k) < 600 else k[:300] + " ... " + k[-300:]))
    return "%d differing stacks; first: %s" % (len(out), " | ".join(out[:3]))


# ------------------------------------------------------------------ inputs
def perf_files():
    files = sorted(glob.glob(os.path.join(REPO, "tests", "fixtures", "*.data")) +
                   glob.glob(os.path.join(REPO, "tests", "fixtures", "attr", "*.data")))
    files.append(os.path.join(REPO, "samples", "perf.data"))
    corpus = []
    if os.path.isdir(CORPUS):
        for d in ("quipper", "perfparser", "linux-perf-data"):
            for f in sorted(glob.glob(os.path.join(CORPUS, d, "**", "*"), recursive=True)):
                if os.path.isfile(f):
                    with open(f, "rb") as fh:
                        if fh.read(8) in (b"PERFILE2", b"2ELIFREP"):
                            corpus.append(f)
    elif PART != "fixtures":
        skip("shared corpus", "no directory %s (repo recordings only)" % CORPUS)
    return [f for f in files if os.path.isfile(f)], corpus


def java_recording():
    """A perf recording of JfrJitWork with the JVM's perf map, or None (skipped)."""
    java, perf = shutil.which("java"), shutil.which("perf")
    if not perf:
        skip("java JIT recording", "perf is not installed")
        return None, set()
    data = os.path.join(WORK, "java-jit.data")
    if os.path.exists(data):
        os.unlink(data)
    before = set(glob.glob("/tmp/perf-*.map"))
    try:
        r = sh(["perf", "record", "-N", "-q", "-e", "cpu-clock", "-F", "499", "-g", "-o", data,
                "--", java, "-XX:+UnlockDiagnosticVMOptions", "-XX:+DumpPerfMapAtExit",
                "-XX:+PreserveFramePointer", "-XX:CompileCommand=quiet",
                "-XX:CompileCommand=dontinline,conv.jfrtest.*::hot*", JIT_SRC, "700"],
               timeout=120)
    except subprocess.TimeoutExpired:
        skip("java JIT recording", "perf record timed out")
        return None, set()
    new = set(glob.glob("/tmp/perf-*.map")) - before
    # only the maps of the recorded processes (another test may be writing its own)
    pids = set()
    if os.path.exists(data):
        ri = sh([CONV, "info", "--json", data])
        try:
            procs = json.loads(ri.stdout).get("processes", {}).get("samples_per_process", [])
            pids = {p["pid"] for p in procs}
        except ValueError:
            pass
    maps = {m for m in new if re.search(r"/perf-(\d+)\.map$", m)
            and int(re.search(r"/perf-(\d+)\.map$", m).group(1)) in pids}
    if r.returncode or not os.path.exists(data):
        skip("java JIT recording", "perf record cannot record here: %s" % tail(r.stderr))
        return None, maps
    if not maps:
        skip("java JIT recording", "the JVM wrote no perf map")
        return None, maps
    return data, maps


def remove_files(paths):
    """At exit, even after an error: the JVM's perf maps that the recording made."""
    for m in paths:
        try:
            os.unlink(m)
        except OSError:
            pass


# ------------------------------------------------------------------ the test
NO_JIT = None  # an empty --jit-dir: /tmp's perf maps of other processes play no part
JIT_DATA = None


def convert(f, out_base, extra=()):
    """(pprof path, jfr path, "") or (None, None, why); why None: conv exits 2 (skip)."""
    pp, jf = out_base + ".pb.gz", out_base + ".jfr"
    for x in (pp, jf):
        if os.path.exists(x):
            os.unlink(x)
    jit = [] if f == JIT_DATA else ["--jit-dir", NO_JIT]
    r = sh([CONV, "-q", "--offline"] + jit + list(extra) + ["--pprof", pp, "--jfr", jf, f])
    if r.returncode == 2:
        return None, None, None
    if r.returncode != 0 or not os.path.exists(jf) or not os.path.exists(pp):
        return None, None, "exit %d: %s" % (r.returncode, tail(r.stderr))
    return pp, jf, ""


def main():
    global skipped, NO_JIT, JIT_DATA
    if not shutil.which("java") or not shutil.which("jfr"):
        print("SKIP: java or jfr is not installed\n0 passed, 0 failed, 1 skipped")
        return 77
    if PART == "corpus" and not os.path.isdir(CORPUS):
        print("SKIP: corpus not found at %s\n0 passed, 0 failed, 1 skipped" % CORPUS)
        return 77
    # nothing an earlier run left plays a part
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    NO_JIT = os.path.join(WORK, "no-jit")
    os.makedirs(NO_JIT, exist_ok=True)
    repo_files, corpus = perf_files()
    inputs = (repo_files if PART != "corpus" else []) + (corpus if PART != "fixtures" else [])
    jit_data = None
    if PART != "corpus":
        jit_data, jit_maps = java_recording()
        atexit.register(remove_files, sorted(jit_maps) + ([jit_data] if jit_data else []))
    JIT_DATA = jit_data
    if jit_data:
        inputs.append(jit_data)

    # the jfr tool: as many JVMs as calls run at once (below), each for every call it gets
    workers = max(2, min(4, os.cpu_count() or 2))
    servers = [jfrtool.JfrServer(WORK, str(i)) for i in range(workers)]
    for srv in servers:
        JFR_SERVERS.put(srv)
    atexit.register(lambda: [srv.close() for srv in servers])

    # ---- convert everything (both outputs, then again for determinism)
    jobs = []  # dict(name, f, pp, jf, info, names, primary)
    for i, f in enumerate(inputs):
        name = os.path.relpath(f, os.path.dirname(REPO)) if f != jit_data else "java-jit.data"
        ri = sh([CONV, "info", "--json", f])
        if ri.returncode != 0:
            skip(name, "conv info exits %d (not convertible): %s" % (ri.returncode, tail(ri.stderr, 120)))
            continue
        info = json.loads(ri.stdout)
        base = os.path.join(WORK, "f%03d" % i)
        pp, jf, why = convert(f, base)
        if why is None:
            skip(name, "conv exits 2 (not convertible)")
            continue
        if not check("%s: conv writes pprof and JFR" % name, not why, why):
            continue
        pp2, jf2, why2 = convert(f, base + ".again")
        with open(jf, "rb") as a, open(jf2 or jf, "rb") as b:
            same = a.read() == b.read()
        check("%s: a second run writes a byte-identical JFR" % name, not why2 and same,
              why2 or "the two JFR files differ (%s, %s)" % (jf, jf2))
        jobs.append(dict(name=name, f=f, pp=pp, jf=jf, info=info, again=[pp2, jf2]))

    # ---- multi-chunk inputs
    by_samples = sorted((j for j in jobs if j["f"] != JIT_DATA),
                        key=lambda j: (-j["info"].get("samples", 0), j["name"]))
    chunked = [j for j in by_samples if j["info"].get("samples", 0) > CHUNK_MIN_SAMPLES][:CHUNK_FILES]
    chunked += [j for j in jobs if j["f"] == os.path.join(REPO, "samples", "perf.data")
                and j not in chunked]
    if not chunked:
        skip("multi-chunk", "no input with over %d samples" % CHUNK_MIN_SAMPLES)
    for j in chunked:
        for size in ("16k", "4k", "1k"):
            base = j["jf"][:-4] + ".chunked" + size
            _, cf, why = convert(j["f"], base, ["--jfr-chunk-size", size])
            if why or cf is None:
                check("%s: conv --jfr-chunk-size %s" % (j["name"], size), False, why)
                cf = None
                break
            s, why = jfr_summary(cf)
            if s is None or (s["chunks"] or 0) >= 3:
                break
        j["chunked"] = (size, cf, s, why) if cf else None
        if cf:
            _, cf2, why2 = convert(j["f"], base + ".again", ["--jfr-chunk-size", size])
            with open(cf, "rb") as a, open(cf2 or cf, "rb") as b:
                same = a.read() == b.read()
            check("%s: --jfr-chunk-size %s twice: byte-identical" % (j["name"], size),
                  not why2 and same, why2 or "differ: %s %s" % (cf, cf2))

    # ---- JDK tools (2 at a time) and one JfrCollapse run over all files
    def tools(j):
        s, why = jfr_summary(j["jf"])
        return s, why, jfr_prints(j["jf"])

    def tools_chunked(j):
        return jfr_prints(j["chunked"][1])

    with concurrent.futures.ThreadPoolExecutor(workers) as ex:
        fut = {id(j): ex.submit(tools, j) for j in jobs}
        futc = {id(j): ex.submit(tools_chunked, j) for j in chunked if j.get("chunked")}
        coll_paths = [j["jf"] for j in jobs] + [j["chunked"][1] for j in chunked if j.get("chunked")]
        coll, coll_why = collapse_all(coll_paths)
        res = {k: v.result() for k, v in fut.items()}
        resc = {k: v.result() for k, v in futc.items()}

    # ---- per file checks
    total_stacks = total_samples = total_remote = bias_checked = 0
    for j in jobs:
        name, info = j["name"], j["info"]
        events = info.get("events", [])
        s, why, prints = res[id(j)]
        check("%s: jfr print, jfr print --json read it" % name, not prints, "; ".join(prints))
        prof = read_pprof(j["pp"])
        # off-CPU time (issue 21): a last pair of types, written as perf.OffCPU events
        offcpu = [tuple(t) for t in prof["types"][-2:]] == [("off_cpu_samples", "count"),
                                                            ("off_cpu", "nanoseconds")]
        types = prof["types"][:-2] if offcpu else prof["types"]
        bases = [t[:-len("_samples")] for t, _ in types[0::2]]
        if not check("%s: pprof has 2 sample types per conv info event%s" % (
                     name, " and the off-CPU pair" if offcpu else ""),
                     len(types) == 2 * len(events) and
                     all(t.endswith("_samples") for t, _ in types[0::2]),
                     "%s vs %s" % (prof["types"], [e.get("name") for e in events])):
            continue
        primary = primary_event(events)
        names = []
        for i, b in enumerate(bases):
            n = "jdk.ExecutionSample" if i == primary else perf_type_name(b)
            # an event recorded twice (perf's dummy:u per session): conv numbers the repeats
            k = 2
            while n in names:
                n = "%s_%d" % (perf_type_name(b), k)
                k += 1
            names.append(n)
        check("%s: JFR event type names are distinct" % name, len(set(names)) == len(names),
              names)
        want = collections.Counter()
        for n, e in zip(names, events):
            want[n] += e.get("samples", 0)
        if offcpu:
            names.append("perf.OffCPU")
            want["perf.OffCPU"] = sum(v[len(types)] for _, v in prof["samples"] if len(v) > len(types))
        if check("%s: jfr summary reads it" % name, s is not None, why):
            got = {t: s["counts"].get(t, 0) for t in want}
            extra = {t: c for t, c in s["counts"].items()
                     if (t.startswith("perf.") and t != "perf.LostSamples" and t not in want and c)}
            check("%s: jfr summary event counts equal conv info's %s" % (name, dict(want)),
                  got == dict(want) and not extra, "summary %s, extra %s" % (got, extra))
        c = coll.get(j["jf"])
        if not check("%s: JfrCollapse reads it" % name, c is not None and c["end"] is not None
                     and not c["errors"], (c or {}).get("errors", [])[:5] if c else coll_why):
            continue
        namer = Namer(prof, jfr_remote_frames(c["stacks"]), c["libs"])
        pst = pprof_collapse(prof, names, namer)
        namer.problems += namer.mixed_forms()
        n_samples = sum(c["stacks"].values())
        ok = check("%s: collapsed stacks of JFR and pprof are equal (%d stacks, %d samples, "
                   "%d remote frames)" % (name, len(c["stacks"]), n_samples, namer.remote),
                   pst == c["stacks"] and not namer.problems,
                   "; ".join(namer.problems[:3]) + " " + diff_stacks(c["stacks"], pst))
        if ok:
            total_stacks += len(c["stacks"])
            total_samples += n_samples
            total_remote += namer.remote
        # loadBias against the ELF files present here with the recorded build-id
        bad, n = [], 0
        for m in prof["maps"].values():
            key = (jstr(m["file"]), m["start"], m["limit"])
            if not m["bid"] or key not in c["libs"] or not m["file"].startswith(b"/"):
                continue
            ei = elf_info(m["file"])
            if not ei or ei[0] != m["bid"]:
                continue
            exp = expected_bias(ei[1], m["start"], m["offset"])
            if exp is None:
                continue
            n += 1
            if c["libs"][key] != {exp}:
                bad.append("%s [%#x): loadBias %s, ELF says %#x" % (
                    key[0], m["start"], [hex(x) for x in c["libs"][key]], exp))
        if n:
            bias_checked += n
            check("%s: jdk.NativeLibrary loadBias = runtime - ELF address (%d mappings)" % (name, n),
                  not bad, bad[:3])
        # multi-chunk
        ch = j.get("chunked")
        if ch:
            size, cf, cs, cwhy = ch
            if check("%s: --jfr-chunk-size %s: jfr summary reads it" % (name, size), cs is not None,
                     cwhy):
                check("%s: --jfr-chunk-size %s: %s chunks (>= 3)" % (name, size, cs["chunks"]),
                      (cs["chunks"] or 0) >= 3, cs)
                got = {t: cs["counts"].get(t, 0) for t in want}
                check("%s: --jfr-chunk-size %s: event counts equal conv info's" % (name, size),
                      got == dict(want), got)
            pr = resc.get(id(j), ["not run"])
            check("%s: --jfr-chunk-size %s: jfr print, jfr print --json read it" % (name, size),
                  not pr, "; ".join(pr))
            cc = coll.get(cf)
            if check("%s: --jfr-chunk-size %s: every stack trace, frame and thread resolves"
                     % (name, size), cc is not None and cc["end"] is not None and not cc["errors"],
                     (cc or {}).get("errors", [])[:5] if cc else coll_why):
                check("%s: --jfr-chunk-size %s: collapsed stacks equal the single chunk's "
                      "(%d stacks)" % (name, size, len(cc["stacks"])),
                      cc["stacks"] == c["stacks"], diff_stacks(cc["stacks"], c["stacks"],
                                                               "chunked", "single"))
        for x in [j["pp"], j["jf"]] + j["again"]:
            if x and os.path.exists(x):
                os.unlink(x)

    # ---- cleanup: the JVM's perf maps (only those the recording made) and chunked files
    for j in chunked:
        for x in glob.glob(j["jf"][:-4] + ".chunked*"):
            os.unlink(x)
    print("%d files converted; where JFR and pprof agree: %d distinct stacks, %d samples, "
          "%d remote frames; %d load biases checked against ELF files; %.0fs" % (
              len(jobs), total_stacks, total_samples, total_remote, bias_checked,
              time.monotonic() - T0))
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
