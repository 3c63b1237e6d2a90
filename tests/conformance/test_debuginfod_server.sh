#!/bin/bash
# conv's debuginfod client against the real debuginfod(8) from elfutils.
#
# Usage: test_debuginfod_server.sh TEST_DEBUGINFOD [WORKDIR]
#
#   TEST_DEBUGINFOD  the cmocka binary built from tests/unit/test_debuginfod.c
#   WORKDIR          scratch directory (default: a fresh mktemp -d, removed at exit)
#
# It compiles two small programs (one unstripped, one split into a stripped binary and a
# .debug file), starts `debuginfod -F` over them on 127.0.0.1, waits until the server has
# indexed them (its /metrics: traverse done, scan queue empty and idle), then runs
# TEST_DEBUGINFOD with CONV_REAL_DEBUGINFOD_URL and CONV_REAL_DEBUGINFOD_EXPECT, which makes it
# fetch each (kind, file) pair, compare the bytes, hit its cache, get a 406 for a 100-byte
# limit and a remembered 404 for an unknown build-id.
#
# Exit status: the driver's; 77 (CTest SKIP_RETURN_CODE) when debuginfod, a C compiler or
# objcopy is missing or the server does not come up.
#
# Isolation: debuginfod has no listen-address option and binds every interface. When the
# kernel allows it, the script re-executes itself in a new network namespace (unshare -n, or
# unshare -rn unprivileged) in which only loopback exists, so nothing outside can reach the
# server and the server cannot reach anything; otherwise it is still contacted only on
# 127.0.0.1. DEBUGINFOD_URLS is removed from the server's environment so that it never
# federates upstream. CONV_DFD_NO_NETNS=1 skips the namespace. Bounds: readiness 60 s, driver 120 s, the server is killed at exit.
# CTest runs it under tests/tools/isolate.py (a private HOME and TMPDIR, no DEBUGINFOD_* variables).
set -euo pipefail

if [ $# -lt 1 ]; then
	echo "usage: $0 TEST_DEBUGINFOD [WORKDIR]" >&2
	exit 2
fi
driver=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
skip() {
	echo "SKIP: $*"
	exit 77
}

# ---- isolation: a private network namespace when possible ----
if [ -z "${CONV_DFD_IN_NETNS:-}" ] && [ -z "${CONV_DFD_NO_NETNS:-}" ] && command -v unshare >/dev/null && command -v ip >/dev/null; then
	for flags in -n -rn; do
		if unshare $flags sh -c 'ip link set lo up' 2>/dev/null; then
			exec env CONV_DFD_IN_NETNS=1 unshare $flags "${BASH:-bash}" "$0" "$@"
		fi
	done
fi
if [ -n "${CONV_DFD_IN_NETNS:-}" ]; then
	ip link set lo up
	echo "network namespace: only loopback exists"
else
	echo "no private network namespace; the server is contacted on 127.0.0.1 only"
fi

command -v debuginfod >/dev/null || skip "debuginfod is not installed (apt-get install debuginfod)"
cc=${CC:-cc}
command -v "$cc" >/dev/null || skip "no C compiler ($cc)"
command -v objcopy >/dev/null || skip "no objcopy"
[ -x "$driver" ] || {
	echo "not executable: $driver" >&2
	exit 2
}

if [ $# -ge 2 ]; then
	work=$2
	mkdir -p "$work"
	keep=1
else
	work=$(mktemp -d "${TMPDIR:-/tmp}/test_debuginfod_server.XXXXXX")
	keep=
fi
work=$(cd "$work" && pwd)
server_pid=
cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	[ -n "$keep" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the files the server scans ----
build=$work/build
srv=$work/served
mkdir -p "$build" "$srv"
cat >"$build/prog1.c" <<'EOF'
int main(void) { return 0; }
EOF
cat >"$build/prog2.c" <<'EOF'
static int twice(int x) { return 2 * x; }
int main(int argc, char **argv) { (void)argv; return twice(argc) - 2; }
EOF
"$cc" -g -O0 -Wl,--build-id -o "$srv/prog1" "$build/prog1.c"
"$cc" -g -O1 -Wl,--build-id -o "$build/prog2.full" "$build/prog2.c"
objcopy --only-keep-debug "$build/prog2.full" "$srv/prog2.debug"
objcopy --strip-debug --add-gnu-debuglink="$srv/prog2.debug" "$build/prog2.full" "$srv/prog2"
expect="debuginfo:$srv/prog1 executable:$srv/prog1 debuginfo:$srv/prog2.debug executable:$srv/prog2"

# ---- the server ----
http_get() {
	if command -v curl >/dev/null; then
		curl -s --noproxy '*' --max-time 2 "$1"
	else
		python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=2).read().decode())' "$1"
	fi
}
if [ -n "${CONV_DFD_IN_NETNS:-}" ]; then
	port=8002 # a fresh namespace has every port free
else
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
url=http://127.0.0.1:$port
env -u DEBUGINFOD_URLS debuginfod -F -d :memory: -p "$port" -t 0 -g 0 -c 2 --disable-source-scan \
	-v "$srv" >"$work/debuginfod.log" 2>&1 &
server_pid=$!

# Indexed when the traverse pass ran and the scan queue is empty and idle (what
# elfutils' tests/debuginfod-subr.sh waits for); "ready 1" alone only means threads started.
metric() { awk -v k="$1" 'index($0, k " ") == 1 { print $2; exit }' <<<"$metrics"; }
t0=$(date +%s.%N)
deadline=$(($(date +%s) + 60))
ready=
while [ "$(date +%s)" -lt "$deadline" ]; do
	if ! kill -0 "$server_pid" 2>/dev/null; then
		cat "$work/debuginfod.log" >&2
		skip "debuginfod exited early"
	fi
	metrics=$(http_get "$url/metrics" 2>/dev/null || true)
	traversed=$(metric 'thread_work_total{role="traverse"}')
	pending=$(metric 'thread_work_pending{role="scan"}')
	busy=$(metric 'thread_busy{role="scan"}')
	if [ "${traversed:-0}" -ge 1 ] 2>/dev/null && [ "${pending:-1}" = 0 ] && [ "${busy:-1}" = 0 ]; then
		ready=1
		break
	fi
	sleep 0.1
done
if [ -z "$ready" ]; then
	tail -20 "$work/debuginfod.log" >&2
	skip "debuginfod did not finish indexing within 60 s"
fi
echo "debuginfod $(debuginfod --version 2>&1 | awk 'NR==1{print $NF}') ready on $url after $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"

# ---- the client ----
status=0
TMPDIR=$work CONV_REAL_DEBUGINFOD_URL=$url CONV_REAL_DEBUGINFOD_EXPECT=$expect \
	timeout 120 "$driver" || status=$?
if [ $status -ne 0 ]; then
	echo "--- debuginfod log (tail) ---" >&2
	tail -40 "$work/debuginfod.log" >&2
fi
exit $status
