#!/usr/bin/env bash
# Records the unwinding benchmark's input (bench/README.md, "Unwinding
# benchmark"): system-wide, `--call-graph dwarf` (8 KB user stack copies),
# 1000 Hz, 10 s, while a compute program built WITHOUT frame pointers
# (samples/src/workload.c + libwork.c: threads, a shared library, fork + exec)
# runs in a loop beside a loop of gcc runs over conv's sources. On 2 CPUs
# that is about 20 000 samples and 170 MB (the copies are most of it).
#
#   bench/record-dwarf.sh [-d SECONDS] [-F HZ] [-s BYTES] OUT.data
#
# -s: the stack copy size (perf's default 8192; at most 65528). The recipe is
# bench/record.sh's with -c dwarf[,BYTES]; see there for the loops. Needs root
# (system-wide), gcc, perf.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DUR=10
FREQ=1000
CG=dwarf
while getopts "d:F:s:" o; do
	case "$o" in
	d) DUR="$OPTARG" ;;
	F) FREQ="$OPTARG" ;;
	s) CG="dwarf,$OPTARG" ;;
	*) echo "usage: $0 [-d SECONDS] [-F HZ] [-s BYTES] OUT.data" >&2; exit 1 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: $0 [-d SECONDS] [-F HZ] [-s BYTES] OUT.data" >&2; exit 1; }
exec "$HERE/record.sh" -d "$DUR" -F "$FREQ" -c "$CG" "$1"
