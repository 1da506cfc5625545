"""A small W3C WebDriver client for Debian's chromium + chromedriver, from the
standard library only. Used by tests/report/check_page.py to open gpuvet report
pages from file:// in a real headless Chromium, read the browser's console and
network logs, run DOM queries and take screenshots.

Robust on a loaded machine: generous timeouts, and waiting is always for a
condition (chromedriver answering, the document being complete), never a
sleep whose length is the assertion."""
import base64
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


class BrowserError(Exception):
    pass


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Browser:
    def __init__(self, workdir, js=True, width=1280, height=900, timeout=180):
        for exe in (CHROMIUM, CHROMEDRIVER):
            if not os.path.exists(exe):
                raise BrowserError("%s is not installed (make test installs chromium and chromium-driver)" % exe)
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="gv-chrome-", dir=workdir)
        self.port = _free_port()
        self.log = open(os.path.join(self.profile, "chromedriver.log"), "w")
        self.driver = subprocess.Popen([CHROMEDRIVER, "--port=%d" % self.port], stdout=self.log,
                                       stderr=subprocess.STDOUT)
        self.base = "http://127.0.0.1:%d" % self.port
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self._req("GET", "/status", timeout=5).get("ready"):
                    break
            except (OSError, BrowserError):
                pass
            if self.driver.poll() is not None or time.monotonic() > deadline:
                raise BrowserError("chromedriver did not start (see %s)" % self.log.name)
            time.sleep(0.1)  # polling for readiness, not an assertion
        args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-sync", "--disable-component-update",
                "--user-data-dir=" + os.path.join(self.profile, "user-data"),
                "--window-size=%d,%d" % (width, height)]
        if not js:
            args.append("--blink-settings=scriptEnabled=false")
        caps = {"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "pageLoadStrategy": "normal",
            "timeouts": {"pageLoad": timeout * 1000, "script": timeout * 1000},
            "goog:chromeOptions": {"binary": CHROMIUM, "args": args},
            "goog:loggingPrefs": {"browser": "ALL", "performance": "ALL"},
        }}}
        r = self._req("POST", "/session", caps)
        self.session = r.get("sessionId")
        if not self.session:
            raise BrowserError("no session: %r" % (r,))

    def _req(self, method, path, body=None, timeout=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout or self.timeout) as resp:
                out = json.loads(resp.read() or b"{}")
        except urllib.error.HTTPError as e:
            try:
                msg = json.loads(e.read()).get("value", {})
            except ValueError:
                msg = {}
            raise BrowserError("%s %s: %s %s" % (method, path, msg.get("error"), msg.get("message")))
        return out.get("value", out) if path != "/session" else out.get("value", out)

    def cmd(self, method, path, body=None):
        return self._req(method, "/session/%s%s" % (self.session, path), body)

    def cdp(self, cmd, params=None):
        return self.cmd("POST", "/goog/cdp/execute", {"cmd": cmd, "params": params or {}})

    def open(self, path):
        """Loads path from file://; the logs read afterwards are this page's only."""
        url = "file://" + os.path.abspath(path)
        self.logs("browser")
        self.logs("performance")
        self.cmd("POST", "/url", {"url": url})
        return url

    def js(self, script, *args):
        return self.cmd("POST", "/execute/sync", {"script": script, "args": list(args)})

    def logs(self, kind):
        for ep in ("/se/log", "/log"):
            try:
                return self.cmd("POST", ep, {"type": kind})
            except BrowserError:
                continue
        raise BrowserError("chromedriver gives no %s log" % kind)

    def console_problems(self):
        """Console messages of level WARNING or SEVERE (errors, CSP violations)."""
        return [e for e in self.logs("browser") if e.get("level") in ("SEVERE", "WARNING")]

    def requests(self):
        """Every URL asked of the network stack since open(), except those of the
        browser's own pages (documentURL chrome://..., e.g. its new-tab page that
        loads while the first page does)."""
        urls = []
        for e in self.logs("performance"):
            try:
                m = json.loads(e["message"])["message"]
            except (KeyError, ValueError):
                continue
            if m.get("method") != "Network.requestWillBeSent":
                continue
            p = m["params"]
            if p.get("documentURL", "").startswith("chrome://"):
                continue
            urls.append(p["request"]["url"])
        return urls

    def screenshot(self, out_png, width=1280, y=0, max_height=16000):
        """The whole page (beyond the viewport), or max_height of it from y, as a PNG."""
        metrics = self.cdp("Page.getLayoutMetrics")
        size = metrics.get("cssContentSize") or metrics.get("contentSize")
        h = min(int(size["height"]) + 1 - y, max_height)
        shot = self.cdp("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": y, "width": width, "height": h, "scale": 1}})
        data = base64.b64decode(shot["data"])
        with open(out_png, "wb") as f:
            f.write(data)
        return len(data)

    def print_pdf(self, out_pdf):
        """Prints on A4 (210 x 297 mm) as a browser would."""
        r = self.cdp("Page.printToPDF", {"paperWidth": 8.27, "paperHeight": 11.69, "preferCSSPageSize": True,
                                         "printBackground": True})
        data = base64.b64decode(r["data"])
        with open(out_pdf, "wb") as f:
            f.write(data)
        return data

    def close(self, keep_log=False):
        """Ends the browser and removes its profile; keep_log leaves the profile's
        chromedriver.log (after a failure, for reading)."""
        try:
            if getattr(self, "session", None):
                self._req("DELETE", "/session/" + self.session, timeout=60)
        except (OSError, BrowserError):
            pass
        self.driver.terminate()
        try:
            self.driver.wait(30)
        except subprocess.TimeoutExpired:
            self.driver.kill()
            self.driver.wait()
        self.log.close()
        shutil.rmtree(os.path.join(self.profile, "user-data") if keep_log else self.profile,
                      ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        self.close(keep_log=kind is not None)
