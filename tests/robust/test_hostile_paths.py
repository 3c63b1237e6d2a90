#!/usr/bin/env python3
"""Paths a recording names: conv opens only regular files, and -d DIR keeps to DIR (issue 32,
cases 2 and 3).

usage: test_hostile_paths.py CONV WORKDIR

The recordings are crafted here (file mode, one event, COMM, MMAP2/MMAP and SAMPLE records, the
HOSTNAME, OSRELEASE and BUILD_ID features), and so are the nodes and files they name.

Nodes (case 2): a recording whose hostname and kernel release are this machine's (so conv trusts
the files at the recorded paths) names, in its build-id table and in MMAP2 and MMAP records, a FIFO
made here, a UNIX socket, a symlink to the FIFO and, as root, a character device made here with
/dev/null's numbers (harmless to open; a real one might be /dev/watchdog); three recordings: the
nodes mapped with their build-ids in the table, mapped without build-ids (their files are looked
at), and only in the table beside a mapping without a build-id (the table's files are read to see
whether this machine's files are the recording's). `conv` (pprof, JFR and
folded outputs), `conv info` and `conv symbolize` on conv's own pprof of it:
  * finish within the timeout (a blocking open of the FIFO would wait for ever) and exit 0;
  * with strace: none of the nodes is opened but with O_PATH (checked on the FIFO, the socket,
    the device and the symlink; skipped without strace);
  * the nodes are still what they were (no FIFO replaced by a file, nothing written).

-d DIR (case 3): a shared object with symbols and no build-id (-Wl,--build-id=none), its function
named SECRET, lies outside DIR; a recording from another machine (so only DIR is searched for
objects without build-ids) maps it as "/../outside/secret.so" (DIR/<recorded path> reaches it
through ..) and as /usr/lib/libout.so where DIR/libout.so is a symlink out of DIR. Controls in the
same recording: /usr/lib/libin.so, a regular file in DIR with function INSIDE, and /usr/lib/libv.so
with a build-id whose DIR/.build-id entries are symlinks out of DIR to the file (verified by its
note). `conv -d DIR` (pprof, JFR, folded) and `conv symbolize -d DIR` on a `conv -n` pprof of it:
  * SECRET appears in no output; INSIDE and VERIFIED (the controls) appear in every one;
  * `conv --stats` lists the three escapes as unresolved objects, each saying it leads out of DIR.
Debug files (case 2 too): a -d DIR build-id tree (verified) holds a shared object whose
.gnu_debugaltlink names a FIFO (libdw would open a dwz alternate by itself) and one built with
-gsplit-dwarf whose .dwo was replaced by a FIFO (libdw opens split units by itself): conv finishes,
names both objects' functions and (strace) opens neither FIFO.
Every conv run is under a timeout of 60 s ($CONV_TEST_TIMEOUT). Python 3 standard library only.
"""
import gzip
import json
import os
import re
import shutil
import socket
import stat
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import testlib as t  # noqa: E402

CONV, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
TIMEOUT = float(os.environ.get("CONV_TEST_TIMEOUT", "0")) or 60
PID = 4242

# ---- perf.data writer (tools/perf/Documentation/perf.data-file-format.txt) ----
SAMPLE_IP, SAMPLE_TID, SAMPLE_TIME, SAMPLE_PERIOD = 1, 2, 4, 0x100
SAMPLE_TYPE = SAMPLE_IP | SAMPLE_TID | SAMPLE_TIME | SAMPLE_PERIOD
REC_MMAP, REC_COMM, REC_SAMPLE, REC_MMAP2, REC_FINISHED_ROUND = 1, 3, 9, 10, 68
MISC_USER = 2
FEAT_BUILD_ID, FEAT_HOSTNAME, FEAT_OSRELEASE = 2, 3, 4
ATTR_SIZE = 128


def pad8(b):
    return b + b"\0" * (-len(b) % 8)


def rec(rtype, body, misc=MISC_USER):
    return struct.pack("<IHH", rtype, misc, 8 + len(body)) + body


