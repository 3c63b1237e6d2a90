#!/usr/bin/env python3
"""The folder rules of DEVELOPERS.md ("What each folder may include"), checked.

Every .c and .h file under each folder of conv's code is read, and each
`#include "DIR/..."` must name the folder itself or one the table below
allows (an include without a folder, `#include "x.h"`, is the folder's own
header or one generated into the build for it). A folder with C files that
the table does not list fails too: a new folder needs its rule written down.
Then CMakeLists.txt: each `conv_*` static library's folder is found from its
sources, and every `conv_*` library in its target_link_libraries must be one
of the folders it may include (the libraries are "linked only along these
arrows").

usage: layering.py [REPO]    (default: this checkout)
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testlib as t  # noqa: E402

EVERYTHING = None
# DEVELOPERS.md, "What each folder may include"; a folder may always include itself
ALLOWED = {
    "core": set(),
    "reader": {"core"},
    "procmap": {"reader", "buildid", "core"},
    "buildid": {"core"},
    "symbolize": {"core"},
    "tracefmt": {"core"},
    "unwind": {"core"},
    "model": {"core"},
    "pprofwriter": {"model", "core"},
    "jfrwriter": {"model", "core"},
    "views": {"model", "core"},
    "pprofedit": {"core"},
    "jfredit": {"core"},
    "pipeline": EVERYTHING,
    "cli": EVERYTHING,
}
# not conv's code: free to include what they test or measure
NOT_CODE = {"tests", "bench", "samples", "build", "doc", "scripts", "cmake"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def allows(folder, other):
    rule = ALLOWED[folder]
    return other == folder or rule is EVERYTHING or other in rule


def c_files(repo, folder):
    for root, dirs, files in os.walk(os.path.join(repo, folder)):
        dirs.sort()
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                yield os.path.join(root, f)


def check_includes(repo):
    folders = sorted(d for d in os.listdir(repo)
                     if os.path.isdir(os.path.join(repo, d)) and not d.startswith(".") and d not in NOT_CODE
                     and not d.startswith("build"))
    for folder in folders:
        files = list(c_files(repo, folder))
        if not files:
            continue
        if folder not in ALLOWED:
            t.check("%s/: has a rule in DEVELOPERS.md's table (and this test's)" % folder, False,
                    "%d C files" % len(files))
            continue
        bad = []
        for path in files:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                other = inc.split("/")[0] if "/" in inc else folder
                if inc.startswith("..") or other in ALLOWED and not allows(folder, other) or \
                        other not in ALLOWED and not os.path.exists(os.path.join(os.path.dirname(path), inc)):
                    bad.append("%s includes %s" % (os.path.relpath(path, repo), inc))
        rule = ALLOWED[folder]
        t.check("%s/ includes only %s (%d files)" % (
            folder, "any folder" if rule is EVERYTHING else ", ".join(sorted(rule)) or "itself", len(files)),
            not bad, "; ".join(bad))


def cmake_calls(text, command):
    """(first argument, the other arguments) of each command(...) call, comments removed."""
    text = re.sub(r"#[^\n]*", "", text)
    for m in re.finditer(r"\b%s\s*\(([^)]*)\)" % command, text):
        args = m.group(1).split()
        if args:
            yield args[0], args[1:]


def check_links(repo):
    with open(os.path.join(repo, "CMakeLists.txt")) as f:
        text = f.read()
    folder_of = {}
    for name, args in cmake_calls(text, "add_library"):
        if not name.startswith("conv_"):
            continue
        dirs = {re.sub(r"^\$\{[^}]*\}/", "", a).split("/")[0]
                for a in args if a.endswith(".c")}
        if not t.check("CMake: %s's sources are one folder's" % name, len(dirs) == 1 and dirs <= set(ALLOWED),
                       sorted(dirs)):
            continue
        folder_of[name] = dirs.pop()
    t.check("CMake: the conv_ libraries were found (%d)" % len(folder_of), len(folder_of) >= len(ALLOWED) - 2,
            sorted(folder_of))
    for name, args in cmake_calls(text, "target_link_libraries"):
        if name not in folder_of:
            continue
        folder = folder_of[name]
        deps = [a for a in args if a.startswith("conv_")]
        bad = ["%s (%s/)" % (d, folder_of.get(d, "?")) for d in deps
               if d not in folder_of or not allows(folder, folder_of[d])]
        t.check("CMake: %s (%s/) links only libraries of folders it may include" % (name, folder), not bad,
                ", ".join(bad))


def main():
    repo = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    check_includes(repo)
    check_links(repo)
    t.finish()


main()
