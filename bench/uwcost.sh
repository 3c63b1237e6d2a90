#!/usr/bin/env bash
# Per-sample unwinding cost of arm64 recordings against x86-64's, one run
# (issue 34: arm64 within 1.5x of x86-64). A benchmark, not a test.
#
#   bench/uwcost.sh
#
# Inputs, the same programs on both architectures (tests/unwind/src: uw_qsort
# calling back through libc's qsort, uw_signal's SIGPROF handler, uw_cpp):
#   arm64   tests/fixtures/arm64/{qsort,signal,cpp}.data, recorded in the
#           arm64 guest (-d: their bin/ and debug/ folders)
#   x86-64  recorded here: tests/unwind/build.sh, then `perf record -N -e
#           cpu-clock -F 999 --call-graph dwarf` for RUN_MS ms each (needs
#           perf and perf_event_paranoid <= 1 or root)
# Each recording is inflated to INFLATE_MB (tests/tools/perfdata_inflate.py:
# its samples repeated, times shifted) and bench/uwcost.c (the reading pass
# with the sample cache off, nothing symbolized) runs on the original and the
# inflated copy; the per-sample and per-frame cost is the difference of the
# two best times over the difference of their unwound samples and frames, so
# the fixed costs (opening objects, compiling CFI) cancel. farm-bench, when
# installed, then times uwcost on the inflated arm64 and x86-64 copies of
# each program in pairs (A B A B), whole process.
# Environment: ROUNDS (uwcost runs per file, 7), INFLATE_MB (48), RUN_MS
# (800), BUILD (a Release build of conv's libraries, default
# /tmp/conv-uwcost-build), WORK (default a new /tmp/uwcost.*).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$(dirname "$HERE")"
ROUNDS=${ROUNDS:-7}
INFLATE_MB=${INFLATE_MB:-48}
RUN_MS=${RUN_MS:-800}
BUILD=${BUILD:-/tmp/conv-uwcost-build}
WORK=${WORK:-$(mktemp -d /tmp/uwcost.XXXXXX)}
A64="$SRC/tests/fixtures/arm64"
mkdir -p "$WORK"
die() { echo "uwcost.sh: $*" >&2; exit 1; }

echo "== machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, $(uname -r)"
echo "== conv: $(git -C "$SRC" log -1 --format=%h 2>/dev/null || echo '?'), work dir $WORK"
cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCONV_TESTS=OFF >"$WORK/cmake.log" 2>&1 ||
	{ cat "$WORK/cmake.log"; die "cmake configure failed"; }
cmake --build "$BUILD" -j2 --target uwcost >>"$WORK/cmake.log" 2>&1 ||
	{ tail -30 "$WORK/cmake.log"; die "build failed"; }
UWCOST=$BUILD/uwcost

# the -d options of the arm64 fixtures: every folder under bin/ holding files, and debug/
a64_dirs=()
while IFS= read -r d; do a64_dirs+=(-d "$d"); done < <(
	{ find "$A64/bin" -type f -printf '%h\n' 2>/dev/null; [ -d "$A64/debug" ] && echo "$A64/debug"; } | sort -u)

echo "== x86-64 recordings of the same programs"
sh "$SRC/tests/unwind/build.sh" "$WORK/x86" >"$WORK/build.log" 2>&1 || { cat "$WORK/build.log"; die "build.sh failed"; }
for p in qsort signal cpp; do
	perf record -q -N -e cpu-clock -F 999 --call-graph dwarf -o "$WORK/x86-$p.data" -- \
		"$WORK/x86/bin/uw_$p" "$RUN_MS" >/dev/null 2>"$WORK/x86-$p.record.log" ||
		{ cat "$WORK/x86-$p.record.log"; die "perf record failed"; }
done

# measure NAME FILE DIR-OPTIONS...: best time, samples and frames of FILE and of its inflated copy
declare -A NS_S NS_F INF
measure() {
	local name=$1 file=$2; shift 2
	local inf="$WORK/$name.inflated.data" a b
	python3 "$SRC/tests/tools/perfdata_inflate.py" --size-mb "$INFLATE_MB" "$file" "$inf" >/dev/null
	INF[$name]=$inf
	a=$("$UWCOST" -r "$ROUNDS" "$@" "$file")
	b=$("$UWCOST" -r "$ROUNDS" "$@" "$inf")
	python3 - "$name" "$a" "$b" >"$WORK/$name.cost" <<'PY'
import sys
def kv(s): return {k: float(v) for k, v in (w.split("=") for w in s.split())}
name, a, b = sys.argv[1], kv(sys.argv[2]), kv(sys.argv[3])
ds, df, dt = b["unwound"] - a["unwound"], b["frames"] - a["frames"], b["best_s"] - a["best_s"]
print("%s %.1f %.1f %d %d %.2f" % (name, dt / ds * 1e9, dt / df * 1e9, b["unwound"], b["frames"],
                                    b["frames"] / b["unwound"]))
PY
	read -r _ NS_S[$name] NS_F[$name] _ _ _ <"$WORK/$name.cost"
	printf '%-14s %s\n' "$name" "$(cut -d' ' -f2- "$WORK/$name.cost" |
		awk '{printf "%8.1f ns/sample %7.1f ns/frame  (%d samples, %d frames, %.1f frames/sample inflated)", $1, $2, $3, $4, $5}')"
}

echo "== per unwound sample and frame (uwcost best of $ROUNDS, inflated to $INFLATE_MB MB minus original)"
have=0
for p in qsort signal cpp; do
	[ -f "$A64/$p.data" ] || { echo "   $A64/$p.data missing: $p skipped"; continue; }
	measure "x86-64-$p" "$WORK/x86-$p.data"
	measure "arm64-$p" "$A64/$p.data" "${a64_dirs[@]}"
	awk -v p="$p" -v as="${NS_S[arm64-$p]}" -v xs="${NS_S[x86-64-$p]}" -v af="${NS_F[arm64-$p]}" \
		-v xf="${NS_F[x86-64-$p]}" 'BEGIN { printf "   %-10s arm64 / x86-64: %.2fx per sample, %.2fx per frame\n", p, as / xs, af / xf }'
	have=1
done
[ "$have" = 1 ] || die "no arm64 dwarf fixture found in $A64"

if command -v farm-bench >/dev/null; then
	echo "== farm-bench: uwcost -r 1 on the inflated copies, arm64 (A) against x86-64 (B), whole process"
	for p in qsort signal cpp; do
		[ -n "${INF[arm64-$p]:-}" ] || continue
		farm-bench -n 9 --timeout 600 --vs "$UWCOST -r 1 ${INF[x86-64-$p]}" -- \
			"$UWCOST" -r 1 "${a64_dirs[@]}" "${INF[arm64-$p]}" 2>&1 | sed 's/^/   /'
	done
fi
