#!/usr/bin/env python3
"""`wscsl explore`'s server against a tiny trained run: its API answers (neighbours under every
condition, framed against the attribute CSV), hostile requests each refused with a status and one
sentence within a bound, 2,000 requests from 16 loopback connections, `--static`, and Ctrl-C; nothing
is written to the run or the index. Queries by file name and by an image given on the command line
(served and `--static`), an index of the test split labelled by file and attribute, and a
comparison answering on the same conditions in the same order.

Usage: test_server.py WSCSL PLUGIN_DIR WORK_DIR
"""
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
import zlib

from explore_fixture import Fixture, square, write_png

BOUND_S = 5.0  # every answer, refusals included, comes within this
failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)
        print(f"FAIL: {message}")


def raw(port, request_bytes, read_timeout=BOUND_S):
    """Sends bytes as they are (no client normalisation); (status, body, seconds)."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=read_timeout) as s:
        try:
            s.sendall(request_bytes)
        except OSError:
            pass  # the server may answer and close before a large body is sent
        answer = b""
        try:
            while chunk := s.recv(65536):
                answer += chunk
        except (ConnectionResetError, socket.timeout):
            pass
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1]) if head.startswith(b"HTTP/1.1 ") else 0
    return status, body.decode("utf-8", "replace"), time.monotonic() - start


def get(port, target, method="GET", body=None, headers=None):
    start = time.monotonic()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=BOUND_S * 6)
    c.request(method, target, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data, time.monotonic() - start


def snapshot(folder):
    """Every file under `folder` with its size and modification time."""
    out = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            st = os.lstat(path)
            out[os.path.relpath(path, folder)] = (st.st_size, st.st_mtime_ns)
    return out


def check_neighbours(fx, port):
    status, body, _ = get(port, "/api/summary")
    expect(status == 200, f"/api/summary answered {status}")
    side = json.loads(body)["sides"][0]
    conditions = [c["condition"] for c in side["alignment"]["conditions"]]
    expect(side["rows"] == 24, f"the summary names {side['rows']} rows, not 24")
    expect(set(conditions) == {"color", "size"}, f"conditions {conditions}, not color and size")
    status, body, _ = get(port, "/api/gallery?q=red&limit=100")
    gallery = json.loads(body)
    expect(gallery["matches"] == 8, f"'red' matched {gallery['matches']} images, not 8")
    expect(all(i["attributes"]["color"] == "red" for i in gallery["items"]),
           "an image the gallery found for 'red' is not red")
    for row in (0, 7):
        status, body, _ = get(port, f"/api/neighbours?row={row}&k=5")
        answer = json.loads(body)["sides"][0]
        query = fx.labels[answer["query"]["label"]]
        expect([c["condition"] for c in answer["conditions"]] == conditions,
               f"row {row}: columns {[c['condition'] for c in answer['conditions']]}")
        for column in answer["conditions"]:
            found = column["neighbours"]
            expect(len(found) == 5, f"row {row}, {column['condition']}: {len(found)} neighbours")
            expect(all(n["row"] != row for n in found), f"row {row} is its own neighbour")
            expect(column["attention"] is None,
                   f"row {row}, {column['condition']}: DiscoverNet has no attention maps, yet "
                   f"the answer has {column['attention']}")
            distances = [n["distance"] for n in found]
            expect(distances == sorted(distances), f"row {row}: distances not ascending")
            for n in found:
                truth = fx.labels[n["label"]][column["condition"]] == query[column["condition"]]
                expect(n["same"] is truth, f"row {row}, {column['condition']}, {n['label']}: "
                       f"framed {n['same']}, the CSV says {truth}")


def check_hostile(fx, port):
    outside = os.path.join(fx.work, "outside.png")
    write_png(outside, square("red", 4), 16, 16)
    os.symlink(outside, os.path.join(fx.run, "escape.png"))
    # (request bytes, the status it must get, a word its sentence must hold)
    cases = [
        (b"GET /run/0/../../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", 403, "not a file"),
        (b"GET /run/0/%2e%2e/%2e%2e/etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", 403, "not a file"),
        (b"GET /run/0//etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", 403, "not a file"),
        (b"GET /run/0/escape.png HTTP/1.1\r\nHost: x\r\n\r\n", 403, "not a file"),
        (b"GET /run/0/checkpoints HTTP/1.1\r\nHost: x\r\n\r\n", 403, "not a file"),
        (b"GET /run/7/results.json HTTP/1.1\r\nHost: x\r\n\r\n", 400, "side=7"),
        (b"GET /run/0/no-such.png HTTP/1.1\r\nHost: x\r\n\r\n", 404, "no file"),
        (b"GET /api/neighbours?row=abc HTTP/1.1\r\nHost: x\r\n\r\n", 400, "row=abc"),
        (b"GET /api/neighbours?row=99999 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "0 to 23"),
        (b"GET /api/neighbours?row=1&k=0 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "k=0"),
        (b"GET /api/neighbours?row=1&k=100000 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "1 to 100"),
        (b"GET /api/neighbours?row=1&conditions=nope HTTP/1.1\r\nHost: x\r\n\r\n", 400, "'nope'"),
        (b"GET /api/gallery?limit=-1 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "limit=-1"),
        (b"GET /api/image?row=24 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "row=24"),
        (b"GET /api/neighbours?row=%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400, "target"),
        (b"GET /api/nothing HTTP/1.1\r\nHost: x\r\n\r\n", 404, "nothing"),
        (b"GET /etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", 404, "no page"),
        (b"DELETE / HTTP/1.1\r\nHost: x\r\n\r\n", 405, "GET"),
        (b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 431, "header"),
        (b"POST /api/neighbours HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n" +
         b"x" * 65536, 413, "16777216 bytes"),
        (b"POST /api/neighbours HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", 415,
         "the dropped image: "),
        (b"POST /api/neighbours HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 400, "body"),
    ]
    # A PNG whose header announces 10⁵ × 10⁵ pixels: refused before anything is decoded.
    header = b"IHDR" + (100000).to_bytes(4, "big") * 2 + b"\x08\x02\0\0\0"
    bomb = (b"\x89PNG\r\n\x1a\n\0\0\0\r" + header +
            (zlib.crc32(header) & 0xFFFFFFFF).to_bytes(4, "big") +
            b"\0\0\0\0IEND" + (zlib.crc32(b"IEND") & 0xFFFFFFFF).to_bytes(4, "big"))
    cases.append((b"POST /api/neighbours HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" %
                  len(bomb) + bomb, 415, "pixels"))
    for request, status, word in cases:
        got, body, seconds = raw(port, request + b"" if b"Connection" in request else
                                 request.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n", 1))
        shown = request[:60]
        expect(got == status, f"{shown}: answered {got}, not {status}: {body.strip()}")
        expect(word in body, f"{shown}: the answer {body.strip()!r} does not say '{word}'")
        expect(body.count("\n") == 1, f"{shown}: the answer is not one line: {body!r}")
        expect(seconds < BOUND_S, f"{shown}: answered after {seconds:.1f} s")
    status, body, _ = get(port, "/run/0/resolved.toml")
    expect(status == 200 and b"discovernet" in body, f"the run's resolved.toml: {status}")
    os.remove(os.path.join(fx.run, "escape.png"))


def check_upload(fx, port):
    path = os.path.join(fx.work, "query.png")
    write_png(path, square("blue", 8), 16, 16)
    with open(path, "rb") as f:
        status, body, _ = get(port, "/api/neighbours?k=3", "POST", f.read(),
                              {"Content-Type": "image/png"})
    expect(status == 200, f"a dropped PNG answered {status}: {body[:200]}")
    columns = json.loads(body)["sides"][0]["conditions"]
    expect(len(columns) == 2 and all(len(c["neighbours"]) == 3 for c in columns),
           "a dropped PNG did not get 3 neighbours per condition")


def check_load(port, requests=2000, connections=16):
    latencies, errors = [], []
    lock = threading.Lock()

    def worker(seed):
        rng = random.Random(seed)
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for _ in range(requests // connections):
            target = rng.choice([f"/api/neighbours?row={rng.randrange(24)}&k=5",
                                 "/api/gallery?offset=0&limit=48",
                                 f"/api/image?row={rng.randrange(24)}", "/app.js"])
            start = time.monotonic()
            try:
                c.request("GET", target)
                r = c.getresponse()
                r.read()
                ok = r.status == 200
            except OSError as e:
                ok, c = False, http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                target += f" ({e})"
            with lock:
                latencies.append(time.monotonic() - start)
                if not ok:
                    errors.append(target)
        c.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(connections)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - start
    latencies.sort()
    p50 = statistics.median(latencies) * 1000
    p99 = latencies[int(0.99 * (len(latencies) - 1))] * 1000
    print(f"load: {len(latencies)} requests from {connections} connections in {wall:.1f} s, "
          f"{len(errors)} failed, p50 {p50:.1f} ms, p99 {p99:.1f} ms")
    expect(len(latencies) == requests, f"{len(latencies)} of {requests} requests were made")
    expect(not errors, f"{len(errors)} requests failed under load, e.g. {errors[:3]}")


def check_static(fx):
    out = os.path.join(fx.work, "static")
    fx.check("explore", fx.index, "--static", out, "--query", "0", "--query", "5", "-k", "4")
    page = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    expect('id="wscsl-data"' in page and 'src="app.js"' not in page,
           "the static page does not embed its data and script")
    expect(os.path.exists(os.path.join(out, "images", "0-0.png")), "images/0-0.png is missing")
    inside = os.path.join(fx.run, "static")
    done = subprocess.run([fx.wscsl, "explore", fx.index, "--static", inside], env=fx.env,
                          capture_output=True, text=True, timeout=120)
    expect(done.returncode != 0 and "writes nothing to a run" in done.stderr,
           f"--static into the run was not refused: {done.returncode} {done.stderr}")
    expect(not os.path.exists(inside), "--static into the run wrote the folder")


def check_queries(fx, port, photo):
    """A query by a file's name, by an image given with --query, and names that are neither."""
    status, body, _ = get(port, "/api/summary")
    given = json.loads(body)["queries"]
    expect([q["row"] for q in given] == [None], f"the summary's queries {given}")
    status, body, _ = get(port, "/api/neighbours?query=a/3.png&k=3")
    answer = json.loads(body) if status == 200 else {}
    expect(status == 200 and answer["sides"][0]["query"]["label"].endswith("/images/a/3.png"),
           f"query=a/3.png: {status} {body[:200]}")
    status, body, _ = get(port, "/api/neighbours?query=photo.png&k=3")
    answer = json.loads(body) if status == 200 else {}
    expect(status == 200 and answer["sides"][0]["query"]["row"] is None and
           answer["key"] == os.path.realpath(photo),
           f"query=photo.png (given with --query): {status} {body[:200]}")
    status, body, _ = get(port, "/api/image?query=photo.png")
    expect(status == 200 and body.startswith(b"\x89PNG"), f"the given photo's picture: {status}")
    for name, word in (("nope.png", "neither a row"), ("/etc/passwd", "neither a row"),
                       ("99", "no row 99")):
        status, body, _ = get(port, f"/api/image?query={name}")
        expect(status == 400 and word in body.decode(), f"query={name}: {status} {body[:200]}")


