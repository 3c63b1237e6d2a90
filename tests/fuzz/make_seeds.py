#!/usr/bin/env python3
"""Writes seed inputs for the fuzz targets into OUT/<target>/.

usage: make_seeds.py OUT [--shared DIR] [--system]

Always: inputs derived from the repository (tests/fixtures) and synthetic
ones built here (small ELF files compiled with the system's gcc, raw notes,
jitdumps in both byte orders, perf maps, kallsyms text, HTTP answers, DWARF
line tables of a program built as DWARF 2 to 5).

--shared DIR  also the small perf.data files (< 64 KiB) of the shared corpus
              (../shared/corpus) for reader and roundtrip: for local runs
              only, never to be committed (filter_foreign.py drops them and
              their near copies before a corpus is committed).
--system      also small shared objects of this machine (< 64 KiB) for buildid
              and debuginfod, and an excerpt of /proc/kallsyms rebased to the
              default kernel address: for local runs only, as above. Their
              paths are listed in OUT/foreign-system.txt.
"""
import argparse
import glob
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))
FIXTURES = os.path.join(REPO, 'tests', 'fixtures')

SMALL = 64 * 1024


def put(out, target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)


def read(path):
    with open(path, 'rb') as f:
        return f.read()


# ---- perf.data: reader, roundtrip ----

def perf_seeds(out, shared):
    files = sorted(glob.glob(os.path.join(FIXTURES, '*.data')) +
                   glob.glob(os.path.join(FIXTURES, 'attr', '*.data')))
    for p in files:
        data = read(p)
        name = 'fixture-' + os.path.basename(p)
        for t in ('reader', 'roundtrip'):
            put(out, t, name, data)
    if shared:
        n = 0
        for p in sorted(glob.glob(os.path.join(shared, '**', '*'), recursive=True)):
            if not os.path.isfile(p) or os.path.getsize(p) >= SMALL:
                continue
            if p.endswith(('.buildids', '.txt', '.md')) or 'quipper-fuzz' in p:
                continue
            data = read(p)
            if data[:8] not in (b'PERFILE2', b'2ELIFREP'):
                continue
            name = 'shared-' + os.path.relpath(p, shared).replace('/', '_')
            for t in ('reader', 'roundtrip'):
                put(out, t, name, data)
            n += 1
        print(f'shared perf.data seeds: {n}', file=sys.stderr)


# ---- ELF: buildid, debuginfod ----

C_PROG = b'''
int g = 42;
static int helper(int x) { return x * g + 1; }
int entry(int x) { return helper(x) ^ 7; }
int main(void) { return entry(3); }
'''

C_LIB = b'''
int lib_value = 5;
int lib_add(int a, int b) { return a + b + lib_value; }
'''

C_TINY = b'''
void _start(void) { for (;;) __asm__ volatile("hlt"); }
'''


def compile_elfs(tmp):
    """Small ELF files made here: executables, a shared object, stripped and not."""
    src = os.path.join(tmp, 'p.c')
    lib = os.path.join(tmp, 'l.c')
    tiny = os.path.join(tmp, 't.c')
    for path, text in ((src, C_PROG), (lib, C_LIB), (tiny, C_TINY)):
        with open(path, 'wb') as f:
            f.write(text)
    builds = {
        'tiny-sha1': ['-Os', '-nostdlib', '-static', '-Wl,--build-id=sha1', tiny],
        'tiny-md5': ['-Os', '-nostdlib', '-static', '-Wl,--build-id=md5', tiny],
        'tiny-uuid': ['-Os', '-nostdlib', '-static', '-Wl,--build-id=uuid', tiny],
        'tiny-hex4': ['-Os', '-nostdlib', '-static', '-Wl,--build-id=0x0badcafe', tiny],
        'tiny-none': ['-Os', '-nostdlib', '-static', '-Wl,--build-id=none', tiny],
        'tiny-nophdr-pie': ['-Os', '-nostdlib', '-static-pie', '-Wl,--build-id', tiny],
        'lib-so': ['-O1', '-g', '-shared', '-fPIC', '-Wl,--build-id', lib],
        'lib-so-nodebug': ['-O1', '-shared', '-fPIC', '-Wl,--build-id', lib],
        'prog-g': ['-O1', '-g', '-Wl,--build-id', src],
    }
    elfs = {}
    for name, args in builds.items():
        outp = os.path.join(tmp, name)
        r = subprocess.run(['gcc', '-o', outp] + args, capture_output=True)
        if r.returncode == 0:
            elfs[name] = outp
        else:
            print(f'skipped {name}: {r.stderr.decode(errors="replace").strip()}', file=sys.stderr)
    # variants: stripped, debug-only, no build-id note, compressed debug sections
    def derive(name, base, cmd):
        if base not in elfs:
            return
        outp = os.path.join(tmp, name)
        r = subprocess.run(cmd(elfs[base], outp), capture_output=True)
        if r.returncode == 0 and os.path.exists(outp):
            elfs[name] = outp
    derive('tiny-sha1-stripped', 'tiny-sha1', lambda i, o: ['strip', '-o', o, i])
    derive('lib-so-stripped', 'lib-so', lambda i, o: ['strip', '-o', o, i])
    derive('lib-so-debug', 'lib-so', lambda i, o: ['objcopy', '--only-keep-debug', i, o])
    derive('lib-so-zdebug', 'lib-so', lambda i, o: ['objcopy', '--compress-debug-sections', i, o])
    derive('lib-so-nonote', 'lib-so',
           lambda i, o: ['objcopy', '--remove-section=.note.gnu.build-id', i, o])
    derive('prog-g-stripped', 'prog-g', lambda i, o: ['strip', '-o', o, i])
    derive('prog-g-nosections', 'prog-g', lambda i, o: ['strip', '--strip-section-headers', '-o', o, i])
    return {k: read(v) for k, v in elfs.items()}


