#!/usr/bin/env bash
# How fast conv's HTML flame graph (views/flame.html filled by conv) opens in
# headless Chromium. A measurement aid, not a test: it never fails on a number.
#
#   bench/flame.sh FLAME.html [ROUNDS]      (ROUNDS default 5)
#
# Opens the file ROUNDS times, each in a new page of one headless Chromium
# (tests/views/cdp.py: offline, 1280x800), and prints the file size and, per
# round and as min / median:
#   ready    window.convReadyMs: performance.now() (ms since the navigation
#            started) when the page's first draw is done: JSON parsed, trees
#            built, frame boxes in the DOM and laid out; body.dataset.ready
#            turns "1" at that moment;
#   painted  window.convPaintMs: the same clock at the first task after the
#            next animation frame, i.e. about when that draw is on screen.
# Browser start-up is not measured. Exits 77 when /usr/bin/chromium is missing.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: bench/flame.sh FLAME.html [ROUNDS]" >&2
    exit 2
fi
exec python3 "$HERE/../tests/views/cdp.py" bench "$1" "${2:-5}"
