#!/usr/bin/env bash
# Symbolization benchmark: conv (bench/symbench.c) against eu-addr2line,
# GNU addr2line and llvm-addr2line-14, all with -f -i, on the same address
# lists. A benchmark, not a test: it never fails on a number.
#
#   bench/symbench.sh [ELF]
#
# Environment (all optional):
#   RUNS=5          timed runs per tool and list; the best wall time is kept
#   TIMEOUT=120     seconds; a tool run that takes longer is killed (timeout)
#   REPEAT_LIMIT=10 a tool whose run took longer than this is not repeated
#   N=10000         distinct addresses in the uniform list
#   HOT_TOTAL=100000 HOT_SET=2000 HOT_FRAC=0.8   the hot list
#   SEED=20240601   address generator seed
#   CONV_BUILD=/tmp/conv-bench-build   where conv's libraries are built (Release)
#   BENCH_WORK=...  work dir for lists and outputs (default: a new /tmp dir)
#   CC=cc
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$(dirname "$HERE")
RUNS=${RUNS:-5}
TIMEOUT=${TIMEOUT:-120}
REPEAT_LIMIT=${REPEAT_LIMIT:-10}
N=${N:-10000}
HOT_TOTAL=${HOT_TOTAL:-100000}
HOT_SET=${HOT_SET:-2000}
HOT_FRAC=${HOT_FRAC:-0.8}
SEED=${SEED:-20240601}
CONV_BUILD=${CONV_BUILD:-/tmp/conv-bench-build}
CC=${CC:-cc}
PY=${PYTHON:-python3}

die() { echo "symbench.sh: $*" >&2; exit 1; }
has_debug_info() { readelf -SW "$1" 2>/dev/null | grep -q ' \.debug_info '; }
is_elf() { [ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; }

# ---- the ELF ----
ELF=${1:-}
if [ -z "$ELF" ]; then
	for cand in /root/.pyenv/versions/3.12*/lib/libpython3.12.so.1.0; do
		if [ -f "$cand" ] && has_debug_info "$cand"; then
			ELF=$cand
			break
		fi
	done
fi
if [ -z "$ELF" ]; then
	# the largest ELF with .debug_info under /usr/lib/debug or the build dir
	while IFS= read -r cand; do
		if is_elf "$cand" && has_debug_info "$cand"; then
			ELF=$cand
			break
		fi
	done < <(find /usr/lib/debug "$SRC/build" -type f -size +100k -printf '%s %p\n' 2>/dev/null |
		 sort -rn | cut -d' ' -f2-)
fi
[ -n "$ELF" ] || die "no ELF with DWARF found; pass one as the argument"
[ -f "$ELF" ] || die "$ELF: no such file"
has_debug_info "$ELF" || echo "symbench.sh: warning: $ELF has no .debug_info" >&2

WORK=${BENCH_WORK:-$(mktemp -d /tmp/symbench.XXXXXX)}
mkdir -p "$WORK"

echo "== ELF: $ELF ($(du -h "$ELF" | cut -f1))"
echo "   DWARF: $("$PY" "$HERE/genaddrs.py" --dwarf-versions "$ELF")"
echo "   producer: $(readelf --debug-dump=info "$ELF" 2>/dev/null | grep -m1 DW_AT_producer |
	sed 's/.*): //' | cut -c1-100)"
echo "   machine: $(nproc) CPUs, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "   conv source: $SRC at $(git -C "$SRC" log -1 --format=%h 2>/dev/null || echo '?')$(
	git -C "$SRC" status --porcelain -- symbolize core 2>/dev/null | grep -q . && echo ' (symbolize/ or core/ modified)')"
echo "   work dir: $WORK"

# ---- address lists ----
"$PY" "$HERE/genaddrs.py" "$ELF" "$WORK" --seed "$SEED" --n "$N" --hot-total "$HOT_TOTAL" \
	--hot-set "$HOT_SET" --hot-frac "$HOT_FRAC"

# ---- build symbench against a Release build of conv's libraries ----
echo "== building conv (Release) in $CONV_BUILD"
cmake -S "$SRC" -B "$CONV_BUILD" -DCMAKE_BUILD_TYPE=Release -DCONV_TESTS=OFF >"$WORK/cmake.log" 2>&1 ||
	{ cat "$WORK/cmake.log"; die "cmake configure failed"; }
cmake --build "$CONV_BUILD" -j2 --target conv_symbolize conv_core >>"$WORK/cmake.log" 2>&1 ||
	{ tail -30 "$WORK/cmake.log"; die "cmake build failed"; }
IBERTY=$(sed -n 's/^IBERTY_LIB:FILEPATH=//p' "$CONV_BUILD/CMakeCache.txt")
SYMBENCH=$WORK/symbench
# shellcheck disable=SC2046
"$CC" -std=c11 -O2 -Wall -Wextra -I"$SRC" "$HERE/symbench.c" \
	"$CONV_BUILD/libconv_symbolize.a" "$CONV_BUILD/libconv_core.a" \
	$(pkg-config --libs libdw libelf libzstd libdeflate) "${IBERTY:--liberty}" -o "$SYMBENCH"

# warm the page cache: every tool then reads the file from memory
cat "$ELF" >/dev/null

# ---- timing ----
# time_tool KEY LIST CMD...: best wall of RUNS runs (stdin = LIST, stdout =
# $WORK/KEY.LISTNAME.out), peak RSS over the runs and the least user+sys CPU
# time (10 ms resolution), into WALL/RSS/CPU/STATUS.
declare -A WALL RSS STATUS CPU
time_tool() {
	local key=$1 list=$2
	shift 2
	local lname best="" rss=0 status=ok r s e wall m rc cpu bcpu=""
	lname=$(basename "$list" .txt)
	for ((r = 1; r <= RUNS; r++)); do
		s=$EPOCHREALTIME
		rc=0
		/usr/bin/time -f '%e %M %U %S' -o "$WORK/time.txt" timeout "$TIMEOUT" "$@" \
			<"$list" >"$WORK/$key.$lname.out" 2>"$WORK/$key.$lname.err" || rc=$?
		e=$EPOCHREALTIME
		if [ "$rc" = 124 ]; then
			status=timeout
			break
		elif [ "$rc" != 0 ]; then
			status="exit $rc"
			break
		fi
		wall=$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.4f", e - s }')
		m=$(tail -1 "$WORK/time.txt" | awk '{ print $2 }')
		cpu=$(tail -1 "$WORK/time.txt" | awk '{ printf "%.2f", $3 + $4 }')
		if [ -z "$bcpu" ] || awk -v a="$cpu" -v b="$bcpu" 'BEGIN { exit !(a < b) }'; then
			bcpu=$cpu
		fi
		[ "${m:-0}" -gt "$rss" ] && rss=$m
		if [ -z "$best" ] || awk -v a="$wall" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$wall
		fi
		awk -v a="$wall" -v l="$REPEAT_LIMIT" 'BEGIN { exit !(a > l) }' && break
	done
	WALL[$key.$lname]=${best:-}
	RSS[$key.$lname]=$rss
	CPU[$key.$lname]=${bcpu:-}
	STATUS[$key.$lname]=$status
	printf '   %-18s %-8s %s s (%s)\n' "$key" "$lname" "${best:--}" "$status"
}

TOOLS=(conv llvm-addr2line-14 addr2line eu-addr2line)
declare -A CMD
CMD[conv]="$SYMBENCH -o @OUT@ $ELF @LIST@"
CMD[llvm-addr2line-14]="llvm-addr2line-14 -f -i -e $ELF"
CMD[addr2line]="addr2line -f -i -e $ELF"
CMD[eu-addr2line]="eu-addr2line -f -i -e $ELF"

