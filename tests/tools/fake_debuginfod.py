#!/usr/bin/env python3
"""A fake debuginfod server for tests: python3 stdlib only, loopback only, bounded lifetime.

Usage:
    fake_debuginfod.py --dir DIR [--port N] [--lifetime S] [--fault ID=KIND[:ARG]]...
                       [--exit-on-stdin-eof] [--port-file FILE] [--verbose]

Serves GET /buildid/HEX/debuginfo and /buildid/HEX/executable like debuginfod(8):
  * DIR/HEX/debuginfo and DIR/HEX/executable (the debuginfod client cache layout), and
  * every other regular ELF file under DIR, indexed by its GNU build-id (for both kinds).
Like the real server it answers 406 when the request header X-DEBUGINFOD-MAXSIZE is below the
file size, 503 for an invalid (e.g. uppercase) build-id and 404 for anything unknown.

Faults, per build-id (ID = lowercase hex) or for every build-id (ID = '*'), from --fault,
from the environment (FAKE_DEBUGINFOD_FAULTS="ID=KIND[:ARG] ...") or at run time
(GET /__fault?id=ID&kind=KIND&arg=ARG; kind=none removes it):
    404 406 500 503  answer with that status
    drop             close the connection without any response
    truncate         Content-Length of the whole file, send half of it, close
    stall[:S]        send the headers (and nothing else) then sleep S seconds (default 30)
    drip[:T[:N]]     send the file N bytes (default 2048) every T seconds (default 0.2)
    wrong[:HEX]      send another file (HEX's, default: the first other one) with status 200
    garbage          send 4 KiB that are not ELF with status 200
    huge[:T]         Content-Length 10 GiB, then one byte every T seconds (default 0.5)
    hugenolen        no Content-Length, stream zeros (up to 256 MiB) until the client gives up
    hugeelf          no Content-Length, the file followed by zeros (up to 256 MiB): looks like ELF
    bighead[:N]      a response header line of N bytes (default 1 MiB), then the file
    redirect         302 to /__file/HEX/KIND, which serves the file
    redirect_loop    302 to the same path, forever
    redirect_to:URL  302 to URL (absolute or not), "{id}" and "{kind}" in it replaced by the request's
    delay:S          sleep S seconds, then answer normally

Control and inspection (not counted as requests):
    GET /__stats   JSON: {"requests": n, "paths": {path: n}, "max_concurrent": n,
                          "in_flight": n, "maxsize": {path: last X-DEBUGINFOD-MAXSIZE},
                          "user_agent": last User-Agent}
    GET /__reset   zero the counters and drop run-time faults
    GET /__fault?id=ID&kind=KIND[&arg=ARG]

It prints "PORT <n>" (and writes it to --port-file) once it listens on 127.0.0.1, and exits
after --lifetime seconds (default 60), or when stdin reaches EOF with --exit-on-stdin-eof (so a
test that dies takes its server with it).
"""

import argparse
import json
import os
import struct
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KINDS = ("debuginfo", "executable")
HUGE = 10 * 1024 ** 3


