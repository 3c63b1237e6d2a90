#!/usr/bin/env python3
"""A small Chromium driver over the DevTools protocol (CDP), Python stdlib only.

Chromium runs headless with --remote-debugging-pipe: it reads commands from
its fd 3 and writes responses and events to its fd 4, each a JSON message
ended by a NUL byte. One page (target) is attached in "flatten" mode, so its
commands carry a sessionId on the same pipe.

No network: the host resolver maps every name to nothing, a dead proxy takes
whatever is left, and the page's network is emulated offline. Every URL the
page asks for is recorded (Network.requestWillBeSent) so a test can assert
that only the file itself was read; console errors and uncaught exceptions
are recorded too.

Used by flame_browser.py (the view's test) and bench/flame.sh:

    cdp.py bench FILE.html [ROUNDS]   time from navigation start to the
                                      page's window.convReadyMs, per round
"""
import base64
import fcntl
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

# The browser; $CHROMIUM overrides (another build, or a missing path to try the skip).
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


class CDPError(Exception):
    """A command failed, timed out, or the browser went away."""


class BrowserMissing(CDPError):
    pass


class Browser:
    def __init__(self, binary=None, width=1280, height=800, timeout=30.0):
        binary = binary or CHROMIUM
        if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
            raise BrowserMissing(f"{binary} not found (apt-get install chromium)")
        self.timeout = timeout
        self.width, self.height = width, height
        self.profile = tempfile.mkdtemp(prefix="cdp-profile-")
        self.stderr = tempfile.TemporaryFile()
        cmd_r, self._cmd_w = os.pipe()      # we write commands, Chromium reads fd 3
        self._out_r, out_w = os.pipe()      # Chromium writes fd 4, we read

        def child_fds():
            # Move both ends above 10 first: dup2 into 3 must not clobber the
            # other end if the pipe happened to get fd 3 or 4.
            a = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(out_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.close(a)
            os.close(b)

        args = [
            binary, "--headless=new", "--remote-debugging-pipe", "--no-sandbox",
            "--disable-gpu", f"--user-data-dir={self.profile}",
            "--no-first-run", "--no-default-browser-check", "--disable-extensions",
            "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-default-apps", "--disable-breakpad",
            "--metrics-recording-only", "--password-store=basic", "--use-mock-keychain",
            "--mute-audio", "--hide-scrollbars",
            "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication",
            # No name resolves and a dead proxy takes anything else: nothing leaves the machine.
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
            f"--window-size={width},{height}",
            "about:blank",
        ]
        # os.pipe() fds are close-on-exec, so only the dup2'ed 3 and 4 reach Chromium.
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.stderr, preexec_fn=child_fds, close_fds=False)
        os.close(cmd_r)
        os.close(out_w)

        self._lock = threading.Condition()
        self._next_id = 0
        self._results = {}
        self.events = []            # every event, in order: (method, params, sessionId)
        self._closed = False
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()
        self.session = None
        self.requests = []          # URLs the page asked for
        self.errors = []            # console errors and uncaught exceptions, as text
        try:
            self.send("Browser.getVersion", timeout=min(timeout, 20))   # fails fast when the pipe does not work
        except CDPError:
            self.close()
            raise

    # ---- pipe
    def _read_loop(self):
        buf = b""
        try:
            while True:
                chunk = os.read(self._out_r, 1 << 20)
                if not chunk:
                    break
                buf += chunk
                while b"\0" in buf:
                    raw, buf = buf.split(b"\0", 1)
                    self._dispatch(json.loads(raw))
        finally:
            with self._lock:
                self._closed = True
                self._lock.notify_all()

    def _dispatch(self, msg):
        with self._lock:
            if "id" in msg:
                self._results[msg["id"]] = msg
            else:
                method, params = msg.get("method"), msg.get("params", {})
                self.events.append((method, params, msg.get("sessionId")))
                if msg.get("sessionId") == self.session and self.session:
                    self._record(method, params)
            self._lock.notify_all()

    def _record(self, method, params):
        if method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
            self.errors.append(f"console.{params['type']}: {text}")
        elif method == "Runtime.exceptionThrown":
            d = params.get("exceptionDetails", {})
            self.errors.append("exception: " + d.get("exception", {}).get("description", d.get("text", "?")))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            e = params["entry"]
            self.errors.append(f"log ({e.get('source')}): {e.get('text')} {e.get('url', '')}".strip())

    def send(self, method, params=None, session=True, timeout=None):
        """Sends one command and returns its result; raises CDPError on error or timeout."""
        with self._lock:
            if self._closed:
                raise CDPError(f"{method}: browser is gone{self._stderr_tail()}")
            self._next_id += 1
            mid = self._next_id
        msg = {"id": mid, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        data = json.dumps(msg).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self._cmd_w, data):]
        except OSError as e:
            raise CDPError(f"{method}: cannot write to the browser: {e}{self._stderr_tail()}")
        deadline = time.monotonic() + (timeout or self.timeout)
        with self._lock:
            while mid not in self._results:
                left = deadline - time.monotonic()
                if self._closed:
                    raise CDPError(f"{method}: browser closed the pipe{self._stderr_tail()}")
                if left <= 0:
                    raise CDPError(f"{method}: no answer within {timeout or self.timeout:.0f} s")
                self._lock.wait(left)
            res = self._results.pop(mid)
        if "error" in res:
            raise CDPError(f"{method}: {res['error'].get('message')} {res['error'].get('data', '')}".strip())
        return res.get("result", {})

    def _stderr_tail(self):
        try:
            self.stderr.seek(0)
            tail = self.stderr.read().decode(errors="replace").strip().splitlines()[-5:]
            return ("\nchromium stderr:\n  " + "\n  ".join(tail)) if tail else ""
        except (OSError, ValueError):
            return ""

    def wait_event(self, method, after=0, timeout=None, pred=None):
        """Waits for an event of this page numbered >= after in self.events."""
        deadline = time.monotonic() + (timeout or self.timeout)
        with self._lock:
            while True:
                for m, p, s in self.events[after:]:
                    if m == method and s == self.session and (pred is None or pred(p)):
                        return p
                left = deadline - time.monotonic()
                if left <= 0 or self._closed:
                    raise CDPError(f"no {method} within {timeout or self.timeout:.0f} s")
                self._lock.wait(left)

    # ---- page
    def new_page(self):
        """Opens a blank page, attaches to it, and turns on recording and offline mode."""
        tid = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.target = tid
        self.session = self.send("Target.attachToTarget", {"targetId": tid, "flatten": True},
                                 session=False)["sessionId"]
        self.requests, self.errors = [], []
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.send(domain + ".enable")
        self.send("Network.emulateNetworkConditions",
                  {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False})

    def close_page(self):
        if self.session:
            self.send("Target.closeTarget", {"targetId": self.target}, session=False)
            self.session = None

    def navigate(self, url, timeout=None):
        """Loads url and waits for its load event."""
        with self._lock:
            mark = len(self.events)
        res = self.send("Page.navigate", {"url": url})
        if res.get("errorText"):
            raise CDPError(f"navigate {url}: {res['errorText']}")
        self.wait_event("Page.loadEventFired", after=mark, timeout=timeout)

    def eval(self, expr, timeout=None):
        """Evaluates a JS expression in the page (awaiting promises) and returns its value."""
        res = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                             "awaitPromise": True}, timeout=timeout)
        if "exceptionDetails" in res:
            d = res["exceptionDetails"]
            raise CDPError(f"JS error in {expr[:80]!r}: "
                           + d.get("exception", {}).get("description", d.get("text", "?")))
        return res.get("result", {}).get("value")

    def wait_for(self, expr, timeout=10.0, what=None):
        """Polls a JS expression until it is truthy; returns its value."""
        deadline = time.monotonic() + timeout
        while True:
            v = self.eval(expr)
            if v:
                return v
            if time.monotonic() > deadline:
                raise CDPError(f"timed out after {timeout:.0f} s waiting for {what or expr}")
            time.sleep(0.02)

    def centre(self, selector_expr):
        """Scrolls an element (a JS expression giving it) into view; returns its centre (x, y)."""
        r = self.eval(f"""(() => {{ const e = {selector_expr};
            if (!e) return null;
            e.scrollIntoView({{block: "center", inline: "center"}});
            const r = e.getBoundingClientRect();
            return [r.left + r.width / 2, r.top + r.height / 2]; }})()""")
        if r is None:
            raise CDPError(f"no element for {selector_expr}")
        return r

    def mouse_move(self, x, y):
        self.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})

    def click_at(self, x, y):
        self.mouse_move(x, y)
        for t in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent",
                      {"type": t, "x": x, "y": y, "button": "left", "buttons": 1, "clickCount": 1})

    def click(self, selector_expr):
        x, y = self.centre(selector_expr)
        self.click_at(x, y)
        return x, y

    def hover(self, selector_expr):
        x, y = self.centre(selector_expr)
        self.mouse_move(x, y)
        return x, y

    def insert_text(self, text):
        self.send("Input.insertText", {"text": text})

    KEYS = {"Enter": ("Enter", 13, "\r"), "Escape": ("Escape", 27, ""),
            "Backspace": ("Backspace", 8, ""), "a": ("KeyA", 65, "a"), "f": ("KeyF", 70, "f"),
            "/": ("Slash", 191, "/")}

    def key(self, key, ctrl=False, commands=None):
        """Presses and releases one key from KEYS (with Ctrl when ctrl)."""
        code, vk, text = self.KEYS[key]
        base = {"key": key, "code": code, "windowsVirtualKeyCode": vk, "nativeVirtualKeyCode": vk,
                "modifiers": 2 if ctrl else 0}
        down = dict(base, type="keyDown" if text and not ctrl else "rawKeyDown")
        if text and not ctrl:
            down.update(text=text, unmodifiedText=text)
        if commands:
            down["commands"] = commands
        self.send("Input.dispatchKeyEvent", down)
        self.send("Input.dispatchKeyEvent", dict(base, type="keyUp"))

    def screenshot(self, path):
        data = base64.b64decode(self.send("Page.captureScreenshot", {"format": "png"})["data"])
        with open(path, "wb") as f:
            f.write(data)
        return len(data)

    # ---- end
    def close(self):
        try:
            if not self._closed:
                self.send("Browser.close", session=False, timeout=5)
        except CDPError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
        for fd in (self._cmd_w, self._out_r):
            try:
                os.close(fd)
            except OSError:
                pass
        self._reader.join(timeout=5)
        self.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def file_url(path):
    from pathlib import Path
    return Path(path).resolve().as_uri()