def note(name, ntype, desc, align=4):
    n = name + b'\0' if name else b''
    pad = lambda b: b + b'\0' * ((-len(b)) % align)
    return struct.pack('<III', len(n), len(desc), ntype) + pad(n) + pad(desc)


def synth_elf(bits, big, notes_blob, with_phdr=True, with_shdr=True, align=4):
    """A minimal ELF (no code) holding one note segment/section."""
    e = '>' if big else '<'
    if bits == 64:
        ehsize, phsize, shsize = 64, 56, 64
    else:
        ehsize, phsize, shsize = 52, 32, 40
    # the note was built little-endian: rebuild it in the file's order
    def conv(blob):
        out = b''
        i = 0
        while i + 12 <= len(blob):
            nsz, dsz, t = struct.unpack_from('<III', blob, i)
            pn = (nsz + align - 1) // align * align
            pd = (dsz + align - 1) // align * align
            out += struct.pack(e + 'III', nsz, dsz, t) + blob[i + 12:i + 12 + pn + pd]
            i += 12 + pn + pd
        return out
    notes = conv(notes_blob)
    shstr = b'\0.note.gnu.build-id\0.shstrtab\0'
    phoff = ehsize if with_phdr else 0
    note_off = ehsize + (phsize if with_phdr else 0)
    shstr_off = note_off + len(notes)
    shoff = (shstr_off + len(shstr) + 7) // 8 * 8 if with_shdr else 0
    ident = b'\x7fELF' + bytes([2 if bits == 64 else 1, 2 if big else 1, 1, 0]) + b'\0' * 8
    if bits == 64:
        hdr = ident + struct.pack(e + 'HHIQQQIHHHHHH', 2, 62 if not big else 43, 1, 0, phoff, shoff, 0,
                                  ehsize, phsize, 1 if with_phdr else 0, shsize,
                                  3 if with_shdr else 0, 2 if with_shdr else 0)
        ph = struct.pack(e + 'IIQQQQQQ', 4, 4, note_off, 0, 0, len(notes), len(notes), align)
    else:
        hdr = ident + struct.pack(e + 'HHIIIIIHHHHHH', 2, 3 if not big else 20, 1, 0, phoff, shoff, 0,
                                  ehsize, phsize, 1 if with_phdr else 0, shsize,
                                  3 if with_shdr else 0, 2 if with_shdr else 0)
        ph = struct.pack(e + 'IIIIIIII', 4, note_off, 0, 0, len(notes), len(notes), 4, align)
    body = hdr + (ph if with_phdr else b'') + notes + shstr
    if with_shdr:
        body += b'\0' * (shoff - len(body))
        if bits == 64:
            sh = lambda nm, t, off, sz, al: struct.pack(e + 'IIQQQQIIQQ', nm, t, 2, 0, off, sz, 0, 0, al, 0)
        else:
            sh = lambda nm, t, off, sz, al: struct.pack(e + 'IIIIIIIIII', nm, t, 2, 0, off, sz, 0, 0, al, 0)
        body += b'\0' * shsize
        body += sh(1, 7, note_off, len(notes), align)
        body += sh(20, 3, shstr_off, len(shstr), 1)
    return body