def elf_build_id(path):
    """The GNU build-id of an ELF file as lowercase hex, or None (stdlib only, both classes/orders)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        return None
    is64, end = data[4] == 2, "<" if data[5] == 1 else ">"
    try:
        if is64:
            phoff, shoff = struct.unpack_from(end + "QQ", data, 32)
            phentsize, phnum, shentsize, shnum = struct.unpack_from(end + "HHHH", data, 54)
        else:
            phoff, shoff = struct.unpack_from(end + "II", data, 28)
            phentsize, phnum, shentsize, shnum = struct.unpack_from(end + "HHHH", data, 42)
        blocks = []
        for i in range(phnum):
            o = phoff + i * phentsize
            if struct.unpack_from(end + "I", data, o)[0] == 4:  # PT_NOTE
                if is64:
                    off, size = struct.unpack_from(end + "Q", data, o + 8)[0], struct.unpack_from(end + "Q", data, o + 32)[0]
                else:
                    off, size = struct.unpack_from(end + "I", data, o + 4)[0], struct.unpack_from(end + "I", data, o + 16)[0]
                blocks.append((off, size))
        for i in range(shnum):
            o = shoff + i * shentsize
            if struct.unpack_from(end + "I", data, o + 4)[0] == 7:  # SHT_NOTE
                if is64:
                    off, size = struct.unpack_from(end + "QQ", data, o + 24)
                else:
                    off, size = struct.unpack_from(end + "II", data, o + 16)
                blocks.append((off, size))
        for off, size in blocks:
            p, stop = off, min(off + size, len(data))
            while p + 12 <= stop:
                namesz, descsz, ntype = struct.unpack_from(end + "III", data, p)
                name_at = p + 12
                desc_at = name_at + ((namesz + 3) & ~3)
                if ntype == 3 and namesz == 4 and data[name_at:name_at + 4] == b"GNU\0" and 0 < descsz <= 64:
                    return data[desc_at:desc_at + descsz].hex()
                p = desc_at + ((descsz + 3) & ~3)
    except struct.error:
        return None
    return None


class State:
    def __init__(self, root, faults):
        self.root = root
        self.lock = threading.Lock()
        self.static_faults = dict(faults)
        self.faults = {}
        self.index = {}  # (hex, kind) -> path
        self.reset()
        self.scan()

    def reset(self):
        with self.lock:
            self.faults = dict(self.static_faults)
            self.paths = {}
            self.requests = 0
            self.in_flight = 0
            self.max_concurrent = 0
            self.maxsize = {}
            self.user_agent = None

    def scan(self):
        index = {}
        for dirpath, _dirs, files in os.walk(self.root):
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, self.root).split(os.sep)
                if len(rel) == 2 and name in KINDS:
                    index[(rel[0], name)] = path
                    continue
                bid = elf_build_id(path)
                if bid:
                    for kind in KINDS:
                        index.setdefault((bid, kind), path)
        self.index = index

    def fault_for(self, hexid):
        with self.lock:
            return self.faults.get(hexid) or self.faults.get("*")


def parse_fault(spec):
    ident, _, kind = spec.partition("=")
    if not ident or not kind:
        raise ValueError("bad fault %r (want ID=KIND[:ARG])" % spec)
    name, _, arg = kind.partition(":")
    return ident.lower() if ident != "*" else "*", (name, arg)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-debuginfod/1"
    # Headers and body go out in separate writes; without TCP_NODELAY the client's delayed
    # ACK adds 40 ms to every redirect.
    disable_nagle_algorithm = True

    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write("fake_debuginfod: " + (fmt % args) + "\n")

    # ---- helpers ----
    def reply(self, code, body=b"", ctype="text/plain", close=False, extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        # out of flight before the headers go: conv's client sets CURLOPT_FAILONERROR, so an error
        # status ends its transfer at the status line, and it may start its next request before
        # the body is written; leaving flight after the headers still made max_concurrent one
        # too high now and then (test_max_parallel: 4 for 3, under load)
        self.leave_flight()
        self.end_headers()
        self.wfile.write(body)

    def leave_flight(self):
        if getattr(self, "in_flight", False):
            self.in_flight = False
            with self.server.state.lock:
                self.server.state.in_flight -= 1

    def file_headers(self, length, name, close=False):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if length is not None:
            self.send_header("Content-Length", str(length))
            self.send_header("X-DEBUGINFOD-SIZE", str(length))
        self.send_header("X-DEBUGINFOD-FILE", name)
        self.send_header("Cache-Control", "public")
        if close or length is None:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()

    def read_file(self, hexid, kind):
        path = self.server.state.index.get((hexid, kind))
        if not path:
            return None, None
        with open(path, "rb") as f:
            return f.read(), os.path.basename(path)

    # ---- dispatch ----
    def do_GET(self):
        st = self.server.state
        url = urllib.parse.urlsplit(self.path)
        parts = url.path.split("/")
        if url.path == "/__stats":
            with st.lock:
                body = json.dumps({"requests": st.requests, "paths": st.paths,
                                   "max_concurrent": st.max_concurrent,
                                   "in_flight": st.in_flight, "maxsize": st.maxsize,
                                   "user_agent": st.user_agent}, sort_keys=True).encode()
            return self.reply(200, body, "application/json")
        if url.path == "/__reset":
            st.reset()
            return self.reply(200, b"ok\n")
        if url.path == "/__fault":
            q = urllib.parse.parse_qs(url.query)
            ident = q.get("id", ["*"])[0]
            kind = q.get("kind", ["none"])[0]
            arg = q.get("arg", [""])[0]
            with st.lock:
                if kind == "none":
                    st.faults.pop(ident, None)
                else:
                    st.faults[ident] = (kind, arg)
            return self.reply(200, b"ok\n")

        with st.lock:
            st.requests += 1
            st.paths[url.path] = st.paths.get(url.path, 0) + 1
            st.in_flight += 1
            st.max_concurrent = max(st.max_concurrent, st.in_flight)
            self.in_flight = True
            ms = self.headers.get("X-DEBUGINFOD-MAXSIZE")
            if ms is not None:
                st.maxsize[url.path] = ms
            st.user_agent = self.headers.get("User-Agent")
        try:
            if len(parts) == 4 and parts[1] == "__file" and parts[3] in KINDS:
                return self.serve(parts[2], parts[3], None)
            if len(parts) == 4 and parts[1] == "buildid":
                hexid, kind = parts[2], parts[3]
                if not hexid or len(hexid) % 2 or any(ch not in "0123456789abcdef" for ch in hexid):
                    return self.reply(503, b"invalid buildid\n")
                if kind not in KINDS:
                    return self.reply(503, b"invalid artifacttype\n")
                return self.serve(hexid, kind, st.fault_for(hexid))
            return self.reply(404, b"not found\n")
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            self.close_connection = True
        finally:
            self.leave_flight()

    def serve(self, hexid, kind, fault):
        name, arg = fault if fault else ("", "")
        if name == "delay":
            time.sleep(float(arg or 1))
            name = ""
        if name in ("404", "406", "500", "503"):
            return self.reply(int(name), ("fault %s\n" % name).encode())
        if name == "drop":
            self.close_connection = True
            return None
        if name == "redirect_loop":
            return self.reply(302, b"", extra=(("Location", self.path),))
        if name == "redirect":
            return self.reply(302, b"", extra=(("Location", "/__file/%s/%s" % (hexid, kind)),))
        if name == "redirect_to":
            return self.reply(302, b"", extra=(("Location", arg.replace("{id}", hexid).replace("{kind}", kind)),))
        if name == "garbage":
            return self.send_body(b"NOT-AN-ELF-FILE\n" * 256, "garbage")
        if name == "huge":
            self.file_headers(HUGE, "huge", close=True)
            interval = float(arg or 0.5)
            deadline = time.time() + 3600
            while time.time() < deadline:
                self.wfile.write(b"\0")
                self.wfile.flush()
                time.sleep(interval)
            return None
        if name == "hugenolen":
            self.file_headers(None, "hugenolen")
            chunk = b"\0" * 65536
            for _ in range(4096):
                self.wfile.write(chunk)
            return None
        if name == "hugeelf":
            data, fname = self.read_file(hexid, kind)
            if data is None:
                return self.reply(404, b"not found\n")
            self.file_headers(None, fname)
            self.wfile.write(data)
            chunk = b"\0" * 65536
            for _ in range(4096):
                self.wfile.write(chunk)
            return None
        if name == "bighead":
            data, fname = self.read_file(hexid, kind)
            if data is None:
                return self.reply(404, b"not found\n")
            return self.reply(200, data, ctype="application/octet-stream",
                              extra=(("X-Padding", "a" * int(arg or (1 << 20))),))
        if name == "wrong":
            other = arg or next((h for (h, k) in sorted(self.server.state.index) if h != hexid and k == kind), None)
            data, fname = self.read_file(other, kind) if other else (None, None)
            if data is None:
                return self.reply(500, b"no other file to send\n")
            return self.send_body(data, fname)

        data, fname = self.read_file(hexid, kind)
        if data is None:
            return self.reply(404, b"not found\n")
        ms = self.headers.get("X-DEBUGINFOD-MAXSIZE")
        if name not in ("truncate", "stall", "drip") and ms and ms.isdigit() and len(data) > int(ms):
            return self.reply(406, b"file too large for X-DEBUGINFOD-MAXSIZE\n")
        if name == "truncate":
            self.file_headers(len(data), fname, close=True)
            self.wfile.write(data[:len(data) // 2])
            self.wfile.flush()
            return None
        if name == "stall":
            self.file_headers(len(data), fname, close=True)
            self.wfile.flush()
            time.sleep(float(arg or 30))
            return None
        if name == "drip":
            interval, _, size = arg.partition(":")
            interval, size = float(interval or 0.2), int(size or 2048)
            self.file_headers(len(data), fname)
            for i in range(0, len(data), size):
                self.wfile.write(data[i:i + size])
                self.wfile.flush()
                if i + size < len(data):
                    time.sleep(interval)
            return None
        return self.send_body(data, fname)

    def send_body(self, data, fname):
        self.file_headers(len(data), fname)
        self.wfile.write(data)
        return None


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver listens with a backlog of 5: a client that opens 32 connections at once
    # (conv's transfers) saw the rest dropped and retried a SYN a second later
    request_queue_size = 256

    def handle_error(self, request, client_address):
        # Clients that give up (timeouts, size limits, closed keep-alive connections) are the
        # point of the faults, not errors of the server.
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)) and not self.verbose:
            return
        super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--lifetime", type=float, default=60.0)
    ap.add_argument("--fault", action="append", default=[])
    ap.add_argument("--exit-on-stdin-eof", action="store_true")
    ap.add_argument("--port-file")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()

    faults = dict(parse_fault(s) for s in os.environ.get("FAKE_DEBUGINFOD_FAULTS", "").split())
    faults.update(parse_fault(s) for s in args.fault)

    # A hard bound first: whatever happens below, the process goes away.
    killer = threading.Timer(args.lifetime, lambda: os._exit(0))
    killer.daemon = True
    killer.start()

    srv = Server(("127.0.0.1", args.port), Handler)
    srv.state = State(os.path.abspath(args.dir), faults)
    srv.verbose = args.verbose
    port = srv.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, args.port_file)
    print("PORT %d" % port, flush=True)

    if args.exit_on_stdin_eof:
        def watch():
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            finally:
                os._exit(0)
        threading.Thread(target=watch, daemon=True).start()

    try:
        srv.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