def bench(path, rounds):
    """Opens path in a new page `rounds` times; prints the page's own ready time per round."""
    url = file_url(path)
    print(f"file: {path} ({os.path.getsize(path)} bytes)")
    ready, paint = [], []
    with Browser() as b:
        for i in range(rounds):
            b.new_page()
            t0 = time.monotonic()
            b.navigate(url, timeout=120)
            b.wait_for("document.body && document.body.dataset.ready === '1'", timeout=120,
                       what="body.dataset.ready")
            b.wait_for("window.convPaintMs !== undefined", timeout=30, what="window.convPaintMs")
            wall = time.monotonic() - t0
            r = b.eval("[window.convReadyMs, window.convPaintMs, document.querySelectorAll('#chart .frame').length]")
            ready.append(r[0])
            paint.append(r[1])
            print(f"round {i + 1}: ready {r[0]:8.1f} ms  painted {r[1]:8.1f} ms  "
                  f"({r[2]} frames drawn; load seen by the driver after {wall * 1000:.0f} ms)")
            if b.errors:
                print("  page errors: " + "; ".join(b.errors))
            b.close_page()
    print(f"ready:   min {min(ready):.1f} ms  median {statistics.median(ready):.1f} ms")
    print(f"painted: min {min(paint):.1f} ms  median {statistics.median(paint):.1f} ms")


def main(argv):
    if len(argv) >= 3 and argv[1] == "bench":
        try:
            bench(argv[2], int(argv[3]) if len(argv) > 3 else 5)
        except BrowserMissing as e:
            print(f"skipped: {e}", file=sys.stderr)
            return 77
        return 0
    print("usage: cdp.py bench FILE.html [ROUNDS]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
