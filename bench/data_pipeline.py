"""Helpers of bench/data_pipeline.sh.

generate <dir> <n>                  n JPEG files in <dir>/images and <dir>/attributes.csv (once)
dataloader <dir> <size> <batch> <batches> <workers>
                                    images per second of PyTorch's DataLoader over those files
peak <command...>                   runs a command; prints its wall time and the peak RssAnon of
                                    each of its processes named wscsl, in MiB, as JSON
"""
import json
import multiprocessing
import os
import random
import subprocess
import sys
import time

IMAGES_PER_FOLDER = 1000
COLORS = ["red", "green", "blue", "black", "white"]


def image_file(k):
    return f"{k // IMAGES_PER_FOLDER:04d}/{k}.jpg"


def write_images(task):
    from PIL import Image, ImageDraw

    root, first, last = task
    for k in range(first, last):
        rng = random.Random(k)
        width, height = rng.randint(120, 200), rng.randint(120, 200)
        image = Image.new("RGB", (width, height), tuple(rng.randrange(256) for _ in range(3)))
        draw = ImageDraw.Draw(image)
        for _ in range(6):
            x, y = rng.randrange(width), rng.randrange(height)
            draw.ellipse((x, y, x + rng.randint(10, 80), y + rng.randint(10, 80)),
                         fill=tuple(rng.randrange(256) for _ in range(3)))
        path = os.path.join(root, "images", image_file(k))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        image.save(path, quality=85)


def generate(root, n):
    csv = os.path.join(root, "attributes.csv")
    if os.path.exists(csv):
        with open(csv) as f:
            if sum(1 for _ in f) == n + 1:
                return
    chunk = 5000
    tasks = [(root, first, min(n, first + chunk)) for first in range(0, n, chunk)]
    with multiprocessing.Pool(os.cpu_count()) as pool:
        pool.map(write_images, tasks)
    rows = ["file,split,color,size"]
    for k in range(n):
        split = ("train", "train", "train", "val", "test")[k % 5]
        rows.append(f"{image_file(k)},{split},{COLORS[k % len(COLORS)]},{k % 7}")
    with open(csv + ".tmp", "w") as f:
        f.write("\n".join(rows) + "\n")
    os.replace(csv + ".tmp", csv)


def dataloader(root, size, batch, batches, workers):
    import torch
    from PIL import Image
    from torchvision import transforms

    files = []
    with open(os.path.join(root, "attributes.csv")) as f:
        next(f)
        files = [line.split(",", 1)[0] for line in f]
    transform = transforms.Compose([
        transforms.Resize(size), transforms.CenterCrop(size), transforms.ToTensor(),
        transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

    class Folder(torch.utils.data.Dataset):
        def __len__(self):
            return len(files)

        def __getitem__(self, i):
            with Image.open(os.path.join(root, "images", files[i])) as image:
                return transform(image.convert("RGB"))

    torch.set_num_threads(1)
    loader = torch.utils.data.DataLoader(Folder(), batch_size=batch, shuffle=True,
                                         num_workers=workers, drop_last=True)
    it = iter(loader)
    for _ in range(2):  # workers started, first batches in flight
        next(it)
    start = time.perf_counter()
    for _ in range(batches):
        next(it)
    print(f"{batches * batch / (time.perf_counter() - start):.0f}")


def rss_anon_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def descendants(root):
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except OSError:
            continue
    out, unvisited = [], [root]
    while unvisited:
        pid = unvisited.pop()
        out.append(pid)
        unvisited.extend(children.get(pid, []))
    return out


def is_wscsl(pid):
    # The processes --nproc starts run /proc/self/exe: their name is "exe", their binary wscsl.
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe")) == "wscsl"
    except OSError:
        return False


def peak(command):
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peaks = {}
    while process.poll() is None:
        for pid in descendants(process.pid):
            if is_wscsl(pid):
                kib = rss_anon_kib(pid)
                if kib is not None:
                    peaks[pid] = max(peaks.get(pid, 0), kib)
        time.sleep(0.05)
    wall = time.perf_counter() - start
    stderr = process.stderr.read().decode(errors="replace")
    if process.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({process.returncode}):\n{stderr}")
    print(json.dumps({"seconds": round(wall, 2),
                      "rss_anon_mib": sorted(round(k / 1024) for k in peaks.values())}))


def main():
    what, args = sys.argv[1], sys.argv[2:]
    if what == "generate":
        generate(args[0], int(args[1]))
    elif what == "dataloader":
        dataloader(args[0], *map(int, args[1:]))
    elif what == "peak":
        peak(args)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
