"""The JDK's jfr tool for tests that call it many times: one JVM that stays
(JfrCollapse.java --serve runs jdk.jfr.internal.tool.Main, what the jfr
launcher runs, once per request), instead of a JDK started per call.

    srv = jfrtool.JfrServer(WORKDIR, "0")
    rc, out, err = srv.run(["summary", path], timeout)   # rc None: timed out (the JVM is killed)
    srv.close()

A server runs one call at a time; give each thread its own. Python 3
standard library only; java (JDK 17) from PATH.
"""
import os
import re
import select
import subprocess
import time

COLLAPSE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "JfrCollapse.java")


class JfrServer:
    """The jfr tool in one JVM that stays (JfrCollapse.java --serve): a call is a line with its
    stdout and stderr files and its arguments, the answer its exit status. A call that outlives
    its timeout kills the JVM; the next call starts another."""

    def __init__(self, work, tag):
        self.work, self.tag, self.p, self.n = work, tag, None, 0

    def run(self, args, timeout, out_path=None):
        """(exit status or None on a timeout, stdout bytes (b"" with out_path), stderr bytes)."""
        self.n += 1
        out = out_path or os.path.join(self.work, "jfr-%s-%d.out" % (self.tag, self.n))
        err = os.path.join(self.work, "jfr-%s-%d.err" % (self.tag, self.n))
        fields = [out, err] + list(args)
        assert not any("\t" in a or "\n" in a for a in fields)
        if self.p is None:
            self.p = subprocess.Popen(["java", "--add-exports", "jdk.jfr/jdk.jfr.internal.tool=ALL-UNNAMED",
                                       COLLAPSE, "--serve"], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        status = None
        try:
            self.p.stdin.write(("\t".join(fields) + "\n").encode())
            self.p.stdin.flush()
            deadline = time.monotonic() + timeout
            fd = self.p.stdout.fileno()
            buf = b""
            while b"\n" not in buf:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([fd], [], [], left)[0]:
                    break
                chunk = os.read(fd, 4096)
                if not chunk:
                    break
                buf += chunk
            m = re.match(rb"# TOOL (-?\d+)\n", buf)
            status = int(m.group(1)) if m else None
        except OSError:
            pass
        if status is None:
            self.close()
        with open(err, "rb") as f:
            e = f.read()
        o = b""
        if not out_path:
            with open(out, "rb") as f:
                o = f.read()
            os.unlink(out)
        os.unlink(err)
        return status, o, e

    def close(self):
        if self.p:
            self.p.kill()
            self.p.wait()
            self.p = None
