#!/usr/bin/env python3
"""`wscsl explore` in a real browser: Debian's headless Chromium, driven over the DevTools protocol
(python3-websocket). On a tiny trained run it opens the page, clicks a gallery image, waits for the
neighbour columns and checks their count, their condition headings and every neighbour's frame
against the attribute CSV; drops a new image and checks it gets neighbours; reopens the view from
its link with another k, and from a link naming a file; refuses a link made for another index. It
compares two runs (DiscoverNet and ASEN) side by side: every condition a pair of columns, run A
left of run B at one height, in the first run's order, the condition selection applying to both,
and a query image outside the index shown; each of ASEN's columns is headed by its attention map
over the query (the size and the peak the server answered), DiscoverNet's by none. It checks the
labels and frames of an index of the test split, and opens `--static`'s folder of the comparison
from file://, maps included. A screenshot of the comparison is kept as WORK_DIR/explorer.png
(docs/explorer.png).

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


COLUMNS = ("[...document.querySelectorAll('.column[data-side=\"0\"]')].map(c => "
           "({condition: c.dataset.condition, "
           "heading: c.closest('.condition').querySelector('h3').textContent, "
           "neighbours: [...c.querySelectorAll('.neighbour')].map(n => ({label: n.dataset.label, "
           "frame: n.classList.contains('same') ? true : n.classList.contains('different') ? "
           "false : null}))}))")


def check_columns(browser, fx, query_label, k):
    """The columns of side 0: one per condition, k neighbours each, framed as the CSV says."""
    browser.wait_for(f"document.querySelectorAll('.column[data-side=\"0\"] .neighbour').length "
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


# Each column of the comparison: its side, condition and box.
BOXES = ("[...document.querySelectorAll('.column')].map(c => { const r = c.getBoundingClientRect(); "
         "return {side: Number(c.dataset.side), condition: c.dataset.condition, x: r.x, y: r.y, "
         "right: r.right, neighbours: c.querySelectorAll('.neighbour').length}; })")


def check_side_by_side(browser, conditions, k):
    """Every condition a pair of columns, A left of B at one height, the pairs in `conditions`'
    order from left to right, each column k neighbours."""
    browser.wait_for(f"document.querySelectorAll('.column .neighbour').length === "
                     f"{2 * len(conditions) * k}", f"{k} neighbours in 2 × {len(conditions)} columns")
    boxes = browser.evaluate(BOXES)
    assert [(b["condition"], b["side"]) for b in boxes] == \
        [(c, side) for c in conditions for side in (0, 1)], f"columns {boxes}, not {conditions} × A, B"
    for a, b in zip(boxes[::2], boxes[1::2]):
        assert abs(a["y"] - b["y"]) < 1 and a["right"] <= b["x"], \
            f"{a['condition']}: run B's column is not beside run A's: {a}, {b}"
    lefts = [b["x"] for b in boxes]
    assert lefts == sorted(lefts), f"the pairs do not run left to right: {boxes}"


# Each column's attention map: its side, condition, size, peak and whether its picture loaded.
MAPS = ("[...document.querySelectorAll('.column')].map(c => { const m = c.querySelector("
        "'.column-head .attention'); return {side: Number(c.dataset.side), condition: "
        "c.dataset.condition, size: m?.dataset.size ?? null, peak: m?.dataset.peak ?? null, "
        "loaded: !!m && m.querySelector('img').complete && "
        "m.querySelector('img').naturalWidth > 0, missing: c.querySelectorAll('.missing').length};"
        " })")


def check_attention(browser, answer, conditions):
    """Run B's (ASEN's) columns are headed by the attention map the server answered for the query
    (its size and its largest weight's place), over the query's picture; run A's (DiscoverNet,
    no attention maps) by none, and no column says anything is missing."""
    browser.wait_for("[...document.querySelectorAll('.attention img')].every(i => i.complete)",
                     "the attention maps' pictures")
    shown = browser.evaluate(MAPS)
    assert sorted({m["condition"] for m in shown}) == sorted(conditions), shown
    for m in shown:
        assert m["missing"] == 0, f"{m['condition']}: a column says something is missing: {m}"
        if m["side"] == 0:
            assert m["size"] is None, f"DiscoverNet has no attention maps, yet shows {m}"
            continue
        column = next(c for c in answer["sides"][1]["conditions"]
                      if c["condition"] == m["condition"])
        a = column["attention"]
        weights = a["weights"]
        assert len(weights) == a["height"] * a["width"] == 64 and \
            abs(sum(weights) - 1) < 1e-4, f"{m['condition']}: not an 8×8 map summing to 1: {a}"
        peak = weights.index(max(weights))
        assert m["size"] == f"{a['height']}x{a['width']}" and m["loaded"] and \
            m["peak"] == f"{peak // a['width']},{peak % a['width']}", \
            f"{m['condition']}: the page shows {m}, the server answered a peak at {peak}"
    maps = [c["attention"]["weights"] for c in answer["sides"][1]["conditions"]]
    assert len(maps) < 2 or maps[0] != maps[1], "every condition shows the same attention map"


def check_comparison(browser, fx, run_b_index, photo):
    """Two runs side by side on the same conditions in the same order, the selection applying to
    both; a query outside the index shows its picture."""
    with fx.serve(fx.index, "--compare", run_b_index, "--query", photo) as server:
        browser.open(server.url + "?query=a/3.png&k=4")
        order = browser.evaluate("[...document.querySelectorAll('#condition-picks input')]"
                                 ".map(b => b.value)")
        check_side_by_side(browser, order, 4)
        check_columns(browser, fx, browser.evaluate(
            "document.querySelector('.query img').alt"), 4)
        answer = json.load(urllib.request.urlopen(
            server.url + "api/neighbours?query=a%2F3.png&k=4", timeout=30))
        assert all(c["attention"] is None for c in answer["sides"][0]["conditions"]), \
            "DiscoverNet's columns carry attention maps"
        check_attention(browser, answer, order)
        browser.evaluate("window.scrollTo(0, 0)")
        browser.screenshot(os.path.join(fx.work, "explorer.png"))
        browser.click(f'#condition-picks input[value="{order[0]}"]')
        check_side_by_side(browser, order[1:], 4)
        assert f"conditions={order[1]}" in browser.evaluate("location.href"), \
            "the link does not hold the selection"
        browser.open(server.url)  # opens on the photo given with --query, in no index
        browser.wait_for("document.querySelector('.query img')?.complete && "
                         "document.querySelector('.query img').naturalWidth > 0",
                         "the picture of the photo outside the index")
        check_side_by_side(browser, order, 10)
    return order


def main(wscsl, plugins, work):
    if not os.access(CHROMIUM, os.X_OK):
        skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    try:
        import websocket  # noqa: F401
    except ImportError:
        skip("python3-websocket is missing (apt-get install python3-websocket)")
    fx = Fixture(wscsl, plugins, work)
    _, asen_index = fx.second_run()
    split_index = fx.split_index()
    dropped = os.path.join(fx.work, "dropped.png")
    write_png(dropped, square("green", 10), 16, 16)
    static = os.path.join(fx.work, "static")
    fx.check("explore", fx.index, "--compare", asen_index, "--static", static, "--query", "0",
             "--query", dropped, "--condition", "size", "--condition", "color", "-k", "4")
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
            # The link restores the view, here with another k; a link may name the file.
            browser.open(url.replace("k=10", "k=3"))
            check_columns(browser, fx, label, 3)
            name = "/".join(label.split("/")[-2:])
            browser.open(url.replace("query=4", "query=" + name.replace("/", "%2F")))
            check_columns(browser, fx, label, 10)
            # A link made for another index is refused, in one sentence naming it.
            browser.open(re.sub(r"run=[^&]*", "run=elsewhere.0123abcd", url))
            message = browser.evaluate("document.getElementById('message').textContent")
            assert "made for elsewhere.0123abcd" in message and message.endswith("not opened.") and \
                not browser.evaluate("document.querySelectorAll('.neighbour').length"), \
                f"a link for another index was opened: {message!r}"
            browser.open(server.url + "?k=3")
            browser.drop("#drop", dropped)
            browser.wait_for("!!document.querySelector('.query img[alt=\"the dropped image\"]')",
                             "the dropped image's neighbours")
            check_columns(browser, fx, None, 3)
            status, _ = server.stop()
            assert status == 0, f"the server exited with {status} after Ctrl-C"
        order = check_comparison(browser, fx, asen_index, dropped)
        with fx.serve(split_index) as server:
            browser.open(server.url + "?k=3")
            labels = browser.evaluate("[...document.querySelectorAll('#gallery img.thumb')]"
                                      ".map(i => i.alt)")
            assert labels and all(l in fx.labels for l in labels), \
                f"the split index's images are not named by file: {labels}"
            browser.click('#gallery img.thumb[data-row="1"]')
            check_columns(browser, fx, labels[1], 3)
        browser.open("file://" + os.path.join(static, "index.html"))
        browser.click('#gallery img.thumb[data-row="0"]')
        check_side_by_side(browser, order, 4)
        assert browser.evaluate("document.querySelectorAll('.column[data-side=\"1\"] "
                                ".attention canvas').length") == len(order), \
            "the static page shows no attention maps for ASEN's columns"
        browser.click('#gallery img.thumb:not([data-row="0"])')
        browser.wait_for("document.querySelector('.query img')?.naturalWidth > 0 && "
                         "document.querySelector('.query').textContent.includes('dropped.png')",
                         "the static page's view of the photo outside the index")
        check_side_by_side(browser, order, 4)
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