def synth_notes():
    bid = bytes(range(1, 21))
    return {
        'notes-gnu': note(b'GNU', 3, bid),
        'notes-first-other': note(b'Linux', 1, b'\0' * 4) + note(b'Xen', 6, b'\x01' * 8) +
                             note(b'GNU', 3, bid),
        'notes-go': note(b'Go', 4, b'goid/hash/more') + note(b'GNU', 3, bid[:8]),
        'notes-long-id': note(b'GNU', 3, bytes(range(64))),
        'notes-too-long': note(b'GNU', 3, bytes(range(65))),
        'notes-empty-desc': note(b'GNU', 3, b''),
        'notes-truncated': note(b'GNU', 3, bid)[:-6],
        'notes-huge-namesz': struct.pack('<III', 0xfffffffd, 20, 3) + b'GNU\0' + bid,
    }


def elf_seeds(out, system):
    foreign = []
    with tempfile.TemporaryDirectory() as tmp:
        elfs = compile_elfs(tmp)
    notes = synth_notes()
    for n, blob in notes.items():
        put(out, 'buildid', n, blob)
    bid_note = notes['notes-gnu']
    for bits in (32, 64):
        for big in (False, True):
            tag = f'elf{bits}{"be" if big else "le"}'
            elfs[f'synth-{tag}'] = synth_elf(bits, big, bid_note)
            elfs[f'synth-{tag}-shdr-only'] = synth_elf(bits, big, bid_note, with_phdr=False)
            elfs[f'synth-{tag}-phdr-only'] = synth_elf(bits, big, bid_note, with_shdr=False)
    elfs['synth-elf64le-align8'] = synth_elf(64, False, note(b'GNU', 3, bytes(range(1, 21)), 8), align=8)
    elfs['synth-elf64le-two-notes'] = synth_elf(64, False, notes['notes-first-other'])
    elfs['synth-elf64le-go-note'] = synth_elf(64, False, note(b'Go', 4, b'go build id'))
    for n, blob in elfs.items():
        put(out, 'buildid', n, blob)
    if os.path.exists('/sys/kernel/notes'):
        put(out, 'buildid', 'notes-running-kernel', read('/sys/kernel/notes'))
    if system:
        cands = sorted(glob.glob('/usr/lib/x86_64-linux-gnu/*.so*') + glob.glob('/lib/x86_64-linux-gnu/*.so*'))
        picked = 0
        for p in cands:
            if picked >= 12 or not os.path.isfile(p) or os.path.islink(p):
                continue
            if os.path.getsize(p) >= SMALL:
                continue
            data = read(p)
            if data[:4] != b'\x7fELF':
                continue
            put(out, 'buildid', 'system-' + os.path.basename(p), data)
            put(out, 'debuginfod', 'system-' + os.path.basename(p), b'\x00' + data)
            foreign.append(p)
            picked += 1

    # debuginfod: control byte + payload (see fuzz_debuginfod.c)
    small = {k: v for k, v in elfs.items() if len(v) <= 16384}
    bodies = sorted(small.items(), key=lambda kv: len(kv[1]))[:6]
    for name, body in bodies:
        for ctl, tag in ((0x00, 'file'), (0x02, 'cache'), (0x03, 'syscache'), (0x08, 'file-otherid'),
                         (0x10, 'file-maxsize-exact'), (0x20, 'file-maxsize-less'),
                         (0x44, 'file-exec-2servers'), (0x0a, 'cache-otherid'),
                         (0x8a, 'cache-otherid-noneg')):
            put(out, 'debuginfod', f'{tag}-{name}', bytes([ctl]) + body)
        http = (b'HTTP/1.1 200 OK\r\nContent-Length: %d\r\nContent-Type: application/octet-stream\r\n\r\n'
                % len(body)) + body
        put(out, 'debuginfod', f'http-200-{name}', b'\x01' + http)
        put(out, 'debuginfod', f'http-200-close-{name}', b'\x01' + b'HTTP/1.0 200 OK\r\n\r\n' + body)
        chunked = b'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n' % len(body) + body + b'\r\n0\r\n\r\n'
        put(out, 'debuginfod', f'http-200-chunked-{name}', b'\x01' + chunked)
        put(out, 'debuginfod', f'http-200-maxsize-{name}', b'\x21' + http)
    first = bodies[0][1] if bodies else b'\x7fELF'
    http_misc = {
        'http-404': b'HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found',
        'http-404-2servers': b'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n',
        'http-406': b'HTTP/1.1 406 Not Acceptable\r\nContent-Length: 0\r\n\r\n',
        'http-500': b'HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\noops!',
        'http-302-loop': b'HTTP/1.1 302 Found\r\nLocation: /buildid/again\r\nContent-Length: 0\r\n\r\n',
        'http-302-elsewhere': b'HTTP/1.1 302 Found\r\nLocation: http://example.invalid/x\r\n\r\n',
        'http-302-file': b'HTTP/1.1 302 Found\r\nLocation: file:///etc/passwd\r\n\r\n',
        'http-len-huge': b'HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n' + first,
        'http-len-short': b'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n' + first,
        'http-len-long': b'HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n' + first,
        'http-100-then-200': b'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n' % len(first) + first,
        'http-garbage': b'\x00\x01garbage\r\n\r\n',
        'http-empty': b'',
    }
    for n, resp in http_misc.items():
        ctl = 0x41 if '2servers' in n else 0x01
        if n == 'http-len-huge':
            put(out, 'debuginfod', n + '-maxsize', bytes([0x31]) + resp)
        put(out, 'debuginfod', n, bytes([ctl]) + resp)
    put(out, 'debuginfod', 'cache-empty', b'\x02')
    put(out, 'debuginfod', 'cache-empty-noneg', b'\x82')
    put(out, 'debuginfod', 'file-empty', b'\x00')
    return foreign


