#!/usr/bin/env bash
# How conv's time and memory grow with the recording (bench/README.md,
# "Scaling"). A benchmark, not a test.
#
#   bench/scale.sh [DURATIONS]     (default "2.5 6 12 24": about 10, 25, 50
#                                   and 100 MB at 20 kHz on 2 CPUs)
#
# Records one system-wide recording per duration with record.sh (same
# workload, same frequency), then converts each ROUNDS times with -j 2 and
# with -j 1 (full pipeline, warm debug-info cache) and with -n, and prints
# per size: MB, samples, distinct stacks, best wall time, MB/s, peak RSS,
# and the ratios to the smallest size (time should grow like the size,
# memory like the distinct stacks, i.e. slower).
#
# Environment: ROUNDS (3), CONV (default: Release build in
# /tmp/conv-bench-build), WORK (new /tmp/scalebench.XXXXXX), DATA_DIR (reuse
# recordings named scale-<duration>.data there instead of recording).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
ROUNDS="${ROUNDS:-3}"
WORK="${WORK:-$(mktemp -d /tmp/scalebench.XXXXXX)}"
DATA_DIR="${DATA_DIR:-$WORK}"
DURATIONS="${1:-2.5 6 12 24}"
mkdir -p "$WORK" "$DATA_DIR"

if [ -z "${CONV:-}" ]; then
	B=/tmp/conv-bench-build
	cmake -S "$REPO" -B "$B" -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build "$B" -j"$(nproc)" --target conv >/dev/null
	CONV="$B/conv"
fi
export DEBUGINFOD_URLS=
CACHE="$WORK/cache"

: > "$WORK/scale.txt"
for d in $DURATIONS; do
	data="$DATA_DIR/scale-$d.data"
	[ -r "$data" ] || "$HERE/record.sh" -d "$d" "$data" >&2
	cat "$data" > /dev/null
	"$CONV" -q --cache-dir "$CACHE" --stats="$WORK/stats-$d.json" -o "$WORK/out" "$data" || true
	for mode in j2 j1 n; do
		case $mode in
		j2) args=(-j2 --cache-dir "$CACHE") ;;
		j1) args=(-j1 --cache-dir "$CACHE") ;;
		n) args=(-n) ;;
		esac
		for r in $(seq 1 "$ROUNDS"); do
			/usr/bin/time -f "%e %U %S %M" -o "$WORK/t" "$CONV" -q "${args[@]}" -o "$WORK/out" "$data" ||
				echo "scale.sh: conv failed on $data" >&2
			echo "$d $mode $(stat -c %s "$data") $(tail -1 "$WORK/t")" >> "$WORK/scale.txt"
		done
	done
done

python3 - "$WORK" <<'EOF'
import json, os, sys
work = sys.argv[1]
rows = {}
for line in open(os.path.join(work, "scale.txt")):
    d, mode, size, wall, user, sys_, rss = line.split()
    e = rows.setdefault((d, mode), {"size": int(size), "runs": []})
    e["runs"].append((float(wall), float(user) + float(sys_), int(rss) / 1024))
durs = sorted({d for d, _ in rows}, key=float)
out = []
print("%-6s %-4s %8s %9s %9s %8s %8s %8s %8s %9s %9s" % (
    "dur s", "mode", "MB", "samples", "stacks", "wall s", "CPU s", "MB/s", "RSS MB", "time x", "RSS x"))
base = {}
for d in durs:
    st = {}
    try:
        st = json.load(open(os.path.join(work, "stats-%s.json" % d)))
    except (OSError, ValueError):
        pass
    for mode in ("j2", "j1", "n"):
        e = rows.get((d, mode))
        if not e:
            continue
        best = min(e["runs"])
        mb = e["size"] / 1e6
        rss = max(r[2] for r in e["runs"])
        b = base.setdefault(mode, (mb, best[0], rss))
        rec = {"duration": float(d), "mode": mode, "mb": mb, "samples": st.get("samples_total"),
               "unique_stacks": st.get("unique_stacks"), "wall_s": best[0], "cpu_s": best[1],
               "mb_per_s": mb / best[0], "rss_mb": rss, "size_ratio": mb / b[0],
               "time_ratio": best[0] / b[1], "rss_ratio": rss / b[2]}
        out.append(rec)
        print("%-6s %-4s %8.1f %9s %9s %8.3f %8.2f %8.0f %8.1f %5.2fx/%-3.1f %5.2fx" % (
            d, mode, mb, rec["samples"], rec["unique_stacks"], best[0], best[1], mb / best[0], rss,
            rec["time_ratio"], rec["size_ratio"], rec["rss_ratio"]))
print("\n(time x / size: time at this size over the smallest's, then the size ratio;"
      " RSS x: peak memory over the smallest's)")
for mode in ("j2", "n"):
    r = [x for x in out if x["mode"] == mode]
    if len(r) >= 2:
        a, z = r[0], r[-1]
        print("%s: size x%.1f -> time x%.2f, RSS x%.2f, distinct stacks x%.2f" % (
            mode, z["size_ratio"], z["time_ratio"], z["rss_ratio"],
            (z["unique_stacks"] or 0) / max(a["unique_stacks"] or 1, 1)))
j = {x["duration"]: x for x in out if x["mode"] == "j2"}
k = {x["duration"]: x for x in out if x["mode"] == "j1"}
for d in sorted(j):
    if d in k:
        print("-j2 vs -j1 at %.1f MB: %.3f s vs %.3f s (%.2fx)" % (
            j[d]["mb"], j[d]["wall_s"], k[d]["wall_s"], k[d]["wall_s"] / j[d]["wall_s"]))
json.dump(out, open(os.path.join(work, "scale.json"), "w"), indent=1)
EOF
