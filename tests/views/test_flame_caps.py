#!/usr/bin/env python3
"""The flame graph's caps on recordings made to overload it (issue 32, case 8).

Three perf.data files are written here (hostile_pages.py): "deep", 300 stacks
of 8183 frames under a context marker (8184 call-chain entries, the most a
SAMPLE record of 64 KiB holds), each its own from frame 6513 on: a call tree
of 507 k nodes (its page was 4-29 MB and Chromium took minutes); "wide",
200 000 distinct leaf functions under main <- work, one sample each; "rows",
300 stacks of 60 frames each its own from frame 7: 15 907 nodes, within the
caps, each 4 px wide: more boxes than one draw puts in the DOM.

Per input, `CONV -q --offline -F folded,html --stats=S` (one run, both outputs),
and on what it wrote:
  * the page holds at most 100 000 entries per view, 1 024 frames of a stack
    plus the box above them, and at most 8 MB;
  * "deep" and "wide" say what the caps left out; "rows" leaves nothing out;
  * what it holds adds up: every node's value is its call path's in the folded
    stacks, a parent's value is its children's (boxes included) plus its own
    samples, the boxes hold what the page says it left out, and the nodes kept
    and left out (narrow, past the node cap, deeper than the depth cap) are the
    call tree's nodes counted from the folded stacks; the view's total is the
    folded stacks' sum and --stats' sample count;
  * the folded stacks are not capped: a line per stack, the deepest 8183 frames;
  * in headless Chromium (tests/views/cdp.py, offline, 1280x800) the page opens
    within 60 s, says what was left out (the counts, and that the folded stacks
    and pprof have everything), draws the box that stands for it, at most
    10 000 frame boxes, with no page error and no request but the file; on
    "rows" it says the rows it did not draw, and a click on one stack's frame
    draws that stack.
The browser checks are skipped (counted) without /usr/bin/chromium ($CHROMIUM).

usage: test_flame_caps.py CONV WORKDIR
"""
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
sys.path.insert(0, HERE)
import testlib as t  # noqa: E402
import hostile_pages  # noqa: E402

CONV, WORK = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
MAX_NODES, MAX_DEPTH, MAX_DRAWN, MAX_PAGE = 100000, 1024, 10000, 8 << 20
LOAD_TIMEOUT = 60


def page_data(path):
    page = open(path, "rb").read()
    m = re.search(rb'<script type="application/json" id="conv-data">(.*?)</script>', page, re.S)
    return len(page), json.loads(m.group(1)) if m else None


def folded_tree(path):
    """The call tree of folded stacks: (children {(parent, name): id}, value [id], self [id], lines,
    deepest, total); node 0 is the root."""
    kids, value, own = {}, [0], [0]
    lines = deepest = total = 0
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for ln in f:
            stack, _, count = ln.rstrip("\n").rpartition(" ")
            n = int(count)
            names = stack.split(";")
            lines += 1
            total += n
            deepest = max(deepest, len(names))
            node = 0
            value[0] += n
            for name in names:
                key = (node, name)
                nxt = kids.get(key)
                if nxt is None:
                    nxt = kids[key] = len(value)
                    value.append(0)
                    own.append(0)
                node = nxt
                value[node] += n
            own[node] += n
    return kids, value, own, lines, deepest, total