# ---- JIT: jitmap ----

class JB:
    def __init__(self, big=False, version=1, hsize=40, flags=0):
        self.e = '>' if big else '<'
        self.b = bytearray()
        self.u32(0x4A695444)
        self.u32(version)
        self.u32(hsize)
        self.u32(62)
        self.u32(0xdeadbeef)
        self.u32(4242)
        self.u64(123456789)
        self.u64(flags)
        self.b += b'\xee' * max(0, hsize - 40)
        self.n = 0

    def u32(self, v):
        self.b += struct.pack(self.e + 'I', v & 0xffffffff)

    def u64(self, v):
        self.b += struct.pack(self.e + 'Q', v & 0xffffffffffffffff)

    def begin(self, rid):
        at = len(self.b)
        self.u32(rid)
        self.u32(0)
        self.u64(1000 + self.n)
        self.n += 1
        return at

    def end(self, at, pad=True):
        if pad:
            self.b += b'\0' * ((-len(self.b)) % 8)
        struct.pack_into(self.e + 'I', self.b, at + 4, len(self.b) - at)

    def load(self, addr, size, index, name, code=True):
        at = self.begin(0)
        self.u32(4242)
        self.u32(4243)
        self.u64(addr)
        self.u64(addr)
        self.u64(size)
        self.u64(index)
        self.b += name + b'\0'
        if code:
            self.b += b'\xcc' * size
        self.end(at)

    def move(self, frm, to, size, index):
        at = self.begin(1)
        self.u32(4242)
        self.u32(4243)
        self.u64(to)
        self.u64(frm)
        self.u64(to)
        self.u64(size)
        self.u64(index)
        self.end(at)

    def debug(self, code_addr, entries):
        at = self.begin(2)
        self.u64(code_addr)
        self.u64(len(entries))
        for addr, line, disc, f in entries:
            self.u64(addr)
            self.u32(line)
            self.u32(disc)
            self.b += f + b'\0'
        self.end(at)

    def unwinding(self, n):
        at = self.begin(4)
        self.u64(n)
        self.u64(min(n, 20))
        self.u64(n)
        self.b += b'\x1b' * n
        self.end(at)

    def empty(self, rid):
        at = self.begin(rid)
        self.end(at)


def jit_seeds(out):
    for p in sorted(glob.glob(os.path.join(FIXTURES, 'jit', 'perf-*.map'))):
        put(out, 'jitmap', 'map-' + os.path.basename(p), b'\x00' + read(p))
    for p in sorted(glob.glob(os.path.join(FIXTURES, 'jit', 'jit-*.dump'))):
        put(out, 'jitmap', 'dump-' + os.path.basename(p), b'\x01' + read(p))
    maps = {
        'map-simple': b'1000 10 foo\n1010 20 bar baz\n',
        'map-0x-tabs-crlf': b'0x7f0000001000\t0x40\tjava.lang.String.hashCode()\r\n'
                            b'0x7f0000001040 0x8 \t name with spaces \r\n\n\n',
        'map-overlap': b'1000 100 outer\n1040 10 inner\n1000 8 front\n10f8 10 tail\n',
        'map-malformed': b'zz 10 x\n1000\n1000 10\n1000 0 empty\nffffffffffffffff 2 wrap\n'
                         b'1000 10 ok\x00nul\n10000000000000000 1 big\n2000 10 good\n',
        'map-python': b'7fef06c757d2 b py::leaf:/tmp/work.py\n7fef06c757e0 b py::mid:/tmp/work.py\n',
        'map-node': b'3f0c0a0c1000 2c Builtin:ArgumentsAdaptorTrampoline\n'
                    b'3f0c0a0c2000 1b0 LazyCompile:~main /app/index.js:1\n',
    }
    for n, m in maps.items():
        put(out, 'jitmap', n, b'\x00' + m)
    for big in (False, True):
        tag = 'be' if big else 'le'
        j = JB(big)
        j.load(0x10000, 0x40, 1, b'first')
        j.debug(0x20000, [(0x20000, 10, 0, b'a.java'), (0x20008, 11, 2, b'\xff'), (0x20010, 12, 0, b'b.java')])
        j.load(0x20000, 0x30, 2, b'second')
        j.move(0x10000, 0x30000, 0x40, 1)
        j.move(0x99999, 0x40000, 0x10, 77)
        j.load(0x10010, 0x10, 3, b'overlaps first')
        j.unwinding(24)
        j.empty(3)
        j.empty(9)
        put(out, 'jitmap', f'dump-synth-{tag}', b'\x01' + bytes(j.b))
        put(out, 'jitmap', f'dump-synth-{tag}-truncated', b'\x01' + bytes(j.b[:-13]))
        mixed = b'10000 8 from the map\n30000 100 covers the move\n'
        put(out, 'jitmap', f'map-then-dump-{tag}',
            bytes([2 | (16 << 2)]) + mixed + b'\0' * 0 + bytes(j.b))
        put(out, 'jitmap', f'dump-then-map-{tag}', bytes([3 | (48 << 2)]) + bytes(j.b) + mixed)
    j = JB(False, hsize=64, flags=1)
    j.load(0x5000, 0x10, 1, b'bigger header, arch timestamps', code=False)
    put(out, 'jitmap', 'dump-header64', b'\x01' + bytes(j.b))
    j = JB(False, version=2)
    put(out, 'jitmap', 'dump-version2', b'\x01' + bytes(j.b))
    j = JB(False)
    at = j.begin(0)
    j.u32(1)
    j.end(at)
    j.load(0x6000, 0x10, 1, b'after a short record')
    at = j.begin(2)
    j.u64(0x7000)
    j.u64(0xffffffffffff)
    j.end(at)
    j.load(0x7000, 0x10, 2, b'after a lying debug record')
    put(out, 'jitmap', 'dump-bad-records', b'\x01' + bytes(j.b))


# ---- kallsyms ----

KSYMS = b'''0000000000000000 A fixed_percpu_data
ffffffff81000000 T _stext
ffffffff81000000 T _text
ffffffff81001000 T asm_sysvec_apic_timer_interrupt
ffffffff81001040 t __pfx_do_one_initcall
ffffffff81001050 T do_one_initcall
ffffffff81002000 W arch_cpu_idle
ffffffff81003000 D some_data
ffffffff81004000 t local_helper
ffffffff81004000 T alias_at_same_address
ffffffff81005000 T schedule
ffffffff82000000 T _etext
ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]
ffffffffc0300000 t ext4_fill_super\t[ext4]
ffffffffc0300400 T ext4_iget\t[ext4]
ffffffffc0400000 t nf_hook\t[nf_tables]
'''


