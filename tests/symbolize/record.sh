#!/bin/sh
# Records each stripped program of OUTDIR/bin (built by build.sh) with
#   perf record -N -q -e cpu-clock:u -F 2000 -g -o OUTDIR/NAME.data -- OUTDIR/bin/NAME
# -N keeps perf from copying the binaries into a build-id cache: nothing outside
# OUTDIR is written, and no cache can hand perf report or conv the binaries.
# :u (user space only) keeps kernel samples, whose names are not what this
# suite is about, out of both perf's and conv's counts; EVENT=cpu-clock
# records the kernel too.  Needs perf_event_paranoid <= 1 or root.
#
# usage: record.sh OUTDIR [NAME...]     (default: every program in OUTDIR/buildids)
set -eu
[ $# -ge 1 ] || { echo "usage: $0 OUTDIR [NAME...]" >&2; exit 2; }
OUT=$(cd "$1" && pwd)
shift
EVENT=${EVENT:-cpu-clock:u}
FREQ=${FREQ:-2000}
if [ $# -eq 0 ]; then
	# the executables: every built binary but the shared library
	set -- $(awk '$1 !~ /\.so$/ { print $1 }' "$OUT/buildids")
fi
for n in "$@"; do
	rm -f "$OUT/$n.data" "$OUT/$n.data.old"
	perf record -N -q -e "$EVENT" -F "$FREQ" -g -o "$OUT/$n.data" -- "$OUT/bin/$n" >"$OUT/$n.stdout"
	printf '%-10s %s\n' "$n" "$OUT/$n.data"
done
