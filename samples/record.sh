#!/usr/bin/env bash
# Re-records samples/perf.data and the debug tree samples/debug/ that
# symbolizes it (see samples/README.md):
#   1. builds samples/src (workload + libwork.so) in /tmp/conv-sample-build,
#   2. splits each file's debug info into FILE.debug and strips FILE,
#   3. records the stripped workload with perf (about 0.4 s of CPU),
#   4. installs the debug files and the stripped files into
#      samples/debug/.build-id/NN/REST.debug and .../NN/REST.
# Needs a C compiler (clang, else gcc; or CC=...), binutils and perf; run as
# root or with kernel.perf_event_paranoid <= 1. Re-runnable: it replaces the
# build directory, samples/perf.data and samples/debug/ every time.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
# Fixed on purpose: perf.data records this path in its MMAP records, and it
# is the same on every machine that re-records.
BUILD=/tmp/conv-sample-build
PERF="${PERF:-perf}"
if [ -z "${CC:-}" ]; then
	if command -v clang >/dev/null; then CC=clang; else CC=gcc; fi
fi
# clang is preferred: gcc 12 drops the frame pointer in leaf functions even
# with -mno-omit-leaf-frame-pointer, which hides a leaf's caller from perf's
# frame-pointer unwinding. -fno-optimize-sibling-calls keeps tail calls as
# calls, so every function on the path is a frame. The source paths in DWARF
# are made relative to the repository (samples/src/...), whatever the
# checkout's location, so pprof's source views work from the repository root.
CFLAGS="-O2 -g -gdwarf-4 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"
CFLAGS="$CFLAGS -fno-optimize-sibling-calls -fdebug-prefix-map=$REPO=."

for tool in "$CC" objcopy strip readelf "$PERF"; do
	command -v "$tool" >/dev/null || { echo "record.sh: $tool not found" >&2; exit 1; }
done

# --- build ------------------------------------------------------------------
rm -rf "$BUILD"
mkdir -p "$BUILD"
(
	cd "$REPO"
	$CC $CFLAGS -fPIC -shared -Wl,--build-id=sha1 -o "$BUILD/libwork.so" samples/src/libwork.c
	$CC $CFLAGS -Wl,--build-id=sha1 -o "$BUILD/workload" samples/src/workload.c \
		-L"$BUILD" -lwork -Wl,-rpath,"$BUILD" -pthread
)

# --- split: FILE.debug keeps DWARF and symbols, FILE keeps neither ------------
for f in workload libwork.so; do
	objcopy --only-keep-debug "$BUILD/$f" "$BUILD/$f.debug"
	strip --strip-all "$BUILD/$f"
	# lets gdb and others find FILE.debug beside FILE; conv goes by build-id
	objcopy --add-gnu-debuglink="$BUILD/$f.debug" "$BUILD/$f"
done

# --- record the stripped program ----------------------------------------------
# -N: do not copy the binaries into ~/.debug (the build-id table is still
#     written); --buildid-all: put every mapped file's build-id in that table,
#     not only those of files with sampled IPs, so libc and ld.so (callers in
#     every stack) can be symbolized by build-id too (/usr/lib/debug, debuginfod).
# Run from the repository so that perf's stored command line reads
# "-o samples/perf.data" rather than this checkout's absolute path.
#
# A sample taken while a thread is in the kernel on behalf of libc code built
# without frame pointers (typically clone3 during pthread_create) can carry a
# garbage user call chain: up to 127 addresses outside every mapping. That is
# real perf behaviour, but noise in a sample meant to be read, so such a
# recording is made again (up to 5 times; the last one is kept regardless).
record() {
	rm -f "$HERE/perf.data" "$HERE/perf.data.old"
	(cd "$REPO" && "$PERF" record -N -q --buildid-all -e cpu-clock -F 999 -g \
		-o samples/perf.data -- "$BUILD/workload")
	chmod 0644 "$HERE/perf.data"
}
stray_addresses() {
	"$PERF" script -i "$HERE/perf.data" -F ip,dso 2>/dev/null | grep -c '(\[unknown\])$' || true
}
for try in 1 2 3 4 5; do
	record
	bad="$(stray_addresses)"
	[ "$bad" -eq 0 ] && break
	echo "record.sh: recording $try has $bad call-chain addresses outside every" \
	     "mapping (a chain through code without frame pointers)" >&2
done

# --- install by build-id --------------------------------------------------------
# NN/REST.debug is the debug file (symbols, DWARF, inline info); NN/REST is the
# stripped runtime file, for its program headers: objcopy --only-keep-debug
# leaves the code segment's p_filesz at 0, so the debug file alone cannot map
# runtime addresses to file offsets.
build_id() {
	readelf -n "$1" 2>/dev/null | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p'
}
rm -rf "$HERE/debug"
for f in workload libwork.so; do
	id="$(build_id "$BUILD/$f")"
	[ "${#id}" -ge 4 ] || { echo "record.sh: no build-id in $BUILD/$f" >&2; exit 1; }
	[ "$(build_id "$BUILD/$f.debug")" = "$id" ] ||
		{ echo "record.sh: $f.debug has another build-id" >&2; exit 1; }
	dir="$HERE/debug/.build-id/${id:0:2}"
	mkdir -p "$dir"
	install -m 0644 "$BUILD/$f.debug" "$dir/${id:2}.debug"
	install -m 0755 "$BUILD/$f" "$dir/${id:2}"
	echo "$f: build-id $id"
done
du -ab "$HERE/perf.data" "$HERE/debug" | sort -k2