def check_split_and_compare(fx):
    """An index of the test split names its rows by file and frames them by the CSV; compared
    with the folder's index, both answer the chosen conditions in the first one's order."""
    split = fx.split_index()
    train_image = os.path.join(fx.folder, "images", "a", "1.png")  # of the train split
    with fx.serve(split, "--compare", fx.index, "--query", train_image) as server:
        status, body, _ = get(server.port, "/api/gallery?limit=100")
        items = json.loads(body)["items"]
        expect(0 < len(items) <= 8 and all(i["label"] in fx.labels and i["attributes"] for i in items),
               f"the split index's gallery: {[(i['label'], i['attributes']) for i in items]}")
        order = json.loads(get(server.port, "/api/summary")[1])["conditions"]
        for conditions, want in (("", order), ("size", ["size"]), ("size,color", order)):
            status, body, _ = get(server.port, f"/api/neighbours?row=2&k=4&conditions={conditions}")
            answer = json.loads(body)
            expect(answer["conditions"] == want, f"conditions={conditions}: {answer['conditions']}")
            query = fx.labels[answer["sides"][0]["query"]["label"]]
            for side in answer["sides"]:
                expect([c["condition"] for c in side["conditions"]] == want,
                       f"conditions={conditions}: a side answered {side}")
                expect(side["query"]["label"] == answer["sides"][0]["query"]["label"],
                       "the compared index was not asked for the same image")
                for c in side["conditions"]:
                    for n in c["neighbours"]:
                        truth = fx.labels[n["label"]][c["condition"]] == query[c["condition"]]
                        expect(n["same"] is truth, f"{c['condition']}, {n['label']}: framed "
                               f"{n['same']}, the CSV says {truth}")
        # An image of the dataset outside the split: its attributes known, its neighbours framed.
        answer = json.loads(get(server.port, "/api/neighbours?query=a/1.png&k=3")[1])
        query = answer["sides"][0]["query"]
        expect(query["row"] is None and query["attributes"] == fx.labels[os.path.realpath(
            train_image)], f"the train image as a query of the test split's index: {query}")
        expect(all(n["same"] is not None for c in answer["sides"][0]["conditions"]
                   for n in c["neighbours"]), "the train image's neighbours are not framed")
        links = [s["link"] for s in json.loads(get(server.port, "/api/summary")[1])["sides"]]
        expect(len(set(links)) == 2 and all(l.startswith("discovernet.") for l in links),
               f"two indexes of one run have the links {links}")
        server.stop()


