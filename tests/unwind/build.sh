#!/bin/sh
# Builds the unwinding workloads into OUTDIR without frame pointers and
# splits their debug info (tests/symbolize/split_debug.sh):
#
#   OUTDIR/unstripped/NAME   as linked (.symtab, DWARF, .eh_frame)
#   OUTDIR/bin/NAME          stripped (strip --strip-all: .eh_frame and
#                            .eh_frame_hdr stay) + .gnu_debuglink
#   OUTDIR/debug/NAME.debug  objcopy --only-keep-debug of the unstripped one
#   OUTDIR/debuginfod-root/  copies of bin/ and debug/ for `debuginfod -F`
#   OUTDIR/debug-dir/.build-id/XX/REST.debug
#   OUTDIR/buildids          "NAME BUILD-ID" per binary (also printed)
#
# Programs (sources in src/; C and C++ with -O2 -g -fomit-frame-pointer
# -fno-inline, the functions that must keep their frames also marked
# noinline,noclone):
#   uw_qsort + libuwcmp.so  hot work in a shared library called back by
#                           libc's qsort (uw_weight <- uw_cmp <- libc <-
#                           uw_sort_round, an RBP-based frame (VLA))
#   uw_signal               SIGPROF handler burning CPU (signal frames)
#   uw_deep                 recursion 240 frames / ~24 KB deep, burning at
#                           the bottom (beyond an 8 KB stack copy)
#   uw_cpp                  C++: templates, virtual calls, std::sort with a
#                           lambda (libstdc++ linked dynamically)
#   uw_rust                 Rust (only when rustc runs): closure comparator
#                           in std's sort, generic recursion
# Each program runs for the milliseconds of its first argument (500 by
# default). A program whose compiler is missing is skipped with a note on
# stderr (its name is then absent from OUTDIR/buildids). No network.
#
# usage: build.sh OUTDIR
set -eu
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=$HERE/src
. "$HERE/../symbolize/split_debug.sh"
sd_prepare "$1"

CC=${CC:-gcc}
CXX=${CXX:-g++}
# -fasynchronous-unwind-tables (GCC's default on x86-64, stated): CFI valid at
# every instruction, not only at call sites, as a sampling unwinder needs.
CFLAGS="-O2 -g -fomit-frame-pointer -fno-inline -fasynchronous-unwind-tables"
LDFLAGS="-Wl,--build-id=sha1"

built=""
$CC $CFLAGS -fPIC -shared $LDFLAGS -Wl,-soname,libuwcmp.so -o "$U/libuwcmp.so" "$SRC/libuwcmp.c"
$CC $CFLAGS -fPIE -pie $LDFLAGS -o "$U/uw_qsort" "$SRC/uw_qsort.c" \
	-L"$U" -luwcmp -Wl,-rpath,'$ORIGIN'
built="$built libuwcmp.so uw_qsort"

$CC $CFLAGS -fPIE -pie $LDFLAGS -o "$U/uw_signal" "$SRC/uw_signal.c"
$CC $CFLAGS -fno-optimize-sibling-calls -fPIE -pie $LDFLAGS -o "$U/uw_deep" "$SRC/uw_deep.c"
built="$built uw_signal uw_deep"

if command -v "$CXX" >/dev/null 2>&1; then
	# -fno-inline would keep every std::sort helper and unique_ptr accessor
	# out of line; the C++ case is meant to look like real C++ (inlined
	# library templates, inline frames), so only our frames are pinned.
	$CXX -O2 -g -fomit-frame-pointer -fasynchronous-unwind-tables -fPIE -pie $LDFLAGS \
		-o "$U/uw_cpp" "$SRC/uw_cpp.cpp"
	built="$built uw_cpp"
else
	echo "build.sh: $CXX not found (Debian package g++): uw_cpp skipped" >&2
fi

if sd_rustc_ok; then
	rustc -C opt-level=2 -g -C force-frame-pointers=no -C link-arg=-Wl,--build-id=sha1 \
		-o "$U/uw_rust" "$SRC/uw_rust.rs"
	built="$built uw_rust"
else
	echo "build.sh: $SD_WHY: uw_rust skipped" >&2
fi

# No frame pointer set up anywhere in our C code: no "mov %rsp,%rbp" after a
# "push %rbp" at a function's entry (uw_sort_round's VLA frame is the one
# RBP-based frame, made on purpose: GCC sets RBP up there for the VLA).
for n in uw_qsort uw_signal uw_deep; do
	if objdump -d --no-show-raw-insn "$U/$n" | awk '/^[0-9a-f]+ <(uw_|sig_|main_|deep_|on_)/ { f = 1; next }
		/^$/ { f = 0 } f && /mov +%rsp,%rbp/ { bad = 1 } END { exit !bad }'; then
		echo "build.sh: $n sets up a frame pointer: check CFLAGS" >&2
		exit 1
	fi
done

sd_split $built
sd_segments $built