def kallsyms_seeds(out, system):
    put(out, 'kallsyms', 'synthetic', KSYMS)
    put(out, 'kallsyms', 'restricted', re.sub(rb'^[0-9a-f]{16}', b'0' * 16, KSYMS, flags=re.M))
    put(out, 'kallsyms', 'no-text', b'\n'.join(l for l in KSYMS.split(b'\n') if b'text' not in l))
    put(out, 'kallsyms', 'crlf-short-addr', b'1000 T a\r\n2000 t b\r\nzz T c\n3000 W \n4000 X d\n5000 T e\t[m\n')
    put(out, 'kallsyms', 'one-line-no-newline', b'ffffffff81000000 T _text')
    if system and os.path.exists('/proc/kallsyms'):
        lines = read('/proc/kallsyms').split(b'\n')
        text = next((int(l.split()[0], 16) for l in lines if l.endswith(b' _text')), 0)
        if text:
            shift = text - 0xffffffff81000000
            def rebase(sel):
                o = []
                for l in sel:
                    f = l.split(b' ', 1)
                    if len(f) == 2 and re.fullmatch(rb'[0-9a-f]{16}', f[0]):
                        a = int(f[0], 16)
                        if a >= text:
                            a = (a - shift) & 0xffffffffffffffff
                        o.append(b'%016x ' % a + f[1])
                return b'\n'.join(o) + b'\n'
            put(out, 'kallsyms', 'proc-head', rebase(lines[:300]))
            mods = [l for l in lines if l.endswith(b']')]
            put(out, 'kallsyms', 'proc-modules', rebase(mods[:300]))
            mid = len(lines) // 2
            put(out, 'kallsyms', 'proc-middle', rebase(lines[mid:mid + 300]))


# ---- DWARF line tables: dwline ----

DW_PROG = b"""#include <stdio.h>
static inline __attribute__((always_inline)) int sq(int x) { return x * x; }
__attribute__((noinline)) int work(int n) {
	int s = 0;
	for (int i = 0; i < n; i++)
		s += sq(i);
	return s;
}
int main(int argc, char **argv) { (void)argv; printf("%d\\n", work(argc * 1000)); return 0; }
"""


def dwline_seeds(out):
    """.debug_line (+ .debug_line_str) of one program built as DWARF 2-5 by
    gcc and as DWARF 5 by clang: u8 flags (2: 8-byte addresses), u16 LE
    length of the string section, the strings, the line table."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, 'p.c')
        with open(src, 'wb') as f:
            f.write(DW_PROG)
        for name, cmd in (('gcc-dwarf5', ['gcc', '-O2', '-g', '-gdwarf-5']),
                          ('gcc-dwarf4', ['gcc', '-O2', '-g', '-gdwarf-4']),
                          ('gcc-dwarf3', ['gcc', '-O1', '-g', '-gdwarf-3']),
                          ('gcc-dwarf2', ['gcc', '-O0', '-g', '-gdwarf-2']),
                          ('clang-dwarf5', ['clang', '-O2', '-g'])):
            exe = os.path.join(tmp, name)
            if shutil.which(cmd[0]) is None or subprocess.run(
                    cmd + ['-o', exe, src], capture_output=True).returncode != 0:
                print(f'skipped dwline {name}', file=sys.stderr)
                continue

            def section(sec):
                dump = os.path.join(tmp, 'sec.bin')
                if os.path.exists(dump):
                    os.remove(dump)
                subprocess.run(['objcopy', '--dump-section', f'{sec}={dump}', exe, os.devnull],
                               capture_output=True)
                return read(dump) if os.path.exists(dump) else b''
            line, strs = section('.debug_line'), section('.debug_line_str')
            if line:
                put(out, 'dwline', 'seed-' + name, bytes([2]) + struct.pack('<H', len(strs)) +
                    strs + line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('out')
    ap.add_argument('--shared')
    ap.add_argument('--system', action='store_true')
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    perf_seeds(a.out, a.shared)
    foreign = elf_seeds(a.out, a.system)
    jit_seeds(a.out)
    kallsyms_seeds(a.out, a.system)
    dwline_seeds(a.out)
    with open(os.path.join(a.out, 'foreign-system.txt'), 'w') as f:
        for p in foreign:
            f.write(p + '\n')
    for t in sorted(os.listdir(a.out)):
        d = os.path.join(a.out, t)
        if os.path.isdir(d):
            files = os.listdir(d)
            size = sum(os.path.getsize(os.path.join(d, x)) for x in files)
            print(f'{t}: {len(files)} files, {size} bytes', file=sys.stderr)


if __name__ == '__main__':
    main()