def check_static_queries(fx, photo):
    """--static with a file name and an image outside the index as queries; a name that several
    files of an index have is refused naming them."""
    out = os.path.join(fx.work, "static_queries")
    fx.check("explore", fx.index, "--static", out, "--query", "a/3.png", "--query", photo,
             "--condition", "size", "-k", "2")
    page = open(os.path.join(out, "index.html"), encoding="utf-8").read()
    data = json.loads(page.split('id="wscsl-data">', 1)[1].split("</script>", 1)[0])
    expect([i["row"] is None for i in data["gallery"]] == [False, True] and
           data["conditions"] == ["size"], f"--static's queries {data['gallery']}")
    expect(os.path.exists(os.path.join(out, "images", "query-0.png")),
           "the photo outside the index has no picture")
    twice = os.path.join(fx.work, "twice")
    for copy in ("x", "y"):
        write_png(os.path.join(twice, copy, "a", "3.png"), square("red", 4), 16, 16)
    fx.check("index", fx.run, "--images", twice, "--out", os.path.join(fx.work, "twice.index"))
    done = subprocess.run([fx.wscsl, "explore", os.path.join(fx.work, "twice.index"), "--static",
                           os.path.join(fx.work, "static_twice"), "--query", "a/3.png"],
                          env=fx.env, capture_output=True, text=True, timeout=120)
    expect(done.returncode != 0 and "holds 2 files of that name" in done.stderr and
           "x/a/3.png" in done.stderr, f"an ambiguous name: {done.returncode} {done.stderr}")
    notes = os.path.join(fx.work, "notes.txt")
    with open(notes, "w") as f:
        f.write("not an image\n")
    for query, words in (("nope.png", "neither a row"), (notes, "notes.txt")):
        done = subprocess.run([fx.wscsl, "explore", fx.index, "--query", query], env=fx.env,
                              capture_output=True, text=True, timeout=120)
        expect(done.returncode != 0 and words in done.stderr and
               done.stderr.strip().count("\n") == 0,
               f"--query {query} was not refused in one sentence: {done.returncode} {done.stderr}")


