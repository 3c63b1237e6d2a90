#!/usr/bin/env bash
# Re-records samples/perf.data, the recording the README's first command
# converts: the test workload (tests/fixtures/src: two threads, a shared
# library, a fork+exec of itself) under `perf record -g`, about 0.3 s.
# Run as root or with kernel.perf_event_paranoid <= 1.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$HERE/../tests/fixtures/src"
BUILD="${CONV_SAMPLE_BUILD:-/tmp/conv-sample-build}"
CC="${CC:-clang}"
CFLAGS="-O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls"

mkdir -p "$BUILD"
$CC $CFLAGS -fPIC -shared -o "$BUILD/libwork.so" "$SRC/libwork.c"
$CC $CFLAGS -o "$BUILD/workload" "$SRC/workload.c" -L"$BUILD" -lwork \
	-Wl,-rpath,"$BUILD" -pthread
rm -f "$HERE/perf.data" "$HERE/perf.data.old"
perf record -N -q -e cpu-clock -F 999 -g -o "$HERE/perf.data" -- "$BUILD/workload" 300
chmod 0644 "$HERE/perf.data"
