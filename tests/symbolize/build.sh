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
mkdir -p "$1"
OUT=$(cd "$1" && pwd)
U=$OUT/unstripped
rm -rf "$U" "$OUT/bin" "$OUT/debug" "$OUT/debuginfod-root" "$OUT/debug-dir"
mkdir -p "$U" "$OUT/bin" "$OUT/debug" "$OUT/debuginfod-root/bin" "$OUT/debuginfod-root/debug"
: >"$OUT/buildids"

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
# rustup's rustc is a proxy that finds its toolchains under $RUSTUP_HOME, by
# default ~/.rustup of the user who installed it: under a private HOME (as the
# tests run) it finds none. The installation beside the proxy's .cargo/bin is
# the one PATH meant, so that is where it is pointed if it does not run as is.
rustc_ok() { rustc --version >/dev/null 2>&1; }
if command -v rustc >/dev/null 2>&1 && ! rustc_ok && [ -z "${RUSTUP_HOME:-}" ]; then
	proxy=$(command -v rustc)
	root=$(dirname "$(dirname "$(dirname "$proxy")")")
	if [ "$(basename "$(dirname "$(dirname "$proxy")")")" = .cargo ] && [ -d "$root/.rustup" ]; then
		export RUSTUP_HOME="$root/.rustup"
	fi
fi
if command -v rustc >/dev/null 2>&1 && ! rustc_ok; then
	echo "build.sh: rustc does not run here ($(rustc --version 2>&1 | head -1)): rshot skipped" >&2
elif command -v rustc >/dev/null 2>&1; then
	rustc -C opt-level=2 -g -C force-frame-pointers=yes -C link-arg=-Wl,--build-id=sha1 \
		-o "$U/rshot" "$SRC/hot.rs"
	built="$built rshot"
else
	echo "build.sh: rustc not found (Debian package rustc): rshot skipped" >&2
fi

# -- split the debug info, strip, link, lay out the debuginfod tree ---------------
buildid() { readelf -n "$1" 2>/dev/null | sed -n 's/^.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -1; }
for n in $built; do
	objcopy --only-keep-debug "$U/$n" "$OUT/debug/$n.debug"
	cp "$U/$n" "$OUT/bin/$n"
	# --strip-all drops .symtab and the DWARF; .dynsym (exported names only)
	# stays. Works for the Go and Rust binaries too: Go keeps what its runtime
	# needs (.gopclntab) in allocated sections, which strip never removes.
	strip --strip-all "$OUT/bin/$n"
	objcopy --add-gnu-debuglink="$OUT/debug/$n.debug" "$OUT/bin/$n"
	chmod 0644 "$OUT/debug/$n.debug"
	cp "$OUT/bin/$n" "$OUT/debuginfod-root/bin/$n"
	cp "$OUT/debug/$n.debug" "$OUT/debuginfod-root/debug/$n.debug"
	id=$(buildid "$OUT/bin/$n")
	dbg=$(buildid "$OUT/debug/$n.debug")
	if [ -z "$id" ] || [ "$id" != "$dbg" ]; then
		echo "build.sh: $n: build-id '$id' of the binary != '$dbg' of its .debug" >&2
		exit 1
	fi
	if readelf -SW "$OUT/bin/$n" | grep -q -e ' \.symtab ' -e ' \.debug_info '; then
		echo "build.sh: $n: still has .symtab or .debug_info after strip" >&2
		exit 1
	fi
	mkdir -p "$OUT/debug-dir/.build-id/$(echo "$id" | cut -c1-2)"
	cp "$OUT/debug/$n.debug" "$OUT/debug-dir/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
	echo "$n $id" >>"$OUT/buildids"
done

# debuginfod answers /buildid/ID/debuginfo with the NEWEST (by mtime, whole
# seconds) of the files it classified as debuginfo for that id, and it counts
# any file with a section named .debug_* as debuginfo. The stripped Rust
# binary keeps an allocated .debug_gdb_scripts section (strip cannot drop it),
# so it competes with rshot.debug and would win a tie. Backdating the
# executables' copies makes the real .debug file the answer for every id;
# serve_debuginfod.sh checks that byte for byte.
touch -d "@$(($(date +%s) - 3600))" "$OUT"/debuginfod-root/bin/*

# The text segment of each, for the record: PT_LOAD with the X flag.
for n in $built; do
	id=$(awk -v n="$n" '$1 == n { print $2 }' "$OUT/buildids")
	# (the flags column is "R E" or "RWE": one or two fields)
	seg=$(readelf -lW "$OUT/bin/$n" | awk '$1 == "LOAD" && !done && ($7 ~ /E/ || $8 == "E") {
		printf "p_offset=%s p_vaddr=%s", $2, $3; done = 1 }')
	printf '%-10s build-id %-40s text %s\n' "$n" "$id" "$seg"
done