def main(wscsl, plugins, work):
    fx = Fixture(wscsl, plugins, work)
    before = snapshot(fx.run), snapshot(fx.index)
    photo = os.path.join(fx.work, "photo.png")
    write_png(photo, square("green", 6), 16, 16)
    check_static(fx)
    check_static_queries(fx, photo)
    done = subprocess.run([fx.wscsl, "explore", fx.run], env=fx.env, capture_output=True,
                          text=True, timeout=60)
    expect(done.returncode == 1 and "is a run without an index" in done.stderr,
           f"a run without an index: {done.returncode} {done.stderr}")
    with fx.serve(fx.index, "--query", photo) as server:
        check_neighbours(fx, server.port)
        check_queries(fx, server.port, photo)
        check_hostile(fx, server.port)
        check_upload(fx, server.port)
        check_load(server.port)
        start = time.monotonic()
        status, rest = server.stop()
        expect(status == 0 and "explore: stopped" in rest,
               f"Ctrl-C: exit status {status}, output {rest!r}")
        expect(time.monotonic() - start < BOUND_S, "Ctrl-C took longer than the bound")
    after = snapshot(fx.run), snapshot(fx.index)
    expect(before == after, "the run or the index changed while it was explored")
    check_split_and_compare(fx)
    print(f"{len(failures)} failures" if failures else "every check passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