def check_view(name, data, v, tree, capped):
    """The page's view against the folded stacks' call tree."""
    kids, value, own, _lines, _deepest, total = tree
    S, FR = data["strings"], data["frames"]
    f, d, vals = v["f"], v["d"], v["v"]
    om = v.get("omitted") or {}
    boxes = {b[0]: b for b in v.get("boxes", [])}
    t.check("%s: the page's total is the folded stacks' (%d)" % (name, total), v["total"] == total,
            v["total"])
    if capped:
        t.check("%s: the page says what its caps left out" % name, bool(om) and bool(boxes), om)
    else:
        t.check("%s: within the caps, the page leaves nothing out but gaps and says nothing" % name,
                not om and not boxes, om)
    bad_path = bad_kind = real = 0
    path = []                    # (page index, tree node or None) root first
    child_sum = {-1: 0}          # page index (-1: the root) -> its children's values
    own_of = {-1: own[0]}        # page index -> its own samples in the folded stacks
    for i in range(len(f)):
        while len(path) > d[i]:
            path.pop()
        parent_page, parent_tree = path[-1] if path else (-1, 0)
        child_sum[parent_page] = child_sum.get(parent_page, 0) + vals[i]
        fr = FR[f[i]]
        if i in boxes:
            bad_kind += fr[5] != 4
            path.append((i, None))
            continue
        bad_kind += fr[5] == 4
        real += 1
        node = kids.get((parent_tree, S[fr[0]])) if parent_tree is not None else None
        if node is None or value[node] != vals[i]:
            bad_path += 1
            node = None
        own_of[i] = own[node] if node is not None else 0
        child_sum.setdefault(i, 0)
        path.append((i, node))
    t.check("%s: every node of the page has its call path's value in the folded stacks" % name,
            not bad_path, "%d differ" % bad_path)
    t.check("%s: boxes (and only they) are of the box kind" % name, not bad_kind, bad_kind)
    narrow, cap, deep = om.get("narrow", [0, 0]), om.get("cap", [0, 0]), om.get("deep", [0, 0])
    # nothing is narrower than one sample in 1/200000 here: no gaps, so the sums are exact
    mism = [i for i, s in child_sum.items() if s + own_of[i] != (total if i < 0 else vals[i])]
    t.check("%s: each parent's value is its children's and boxes' plus its own samples" % name,
            not narrow[0] and not mism, "narrow %s, %d parents differ, e.g. %s" % (narrow, len(mism), mism[:3]))
    box_value = sum(vals[i] for i in boxes)
    t.check("%s: the boxes hold what the caps left out (%d = %d + %d)" % (name, box_value, cap[1], deep[1]),
            box_value == cap[1] + deep[1])
    t.check("%s: the boxes' node counts add up to the nodes the caps left out" % name,
            sum(b[1] for b in boxes.values()) == cap[0] + deep[0])
    n_tree = len(value) - 1
    counted = real + narrow[0] + cap[0] + deep[0]
    t.check("%s: nodes kept %d + left out (narrow %d, cap %d, deep %d) = the call tree's %d" %
            (name, real, narrow[0], cap[0], deep[0], n_tree), counted == n_tree, counted)
    if capped:
        t.check("%s: the deepest stack the page names is the folded stacks' (%s)" % (name, om.get("deepest")),
                om.get("deepest") == tree[4])
    return om


