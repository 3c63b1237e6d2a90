#!/usr/bin/env python3
"""conv diff's differential flame graph in a real browser.

usage: diff_browser.py PAGE.html SCREENSHOT.png changed NAME NEW BASE
       diff_browser.py PAGE.html SCREENSHOT.png unchanged NAME
       diff_browser.py PAGE.html SCREENSHOT.png looks points|samples NAME=grew|shrank|same...

First what every flame graph page must do (flame_browser.run: NAME drawn,
nothing requested but the file, no console error or exception, search, zoom,
hover, the two views, a screenshot), then on the NEW view:
  changed:   NAME's widest frame is classed "grew" and drawn red (its
             background's red channel above green and blue by 60 or more);
             hovering it shows both counts, NEW and BASE (as grouped numbers),
             and "points of the share"; in the BASE view it is red too;
  unchanged: no drawn frame is classed grew or shrank, and every frame but
             "all" has the noise colour, in both views;
  looks:     each NAME's widest frame has the class given, in both views,
             and hovering the first NAME in the NEW view gives its change in
             "points of the share" or in samples (--normalize counts).
Exit 0, 1 on a failed check (said), 77 without Chromium.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402
import flame_browser as fb  # noqa: E402

FRAMES = fb.FRAMES


def group(n):
    return "{:,}".format(int(n))


def rgb(css):
    m = re.match(r"rgba?\((\d+), (\d+), (\d+)", css or "")
    return tuple(int(x) for x in m.groups()) if m else None


def set_view(b, i):
    draws = b.eval(fb.DRAWS)
    b.eval(f"(s => {{ s.value = '{i}'; s.dispatchEvent(new Event('change')); }})(document.getElementById('view'))")
    fb.wait_redraw(b, draws, f"selecting view {i}")


def widest(name):
    return (f"{FRAMES}.filter(e => e.dataset.name === {fb.js(name)})"
            ".sort((a, b) => b.getBoundingClientRect().width - a.getBoundingClientRect().width)[0]")


def check_changed(b, name, new, base):
    report = {}
    for view in (0, 1):
        set_view(b, view)
        sel = widest(name)
        cls, bg = b.eval(f"(e => e ? [e.className, getComputedStyle(e).backgroundColor] : null)({sel})") or ("", "")
        c = rgb(bg)
        fb.check("grew" in cls.split(), f"view {view}: {name}'s frame is {cls!r}, not grew")
        fb.check(c and c[0] - max(c[1], c[2]) >= 60, f"view {view}: {name}'s frame is {bg}, not red")
        report[f"view {view} {name}"] = bg
    set_view(b, 0)
    b.hover(widest(name))
    det = b.wait_for(f"(d => !d.hidden && d.textContent.includes({fb.js(name)}) && d.innerText)"
                     "(document.getElementById('details'))", timeout=5, what=f"#details for {name!r}")
    for want in ("NEW: " + group(new), "BASE: " + group(base), "points of the share"):
        fb.check(want in det, f"hover of {name} lacks {want!r}: {det!r}")
    report["hover"] = " | ".join(det.splitlines())[:200]
    return report


def check_unchanged(b):
    noise = None
    for view in (0, 1):
        set_view(b, view)
        looks = b.eval(f"{FRAMES}.filter(e => e.dataset.node !== 'root').map(e => "
                       "[e.dataset.name, e.className, getComputedStyle(e).backgroundColor])")
        moved = [lk for lk in looks if {"grew", "shrank"} & set(lk[1].split())]
        fb.check(not moved, f"view {view}: frames beyond the noise: {moved[:4]}")
        colours = {lk[2] for lk in looks}
        fb.check(len(colours) == 1, f"view {view}: frames in {len(colours)} colours: {sorted(colours)[:4]}")
        noise = noise or colours
    return {"noise colour": sorted(noise)[0] if noise else ""}


def check_looks(b, unit, want):
    report = {}
    for view in (0, 1):
        set_view(b, view)
        for name, look in want:
            cls = b.eval(f"(e => e ? e.className : null)({widest(name)})") or ""
            fb.check(look in cls.split(), f"view {view}: {name}'s frame is {cls!r}, not {look}")
            report[f"view {view} {name}"] = cls
    set_view(b, 0)
    name = want[0][0]
    b.hover(widest(name))
    det = b.wait_for(f"(d => !d.hidden && d.textContent.includes({fb.js(name)}) && d.innerText)"
                     "(document.getElementById('details'))", timeout=5, what=f"#details for {name!r}")
    change = [ln for ln in det.splitlines() if ln.startswith("change: ")]
    ok = change and (("points of the share" in change[0]) if unit == "points"
                     else re.match(r"change: [+\u2212][0-9,]+ samples \(noise \u00b1[0-9,]+", change[0]))
    fb.check(ok, f"hover of {name}: the change is not in {unit}: {change}")
    report["hover"] = " | ".join(det.splitlines())[:200]
    return report


def main(argv):
    looks = len(argv) >= 6 and argv[3] == "looks" and argv[4] in ("points", "samples") and \
        all(re.match(r"^.+=(grew|shrank|same)$", a) for a in argv[5:])
    if looks:
        html, png, mode, unit = argv[1], argv[2], argv[3], argv[4]
        want = [tuple(a.rsplit("=", 1)) for a in argv[5:]]
        name = want[0][0]
    elif len(argv) < 5 or argv[3] not in ("changed", "unchanged") or (argv[3] == "changed" and len(argv) != 7):
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    else:
        html, png, mode, name = argv[1], argv[2], argv[3], argv[4]
    try:
        b = cdp.Browser()
    except cdp.BrowserMissing as e:
        print(f"skipped: {e}", file=sys.stderr)
        return 77
    try:
        report = fb.run(b, html, png, [name])
        if looks:
            report.update(check_looks(b, unit, want))
        elif mode == "changed":
            report.update(check_changed(b, name, int(argv[5]), int(argv[6])))
        else:
            report.update(check_unchanged(b))
        fb.check(not b.errors, f"page errors: {b.errors}")
    except (fb.Fail, cdp.CDPError) as e:
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
