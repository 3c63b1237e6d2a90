#!/usr/bin/env python3
"""tracefmt's field texts against `perf script -F trace`, on a recording made now.

usage: compare_perf.py TFMT_TOOL WORKDIR

Records sched:sched_switch and sched:sched_wakeup system-wide, and
raw_syscalls:sys_enter plus syscalls:sys_enter_openat of one command, then for
every sample compares each field tfmt renders with the value perf prints after
"name=" (when perf's line shows the field that way). The syscall pseudo-field
must name syscalls:sys_enter_X's X, and name a syscall for raw_syscalls.
Exit 77 when perf cannot record tracepoints here (not root, no tracefs).
"""
import os
import re
import shutil
import subprocess
import sys


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)


def record(work, name, args):
    data = os.path.join(work, name)
    r = subprocess.run(["perf", "record", "-q", "-o", data] + args,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0 or not os.path.exists(data):
        skip(f"perf record {' '.join(args)} failed: {r.stderr.strip()[:200]}")
    return data


def perf_lines(data):
    out = subprocess.run(["perf", "script", "-i", data, "-F", "event,trace"],
                         capture_output=True, text=True, check=True).stdout
    return [l for l in out.splitlines() if l.strip()]


def tfmt_lines(tool, data):
    out = subprocess.run([tool, "print", data], capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def parse_tfmt(line):
    """'sys:name f1=v1 f2=v2': values may hold spaces, so split at ' fN=' of known names."""
    name, _, rest = line.partition(" ")
    return name, rest


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    tool, work = sys.argv[1], sys.argv[2]
    if shutil.which("perf") is None:
        skip("no perf")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    files = [
        record(work, "sched.data", ["-e", "sched:sched_switch", "-e", "sched:sched_wakeup",
                                    "-a", "--", "sleep", "0.2"]),
        record(work, "sys.data", ["-e", "raw_syscalls:sys_enter", "-e",
                                  "syscalls:sys_enter_openat", "--", "ls", "/"]),
    ]
    checked = mismatched = samples = 0
    for data in files:
        plines = perf_lines(data)
        tlines = tfmt_lines(tool, data)
        if len(plines) != len(tlines):
            print(f"{data}: perf shows {len(plines)} samples, tfmt {len(tlines)}")
            return 1
        for pl, tl in zip(plines, tlines):
            samples += 1
            ev, rest = parse_tfmt(tl)
            # the fields tfmt printed, in order: "name=value" with value up to the next field
            names = re.findall(r"(?:^| )([A-Za-z_][A-Za-z0-9_]*)=", rest)
            vals = {}
            pos = 0
            for i, n in enumerate(names):
                start = rest.index(n + "=", pos) + len(n) + 1
                end = rest.index(" " + names[i + 1] + "=", start) if i + 1 < len(names) else len(rest)
                vals[n] = rest[start:end]
                pos = end
            if ev not in pl:
                print(f"event differs: perf '{pl}' tfmt '{tl}'")
                mismatched += 1
                continue
            for n, v in vals.items():
                if n == "syscall":
                    if ev.startswith("syscalls:sys_enter_"):
                        checked += 1
                        if v != ev[len("syscalls:sys_enter_"):]:
                            print(f"syscall {v!r} for {ev}")
                            mismatched += 1
                    elif v == "<?>":
                        print(f"no syscall name: {tl}")
                        mismatched += 1
                    continue
                m = re.search(r"(?:^|[\s:])" + re.escape(n) + "=", pl)
                if not m:
                    continue  # perf's line does not show the field as name=value
                checked += 1
                if not pl[m.end():].startswith(v) or (
                        len(pl) > m.end() + len(v) and not pl[m.end() + len(v)].isspace()):
                    print(f"{n}: tfmt {v!r}, perf line '{pl.strip()}'")
                    mismatched += 1
    print(f"{samples} samples, {checked} field values compared, {mismatched} differ")
    return 1 if mismatched or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
