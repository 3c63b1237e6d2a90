#!/usr/bin/env bash
# Runs the libFuzzer targets and folds what they found back into the
# committed corpora. See README.md.
#
#   run.sh fuzz SECONDS TARGET...   fuzz each target for SECONDS of wall time,
#                                   all of them in parallel (one process each)
#   run.sh merge TARGET...          minimize committed corpus + new inputs (+ the
#                                   seeds), without foreign inputs, into
#                                   corpus/<target>/ (replacing it)
#   run.sh stats TARGET...          time, executions and crashes so far
#
# Environment:
#   FUZZ_BUILD   build directory configured with -DCONV_FUZZ=ON (build-fuzz)
#   FUZZ_WORK    scratch directory (/tmp/conv-fuzz): per target new/ (inputs
#                found), art/ (crashes, leaks, timeouts), logs, totals
#   FUZZ_SEEDS   extra seed directory with one folder per target, read but
#                never written (e.g. the output of make_seeds.py)
#   FUZZ_BIN_<target>  the fuzzer executable for one target, instead of the
#                build directory's (e.g. a build with a local fix)
#   FUZZ_FOREIGN directories or files whose contents must not be committed
#                (default: ../shared/corpus); merge drops inputs that are
#                mostly one of them (filter_foreign.py)
#   FUZZ_FOREIGN_EXTRA  more of them, e.g. the system libraries make_seeds.py
#                --system used (listed in its foreign-system.txt)
#   FUZZ_NICE    niceness (10)
#
# A crash does not end the run: the artifact is kept in art/ and the target
# is restarted with what it found, until SECONDS have passed. UBSan is fatal
# (halt_on_error=1) so that undefined behaviour leaves an artifact too.
set -u

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${FUZZ_BUILD:-$repo/build-fuzz}
work=${FUZZ_WORK:-/tmp/conv-fuzz}
seeds=${FUZZ_SEEDS:-}
niceness=${FUZZ_NICE:-10}
foreign=${FUZZ_FOREIGN:-$repo/../shared/corpus}

max_len() {
	case $1 in
	jitmap | kallsyms) echo 16384 ;;
	*) echo 65536 ;;
	esac
}

dict() {
	case $1 in
	reader | roundtrip) echo "$here/fuzz_reader.dict" ;;
	*) [ -f "$here/fuzz_$1.dict" ] && echo "$here/fuzz_$1.dict" ;;
	esac
}

bin() {
	local v="FUZZ_BIN_$1"
	echo "${!v:-$build/tests/fuzz/fuzz_$1}"
}

common_flags() {
	local d
	echo "-max_len=$(max_len "$1") -rss_limit_mb=1024 -timeout=10"
	d=$(dict "$1")
	[ -n "$d" ] && echo "-dict=$d"
}

export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

# One target for `secs` seconds, restarting after each crash.
fuzz_one() {
	local t=$1 secs=$2 w=$work/$1 start now left run=0 b
	b=$(bin "$t")
	[ -x "$b" ] || { echo "run.sh: $b not built" >&2; return 1; }
	mkdir -p "$w/new" "$w/art" "$w/logs"
	[ -f "$w/corpus-before" ] || ls "$here/corpus/$t" 2>/dev/null | wc -l >"$w/corpus-before"
	start=$(date +%s)
	while :; do
		now=$(date +%s)
		left=$((secs - (now - start)))
		[ "$left" -ge 5 ] || break
		run=$((run + 1))
		local log=$w/logs/$(date +%Y%m%d-%H%M%S)-$run.log
		local dirs=("$w/new" "$here/corpus/$t")
		[ -n "$seeds" ] && [ -d "$seeds/$t" ] && dirs+=("$seeds/$t")
		# shellcheck disable=SC2046
		nice -n "$niceness" "$b" $(common_flags "$t") -max_total_time="$left" \
			-print_final_stats=1 -artifact_prefix="$w/art/" "${dirs[@]}" >"$log" 2>&1
		local rc=$? execs secs_run
		execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
		if [ -z "$execs" ]; then # killed without final stats: the last status line
			execs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
		fi
		secs_run=$(($(date +%s) - now))
		echo "$(date -Is) run=$run rc=$rc secs=$secs_run execs=${execs:-0} log=$log" >>"$w/runs"
		if [ "$rc" -ne 0 ]; then
			echo "$(date -Is) $t: run $run ended with status $rc, see $log" >&2
			grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -5 >&2
		fi
	done
	stats_one "$t"
}

stats_one() {
	local t=$1 w=$work/$1
	[ -f "$w/runs" ] || { echo "$t: no runs"; return; }
	awk -v t="$t" '{
		for (i = 1; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == "secs") s += kv[2]
			if (kv[1] == "execs") e += kv[2]
			if (kv[1] == "rc" && kv[2] != 0) c++
		}
		n++
	} END { printf "%s: %d runs, %d s, %d executions, %d ended with a non-zero status (a finding, or interrupted)\n", t, n, s, e, c }' "$w/runs"
	echo "  artifacts: $(ls "$w/art" 2>/dev/null | wc -l), new inputs: $(ls "$w/new" | wc -l)," \
		"corpus before: $(cat "$w/corpus-before" 2>/dev/null)"
}

merge_one() {
	local t=$1 w=$work/$1 b m st d i=0
	b=$(bin "$t")
	m=$w/merged.$$
	st=$w/staging.$$
	rm -rf "$m" "$st"
	mkdir -p "$m" "$st" "$w/new"
	# candidates: committed corpus, what the runs found, the seeds; foreign ones
	# are dropped first, so that the merge picks other inputs for their edges
	local dirs=("$here/corpus/$t" "$w/new")
	[ -n "$seeds" ] && [ -d "$seeds/$t" ] && dirs+=("$seeds/$t")
	for d in "${dirs[@]}"; do
		i=$((i + 1))
		mkdir -p "$st/$i"
		cp "$d"/* "$st/$i/" 2>/dev/null
		# shellcheck disable=SC2086
		python3 "$here/filter_foreign.py" "$st/$i" $foreign ${FUZZ_FOREIGN_EXTRA:-} || return 1
	done
	# shellcheck disable=SC2046
	nice -n "$niceness" "$b" -merge=1 -use_counters=0 $(common_flags "$t" | grep -v dict) \
		"$m" "$st"/* >"$w/merge.log" 2>&1 ||
		{ echo "run.sh: merge of $t failed, see $w/merge.log" >&2; return 1; }
	grep MERGE-OUTER "$w/merge.log" | tail -1
	rm -rf "$here/corpus/$t" "$st"
	mkdir -p "$here/corpus/$t"
	cp "$m"/* "$here/corpus/$t/" 2>/dev/null
	rm -rf "$m"
	echo "$t: corpus now $(ls "$here/corpus/$t" | wc -l) files, $(du -sk "$here/corpus/$t" | cut -f1) KiB"
}

cmd=${1:-}
shift || true
case $cmd in
fuzz)
	secs=$1
	shift
	for t in "$@"; do
		fuzz_one "$t" "$secs" &
	done
	wait
	;;
merge)
	for t in "$@"; do merge_one "$t"; done
	;;
stats)
	for t in "$@"; do stats_one "$t"; done
	;;
*)
	sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac
