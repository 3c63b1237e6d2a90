#!/usr/bin/env bash
# Times conv's unwinding of a `--call-graph dwarf` recording against perf and
# perfparser (bench/README.md, "Unwinding benchmark"). A benchmark, not a
# test: it never fails on a number.
#
#   bench/unwind.sh FILE        (FILE: e.g. from bench/record-dwarf.sh)
#
# Tools, run in turn ROUNDS times (default 1: perf report takes minutes on
# the 170 MB recording), each as its own process under /usr/bin/time:
#   conv         conv -v -j$JOBS --stats S -o OUT FILE: read and unwind, map,
#                symbolize, pprof + JFR (-v for its phase times)
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
# Environment: ROUNDS (1), CONV (default: a Release build in
# /tmp/conv-bench-build), WORK (a new /tmp/unwindbench.XXXXXX), JOBS (conv
# -j, default the CPUs), SKIP (tool keys to leave out: conv report
# perfparser), PERFPARSER (its path).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
ROUNDS="${ROUNDS:-1}"
WORK="${WORK:-$(mktemp -d /tmp/unwindbench.XXXXXX)}"
JOBS="${JOBS:-$(nproc)}"
SKIP=" ${SKIP:-} "
PERFPARSER="${PERFPARSER:-$(command -v hotspot-perfparser ||
	ls /usr/lib/*/libexec/hotspot-perfparser 2>/dev/null | head -1 || true)}"
[ $# -eq 1 ] || { echo "usage: $0 FILE" >&2; exit 1; }
DATA="$1"
[ -r "$DATA" ] || { echo "unwind.sh: $DATA: not readable" >&2; exit 1; }
mkdir -p "$WORK"

if [ -z "${CONV:-}" ]; then
	B=/tmp/conv-bench-build
	cmake -S "$REPO" -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build "$B" -j"$(nproc)" --target conv >/dev/null
	CONV="$B/conv"
fi
MB=$(python3 -c "import os,sys; print('%.1f' % (os.path.getsize(sys.argv[1]) / 1e6))" "$DATA")

export DEBUGINFOD_URLS=
CACHE="$WORK/cache"
keys=(conv report perfparser)
declare -A CMD=(
	[conv]="'$CONV' -v -j$JOBS --cache-dir '$CACHE' --stats '$WORK/stats.json' -o '$WORK/out' '$DATA'"
	[report]="perf report -i '$DATA' --stdio > /dev/null"
	[perfparser]="'$PERFPARSER' --input '$DATA' --output '$WORK/perfparser.out'"
)
run_keys=()
for k in "${keys[@]}"; do
	case "$SKIP" in *" $k "*) continue ;; esac
	if [ "$k" = perfparser ] && [ -z "$PERFPARSER" ]; then
		echo "unwind.sh: hotspot-perfparser not found (apt-get install --no-install-recommends hotspot); skipped" >&2
		continue
	fi
	run_keys+=("$k")
done

echo "input: $DATA ($MB MB), conv: $CONV -j$JOBS, rounds: $ROUNDS, work: $WORK"
"$CONV" info "$DATA" 2>/dev/null | grep -E "^(samples|events|perf version|command line|processes)" || true
cat "$DATA" > /dev/null
"$CONV" -q -j"$JOBS" --cache-dir "$CACHE" -o "$WORK/out" "$DATA" || echo "unwind.sh: conv exited $? on the warm-up run" >&2

: > "$WORK/times.txt"
for r in $(seq 1 "$ROUNDS"); do
	for k in "${run_keys[@]}"; do
		t="$WORK/time.$k.$r"
		if ! /usr/bin/time -f "%e %U %S %M" -o "$t" bash -c "${CMD[$k]}" 2>"$WORK/err.$k.$r"; then
			echo "unwind.sh: $k failed: $(tail -c 300 "$WORK/err.$k.$r")" >&2
		fi
		echo "$k $r $(tail -1 "$t")" >> "$WORK/times.txt"
	done
done

python3 - "$WORK" "$DATA" "$MB" "${run_keys[@]}" <<'EOF'
import glob, json, os, re, sys
work, data, mb, keys = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4:]
names = {"conv": "conv", "report": "perf report --stdio", "perfparser": "hotspot-perfparser"}
runs = {}
for line in open(os.path.join(work, "times.txt")):
    f = line.split()
    if len(f) == 6:
        runs.setdefault(f[0], []).append((float(f[2]), float(f[3]) + float(f[4]), int(f[5]) / 1024))
res = {}
for k in keys:
    r = runs.get(k)
    if r:
        best = min(r)
        res[k] = {"name": names[k], "best_s": best[0], "cpu_s": min(x[1] for x in r),
                  "rss_mb": max(x[2] for x in r), "runs": r}
conv = res.get("conv")
print("\n%-22s %9s %9s %9s %9s" % ("tool", "best s", "CPU s", "RSS MB", "vs conv"))
for k in keys:
    if k in res:
        e = res[k]
        e["ratio_to_conv"] = e["best_s"] / conv["best_s"] if conv and conv["best_s"] else None
        print("%-22s %9.3f %9.2f %9.1f %8s" % (e["name"], e["best_s"], e["cpu_s"], e["rss_mb"],
                                              "%.1fx" % e["ratio_to_conv"] if e["ratio_to_conv"] else "-"))
lines = []
try:
    st = json.load(open(os.path.join(work, "stats.json")))
except (OSError, ValueError):
    st = {}
u = st.get("unwind")
unwound = isinstance(u, dict) and bool(u.get("samples"))
if conv and not unwound:
    lines.append("NOTE: conv's --stats has no \"unwind\" object: this conv does not unwind the recording "
                 "(samples_not_unwound: %s), so the ratios below say nothing of the goals" %
                 st.get("samples_not_unwound"))
if conv:
    for k, want in (("report", 100), ("perfparser", 20)):
        if k in res:
            lines.append("conv %.1fx faster than %s (goal %dx): %s" % (
                res[k]["ratio_to_conv"], res[k]["name"], want,
                "met" if res[k]["ratio_to_conv"] >= want else "NOT met"))
    if "report" in res:
        lines.append("conv peak RSS %.1f MB, perf report's %.1f MB (goal: below): %s" % (
            conv["rss_mb"], res["report"]["rss_mb"],
            "met" if conv["rss_mb"] < res["report"]["rss_mb"] else "NOT met"))
    # conv -v: "time  read 0.002 s, symbolize ..." (the read phase holds the unwinding)
    read_s = None
    for f in sorted(glob.glob(os.path.join(work, "err.conv.*"))):
        m = re.search(r"^\s*time\s+read ([0-9.]+) s", open(f, errors="replace").read(), re.M)
        if m:
            read_s = float(m.group(1)) if read_s is None else min(read_s, float(m.group(1)))
    conv["read_s"] = read_s
    if unwound:
        conv["unwind"] = u
        per = [("whole run", conv["best_s"])] + ([("read phase", read_s)] if read_s else [])
        for what, secs in per:
            lines.append("unwinding over conv's %s (%.3f s): %.0f samples/s, %.0f frames/s" % (
                what, secs, u["samples"] / secs, u.get("frames", 0) / secs))
        lines.append("unwind: %d dwarf samples, %d to a root, truncated %s, %d frames (%.1f per sample)" % (
            u["samples"], u.get("to_root", 0), json.dumps(u.get("truncated", {}), sort_keys=True),
            u.get("frames", 0), u.get("frames", 0) / u["samples"]))
print()
for l in lines:
    print(l)
json.dump({"input": data, "mb": mb, "results": res, "summary": lines},
          open(os.path.join(work, "result.json"), "w"), indent=1)
EOF
