#!/usr/bin/env bash
# Records the pipeline benchmark's input: a system-wide recording with call
# chains over a mixed workload (see bench/README.md, "Pipeline benchmark").
#
#   bench/record.sh [-d SECONDS] [-F HZ] [-c fp|dwarf[,BYTES]] [-w mixed|deep] OUT.data
#
# What runs while `perf record -a -g -F HZ` (default 20000 Hz, 20 s) records:
#   - the compute program: samples/src/workload.c + libwork.c (threads, a
#     shared library, an inlined helper, fork + exec), built with -O2 -g and
#     frame pointers in $BENCH_BUILD, re-run in a loop;
#   - a compiler loop: `gcc -O2 -g -c` over conv's own sources, one short
#     process per file, so the recording holds hundreds of processes, each
#     with its own mappings of cc1, as, libc and ld.so.
# Both loops start before perf and are stopped after it, so every second of
# the recording is busy on both CPUs. 20 s at 20 kHz on 2 CPUs is about
# 800 000 samples and 90 MB.
#
# -w deep, the second recipe (issue 22: about twice the distinct stacks, of
# more frames): samples/src/deep.cpp (C++ recursion 8-40 levels deep through
# templates, virtual calls and std::function into libstdc++, along
# $DEEP_SEEDS paths, default 16) in a loop, g++
# compiling C++ (cc1plus's deep recursive stacks) and C files, and a loop of
# short processes: a shell pipeline and a Python interpreter (its eval loop's
# frames) per round, hundreds of processes in all.
#
# -c dwarf[,BYTES] records `--call-graph dwarf[,BYTES]` instead of -g, and
# builds the compute program WITHOUT frame pointers (-fomit-frame-pointer, in
# $BENCH_BUILD, default /tmp/conv-bench-workload-nofp): the unwinding
# benchmark's input (bench/record-dwarf.sh).
#
# Needs root or kernel.perf_event_paranoid <= -1 (system-wide), gcc, perf.
# The recording is not deterministic (it samples a live machine); its shape
# is. Re-runnable: replaces OUT.data and $BENCH_BUILD.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
DUR=20
FREQ=20000
CG=fp
WL=mixed
USAGE="usage: $0 [-d SECONDS] [-F HZ] [-c fp|dwarf[,BYTES]] [-w mixed|deep] OUT.data"
while getopts "d:F:c:w:" o; do
	case "$o" in
	d) DUR="$OPTARG" ;;
	F) FREQ="$OPTARG" ;;
	c) CG="$OPTARG" ;;
	w) WL="$OPTARG" ;;
	*) echo "$USAGE" >&2; exit 1 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "$USAGE" >&2; exit 1; }
case "$WL" in mixed | deep) ;; *) echo "$USAGE" >&2; exit 1 ;; esac
OUT="$1"
case "$CG" in
fp)
	CGOPT=(-g)
	CFLAGS="-O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"
	BUILD="${BENCH_BUILD:-/tmp/conv-bench-workload}" ;;
dwarf | dwarf,[0-9]*)
	CGOPT=(--call-graph "$CG")
	CFLAGS="-O2 -g -fomit-frame-pointer"
	BUILD="${BENCH_BUILD:-/tmp/conv-bench-workload-nofp}" ;;
*) echo "$USAGE" >&2; exit 1 ;;
esac
PERF="${PERF:-perf}"
CC="${CC:-gcc}"
for tool in "$CC" "$PERF"; do
	command -v "$tool" >/dev/null || { echo "record.sh: $tool not found" >&2; exit 1; }
done

# perf lowers kernel.perf_event_max_sample_rate when sampling takes too
# long; below HZ, perf record refuses -F HZ.
rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
if [ "$rate" -lt "$FREQ" ]; then
	echo "record.sh: kernel.perf_event_max_sample_rate is $rate; raising it to $FREQ" >&2
	echo "$FREQ" > /proc/sys/kernel/perf_event_max_sample_rate
fi

rm -rf "$BUILD"
mkdir -p "$BUILD/obj"
$CC $CFLAGS -fPIC -shared -o "$BUILD/libwork.so" "$REPO/samples/src/libwork.c"
$CC $CFLAGS -o "$BUILD/workload" "$REPO/samples/src/workload.c" \
	-L"$BUILD" -lwork -Wl,-rpath,"$BUILD" -pthread

# the compiler's inputs: every C file of conv (about 60), in a fixed order
mapfile -t SRCS < <(cd "$REPO" && ls core/*.c reader/*.c procmap/*.c buildid/*.c symbolize/*.c \
	model/*.c pprofwriter/*.c jfrwriter/*.c pipeline/*.c cli/*.c 2>/dev/null)

pids=()
stop() {
	for p in "${pids[@]}"; do
		kill -- -"$p" 2>/dev/null || kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
}
trap stop EXIT

# each loop in its own process group, so stop() ends it with its children
set -m
if [ "$WL" = mixed ]; then
	(while :; do "$BUILD/workload" 20000; done) >/dev/null 2>&1 &
	pids+=($!)
	(
		cd "$REPO"
		while :; do
			for s in "${SRCS[@]}"; do
				$CC -O2 -g -I. -c "$s" -o "$BUILD/obj/x.o" 2>/dev/null || true
			done
		done
	) >/dev/null 2>&1 &
	pids+=($!)
else
	CXX="${CXX:-g++}"
	$CXX $CFLAGS -o "$BUILD/deep" "$REPO/samples/src/deep.cpp"
	(while :; do "$BUILD/deep" 20000 "${DEEP_SEEDS:-16}"; done) >/dev/null 2>&1 &
	pids+=($!)
	(
		cd "$REPO"
		n=0
		while :; do
			for s in samples/src/deep.cpp tests/unwind/src/uw_cpp.cpp "${SRCS[@]:0:20}"; do
				case "$s" in
				*.cpp) $CXX -O2 -g -c "$s" -o "$BUILD/obj/x.o" 2>/dev/null || true ;;
				*) $CC -O2 -g -I. -c "$s" -o "$BUILD/obj/x.o" 2>/dev/null || true ;;
				esac
				n=$((n + 1))
				# a pipeline every other file, an interpreter every fourth
				[ $((n % 2)) = 0 ] && sh -c 'seq 300 | sort -rn | uniq | wc -l' >/dev/null
				[ $((n % 4)) = 0 ] && python3 -c 'import json, re; print(len(json.dumps([re.sub("a", "b", str(i)) for i in range(3000)])))' >/dev/null
			done
		done
	) >/dev/null 2>&1 &
	pids+=($!)
fi
set +m
sleep 1

"$PERF" record -a "${CGOPT[@]}" -F "$FREQ" -o "$OUT" -- sleep "$DUR" 2> "$OUT.record.log"
stop
trap - EXIT
echo "record.sh: $OUT: $(stat -c %s "$OUT") bytes; $(grep -h 'samples' "$OUT.record.log" | tail -1)"
