#!/usr/bin/env bash
# Times conv's unwinding of a `--call-graph dwarf` recording against perf and
# perfparser (bench/README.md, "Unwinding benchmark"). A benchmark, not a
# test: it never fails on a number.
#
#   bench/unwind.sh FILE        (FILE: e.g. from bench/record-dwarf.sh)
#
# bench/pipeline.sh with GOALS=unwind, conv, perf report (call graphs) and
# perfparser only, ROUNDS default 1 (perf report takes minutes on the 170 MB
# recording); each as its own process under /usr/bin/time:
#   conv         conv -q -j$JOBS -o OUT FILE: read and unwind, map,
#                symbolize, pprof + JFR (its phase times from an untimed -v run)
#   perf report  perf report -i FILE --stdio > /dev/null (children and call
#                graphs: perf unwinds every sample with libdw/libunwind)
#   perfparser   hotspot-perfparser --input FILE --output OUT (Debian
#                package hotspot; skipped when missing)
# conv runs once untimed first (page cache, its debug-info cache warm, as
# perf's build-id cache is after perf record); DEBUGINFOD_URLS is empty.
#
# Prints per tool best wall time, CPU (user + sys) and peak RSS, the ratios
# (tool's best wall / conv's), issue 20's goals (>= 100x perf report, >= 20x
# perfparser, conv's peak RSS below perf report's) as met or not, and the
# unwinding throughput from conv's --stats "unwind" object: samples/s and
# frames/s over conv's whole run and over its read phase (which holds the
# unwinding); writes the same as JSON to $WORK/result.json.
#
# Environment: as bench/pipeline.sh's (ROUNDS default 1 here; SKIP takes
# conv, graph, perfparser).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -eq 1 ] || { echo "usage: $0 FILE" >&2; exit 1; }
export ROUNDS="${ROUNDS:-1}" GOALS=unwind SKIP="conv_n conv_n_base script flat ${SKIP:-}"
exec "$HERE/pipeline.sh" "$1"
