#!/bin/sh
# perf's own view of OUTDIR/NAME.data with the debug info installed, as JSON
# {"top": [{"name", "samples", ...}], "inline": {...}, ...}: see perf_reference.py.
# usage: perf_reference.sh OUTDIR NAME     (--method symfs before OUTDIR for the
#        ground truth from the unstripped binaries)
exec python3 "$(dirname "$0")/perf_reference.py" "$@"
