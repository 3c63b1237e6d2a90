#!/usr/bin/env bash
# Times conv against perf and perfparser on one recording (bench/README.md,
# "Pipeline benchmark"). A benchmark, not a test: it never fails on a number.
#
#   bench/pipeline.sh [PERF.DATA]     (default: records one with record.sh)
#
# Tools, run in turn ROUNDS times (alternating, so a slow phase of the machine
# hits every tool alike), each as its own process under /usr/bin/time:
#   conv           conv -q -o OUT FILE: read, map, symbolize, pprof + JFR
#   conv -n        the same without symbolization (--no-symbolize)
#   perf script    perf script -i FILE > /dev/null
#   report flat    perf report -i FILE --stdio --no-children > /dev/null
#   report graph   perf report -i FILE --stdio > /dev/null (children and call
#                  graphs, perf's default for a -g recording)
#   perfparser     hotspot-perfparser --input FILE --output OUT (Debian
#                  package hotspot; skipped when missing)
# conv runs once untimed first, so its debug-info cache is warm, as perf's
# build-id cache is after perf record.
#
# Prints best and median wall time, CPU time (user+sys) and peak RSS per
# tool, conv's ratios (tool's best wall / conv's best wall), and conv -n's
# throughput in MB/s of perf.data; writes the same as JSON to $WORK/result.json.
#
# Environment: ROUNDS (3), CONV (default: a Release build in
# /tmp/conv-bench-build), WORK (a new /tmp/pipebench.XXXXXX), JOBS (conv -j,
# default the CPUs), SKIP (space-separated tool keys to leave out: conv conv_n
# script flat graph perfparser), GOALS (pipeline: issue 9's goals; lean: issue
# 22's, >= 6x perf report --no-children, >= 20x perf report with call graphs,
# peak RSS < 80 MB, conv -n >= 400 MB/s; unwind:
# issue 20's, >= 100x perf report with call graphs, >= 20x perfparser, conv's
# peak RSS below perf report's, and the unwinding throughput from conv's
# --stats "unwind" object over its whole run and its read phase, from an
# untimed conv -v: bench/unwind.sh), CONV_BASE (a second conv, e.g. the build
# before a change: its conv and conv -n rows join the same rounds, so one run
# gives both builds' ratios to perf; tool keys conv_base conv_n_base).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
ROUNDS="${ROUNDS:-3}"
WORK="${WORK:-$(mktemp -d /tmp/pipebench.XXXXXX)}"
JOBS="${JOBS:-$(nproc)}"
SKIP=" ${SKIP:-} "
GOALS="${GOALS:-pipeline}"
PERFPARSER="${PERFPARSER:-$(command -v hotspot-perfparser ||
	ls /usr/lib/*/libexec/hotspot-perfparser 2>/dev/null | head -1 || true)}"
mkdir -p "$WORK"

if [ -z "${CONV:-}" ]; then
	B=/tmp/conv-bench-build
	cmake -S "$REPO" -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build "$B" -j"$(nproc)" --target conv >/dev/null
	CONV="$B/conv"
fi

DATA="${1:-}"
if [ -z "$DATA" ]; then
	DATA="$WORK/perf.data"
	"$HERE/record.sh" "$DATA"
fi
[ -r "$DATA" ] || { echo "pipeline.sh: $DATA: not readable" >&2; exit 1; }
MB=$(python3 -c "import os,sys; print('%.1f' % (os.path.getsize(sys.argv[1]) / 1e6))" "$DATA")

# no network: conv finds local files, /usr/lib/debug and its cache
export DEBUGINFOD_URLS=
CACHE="$WORK/cache"
keys=(conv conv_n script flat graph perfparser)
[ -z "${CONV_BASE:-}" ] || keys=(conv conv_base conv_n conv_n_base script flat graph perfparser)
declare -A CMD=(
	[conv_base]="'${CONV_BASE:-}' -q -j$JOBS --cache-dir '$CACHE' -o '$WORK/out-base' '$DATA'"
	[conv_n_base]="'${CONV_BASE:-}' -q -n -o '$WORK/out-n-base' '$DATA'"
	[conv]="'$CONV' -q -j$JOBS --cache-dir '$CACHE' -o '$WORK/out' '$DATA'"
	[conv_n]="'$CONV' -q -n -o '$WORK/out-n' '$DATA'"
	[script]="perf script -i '$DATA' > /dev/null"
	[flat]="perf report -i '$DATA' --stdio --no-children > /dev/null"
	[graph]="perf report -i '$DATA' --stdio > /dev/null"
	[perfparser]="'$PERFPARSER' --input '$DATA' --output '$WORK/perfparser.out'"
)
declare -A NAME=([conv]="conv" [conv_n]="conv -n" [script]="perf script"
	[conv_base]="conv (CONV_BASE)" [conv_n_base]="conv -n (CONV_BASE)"
	[flat]="perf report --no-children" [graph]="perf report (call graphs)"
	[perfparser]="hotspot-perfparser")
run_keys=()
for k in "${keys[@]}"; do
	case "$SKIP" in *" $k "*) continue ;; esac
	if [ "$k" = perfparser ] && [ -z "$PERFPARSER" ]; then
		echo "pipeline.sh: hotspot-perfparser not found (apt-get install --no-install-recommends hotspot); skipped" >&2
		continue
	fi
	run_keys+=("$k")
done

echo "input: $DATA ($MB MB), conv: $CONV -j$JOBS, rounds: $ROUNDS, work: $WORK"
"$CONV" info "$DATA" 2>/dev/null | grep -E "^(samples|events|perf version|hostname|processes)" || true
# warm-up: page cache for everyone, conv's debug-info cache
cat "$DATA" > /dev/null
eval "${CMD[conv]}" || echo "pipeline.sh: conv exited $? on the warm-up run" >&2
[ -z "${CONV_BASE:-}" ] || eval "${CMD[conv_base]}" || echo "pipeline.sh: CONV_BASE exited $? on the warm-up run" >&2
"$CONV" -q -n --stats="$WORK/stats-n.json" -o "$WORK/out-n" "$DATA" || true
"$CONV" -q -j"$JOBS" --cache-dir "$CACHE" --stats="$WORK/stats.json" -o "$WORK/out" "$DATA" || true
# the phases' times (the read phase holds the unwinding)
"$CONV" -v -j"$JOBS" --cache-dir "$CACHE" -o "$WORK/out" "$DATA" 2> "$WORK/conv-v.err" || true

: > "$WORK/times.txt"
for r in $(seq 1 "$ROUNDS"); do
	for k in "${run_keys[@]}"; do
		t="$WORK/time.$k.$r"
		if ! /usr/bin/time -f "%e %U %S %M" -o "$t" bash -c "${CMD[$k]}" 2>"$WORK/err.$k"; then
			echo "pipeline.sh: ${NAME[$k]} failed: $(tail -c 300 "$WORK/err.$k")" >&2
		fi
		echo "$k $r $(tail -1 "$t")" >> "$WORK/times.txt"
	done
done

python3 - "$WORK" "$DATA" "$MB" "$GOALS" "${run_keys[@]}" <<'EOF'
import json, os, re, statistics, sys
work, data, mb, goal_set, keys = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5:]
names = {"conv": "conv", "conv_n": "conv -n (no symbolization)", "script": "perf script",
         "conv_base": "conv (CONV_BASE)", "conv_n_base": "conv -n (CONV_BASE)",
         "flat": "perf report --stdio --no-children", "graph": "perf report --stdio (call graphs)",
         "perfparser": "hotspot-perfparser"}
runs = {}
for line in open(os.path.join(work, "times.txt")):
    f = line.split()
    if len(f) != 6:
        continue
    runs.setdefault(f[0], []).append((float(f[2]), float(f[3]) + float(f[4]), int(f[5]) / 1024))
res = {}
for k in keys:
    r = runs.get(k)
    if not r:
        continue
    res[k] = {"name": names[k], "best_s": min(x[0] for x in r),
              "median_s": statistics.median(x[0] for x in r),
              "cpu_s": min(x[1] for x in r), "rss_mb": max(x[2] for x in r), "runs": r}
conv = res.get("conv")
print("\n%-36s %8s %8s %8s %8s %8s" % ("tool", "best s", "median", "CPU s", "RSS MB", "vs conv"))
for k in keys:
    if k not in res:
        continue
    e = res[k]
    ratio = e["best_s"] / conv["best_s"] if conv and conv["best_s"] else float("nan")
    e["ratio_to_conv"] = ratio
    print("%-36s %8.3f %8.3f %8.2f %8.1f %7.2fx" % (e["name"], e["best_s"], e["median_s"],
                                                    e["cpu_s"], e["rss_mb"], ratio))
goals = []
try:
    st = json.load(open(os.path.join(work, "stats.json")))
except (OSError, ValueError):
    st = {}
wants = ((("flat", 5), ("graph", 15), ("perfparser", 10)) if goal_set == "pipeline"
         else (("flat", 6), ("graph", 20)) if goal_set == "lean"
         else (("graph", 100), ("perfparser", 20)))
if conv:
    for k, want in wants:
        if k in res:
            goals.append("conv %.1fx faster than %s (goal %dx): %s" % (
                res[k]["ratio_to_conv"], res[k]["name"], want,
                "met" if res[k]["ratio_to_conv"] >= want else "NOT met"))
    if goal_set == "pipeline":
        goals.append("conv peak RSS %.1f MB (goal < 100 MB): %s" % (
            conv["rss_mb"], "met" if conv["rss_mb"] < 100 else "NOT met"))
        if "flat" in res:
            goals.append("conv RSS / perf report --no-children RSS = %.2f" % (conv["rss_mb"] / res["flat"]["rss_mb"]))
    elif goal_set == "lean":
        goals.append("conv peak RSS %.1f MB (goal < 80 MB): %s" % (
            conv["rss_mb"], "met" if conv["rss_mb"] < 80 else "NOT met"))
        if "conv_n" in res:
            tput = mb / res["conv_n"]["best_s"]
            goals.append("conv -n %.0f MB/s (goal >= 400 MB/s): %s" % (
                tput, "met" if tput >= 400 else "NOT met"))
    elif "graph" in res:
        goals.append("conv peak RSS %.1f MB, perf report's %.1f MB (goal: below): %s" % (
            conv["rss_mb"], res["graph"]["rss_mb"],
            "met" if conv["rss_mb"] < res["graph"]["rss_mb"] else "NOT met"))
if goal_set == "unwind" and conv:
    u = st.get("unwind")
    if not (isinstance(u, dict) and u.get("samples")):
        goals.append("NOTE: conv's --stats has no \"unwind\" samples: the ratios say nothing of the goals")
    else:
        conv["unwind"] = u
        m = None
        try:
            m = re.search(r"^\s*time\s+read ([0-9.]+) s", open(os.path.join(work, "conv-v.err")).read(), re.M)
        except OSError:
            pass
        per = [("whole run", conv["best_s"])] + ([("read phase", float(m.group(1)))] if m else [])
        for what, secs in per:
            goals.append("unwinding over conv's %s (%.3f s): %.0f samples/s, %.0f frames/s" % (
                what, secs, u["samples"] / secs, u.get("frames", 0) / secs))
        goals.append("unwind: %d dwarf samples, %d to a root, truncated %s, %d frames (%.1f per sample)" % (
            u["samples"], u.get("to_root", 0), json.dumps(u.get("truncated", {}), sort_keys=True),
            u.get("frames", 0), u.get("frames", 0) / u["samples"]))
if st:
    print("\nconv --stats: samples %s, unique stacks %s, frames %s, processes %s" % (
        st.get("samples_total"), st.get("unique_stacks"), st.get("frames"), st.get("processes")))
    res["stats"] = {k: st.get(k) for k in ("samples_total", "unique_stacks", "frames", "processes",
                                           "threads", "sources", "lost_samples", "unwind")}
print()
for g in goals:
    print(g)
json.dump({"input": data, "mb": mb, "results": res, "goals": goals},
          open(os.path.join(work, "result.json"), "w"), indent=1)
EOF
