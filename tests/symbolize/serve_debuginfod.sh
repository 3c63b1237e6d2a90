#!/bin/sh
# Serves OUTDIR/debuginfod-root (made by build.sh) with the real debuginfod
# (elfutils, Debian package debuginfod) on port PORT, and contacts it only at
# 127.0.0.1.
#
#   debuginfod -F -p PORT -d OUTDIR/debuginfod.sqlite -t 0 -g 0 -c 2 OUTDIR/debuginfod-root
#
# -F scans the tree for ELF files and classifies each by build-id: a file with
# loadable code is an "executable" (the stripped binaries), a file with .debug_*
# sections is "debuginfo" (the .debug files). No pairing by name happens: the
# build-id note in both files is the key. -t 0 -g 0: one scan at start-up, no
# periodic rescans or grooming. DEBUGINFOD_URLS is removed from the server's
# environment, or it would forward every miss to those servers.
#
# Listening: debuginfod 0.188 has no option to choose the address; it listens
# on every interface (IPv4 and IPv6 wildcard). test_symbolize.py therefore runs
# everything in a private network namespace (unshare -n) where loopback is the
# only interface; run by hand, the server is reachable on the host's addresses
# for its bounded lifetime (LIFETIME seconds, default 600).
#
# Waits until every build-id of OUTDIR/buildids answers /buildid/ID/debuginfo
# with exactly OUTDIR/debug/NAME.debug and /buildid/ID/executable with exactly
# OUTDIR/bin/NAME, then prints
#   indexed N build-ids in S s
#   URL http://127.0.0.1:PORT
# and keeps the server up until SIGTERM/SIGINT or LIFETIME. The server's log is
# OUTDIR/debuginfod.log; its request counters are at URL/metrics.
#
# usage: serve_debuginfod.sh OUTDIR PORT
set -eu
[ $# -eq 2 ] || { echo "usage: $0 OUTDIR PORT" >&2; exit 2; }
OUT=$(cd "$1" && pwd)
PORT=$2
LIFETIME=${LIFETIME:-600}
INDEX_TIMEOUT=${INDEX_TIMEOUT:-600}  # against a server that never gets there, not a speed limit
command -v debuginfod >/dev/null 2>&1 || { echo "serve_debuginfod.sh: debuginfod not installed (Debian package debuginfod)" >&2; exit 3; }
[ -s "$OUT/buildids" ] || { echo "serve_debuginfod.sh: $OUT/buildids missing: run build.sh first" >&2; exit 2; }

rm -f "$OUT"/debuginfod.sqlite*
t0=$(date +%s.%N)
env -u DEBUGINFOD_URLS -u DEBUGINFOD_CACHE_PATH \
	debuginfod -F -p "$PORT" -d "$OUT/debuginfod.sqlite" -t 0 -g 0 -c 2 -v \
	"$OUT/debuginfod-root" >"$OUT/debuginfod.log" 2>&1 &
pid=$!
stop() {
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
trap 'stop; exit 0' TERM INT HUP
trap 'stop' EXIT

# Poll with python3 (always there for this project; curl may not be).
python3 - "$OUT" "$PORT" "$INDEX_TIMEOUT" "$pid" <<'EOF'
import hashlib, os, sys, time, urllib.request, urllib.error
out, port, limit, pid = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
base = "http://127.0.0.1:%d" % port
want = []
with open(os.path.join(out, "buildids")) as f:
    for line in f:
        name, bid = line.split()
        want.append((name, bid, "debuginfo", os.path.join(out, "debug", name + ".debug")))
        want.append((name, bid, "executable", os.path.join(out, "bin", name)))
digest = lambda b: hashlib.sha256(b).hexdigest()
deadline = time.time() + limit
pending = list(want)
wrong = {}
while pending and time.time() < deadline:
    try:
        os.kill(pid, 0)
    except OSError:
        sys.exit("serve_debuginfod.sh: debuginfod exited; see %s/debuginfod.log" % out)
    left = []
    for name, bid, kind, path in pending:
        try:
            with urllib.request.urlopen("%s/buildid/%s/%s" % (base, bid, kind), timeout=5) as r:
                body = r.read()
        except (urllib.error.URLError, ConnectionError, OSError):
            left.append((name, bid, kind, path))
            continue
        with open(path, "rb") as f:
            if digest(body) != digest(f.read()):
                wrong[(name, kind)] = len(body)
                left.append((name, bid, kind, path))
            else:
                wrong.pop((name, kind), None)
    pending = left
    if pending:
        time.sleep(0.1)
if pending:
    for name, bid, kind, path in pending:
        why = ("served %d bytes that are not %s" % (wrong[(name, kind)], path)
               if (name, kind) in wrong else "not served")
        print("serve_debuginfod.sh: %s %s (%s): %s" % (name, kind, bid, why), file=sys.stderr)
    sys.exit(1)
EOF
t1=$(date +%s.%N)
n=$(wc -l <"$OUT/buildids")
echo "indexed $n build-ids in $(python3 -c "print('%.2f' % ($t1 - $t0))") s"
echo "URL http://127.0.0.1:$PORT"
# Wait in the background so that a signal is handled at once.
sleep "$LIFETIME" &
spid=$!
trap 'kill $spid 2>/dev/null; stop; exit 0' TERM INT HUP
wait "$spid" || true