def trailer(ts):
    """sample_id_all: TID and TIME, in sample_type's order."""
    return struct.pack("<IIQ", PID, PID, ts)


def comm(name, ts):
    return rec(REC_COMM, struct.pack("<II", PID, PID) + pad8(name.encode() + b"\0") + trailer(ts))


def mmap2(start, length, pgoff, path, ts, ino):
    body = struct.pack("<IIQQQIIQQII", PID, PID, start, length, pgoff, 8, 1, ino, 0, 5, 2)
    return rec(REC_MMAP2, body + pad8(path.encode() + b"\0") + trailer(ts))


def mmap1(start, length, pgoff, path, ts):
    body = struct.pack("<IIQQQ", PID, PID, start, length, pgoff)
    return rec(REC_MMAP, body + pad8(path.encode() + b"\0") + trailer(ts))


def sample(ip, ts):
    return rec(REC_SAMPLE, struct.pack("<QIIQQ", ip, PID, PID, ts, 1000))


def feat_string(s):
    b = s.encode() + b"\0"
    b += b"\0" * (-len(b) % 64)
    return struct.pack("<I", len(b)) + b


def build_id_entry(bid, path):
    # struct build_id_event: header, pid, build_id[24], filename (8-aligned); size in the header
    raw = bid + b"\0" * (24 - len(bid))
    body = struct.pack("<i", PID) + raw + pad8(path.encode() + b"\0")
    misc = MISC_USER | (1 << 15)  # PERF_RECORD_MISC_BUILD_ID_SIZE: size byte after the id
    body = body[:4 + 20] + bytes([len(bid)]) + body[4 + 21:]
    return struct.pack("<IHH", 0, misc, 8 + len(body)) + body


def perf_data(records, hostname, osrelease, build_ids=()):
    attr = struct.pack("<IIQQQQQ", 1, ATTR_SIZE, 0, 4000, SAMPLE_TYPE, 0,
                       (1 << 8) | (1 << 9) | (1 << 18) | (1 << 23))  # mmap comm sample_id_all mmap2
    attr += b"\0" * (ATTR_SIZE - len(attr))
    attrs_off = 104
    attr_entry = attr + struct.pack("<QQ", 0, 0)  # no ids
    data_off = attrs_off + len(attr_entry)
    data = b"".join(records) + rec(REC_FINISHED_ROUND, b"", 0)
    feats = {FEAT_HOSTNAME: feat_string(hostname), FEAT_OSRELEASE: feat_string(osrelease)}
    if build_ids:
        feats[FEAT_BUILD_ID] = b"".join(build_id_entry(b, p) for b, p in build_ids)
    bits = sorted(feats)
    idx_off = data_off + len(data)
    body_off = idx_off + 16 * len(bits)
    index, bodies = b"", b""
    for b in bits:
        index += struct.pack("<QQ", body_off + len(bodies), len(feats[b]))
        bodies += feats[b]
    words = [0, 0, 0, 0]
    for b in bits:
        words[b // 64] |= 1 << (b % 64)
    hdr = b"PERFILE2" + struct.pack("<QQ", 104, len(attr_entry)) + struct.pack("<QQ", attrs_off, len(attr_entry))
    hdr += struct.pack("<QQ", data_off, len(data)) + struct.pack("<QQ", 0, 0) + struct.pack("<4Q", *words)
    return hdr + attr_entry + data + index + bodies


# ---- helpers ----
def run(argv, strace_to=None):
    env = None
    if strace_to:
        argv = ["strace", "-f", "-qq", "-e", "trace=open,openat,openat2", "-o", strace_to] + argv
        # LeakSanitizer cannot run under ptrace (an ASan build): the leak check is the plain run's
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=TIMEOUT, env=env)
        return p.returncode, p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        return None, "timed out after %d s" % TIMEOUT


def output_bytes(path):
    data = open(path, "rb").read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def gcc(src, out, *flags):
    c = out + ".c"
    with open(c, "w") as f:
        f.write(src)
    return subprocess.run(["gcc", "-shared", "-fPIC", "-g", "-O1", "-o", out, c] + list(flags),
                          capture_output=True, timeout=120).returncode == 0


