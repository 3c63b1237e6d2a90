#!/usr/bin/env bash
# Whether two builds of conv write the same bytes: every output of `conv`,
# `conv -n`, `conv -F folded,html`, `conv symbolize` (of the -n outputs) and
# `conv info` (text and --json), with --stats, over each input. For a
# refactoring that must change no output (issue 33). Not a test: it compares
# two binaries, and the inputs' symbols depend on this machine's files, the
# same for both.
#
#   scripts/same-outputs.sh OLD_CONV NEW_CONV [INPUT...]
#
# Default inputs: every committed recording (tests/**/*.data) and, when
# ../shared/corpus exists, every file there. Each command runs once per
# binary in a directory of its own, with relative output names, so paths in
# the outputs and stats agree. Exit status and standard error are compared
# too. Prints one line per difference and a count; exit 1 if any differ.
# Environment: JOBS (parallel inputs, default nproc), KEEP=1 keeps WORK.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 OLD_CONV NEW_CONV [INPUT...]" >&2; exit 1; }
OLD="$(realpath "$1")"
NEW="$(realpath "$2")"
shift 2
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ $# -eq 0 ]; then
	mapfile -t inputs < <(find "$HERE/tests" -name '*.data' -type f | sort)
	if [ -d "$HERE/../shared/corpus" ]; then
		mapfile -t -O "${#inputs[@]}" inputs < <(find "$HERE/../shared/corpus" -type f \
			! -name '*.md' ! -name '*.txt' ! -name '*.buildids' ! -name '*.expected*' | sort)
	fi
else
	inputs=()
	for f in "$@"; do inputs+=("$(realpath "$f")"); done
fi
WORK="$(mktemp -d /tmp/same-outputs.XXXXXX)"
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
export DEBUGINFOD_URLS= LC_ALL=C

# one input: all commands with one binary in directory $2
run_all() {
	local conv="$1" dir="$2" in="$3"
	mkdir -p "$dir" && cd "$dir" || return
	# conv's summary names outputs and times nothing; -j1 and -j2 both as a user would
	"$conv" -j2 --offline -o full/ --stats=full.json "$in" >full.out 2>full.err; echo $? >full.rc
	"$conv" -q -j1 --offline -n -o nosym/ --stats=nosym.json "$in" >nosym.out 2>nosym.err; echo $? >nosym.rc
	"$conv" -q --offline -F folded,html -o views/ "$in" >views.out 2>views.err; echo $? >views.rc
	"$conv" -q --offline --jfr-chunk-size 64k -F jfr -o chunks/ "$in" >chunks.out 2>chunks.err; echo $? >chunks.rc
	if ls nosym/* >/dev/null 2>&1; then
		"$conv" symbolize -q --offline -o resym/ --stats=resym.json nosym/* >resym.out 2>resym.err
		echo $? >resym.rc
	fi
	"$conv" info "$in" >info.out 2>info.err; echo $? >info.rc
	"$conv" info --json --mappings --dso --jit --top 5 --offline "$in" >infoj.out 2>infoj.err
	echo $? >infoj.rc
}
export -f run_all

one() {
	local i="$1" in="$2" w="$WORK/$1"
	(run_all "$OLD" "$w/old" "$in")
	(run_all "$NEW" "$w/new" "$in")
	if ! diff -r -q "$w/old" "$w/new" >"$w/diff" 2>&1; then
		sed "s|^|$in: |" "$w/diff"
	elif [ "${KEEP:-}" != 1 ]; then
		rm -rf "$w"
	fi
}
export -f one
export OLD NEW WORK KEEP

printf '%s\n' "${inputs[@]}" | nl -nln -w1 -s' ' |
	xargs -P "${JOBS:-$(nproc)}" -L1 bash -c 'one "$0" "$1"' >"$WORK/report"
cat "$WORK/report"
n_diff=$(cut -d: -f1 "$WORK/report" | sort -u | grep -c . || true)
echo "same-outputs: ${#inputs[@]} inputs, $n_diff differ"
[ "$n_diff" -eq 0 ]