def browse(b, name, html, om, rows):
    import cdp
    url = cdp.file_url(html)
    b.new_page()
    b.navigate(url, timeout=LOAD_TIMEOUT)
    b.wait_for("document.body && document.body.dataset.ready === '1'", timeout=LOAD_TIMEOUT,
               what='body.dataset.ready == "1"')
    info = b.eval("""(() => { const o = document.getElementById('omitted'), r = document.getElementById('rows');
        const fs = [...document.querySelectorAll('#chart .frame')];
        return {omitted: o.hidden ? '' : o.textContent, rows: r.hidden ? '' : r.textContent, drawn: fs.length,
                undrawn: +document.body.dataset.undrawn, ready: window.convReadyMs,
                boxes: fs.filter(e => /^(… |other \\()/.test(e.getAttribute('aria-label') || '')).map(e => e.getAttribute('aria-label'))}; })()""")
    print("   %s in Chromium: ready after %.0f ms, %d boxes drawn, %d not drawn" %
          (name, info["ready"], info["drawn"], info["undrawn"]))
    text = info["omitted"]
    want = ["{:,}".format(n) for n in (om.get("cap", [0])[0], om.get("deep", [0])[0]) if n]
    if om:
        t.check("%s: the page says what it left out (%s nodes) and that the folded stacks and pprof have it"
                % (name, " and ".join(want)),
                all(w in text for w in want) and "folded stacks and pprof" in text, text)
    else:
        t.check("%s: nothing left out, no notice" % name, not text, text)
    t.check("%s: it draws at most %d boxes (%d)" % (name, MAX_DRAWN, info["drawn"]),
            info["drawn"] <= MAX_DRAWN + 1)
    if om:
        t.check("%s: a box for what was left out is drawn" % name, bool(info["boxes"]), info["boxes"][:3])
    extra = [u for u in b.requests if u.split("#")[0] != url and not u.startswith(("data:", "about:"))]
    t.check("%s: no page error, no request but the file" % name, not b.errors and not extra,
            (b.errors[:3], extra[:3]))
    if rows:
        t.check("%s: it says which rows it did not draw" % name,
                info["undrawn"] > 0 and "Not drawn at this zoom" in info["rows"], info["rows"])
        # a frame of one stack of its own (row 9: above the 7 frames all stacks share)
        sel = """[...document.querySelectorAll('#chart .frame')].filter(e => e.dataset.node !== 'root')
                 .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)[0]"""
        draws = b.eval("+document.body.dataset.draws")
        b.click(sel)
        b.wait_for("+document.body.dataset.draws > %d" % draws, timeout=LOAD_TIMEOUT, what="a redraw after the click")
        z = b.eval("[document.body.dataset.zoom, +document.body.dataset.undrawn, document.querySelectorAll('#chart .frame').length,"
                   " document.getElementById('rows').hidden]")
        t.check("%s: a click on a stack's top drawn frame zooms to it and draws all of it (%s)" % (name, z),
                z[0] != "" and z[1] == 0 and z[3] and z[2] >= 3)
    b.close_page()


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    asan = "asan" in subprocess.run(["ldd", CONV], capture_output=True, text=True).stdout
    timeout = 300 if asan else 120
    # name, how it is made, its folded stacks' depth and lines, whether the page's caps bind
    cases = [("deep", hostile_pages.deep, 8183, 300, True), ("wide", hostile_pages.wide, 3, 200000, True),
             ("rows", lambda p: hostile_pages.deep(p, 300, 60, 7, 300), 60, 300, False)]
    pages = []
    for name, make, depth, stacks, capped in cases:
        src = os.path.join(WORK, name + ".data")
        make(src)
        base = os.path.join(WORK, name)
        try:
            r = subprocess.run([CONV, "-q", "--offline", "-F", "folded,html", "--stats=" + base + ".json",
                                "-o", base, src], stdin=subprocess.DEVNULL, capture_output=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired:
            t.check("%s: conv finishes within %d s" % (name, timeout), False)
            continue
        if not t.check("%s: conv writes the folded stacks and the page" % name, r.returncode == 0,
                       r.stderr.decode(errors="replace")[-400:]):
            continue
        size, data = page_data(base + ".html")
        if not t.check("%s: the page has its data" % name, data is not None):
            continue
        v = data["views"][0]
        print("   %s: page %d bytes, %d entries, %d deep" % (name, size, len(v["f"]), max(v["d"]) + 1))
        t.check("%s: the page is at most %d bytes (%d)" % (name, MAX_PAGE, size), size <= MAX_PAGE)
        t.check("%s: a view holds at most %d entries (%d)" % (name, MAX_NODES, len(v["f"])),
                all(len(x["f"]) <= MAX_NODES for x in data["views"]))
        t.check("%s: at most %d frames of a stack and the box above them (%d rows)" % (name, MAX_DEPTH, max(v["d"]) + 1),
                max(v["d"]) <= MAX_DEPTH)
        tree = folded_tree(base + ".folded")
        st = json.loads(open(base + ".json").readline())
        t.check("%s: the folded stacks are not capped: %d lines, the deepest %d frames (%d, %d)" %
                (name, stacks, depth, tree[3], tree[4]), tree[3] == stacks and tree[4] == depth)
        t.check("%s: the folded stacks' sum is --stats' sample count" % name,
                tree[5] == st["samples_total"], (tree[5], st["samples_total"]))
        om = check_view(name, data, v, tree, capped)
        del tree
        pages.append((name, base + ".html", om))
    import cdp
    try:
        b = cdp.Browser(timeout=LOAD_TIMEOUT)
    except cdp.BrowserMissing as e:
        for name, _html, _om in pages:
            t.skip("%s: in Chromium" % name, str(e))
        t.finish()
    try:
        for name, html, om in pages:
            try:
                browse(b, name, html, om, rows=name == "rows")
            except cdp.CDPError as e:
                t.check("%s: Chromium opens the page within %d s" % (name, LOAD_TIMEOUT), False, e)
    finally:
        b.close()
    t.finish()


main()
