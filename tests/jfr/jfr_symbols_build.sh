#!/bin/sh
# Builds the sample workload (tests/fixtures/src: workload + libwork.so) for
# test_jfr_symbols.py, with its debug info split off, in the layout of
# tests/symbolize/build.sh (so that tests/symbolize/serve_debuginfod.sh can
# serve it):
#
#   OUTDIR/src/workload.c     the fixture source with ONE change: burn_inner is
#                             `__attribute__((always_inline)) static inline`
#                             instead of `__attribute__((noinline)) static`, on
#                             the same line (line numbers are the fixture's), so
#                             that the hot loop is an inline frame of burn_outer
#   OUTDIR/unstripped/NAME    as linked (.symtab + DWARF): addr2line's input
#   OUTDIR/bin/NAME           strip --strip-all, NO .gnu_debuglink: what is
#                             recorded; nothing in it points to debug info
#   OUTDIR/debug/NAME.debug   objcopy --only-keep-debug of the unstripped file
#   OUTDIR/debuginfod-root/   copies of bin/ and debug/ for `debuginfod -F`
#   OUTDIR/buildids           "NAME BUILD-ID" per binary
#
# Compiler flags are samples/record.sh's (clang; gcc when clang is missing),
# plus -gdwarf-4 (see CFLAGS) and an explicit --build-id=sha1. libwork.so is
# built from the fixture source unchanged (lib_mix stays a real frame).
#
# usage: jfr_symbols_build.sh OUTDIR
set -eu
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$HERE/../fixtures/src
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
U=$OUT/unstripped
rm -rf "$U" "$OUT/bin" "$OUT/debug" "$OUT/debuginfod-root" "$OUT/src"
mkdir -p "$U" "$OUT/bin" "$OUT/debug" "$OUT/debuginfod-root/bin" "$OUT/debuginfod-root/debug" "$OUT/src"
: >"$OUT/buildids"

if [ -z "${CC:-}" ]; then
	if command -v clang >/dev/null 2>&1; then CC=clang; else CC=gcc; fi
fi
# -gdwarf-4: binutils 2.40 addr2line (the test's reference) misses inline frames
# whose DW_AT_ranges use DWARF 5's DW_FORM_rnglistx, which clang emits: at
# 0x140b in now_ms's second range it answers burn_for:35 alone where the DWARF
# (llvm-dwarfdump, llvm-symbolizer) has now_ms:35 inlined into burn_for:69.
CFLAGS="-O2 -g -gdwarf-4 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls"

cp "$SRC/libwork.c" "$OUT/src/libwork.c"
sed 's/^__attribute__((noinline)) static uint64_t burn_inner(/__attribute__((always_inline)) static inline uint64_t burn_inner(/' \
	"$SRC/workload.c" >"$OUT/src/workload.c"
grep -q '^__attribute__((always_inline)) static inline uint64_t burn_inner(' "$OUT/src/workload.c" || {
	echo "jfr_symbols_build.sh: burn_inner's definition not found in $SRC/workload.c" >&2
	exit 1
}
[ "$(wc -l <"$SRC/workload.c")" = "$(wc -l <"$OUT/src/workload.c")" ]

# -fdebug-prefix-map is not used: addr2line reads the unstripped files here
$CC $CFLAGS -fPIC -shared -Wl,--build-id=sha1 -Wl,-soname,libwork.so \
	-o "$U/libwork.so" "$OUT/src/libwork.c"
$CC $CFLAGS -Wl,--build-id=sha1 -o "$U/workload" "$OUT/src/workload.c" \
	-L"$U" -lwork -Wl,-rpath,'$ORIGIN' -pthread

buildid() { readelf -n "$1" 2>/dev/null | sed -n 's/^.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -1; }
for n in libwork.so workload; do
	objcopy --only-keep-debug "$U/$n" "$OUT/debug/$n.debug"
	cp "$U/$n" "$OUT/bin/$n"
	strip --strip-all "$OUT/bin/$n"
	chmod 0644 "$OUT/debug/$n.debug"
	cp "$OUT/bin/$n" "$OUT/debuginfod-root/bin/$n"
	cp "$OUT/debug/$n.debug" "$OUT/debuginfod-root/debug/$n.debug"
	id=$(buildid "$OUT/bin/$n")
	dbg=$(buildid "$OUT/debug/$n.debug")
	if [ -z "$id" ] || [ "$id" != "$dbg" ]; then
		echo "jfr_symbols_build.sh: $n: build-id '$id' of the binary != '$dbg' of its .debug" >&2
		exit 1
	fi
	if readelf -SW "$OUT/bin/$n" | grep -q -e ' \.symtab ' -e ' \.debug_info ' -e ' \.gnu_debuglink '; then
		echo "jfr_symbols_build.sh: $n: still has .symtab, .debug_info or .gnu_debuglink" >&2
		exit 1
	fi
	echo "$n $id" >>"$OUT/buildids"
	echo "$n build-id $id ($CC)"
done
# debuginfod answers /buildid/ID/debuginfo with the newest file it classed as
# debuginfo: keep the .debug files the newest (see tests/symbolize/build.sh)
touch -d "@$(($(date +%s) - 3600))" "$OUT"/debuginfod-root/bin/*
