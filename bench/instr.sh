#!/usr/bin/env bash
# Counts the instructions conv executes on one recording (bench/README.md,
# "Instruction counts"). A benchmark, not a test: it never fails on a number.
#
#   bench/instr.sh PERF.DATA [CONV-ARGS...]
#
# Wall time on a shared VM moves 10-30 % between runs of the same binary,
# which hides changes of a few percent; the number of instructions executed
# does not move (same input, same output: the count repeats to within a few
# thousand). This runs conv under cachegrind (without its cache simulation,
# so ~40x slower: about a minute for 90 MB) and prints the total and the
# functions with the most instructions, inlined code counted where it was
# written (file:function). Instructions are not time: cache misses, page
# faults and waiting for the other thread do not show here; bench/ab.py
# and pipeline.sh measure those.
#
# The build is Release with -g (same optimisation and link-time inlining as
# the Release build, plus line tables for cg_annotate) in
# ${BUILD:-/tmp/conv-instr-build}. Extra arguments go to conv (e.g. -n).
# Environment: BUILD, TOP (functions listed, 25), OUT (the cachegrind file,
# default $BUILD/cachegrind.out).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
BUILD="${BUILD:-/tmp/conv-instr-build}"
TOP="${TOP:-25}"
OUT="${OUT:-$BUILD/cachegrind.out}"

[ $# -ge 1 ] || { echo "usage: bench/instr.sh PERF.DATA [CONV-ARGS...]" >&2; exit 1; }
DATA="$1"
shift
[ -r "$DATA" ] || { echo "instr.sh: $DATA: not readable" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "instr.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }

cmake -S "$REPO" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=-g >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target conv >/dev/null

OUTBASE="$(mktemp -d)"
trap 'rm -rf "$OUTBASE"' EXIT
# no network, as in pipeline.sh
DEBUGINFOD_URLS= valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$OUT" \
	"$BUILD/conv" -q "$@" -o "$OUTBASE/out" "$DATA" 2>"$OUTBASE/vg.log" ||
	{ cat "$OUTBASE/vg.log" >&2; exit 1; }
total=$(sed -n 's/.*I *refs: *//p' "$OUTBASE/vg.log" | tr -d ,)
echo "conv -q${*:+ $*} on $DATA: $total instructions"
cg_annotate --auto=no "$OUT" 2>/dev/null |
	awk -v top="$TOP" '/^ *[0-9,]+ \( *[0-9.]+%\) / && !/PROGRAM TOTALS/ && n++ < top' |
	sed "s|$REPO/||"