def text_segment(path):
    """(vaddr, offset) of the executable PT_LOAD and {symbol: value} of the functions (readelf, nm)."""
    r = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True)
    seg = None
    for line in r.stdout.splitlines():
        f = line.split()
        if f and f[0] == "LOAD" and "E" in "".join(f[6:-1]):
            seg = (int(f[2], 16), int(f[1], 16))
    syms = {}
    for line in subprocess.run(["nm", path], capture_output=True, text=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tT":
            syms[f[2]] = int(f[0], 16)
    return seg, syms


def note_build_id(path):
    r = subprocess.run(["readelf", "-n", path], capture_output=True, text=True)
    m = re.search(r"Build ID: ([0-9a-f]+)", r.stdout)
    return bytes.fromhex(m.group(1)) if m else None


def opened_without_o_path(trace, names):
    """strace lines that open one of names with anything but O_PATH."""
    bad = []
    for line in open(trace, errors="replace"):
        if any('"%s"' % n in line for n in names) and "O_PATH" not in line:
            bad.append(line.strip())
    return bad


for tool in ("gcc", "readelf", "nm"):
    if not shutil.which(tool):
        t.skip_all("%s not installed" % tool)
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
HOST, RELEASE = socket.gethostname(), os.uname().release

# ---- case 2: FIFOs, sockets and devices named by a recording of this machine ----
nodes = os.path.join(WORK, "nodes")
os.makedirs(nodes)
fifo, sock_path, link, dev = (os.path.join(nodes, n) for n in ("fifo.so", "sock.so", "link.so", "null.so"))
os.mkfifo(fifo)
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(sock_path)
os.symlink("fifo.so", link)
named = [fifo, sock_path, link]
if os.geteuid() == 0:
    rdev = os.stat("/dev/null").st_rdev
    os.mknod(dev, 0o600 | stat.S_IFCHR, rdev)
    named.append(dev)
else:
    t.skip("a device node in the recording", "not root: mknod needs it")


def node_state():
    return {p: (os.lstat(p).st_mode, os.lstat(p).st_ino, os.lstat(p).st_size) for p in named}


before = node_state()
recs, bids = [comm("hostile", 1000)], []
for i, p in enumerate(named):
    start = 0x7f0000000000 + i * 0x100000
    recs.append(mmap2(start, 0x10000, 0, p, 2000 + i, 1000 + i) if i % 2 == 0 else
                mmap1(start, 0x10000, 0, p, 2000 + i))
    recs.append(sample(start + 0x1234, 3000 + i))
    bids.append((bytes([0xa0 + i]) * 20, p))
nodes_data = os.path.join(WORK, "nodes.data")
with open(nodes_data, "wb") as f:
    f.write(perf_data(recs, HOST, RELEASE, bids))
# without build-ids: the mappings' identities are looked for at their paths
nobid_data = os.path.join(WORK, "nodes-nobid.data")
with open(nobid_data, "wb") as f:
    f.write(perf_data(recs, HOST, RELEASE))

# the nodes in the build-id table, and a mapping without a build-id: whether this machine's files
# are the recording's is checked against the table's files first
table_data = os.path.join(WORK, "nodes-table.data")
with open(table_data, "wb") as f:
    f.write(perf_data([comm("hostile", 1000), mmap2(0x7f5000000000, 0x10000, 0, os.path.join(nodes, "plain.so"),
                                                   2000, 999), sample(0x7f5000001234, 3000)],
                      HOST, RELEASE, bids))

have_strace = shutil.which("strace") is not None
if not have_strace:
    t.skip("strace: the nodes are opened only with O_PATH", "strace not installed")
for data in (nodes_data, nobid_data, table_data):
    tag = os.path.basename(data)
    out = os.path.join(WORK, tag + ".out")
    runs = [("conv", [CONV, "-q", "--offline", "-F", "pprof,jfr,folded", "-o", out, data]),
            ("conv info", [CONV, "info", data]),
            ("conv info --json", [CONV, "info", "--json", data])]
    for what, argv in runs:
        trace = os.path.join(WORK, "%s.%s.trace" % (tag, what.replace(" ", "_")))
        rc, msg = run(argv)
        t.check("%s %s: finishes, exit 0 (nodes not opened, nothing waits)" % (what, tag), rc == 0,
                "exit %s: %s" % (rc, msg[-400:]))
        if have_strace and rc == 0:
            rc2, msg2 = run(argv, strace_to=trace)
            bad = opened_without_o_path(trace, named) if rc2 == 0 else ["strace run: exit %s %s" % (rc2, msg2[-200:])]
            t.check("%s %s: no node opened but with O_PATH (strace)" % (what, tag), not bad, bad[:4])
    if os.path.exists(out + ".pb.gz"):
        sym_out = os.path.join(WORK, tag + ".sym.pb.gz")
        argv = [CONV, "symbolize", "--offline", "-o", sym_out, out + ".pb.gz"]
        rc, msg = run(argv)
        t.check("conv symbolize %s: finishes" % tag, rc in (0, 3), "exit %s: %s" % (rc, msg[-400:]))
        if have_strace and rc in (0, 3):
            trace = os.path.join(WORK, tag + ".symbolize.trace")
            os.unlink(sym_out)
            run(argv, strace_to=trace)
            bad = opened_without_o_path(trace, named)
            t.check("conv symbolize %s: no node opened but with O_PATH (strace)" % tag, not bad, bad[:4])
    # conv symbolize's input itself
    for p in (fifo, link, sock_path) + ((dev,) if dev in named else ()):
        rc, msg = run([CONV, "symbolize", "--offline", "-o", os.path.join(WORK, "x.pb.gz"), p])
        if tag == os.path.basename(nodes_data):
            t.check("conv symbolize on %s: refused as not a regular file" % os.path.basename(p),
                    rc == 2 and "not a regular file" in msg, "exit %s: %s" % (rc, msg[-300:]))
# --kallsyms naming a FIFO: said before the run, not "no kernel symbols" after it
rc, msg = run([CONV, "--offline", "--kallsyms", fifo, "-o", os.path.join(WORK, "k"), nodes_data])
t.check("--kallsyms FIFO: refused as not a regular file", rc == 2 and "not a regular file" in msg,
        "exit %s: %s" % (rc, msg[-300:]))
t.check("the nodes are unchanged", node_state() == before)
srv.close()

# ---- case 3: -d DIR is not escaped by ../ or by a symlink out of DIR ----
case = os.path.join(WORK, "dcase")
given = os.path.join(case, "given")
outside = os.path.join(case, "outside")
elsewhere = os.path.join(case, "elsewhere")
for d in (given, outside, elsewhere, os.path.join(given, "sub")):
    os.makedirs(d)
SECRET, INSIDE, VERIFIED = "secret_fn_xyzzy", "inside_fn_plugh", "verified_fn_quux"
body = "int %s(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * x; return s; }\n"
secret = os.path.join(outside, "secret.so")
inside = os.path.join(given, "libin.so")
verified = os.path.join(elsewhere, "libv.so")
ok = (gcc(body % SECRET, secret, "-Wl,--build-id=none") and gcc(body % INSIDE, inside, "-Wl,--build-id=none")
      and gcc(body % VERIFIED, verified, "-Wl,--build-id=sha1"))
if not ok:
    t.skip_all("gcc cannot build shared objects here")
vbid = note_build_id(verified)
os.symlink(secret, os.path.join(given, "libout.so"))          # DIR/<basename>: a symlink out
os.symlink("../../outside/secret.so", os.path.join(given, "sub", "libsub.so"))  # relative, out
for suffix in ("", ".debug"):                                # a build-id tree linking out, verified
    p = os.path.join(given, ".build-id", vbid[:1].hex(), vbid[1:].hex() + suffix)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    os.symlink(verified, p)

objs = [("/../outside/secret.so", secret, None), ("/usr/lib/libout.so", secret, None),
        ("/sub/libsub.so", secret, None), ("/usr/lib/libin.so", inside, None),
        ("/usr/lib/libv.so", verified, vbid)]
recs, bids = [comm("escape", 1000)], []
for i, (rpath, real, bid) in enumerate(objs):
    (vaddr, off), syms = text_segment(real)
    fn = [s for s in syms if s.endswith(("_xyzzy", "_plugh", "_quux"))][0]
    at = 0x7f1000000000 + i * 0x1000000 + (vaddr & ~0xfff)  # the text segment, mapped as ld.so would
    recs.append(mmap2(at, 0x1000, off & ~0xfff, rpath, 2000 + i, 5000 + i))
    for k in range(4):
        recs.append(sample(at + syms[fn] - (vaddr & ~0xfff) + k, 3000 + 10 * i + k))
    if bid:
        bids.append((bid, rpath))
esc_data = os.path.join(case, "escape.data")
with open(esc_data, "wb") as f:
    f.write(perf_data(recs, "elsewhere.invalid", "0.0-other", bids))

outs = os.path.join(case, "out")
stats = os.path.join(case, "stats.json")
rc, msg = run([CONV, "-q", "--offline", "-d", given, "--stats=" + stats, "-F", "pprof,jfr,folded", "-o", outs,
               esc_data])
t.check("conv -d DIR: converts the recording", rc in (0, 3), "exit %s: %s" % (rc, msg[-400:]))
files = [outs + e for e in (".pb.gz", ".jfr", ".folded")]
for f in files:
    if not os.path.exists(f):
        t.check("conv -d DIR: %s written" % os.path.basename(f), False)
        continue
    b = output_bytes(f)
    name = os.path.basename(f)
    t.check("conv -d DIR %s: the secret outside DIR is not read (../, symlinks out)" % name,
            SECRET.encode() not in b)
    t.check("conv -d DIR %s: a file inside DIR still names its frames" % name, INSIDE.encode() in b)
    t.check("conv -d DIR %s: a build-id tree linking out of DIR still works (verified)" % name,
            VERIFIED.encode() in b)

if os.path.exists(stats):
    unres = json.load(open(stats)).get("unresolved_objects", [])
    t.check("conv --stats: the three escapes are unresolved, each saying it leads out of DIR",
            len(unres) == 3 and all("out of DIR" in u.get("reason", "") for u in unres), unres)
else:
    t.check("conv --stats written", False)

# conv symbolize -d on a pprof without names
bare = os.path.join(case, "bare.pb.gz")
rc, msg = run([CONV, "-q", "-n", "--pprof", bare, esc_data])
t.check("conv -n: writes the pprof without names", rc in (0, 3) and os.path.exists(bare), "exit %s: %s" % (rc, msg[-300:]))
if os.path.exists(bare):
    b0 = output_bytes(bare)
    t.check("conv -n pprof: no function names at all (the symbolize check means something)",
            SECRET.encode() not in b0 and INSIDE.encode() not in b0)
    sym = os.path.join(case, "bare.symbolized.pb.gz")
    rc, msg = run([CONV, "symbolize", "--offline", "-d", given, "-o", sym, bare])
    t.check("conv symbolize -d DIR: runs", rc in (0, 3) and os.path.exists(sym), "exit %s: %s" % (rc, msg[-300:]))
    if os.path.exists(sym):
        b = output_bytes(sym)
        t.check("conv symbolize -d DIR: the secret outside DIR is not read", SECRET.encode() not in b)
        t.check("conv symbolize -d DIR: a file inside DIR names its frames", INSIDE.encode() in b)
        t.check("conv symbolize -d DIR: a verified build-id link out of DIR works", VERIFIED.encode() in b)

# ---- debug files that name FIFOs: a dwz alternate (.gnu_debugaltlink) and a split unit (.dwo) ----
dbg = os.path.join(WORK, "dbgfiles")
dd = os.path.join(dbg, "dir")
os.makedirs(dd)
ALT_FN, SPLIT_FN = "altlinked_fn_corge", "split_fn_grault"
alt_so, split_so = os.path.join(dbg, "libalt.so"), os.path.join(dbg, "libsplit.so")
alt_fifo = os.path.join(dbg, "alt.fifo")
os.mkfifo(alt_fifo)
ok = gcc(body % ALT_FN, alt_so + ".in", "-Wl,--build-id=sha1")
if ok:
    sec = os.path.join(dbg, "altlink.bin")
    with open(sec, "wb") as f:
        f.write(alt_fifo.encode() + b"\0" + bytes(range(1, 21)))  # name, then the alternate's build-id
    ok = subprocess.run(["objcopy", "--add-section", ".gnu_debugaltlink=" + sec, alt_so + ".in", alt_so],
                        capture_output=True, timeout=60).returncode == 0
# -gsplit-dwarf: the skeleton names x.dwo beside it and under its comp_dir (here); a FIFO takes its place
with open(os.path.join(dbg, "x.c"), "w") as f:
    f.write(body % SPLIT_FN)
ok = ok and subprocess.run(["gcc", "-g", "-gsplit-dwarf", "-fPIC", "-O1", "-c", "x.c", "-o", "x.o"], cwd=dbg,
                           capture_output=True, timeout=120).returncode == 0
ok = ok and subprocess.run(["gcc", "-shared", "-Wl,--build-id=sha1", "-o", split_so, "x.o"], cwd=dbg,
                           capture_output=True, timeout=120).returncode == 0
if not ok or not os.path.exists(os.path.join(dbg, "x.dwo")):
    t.skip("debug files naming FIFOs", "objcopy or gcc -gsplit-dwarf failed here")
else:
    os.unlink(os.path.join(dbg, "x.dwo"))
    os.mkfifo(os.path.join(dbg, "x.dwo"))
    recs, bids = [comm("dbgfiles", 1000)], []
    for i, (so, rpath, fnend) in enumerate(((alt_so, "/usr/lib/libalt.so", "_corge"),
                                            (split_so, "/usr/lib/libsplit.so", "_grault"))):
        bid = note_build_id(so)
        for suffix in ("", ".debug"):
            p = os.path.join(dd, ".build-id", bid[:1].hex(), bid[1:].hex() + suffix)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            os.symlink(so, p)
        (vaddr, off), syms = text_segment(so)
        fn = [x for x in syms if x.endswith(fnend)][0]
        at = 0x7f2000000000 + i * 0x1000000 + (vaddr & ~0xfff)
        recs.append(mmap2(at, 0x1000, off & ~0xfff, rpath, 2000 + i, 7000 + i))
        recs += [sample(at + syms[fn] - (vaddr & ~0xfff), 3000 + 10 * i + k) for k in range(2)]
        bids.append((bid, rpath))
    dbg_data = os.path.join(dbg, "dbgfiles.data")
    with open(dbg_data, "wb") as f:
        f.write(perf_data(recs, "elsewhere.invalid", "0.0-other", bids))
    argv = [CONV, "-q", "--offline", "-d", dd, "--folded", os.path.join(dbg, "out.folded"), dbg_data]
    rc, msg = run(argv)
    t.check("conv -d DIR: debug files naming FIFOs (dwz alternate, .dwo) do not make it wait", rc in (0, 3),
            "exit %s: %s" % (rc, msg[-300:]))
    if rc in (0, 3):
        b = open(os.path.join(dbg, "out.folded"), "rb").read()
        t.check("conv -d DIR: both objects still named (symbol tables)",
                ALT_FN.encode() in b and SPLIT_FN.encode() in b, b[:300])
        if have_strace:
            trace = os.path.join(dbg, "conv.trace")
            run(argv, strace_to=trace)
            bad = opened_without_o_path(trace, [alt_fifo, os.path.join(dbg, "x.dwo")])
            t.check("conv -d DIR: the FIFOs a debug file names are not opened (strace)", not bad, bad[:4])
t.finish()