LISTS=(uniform hot)
echo "== timing (best of $RUNS runs, timeout ${TIMEOUT}s, wall clock of the whole process)"
for lname in "${LISTS[@]}"; do
	list=$WORK/$lname.txt
	for t in "${TOOLS[@]}"; do
		if [ "$t" != conv ] && ! command -v "$t" >/dev/null; then
			STATUS[$t.$lname]="not installed"
			continue
		fi
		c=${CMD[$t]//@OUT@/$WORK/conv.$lname.result}
		c=${c//@LIST@/$list}
		# shellcheck disable=SC2086
		time_tool "$t" "$list" $c
	done
done

# conv's own view: fresh sym_file per run, open + lookups only
echo "== symbench internal timing (open + lookups; output not timed)"
for lname in "${LISTS[@]}"; do
	"$SYMBENCH" -r "$RUNS" "$ELF" "$WORK/$lname.txt" | sed 's/^/   /'
done

# ---- table ----
count() { grep -c . "$1"; }
distinct() { sort -u "$1" | grep -c .; }
echo
echo "== results: $ELF"
for lname in "${LISTS[@]}"; do
	list=$WORK/$lname.txt
	n=$(count "$list")
	nd=$(distinct "$list")
	cw=${WALL[conv.$lname]:-}
	echo
	echo "list $lname: $n addresses ($nd distinct)"
	printf '%-18s %9s %12s %10s %14s %8s\n' tool seconds addr/s 'RSS MB' 'conv speedup' 'CPU s'
	for t in "${TOOLS[@]}"; do
		st=${STATUS[$t.$lname]:-}
		w=${WALL[$t.$lname]:-}
		if [ "$st" != ok ] || [ -z "$w" ]; then
			if [ "$st" = timeout ]; then
				printf '%-18s %9s %12s %10s %14s\n' "$t" ">$TIMEOUT" "<$(awk -v n="$n" -v t="$TIMEOUT" 'BEGIN{printf "%.0f", n/t}')" - \
					"$( [ -n "$cw" ] && awk -v t="$TIMEOUT" -v c="$cw" 'BEGIN{printf ">%.1fx", t/c}')"
			else
				printf '%-18s %s\n' "$t" "${st:-skipped}"
			fi
			continue
		fi
		printf '%-18s %9.3f %12.0f %10.1f %14s %8s\n' "$t" "$w" \
			"$(awk -v n="$n" -v w="$w" 'BEGIN{print n/w}')" \
			"$(awk -v m="${RSS[$t.$lname]}" 'BEGIN{print m/1024}')" \
			"$( [ -n "$cw" ] && awk -v t="$w" -v c="$cw" 'BEGIN{printf "%.2fx", t/c}')" \
			"${CPU[$t.$lname]:-}"
	done
	w=${WALL[llvm-addr2line-14.$lname]:-}
	if [ -n "$cw" ] && [ -n "$w" ]; then
		awk -v t="$w" -v c="$cw" 'BEGIN {
			r = t / c
			printf "goal conv >= 2x llvm-addr2line-14 -f -i: %.2fx -> %s\n", r, (r >= 2 ? "met" : "NOT met")
		}'
	fi
done

# ---- agreement on the uniform list (untimed runs with -a to split per address) ----
echo
echo "== agreement on the uniform list (outputs with -a, untimed)"
ulist=$WORK/uniform.txt
"$SYMBENCH" -a -o "$WORK/cmp.conv.txt" "$ELF" "$ulist" >/dev/null
specs=("conv=$WORK/cmp.conv.txt")
for t in llvm-addr2line-14 eu-addr2line addr2line; do
	command -v "$t" >/dev/null || continue
	if timeout "$TIMEOUT" "$t" -a -f -i -e "$ELF" <"$ulist" >"$WORK/cmp.$t.txt" 2>/dev/null; then
		case $t in
		llvm-addr2line-14) specs+=("llvm=$WORK/cmp.$t.txt") ;;
		eu-addr2line) specs+=("eu=$WORK/cmp.$t.txt") ;;
		*) specs+=("gnu=$WORK/cmp.$t.txt") ;;
		esac
	else
		echo "   $t: failed or timed out, not compared"
	fi
done
"$PY" "$HERE/compare.py" --examples 6 "${specs[@]}" | sed 's/^/   /'
echo "outputs and lists kept in $WORK"
