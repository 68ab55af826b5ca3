#!/usr/bin/env python3
"""`wscsl explore` in a real browser: Debian's headless Chromium, driven over the DevTools protocol
(python3-websocket). On a tiny trained run it opens the page, clicks a gallery image, waits for the
neighbour columns and checks their count, their condition headings and every neighbour's frame
against the attribute CSV; drops a new image and checks it gets neighbours; reopens the view from
its link with another k; opens two indexes side by side; and opens `--static`'s folder from
file://. A screenshot of the page is kept as WORK_DIR/explorer.png.

Exit status 77 (ctest's SKIP_RETURN_CODE) with the reason where Chromium or python3-websocket is
missing or Chromium cannot start.

Usage: test_browser.py WSCSL PLUGIN_DIR WORK_DIR
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from explore_fixture import Fixture, square, write_png

SKIP = 77
CHROMIUM = os.environ.get("WSCSL_CHROMIUM", "/usr/bin/chromium")


def skip(reason):
    print(f"SKIPPED: {reason}")
    sys.exit(SKIP)


class Browser:
    """Headless Chromium with one page, spoken to over the DevTools protocol."""

    def __init__(self, profile):
        import websocket  # Debian's python3-websocket
        self.process = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-dev-shm-usage",
             "--remote-debugging-port=0", "--remote-allow-origins=*",
             "--window-size=1400,1000", f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        endpoint = None
        while time.monotonic() < deadline and endpoint is None:
            line = self.process.stderr.readline()
            if not line and self.process.poll() is not None:
                break
            found = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if found:
                endpoint = f"http://127.0.0.1:{found.group(1)}"
        if endpoint is None:
            self.close()
            skip("Chromium did not start (no DevTools endpoint within 30 s)")
        # Chromium's later warnings are read and dropped, so that a full pipe never blocks it.
        threading.Thread(target=self.process.stderr.read, daemon=True).start()
        pages = json.load(urllib.request.urlopen(f"{endpoint}/json/list", timeout=10))
        page = next(p for p in pages if p["type"] == "page")
        self.socket = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30,
                                                  suppress_origin=True)
        self.next_id = 0
        self.call("Page.enable")
        self.call("Runtime.enable")

    def call(self, method, **params):
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message["result"]

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression, what, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.evaluate(expression):
                return
            time.sleep(0.05)
        message = self.evaluate("document.getElementById('message')?.textContent")
        raise AssertionError(f"timed out waiting for {what} (the page says: {message!r})")

    def open(self, url):
        self.call("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete' && document.body?.dataset.ready === "
                      "'true'", f"{url} to be ready")

    def centre(self, selector):
        box = self.evaluate(f"(() => {{ const r = document.querySelector({json.dumps(selector)})"
                            ".getBoundingClientRect(); return [r.x + r.width / 2, "
                            "r.y + r.height / 2]; })()")
        return box

    def click(self, selector):
        self.evaluate(f"document.querySelector({json.dumps(selector)}).scrollIntoView()")
        x, y = self.centre(selector)
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                      clickCount=1)

    def drop(self, selector, file):
        x, y = self.centre(selector)
        data = {"items": [], "files": [file], "dragOperationsMask": 1}
        for kind in ("dragEnter", "dragOver", "drop"):
            self.call("Input.dispatchDragEvent", type=kind, x=x, y=y, data=data)

    def screenshot(self, path):
        with open(path, "wb") as f:
            f.write(base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"]))

    def close(self):
        if getattr(self, "socket", None):
            self.socket.close()
        self.process.kill()
        self.process.wait()


COLUMNS = ("[...document.querySelectorAll('.side[data-side=\"0\"] .column')].map(c => "
           "({condition: c.dataset.condition, heading: c.querySelector('h3').textContent, "
           "neighbours: [...c.querySelectorAll('.neighbour')].map(n => ({label: n.dataset.label, "
           "frame: n.classList.contains('same') ? true : n.classList.contains('different') ? "
           "false : null}))}))")


def check_columns(browser, fx, query_label, k):
    """The columns of side 0: one per condition, k neighbours each, framed as the CSV says."""
    browser.wait_for(f"document.querySelectorAll('.side[data-side=\"0\"] .neighbour').length "
                     f"=== {2 * k}", f"{k} neighbours in each of 2 columns")
    columns = browser.evaluate(COLUMNS)
    assert [c["heading"] for c in columns] == ["color", "size"] or \
        sorted(c["heading"] for c in columns) == ["color", "size"], \
        f"headings {[c['heading'] for c in columns]}, not color and size"
    for c in columns:
        assert len(c["neighbours"]) == k, f"{c['condition']}: {len(c['neighbours'])} neighbours"
        for n in c["neighbours"]:
            if query_label is None:
                continue
            truth = fx.labels[n["label"]][c["condition"]] == fx.labels[query_label][c["condition"]]
            assert n["frame"] is truth, (f"{c['condition']}, {n['label']}: framed {n['frame']}, "
                                         f"the CSV says {truth}")
    return columns


def main(wscsl, plugins, work):
    if not os.access(CHROMIUM, os.X_OK):
        skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        import websocket  # noqa: F401
    except ImportError:
        skip("python3-websocket is missing (apt-get install python3-websocket)")
    fx = Fixture(wscsl, plugins, work)
    static = os.path.join(fx.work, "static")
    fx.check("explore", fx.index, "--static", static, "--query", "0", "--query", "3", "-k", "4")
    dropped = os.path.join(fx.work, "dropped.png")
    write_png(dropped, square("green", 10), 16, 16)
    profile = tempfile.mkdtemp(prefix="wscsl-chromium-")
    browser = Browser(profile)
    try:
        with fx.serve(fx.index) as server:
            browser.open(server.url)
            thumbs = browser.evaluate("document.querySelectorAll('#gallery img.thumb').length")
            assert thumbs == 24, f"the gallery shows {thumbs} images, not 24"
            browser.click('#gallery img.thumb[data-row="4"]')
            label = browser.evaluate(
                "document.querySelector('#gallery img.thumb[data-row=\"4\"]').alt")
            check_columns(browser, fx, label, 10)
            url = browser.evaluate("location.href")
            assert "query=4" in url and "k=10" in url, f"the link {url} does not hold the view"
            browser.evaluate("window.scrollTo(0, 0)")
            browser.screenshot(os.path.join(fx.work, "explorer.png"))
            # The link restores the view, here with another k.
            browser.open(url.replace("k=10", "k=3"))
            check_columns(browser, fx, label, 3)
            browser.drop("#drop", dropped)
            browser.wait_for("!!document.querySelector('.query img[alt=\"the dropped image\"]')",
                             "the dropped image's neighbours")
            check_columns(browser, fx, None, 3)
            status, _ = server.stop()
            assert status == 0, f"the server exited with {status} after Ctrl-C"
        with fx.serve(fx.index, "--compare", fx.index) as server:
            browser.open(server.url + "?query=2&k=5")
            browser.wait_for("document.querySelectorAll('.side .column').length === 4",
                             "two sides of two columns")
            check_columns(browser, fx, browser.evaluate(
                "document.querySelector('.side[data-side=\"0\"] .query img').alt"), 5)
        browser.open("file://" + os.path.join(static, "index.html"))
        browser.click('#gallery img.thumb[data-row="3"]')
        check_columns(browser, fx, browser.evaluate(
            "document.querySelector('#gallery img.thumb[data-row=\"3\"]').alt"), 4)
        broken = browser.evaluate("[...document.images].filter(i => i.complete && "
                                  "i.naturalWidth === 0).length")
        assert broken == 0, f"{broken} images of the static page did not load from file://"
    finally:
        browser.close()
        shutil.rmtree(profile, ignore_errors=True)
    print(f"every check passed; screenshot: {os.path.join(fx.work, 'explorer.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
