"""A tiny trained run and its index for the tests of `wscsl explore`, and the server started on a
port the system chooses. Used by test_server.py and test_browser.py.

The folder: 24 PNG pictures (red, green or blue; five sizes of square), an attribute CSV with
`color` and `size` (8 pictures a split), a DiscoverNet run of one epoch trained on it, and an index
of the folder; on demand a second method's run and index (`second_run`: ASEN, whose attention maps
the explorer shows) and an index of the test split (`split_index`).
"""
import csv
import os
import re
import shutil
import signal
import struct
import subprocess
import zlib

COLORS = {"red": (220, 30, 30), "green": (30, 200, 30), "blue": (30, 30, 220)}


def write_png(path, pixels, width, height):
    """An 8-bit RGB PNG of `pixels`, rows of (r, g, b) tuples."""
    raw = b"".join(b"\0" + bytes(v for p in row for v in p) for row in pixels)

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body +
                struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2,
                                                               0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def square(color, size, width=16):
    """A white picture with a centred square of `size` pixels of `color`."""
    low = (width - size) // 2
    return [[COLORS[color] if low <= x < low + size and low <= y < low + size else (255, 255, 255)
             for x in range(width)] for y in range(width)]


def make_folder(folder, images=24):
    """The pictures and attributes.csv; {file: {"color": …, "size": …}} of every picture."""
    labels = {}
    rows = [["file", "split", "color", "size"]]
    for i in range(images):
        color = list(COLORS)[i % 3]
        size = 4 + 2 * (i % 4)
        name = f"{'a' if i % 2 else 'b'}/{i}.png"
        write_png(os.path.join(folder, "images", name), square(color, size), 16, 16)
        split = ["train", "val", "test"][3 * i // images]
        rows.append([name, split, color, str(size)])
        labels[os.path.realpath(os.path.join(folder, "images", name))] = {"color": color,
                                                                          "size": str(size)}
    with open(os.path.join(folder, "attributes.csv"), "w", newline="") as f:
        csv.writer(f).writerows(rows)
    return labels


PIPELINE = """[dataset]
type = "image_folder"
root = "{folder}/images"
attributes = "{folder}/attributes.csv"
image_size = 8
cache_dir = "{work}/cache"
train_triplets = 16
val_triplets = 8
test_triplets = 8
[backbone]
type = "convnet"
width = 4
depth = 1
embedding_dim = 6
[condition_module]
type = "{module}"
{module_options}
[[losses]]
type = "margin"
[[evaluators]]
type = "alignment"
[trainer]
epochs = 1
batch_size = 4
threads = 1
seed = 1
device = "cpu"
"""


class Fixture:
    """The work folder (made afresh), its picture folder, run and index."""

    def __init__(self, wscsl, plugins, work):
        self.wscsl, self.work = wscsl, os.path.abspath(work)
        self.env = dict(os.environ, WSCSL_PLUGIN_PATH=plugins)
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work)
        self.folder = os.path.join(self.work, "folder")
        self.labels = make_folder(self.folder)
        self.run, self.index = self.train_and_index("discovernet", "discovernet")

    def train_and_index(self, name, module, module_options=""):
        """A run of `module` on the folder, work/NAME, and its index of the folder, NAME/index."""
        pipeline = os.path.join(self.work, f"{name}.toml")
        with open(pipeline, "w") as f:
            f.write(PIPELINE.format(folder=self.folder, work=self.work, module=module,
                                    module_options=module_options))
        run = os.path.join(self.work, name)
        self.check("train", pipeline, "--run-dir", run)
        index = os.path.join(self.work, f"{name}.index")
        self.check("index", run, "--images", os.path.join(self.folder, "images"), "--out", index)
        return run, index

    def second_run(self):
        """An ASEN run (told each triplet's condition; attending over the convnet's 8×8 feature
        map, which gives its attention maps) and its index of the folder."""
        return self.train_and_index("asen", "asen",
                                    "attribute_dim = 8\ncommon_dim = 8\nembedding_dim = 8")

    def split_index(self):
        """An index of the first run's test split (`wscsl index --split test`)."""
        index = os.path.join(self.work, "split.index")
        self.check("index", self.run, "--split", "test", "--out", index)
        return index

    def check(self, *arguments):
        done = subprocess.run([self.wscsl, *arguments], env=self.env, capture_output=True,
                              text=True, timeout=300)
        if done.returncode != 0:
            raise AssertionError(f"wscsl {' '.join(arguments)} failed:\n{done.stdout}{done.stderr}")
        return done.stdout

    def serve(self, *arguments):
        return Server(self, arguments)


class Server:
    """`wscsl explore … --port 0`, its port read from its first line; stop() sends Ctrl-C."""

    def __init__(self, fixture, arguments):
        self.process = subprocess.Popen([fixture.wscsl, "explore", *arguments, "--port", "0"],
                                        env=fixture.env, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True)
        line = self.process.stdout.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not found:
            self.process.kill()
            raise AssertionError(f"wscsl explore did not say where it serves: {line!r}"
                                 f"{self.process.stdout.read()}")
        self.port = int(found.group(1))
        self.url = f"http://127.0.0.1:{self.port}/"

    def stop(self, timeout=10):
        """Ctrl-C; the exit status and the rest of the output."""
        self.process.send_signal(signal.SIGINT)
        rest = self.process.communicate(timeout=timeout)[0]
        return self.process.returncode, rest

    def __enter__(self):
        return self

    def __exit__(self, *_):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
