#!/usr/bin/env python3
"""conv's flame graph in a real browser, on recordings of the repository.

For the bundled sample (symbols from samples/debug: inline frames, file:line),
tests/fixtures/multi.data (two events: a view selector), tracepoint.data
(sched_switch samples and off-CPU time in nanoseconds) and syswide.data (kernel
and user code), it runs `CONV -q --offline -F folded,html --stats`, checks
the page's data (its views: one per event with samples, off-CPU time in
nanoseconds; each view's total equal to --stats'), takes the four
names with the most samples in the folded stacks (counted once per stack
they are in: the widest frames) and runs flame_browser.py on the page:
headless Chromium, network off, the names drawn, a search and a zoom that
change what is drawn (read from the DOM), hover details, the views, and a
screenshot (WORKDIR/NAME.png); tracepoint.data's stacks are one frame deep,
so it is checked by its data only. It also checks that the page is self-contained
(no src= or href= to another place) and that a second conversion writes the
same bytes.

usage: test_flame.py CONV WORKDIR
Exit 1 on a failure; 77 (skipped) when Chromium is not installed (the pages are checked first).
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import testlib as t  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CONV, WORK = sys.argv[1], sys.argv[2]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def hot_names(folded, n=4):
    """The n names in the most samples, each counted once per stack it is in."""
    total = collections.Counter()
    for ln in open(folded, encoding="utf-8", errors="surrogateescape"):
        stack, _, count = ln.rstrip("\n").rpartition(" ")
        for name in set(stack.split(";")):
            total[name] += int(count)
    return [k for k, _ in sorted(total.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]


# without Chromium the page is still checked; the test then says skipped for the browser part
have_browser = os.path.exists(CHROMIUM)
browsed = 0
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
cases = [
    ("sample", os.path.join(REPO, "samples", "perf.data"), ["-d", os.path.join(REPO, "samples", "debug")]),
    ("multi", os.path.join(REPO, "tests", "fixtures", "multi.data"), []),
    ("tracepoint", os.path.join(REPO, "tests", "fixtures", "tracepoint.data"), ["--browser=no"]),
    ("syswide", os.path.join(REPO, "tests", "fixtures", "syswide.data"), []),
]
for name, path, opts in cases:
    base = os.path.join(WORK, name)
    browser = "--browser=no" not in opts
    opts = [o for o in opts if o != "--browser=no"]
    r = subprocess.run([CONV, "-q", "--offline", *opts, "-F", "folded,html", "--stats=" + base + ".json",
                        "-o", base, path],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    if not t.check("%s: conv writes the folded stacks and the page" % name, r.returncode == 0,
                   r.stderr.decode(errors="replace")[-400:]):
        continue
    page = open(base + ".html", "rb").read()
    st = json.loads(open(base + ".json").readline())
    m = re.search(rb'<script type="application/json" id="conv-data">(.*?)</script>', page, re.S)
    data = json.loads(m.group(1)) if m else {"views": []}
    want = [(k, "samples", v) for k, v in st["samples"].items() if v]
    if st["off_cpu"]["intervals"]:
        want.append(("off-cpu", "nanoseconds", st["off_cpu"]["nanoseconds"]))
    got = [(v["name"], v["unit"], v["total"]) for v in data["views"]]
    t.check("%s: the page's views are the events with samples and their totals %s" % (name, want),
            got == want, got)
    t.check("%s: the page refers to nothing outside it" % name,
            not re.search(rb"""(src|href)\s*=\s*["']?(?!data:|#)[a-z]*:?//""", page, re.I))
    r2 = subprocess.run([CONV, "-q", "--offline", *opts, "--html", base + ".again.html", path],
                        stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    t.check("%s: a second conversion writes the same page" % name,
            r2.returncode == 0 and open(base + ".again.html", "rb").read() == page)
    if not browser or not have_browser:
        continue
    names = hot_names(base + ".folded")
    b = subprocess.run([sys.executable, os.path.join(HERE, "flame_browser.py"), base + ".html",
                        base + ".png", *names], stdin=subprocess.DEVNULL, capture_output=True, timeout=240)
    out = b.stdout.decode(errors="replace") + b.stderr.decode(errors="replace")
    if b.returncode == 77:
        print("SKIP %s: %s" % (name, out.strip()))
        continue
    browsed += 1
    t.check("%s: in Chromium, %s drawn, search, zoom, hover, views, screenshot" % (name, names),
            b.returncode == 0, out[-800:])
    for ln in out.splitlines():
        print("   " + ln)
if not have_browser:
    t.skip_all("%s is not installed (apt-get install chromium): the pages were checked, not drawn" % CHROMIUM)
if not browsed:
    t.skip_all("Chromium could not draw any page")
t.finish()
