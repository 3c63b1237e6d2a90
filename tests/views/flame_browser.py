#!/usr/bin/env python3
"""conv's HTML flame graph (views/flame.html filled with a profile) in a real browser.

usage: flame_browser.py FLAME.html SCREENSHOT.png NAME [NAME...]

NAMEs are functions expected to be drawn at the initial zoom (hot ones; the
caller takes them from conv's folded output). Headless Chromium (cdp.py),
offline, 1280x800:
  1. open the file:// URL, wait for body.dataset.ready == "1";
  2. every NAME is the data-name of a drawn .frame; the page asked for no URL
     but its own (data: and about: aside); no console error, no exception;
  3. search: click #search, type the first NAME: some .frame.match has a
     data-name containing it and #matched shows a share in (0, 100]%; select
     all + Backspace clears it: no .match is left;
  4. zoom: click the widest drawn frame at depth >= 1 that is not full width:
     body.dataset.zoom is its data-node, it is drawn (nearly) full width and
     the drawn set of nodes changed; #reset goes back (zoom "", the same set
     as before); Escape and a click on "all" reset as well;
  5. hover over the first NAME's frame: #details contains its name;
  6. more than one view: switching #view draws another tree, and back;
  7. screenshot of the initial view to SCREENSHOT.png (a PNG, 1280x800).
Prints a short report and exits 0; a failed check exits 1 saying what
differed; exits 77 when /usr/bin/chromium (or $CHROMIUM) is missing.
"""
import json
import os
import re
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

FRAMES = "[...document.querySelectorAll('#chart .frame')]"
DRAWN = f"{FRAMES}.map(e => e.dataset.node)"
DRAWS = "+document.body.dataset.draws"


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def js(s):
    """A Python string as a JS string literal (JSON is a subset)."""
    return json.dumps(s)


def wait_redraw(b, before, what):
    b.wait_for(f"{DRAWS} > {before}", timeout=10, what=f"a redraw after {what}")


def drawn_set(b):
    return set(b.eval(DRAWN))


