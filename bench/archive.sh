#!/usr/bin/env bash
# The recipe of the archive benchmark's input (issue 35): N small recordings
# of a few programs, shaped like a CI job's artifacts. Not a test.
#
#   bench/archive.sh [-n N] OUT_DIR      (default N=300; about 1 s per file)
#
# Programs (built with -O2 -g into OUT_DIR/bin, frame pointers kept):
#   workload  samples/src/workload.c + libwork.c (C: two threads, fork + exec)
#   deep      samples/src/deep.cpp (C++: libstdc++'s map, sort and string)
# Recordings, in turn (file NNN-KIND.data):
#   wl-fp     perf record -g -F 1999 -- workload 1000
#   deep-fp   perf record -g -F 1999 -- deep 150000
#   deep-dw   perf record --call-graph dwarf,8192 -F 999 -- deep 60000
#   wl-dw     perf record --call-graph dwarf,8192 -F 999 -- workload 500
# which gives files of about 50 KB (fp) to 2 MB (dwarf). For symbols the
# way CI has them, install the debug files: libc6-dbg and libstdc++6-12-dbg
# (Debian 12). perf writes each file's build-id table; OUT_DIR/bin stays
# where it was recorded, so the programs are found at their recorded paths.
#
# Needs perf and kernel.perf_event_paranoid <= 2 (user-space sampling of
# one's own programs), gcc, g++.
set -euo pipefail

N=300
while getopts n: o; do
	case $o in
	n) N=$OPTARG ;;
	*) echo "usage: $0 [-n N] OUT_DIR" >&2; exit 1 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: $0 [-n N] OUT_DIR" >&2; exit 1; }
OUT=$1
SRC=$(cd "$(dirname "$0")/../samples/src" && pwd)
mkdir -p "$OUT/bin"
OUT=$(cd "$OUT" && pwd)
BIN=$OUT/bin

gcc -O2 -g -fno-omit-frame-pointer -fPIC -shared -o "$BIN/libwork.so" "$SRC/libwork.c"
gcc -O2 -g -fno-omit-frame-pointer -pthread -o "$BIN/workload" "$SRC/workload.c" \
	-L"$BIN" -lwork -Wl,-rpath,"$BIN"
g++ -O2 -g -fno-omit-frame-pointer -o "$BIN/deep" "$SRC/deep.cpp"

kinds=(wl-fp deep-fp deep-dw wl-dw)
for ((i = 0; i < N; i++)); do
	k=${kinds[i % 4]}
	f=$(printf '%s/%03d-%s.data' "$OUT" "$i" "$k")
	[ -s "$f" ] && continue # a rerun completes an archive, it does not redo it
	case $k in
	wl-fp) args=(-g -F 1999 -- "$BIN/workload" 1000) ;;
	deep-fp) args=(-g -F 1999 -- "$BIN/deep" 150000) ;;
	deep-dw) args=(--call-graph dwarf,8192 -F 999 -- "$BIN/deep" 60000) ;;
	wl-dw) args=(--call-graph dwarf,8192 -F 999 -- "$BIN/workload" 500) ;;
	esac
	perf record -q -o "$f.tmp" "${args[@]}" >/dev/null 2>&1
	mv "$f.tmp" "$f"
done
ls "$OUT"/*.data | wc -l | xargs printf '%s recordings in %s\n' >&2 "$OUT"
du -ch "$OUT"/*.data | tail -1 >&2
