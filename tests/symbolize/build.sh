#!/bin/sh
# Builds the symbolization workloads into OUTDIR and splits their debug info.
#
#   OUTDIR/unstripped/NAME   the binaries as linked (full .symtab and DWARF)
#   OUTDIR/bin/NAME          stripped (strip --strip-all) + .gnu_debuglink
#   OUTDIR/debug/NAME.debug  objcopy --only-keep-debug of the unstripped one
#   OUTDIR/debuginfod-root/  copies of bin/ and debug/ for `debuginfod -F`
#   OUTDIR/debug-dir/.build-id/XX/REST.debug  the same .debug files in the
#                            build-id tree layout of /usr/lib/debug (for a
#                            symbolizer's --debug-dir)
#   OUTDIR/buildids          "NAME BUILD-ID" per binary (also printed)
#
# Programs (sources in src/):
#   pie_main + libhot.so  PIE (gcc, GNU ld) calling a shared library; hidden
#                         hot functions; mix_round inlined into hot_mix
#   nopie                 ET_EXEC at 0x400000 (-fno-pie -no-pie)
#   lldhot                PIE linked by lld (-fuse-ld=lld): text PT_LOAD at a
#                         file offset that is not page aligned; crc_byte inlined
#   gohot                 Go, GNU build-id from -ldflags '-B 0x<sha1>'
#   rshot                 Rust (only when rustc is installed); rs_step inlined
# A program whose compiler is missing is skipped with a note on stderr (its
# name is then absent from OUTDIR/buildids). Nothing here uses the network.
#
# usage: build.sh OUTDIR
set -eu
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$HERE/src
. "$HERE/split_debug.sh"
sd_prepare "$1"

CC=${CC:-gcc}
# -g with frame pointers so that `perf record -g` gets whole call chains; the
# comparison itself uses only the leaf (self) frame.
# (GCC 12 still sets up no frame in leaf functions such as the hot loops, with
# or without -mno-omit-leaf-frame-pointer, so a leaf's own caller is missing
# from its frame-pointer chain: perf shows main right above hot_mix, not
# libhot_run. Irrelevant here, where only the leaf counts.)
CFLAGS="-O2 -g -fno-omit-frame-pointer"

built=""
# -- C: a PIE executable and its shared library (GNU ld) ----------------------
$CC $CFLAGS -fPIC -shared -Wl,--build-id=sha1 -Wl,-soname,libhot.so \
	-o "$U/libhot.so" "$SRC/libhot.c"
$CC $CFLAGS -fPIE -pie -Wl,--build-id=sha1 -o "$U/pie_main" "$SRC/pie_main.c" \
	-L"$U" -lhot -Wl,-rpath,'$ORIGIN'
built="$built libhot.so pie_main"

# -- C: position-dependent executable ------------------------------------------
$CC $CFLAGS -fno-pie -no-pie -Wl,--build-id=sha1 -o "$U/nopie" "$SRC/nopie.c"
built="$built nopie"

# -- C: linked with lld ----------------------------------------------------------
# lld's default layout (-z noseparate-code) packs the segments: the R E PT_LOAD
# starts at a file offset that is not a multiple of the page size, and its
# p_vaddr is p_offset + 0x1000. --build-id with no value gives lld's default
# 8-byte ("fast") build-id, as every lld-linked binary in the wild has.
if command -v ld.lld >/dev/null 2>&1; then
	$CC $CFLAGS -fuse-ld=lld -Wl,--build-id -o "$U/lldhot" "$SRC/lldhot.c"
	built="$built lldhot"
else
	echo "build.sh: ld.lld not found (Debian package lld): lldhot skipped" >&2
fi

# -- Go: its own linker, GNU build-id note from -B -------------------------------
# Go 1.19 (Debian 12) accepts only -B 0x<hex> (-B gobuildid came in Go 1.20);
# the id is the SHA-1 of the source and the Go version, so rebuilding the same
# source with the same Go gives the same id. Go compresses its DWARF
# (SHF_COMPRESSED zlib sections) unless -compressdwarf=false: kept compressed,
# as real Go binaries are.
if command -v go >/dev/null 2>&1; then
	gid=$( (cat "$SRC/hot.go"; go version) | sha1sum | cut -c1-40)
	GOCACHE=$OUT/.gocache GOPATH=$OUT/.gopath GOPROXY=off GOFLAGS= GO111MODULE=off \
		CGO_ENABLED=0 go build -o "$U/gohot" -ldflags "-B 0x$gid" "$SRC/hot.go"
	built="$built gohot"
else
	echo "build.sh: go not found (Debian package golang-go): gohot skipped" >&2
fi

# -- Rust (optional) ---------------------------------------------------------------
if sd_rustc_ok; then
	rustc -C opt-level=2 -g -C force-frame-pointers=yes -C link-arg=-Wl,--build-id=sha1 \
		-o "$U/rshot" "$SRC/hot.rs"
	built="$built rshot"
else
	echo "build.sh: $SD_WHY: rshot skipped" >&2
fi

# -- split the debug info, strip, link, lay out the debuginfod tree ---------------
sd_split $built
# The text segment of each, for the record: PT_LOAD with the X flag.
sd_segments $built