def run(b, html, png, names):
    url = cdp.file_url(html)
    b.new_page()
    b.navigate(url)
    b.wait_for("document.body && document.body.dataset.ready === '1'", timeout=20,
               what='body.dataset.ready == "1"')
    report = {}

    # 2. names drawn, nothing fetched, no errors
    present = set(b.eval(f"{FRAMES}.map(e => e.dataset.name)"))
    missing = [n for n in names if n not in present]
    check(not missing, f"not drawn: {missing} ({len(present)} distinct names drawn)")
    initial = drawn_set(b)
    report["frames drawn"] = len(initial)

    def no_requests_or_errors(when):
        extra = [u for u in b.requests if u.split("#")[0] != url
                 and not u.startswith(("data:", "about:"))]
        check(not extra, f"{when}: requests other than the file: {extra}")
        check(not b.errors, f"{when}: page errors: {b.errors}")

    no_requests_or_errors("after load")

    # 3. search
    first = names[0]
    b.click("document.getElementById('search')")
    check(b.eval("document.activeElement.id") == "search", "click on #search did not focus it")
    draws = b.eval(DRAWS)
    b.insert_text(first)
    wait_redraw(b, draws, f"typing {first!r} into #search")
    matched_names = b.eval("[...document.querySelectorAll('#chart .frame.match')].map(e => e.dataset.name)")
    check(any(first in n for n in matched_names),
          f"no .frame.match with a data-name containing {first!r} (matched: {matched_names[:10]})")
    text = b.eval("document.getElementById('matched').textContent")
    m = re.search(r"([0-9]+(?:\.[0-9]+)?)%", text or "")
    check(m and 0 < float(m.group(1)) <= 100, f"#matched shows {text!r}, not a share in (0, 100]%")
    report["matched"] = f"{text} for {first!r}"
    draws = b.eval(DRAWS)
    b.key("a", ctrl=True, commands=["selectAll"])
    b.key("Backspace")
    wait_redraw(b, draws, "clearing #search")
    left = b.eval("document.querySelectorAll('.match').length")
    check(left == 0, f"{left} .match elements left after clearing the search")
    check(b.eval("document.getElementById('matched').textContent") == "", "#matched not empty after clearing")

    # 4. zoom: rows are the distinct tops of drawn frames, from the bottom (the root "all")
    cand = b.eval(f"""(() => {{
        const W = document.getElementById('chart').clientWidth;
        const fs = {FRAMES}.map(e => {{ const r = e.getBoundingClientRect();
            return {{node: e.dataset.node, name: e.dataset.name, top: Math.round(r.top + scrollY), w: r.width}}; }});
        const tops = [...new Set(fs.map(f => f.top))].sort((a, b) => b - a);
        let best = null;
        for (const f of fs) {{
            const depth = tops.indexOf(f.top) - 1;
            if (f.node !== 'root' && depth >= 1 && f.w < 0.98 * W && (!best || f.w > best.w))
                best = Object.assign(f, {{depth}});
        }}
        return best && Object.assign(best, {{W}}); }})()""")
    check(cand, "no drawn frame at depth >= 1 narrower than the chart to zoom into")
    sel = f"document.querySelector('#chart .frame[data-node=\"{cand['node']}\"]')"
    draws = b.eval(DRAWS)
    b.click(sel)
    wait_redraw(b, draws, f"clicking node {cand['node']}")
    zoom = b.eval("document.body.dataset.zoom")
    check(zoom == cand["node"], f"clicked node {cand['node']} ({cand['name']!r}), body.dataset.zoom is {zoom!r}")
    w, cw = b.eval(f"[{sel}.getBoundingClientRect().width, document.getElementById('chart').clientWidth]")
    check(w >= 0.97 * cw, f"zoomed frame {cand['node']} is {w:.1f} px wide, the chart {cw} px")
    zoomed = drawn_set(b)
    check(zoomed != initial, "zooming did not change the set of drawn frames")
    report["nodes after zoom"] = f"{len(zoomed)} (zoomed into {cand['name']!r}, depth {cand['depth']})"
    draws = b.eval(DRAWS)
    b.click("document.getElementById('reset')")
    wait_redraw(b, draws, "clicking #reset")
    check(b.eval("document.body.dataset.zoom") == "", "#reset did not clear body.dataset.zoom")
    after = drawn_set(b)
    check(after == initial, f"after #reset the drawn set differs: {len(after ^ initial)} nodes differ")
    # the same with Escape, then with a click on "all"
    for how in ("Escape", "all"):
        draws = b.eval(DRAWS)
        b.click(sel)
        wait_redraw(b, draws, f"clicking node {cand['node']} again")
        draws = b.eval(DRAWS)
        if how == "Escape":
            b.key("Escape")
        else:
            b.click("document.querySelector('#chart .frame[data-node=\"root\"]')")
        wait_redraw(b, draws, how)
        check(b.eval("document.body.dataset.zoom") == "", f"{how} did not reset the zoom")
    check(drawn_set(b) == initial, "after resetting by Escape / 'all' the drawn set differs")

    # 5. hover
    hsel = (f"{FRAMES}.filter(e => e.dataset.name === {js(first)})"
            ".sort((a, b) => b.getBoundingClientRect().width - a.getBoundingClientRect().width)[0]")
    b.hover(hsel)
    det = b.wait_for(f"(d => !d.hidden && d.textContent.includes({js(first)}) && d.innerText)"
                     "(document.getElementById('details'))", timeout=5,
                     what=f"#details to show {first!r}")
    report["hover"] = " | ".join(det.splitlines())[:160]

    # 6. views
    nviews = b.eval("document.getElementById('view').options.length")
    if nviews > 1:
        for i in list(range(1, nviews)) + [0]:
            draws = b.eval(DRAWS)
            b.eval(f"(s => {{ s.value = '{i}'; s.dispatchEvent(new Event('change')); }})(document.getElementById('view'))")
            wait_redraw(b, draws, f"selecting view {i}")
            check(b.eval("document.querySelectorAll('#chart .frame').length") >= 1, f"view {i} draws nothing")
        check(drawn_set(b) == initial, "back in the first view the drawn set differs")
        report["views"] = nviews

    # 7. screenshot of the initial view, no tooltip
    b.mouse_move(2, 2)
    b.eval("window.scrollTo(0, document.documentElement.scrollHeight)")
    size = b.screenshot(png)
    with open(png, "rb") as f:
        head = f.read(24)
    check(head[:8] == b"\x89PNG\r\n\x1a\n", f"{png} is not a PNG")
    wh = struct.unpack(">II", head[16:24])
    check(size > 5000 and wh[0] >= 800, f"{png}: {size} bytes, {wh[0]}x{wh[1]}: too small to be a chart")
    report["screenshot"] = f"{png} ({size} bytes, {wh[0]}x{wh[1]})"
    no_requests_or_errors("at the end")
    return report


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    html, png, names = argv[1], argv[2], argv[3:]
    if not os.path.isfile(html):
        print(f"FAIL: {html} does not exist", file=sys.stderr)
        return 1
    try:
        b = cdp.Browser()
    except cdp.BrowserMissing as e:
        print(f"skipped: {e}", file=sys.stderr)
        return 77
    try:
        report = run(b, html, png, names)
    except (Fail, cdp.CDPError) as e:
        print(f"FAIL: {e}", file=sys.stderr)
        return 1
    finally:
        b.close()
    for k, v in report.items():
        print(f"{k}: {v}")
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
