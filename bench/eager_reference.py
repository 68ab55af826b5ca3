#!/usr/bin/python3
"""PyTorch eager beside wscsl: the same net, batch and data, trained step by step in Python, for
scripts/gpu_run.sh's speed rows (docs/benchmarks.md, "GPU speed").

The data is what `wscsl export` wrote (docs/datasets.md): the images that filenames.json lists
(images/<split>/<id>.png, the line number being the image id) and the training triplets of
tripletlists/<condition>_tripletlist_train.txt ("anchor far close"): the pixels wscsl trains on in
the same run (scripts/gpu_run.sh), and for the default net its very triplets. The images are decoded once into a uint8 array in host
memory (as wscsl's image store holds them); every step gathers its 64 triplets' images by role,
converts them to float32 on the CPU (/255, and for 112 px ImageNet's normalisation and a flip with
probability ½, as `image_folder` does), copies them to the device as wscsl does (on a GPU from
pinned memory, without blocking, as PyTorch's DataLoader(pin_memory=True) with .to(non_blocking=True)
does; wscsl reads its next batch while the step computes, this loop between steps), and takes a step: φ of each role in its own call (batch-norm statistics per role, as
wscsl's trainer), DiscoverNet-Set's fused distances, the margin loss, Adam. The loss is read back
every step, as wscsl reads it for its log.

Models (the modules of bench/torchscript_equivalents.py, imported, not copied):
  default   convnet (width 16, depth 3, strided stages, 64-d φ) + DiscoverNet-Set, 32-px images;
            examples/pipelines/default.toml
  resnet18  the CSN / DiscoverNet ResNet-18 trunk (torchvision's resnet18 without layer4, 7×7
            average pool, Linear(256, 64); random initialisation) + DiscoverNet-Set at 112 px
Both: K = 4 embeddings (the four conditions), margin 0.2, Adam (lr 1e-3, β 0.9 / 0.999); the
set module's g and anchors untrained (buffers), as in the default pipeline.

With --precision bf16-mixed the forward and the loss run under torch.autocast in bfloat16 (the
weights, gradients and Adam's state in float32, the loss cast to float32 before backward), as
wscsl's trainer.precision = "bf16-mixed".

With --nproc N > 1 (on the CPU) it is PyTorch's DistributedDataParallel, as wscsl's `--nproc N`:
N processes (torch.multiprocessing.spawn) joined over Gloo, each taking an equal share of every
batch of 64 on --threads threads, backbone and set module wrapped in one DDP module
(gradient_as_bucket_view, as wscsl's Reducer; broadcast_buffers off, as wscsl shares no buffers
during a step without synchronised batch norm), the whole batch's loss summed over the processes
while backward runs (as wscsl reports it). Rank 0 times and prints.

It warms up, then times N steps with torch.cuda.synchronize() around them (on a GPU), and prints
one JSON line: model, device, steps, seconds, steps_per_s, data_s (the part of those seconds spent
making batches on the CPU and copying them), torch's version, first and last loss.

Usage: eager_reference.py EXPORT_DIR --model default|resnet18 [--device cuda|cpu] [--steps N]
                          [--warmup N] [--batch 64] [--threads T] [--seed S]
                          [--precision 32|bf16-mixed] [--nproc N]
"""
import argparse
import glob
import json
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torchscript_equivalents import ConvNet, DiscoverNetSet  # noqa: E402

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


class ResNet18Trunk(torch.nn.Module):
    """backbone/resnet18_trunk: torchvision's ResNet-18 up to layer3, a 7×7 average pool and
    fc_embed, initialised as the plugin does (normal(0, √(2/fan_out)) convolutions)."""

    def __init__(self, dim: int = 64):
        super().__init__()
        import torchvision

        net = torchvision.models.resnet18(weights=None)
        self.features = torch.nn.Sequential(net.conv1, net.bn1, net.relu, net.maxpool, net.layer1,
                                            net.layer2, net.layer3)
        for m in self.features.modules():
            if isinstance(m, torch.nn.Conv2d):
                torch.nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
        self.pool = torch.nn.AvgPool2d(7)
        self.fc_embed = torch.nn.Linear(256, dim)

    def forward(self, images):
        return self.fc_embed(self.pool(self.features(images)).flatten(1))


def load_images(export, size):
    """The training images of the export, by image id, as uint8 [N, 3, size, size]: PIL's RGB,
    the shorter side resized to `size` (bilinear, antialiased) and centre-cropped, as wscsl's image
    datasets do."""
    from PIL import Image

    names = [line.strip() for line in open(os.path.join(export, "filenames.json")) if line.strip()]
    images = np.zeros((len(names), 3, size, size), dtype=np.uint8)
    for i, name in enumerate(names):
        path = os.path.join(export, "images", name)
        if not os.path.exists(path):  # filenames.json names images relative to images/<split>?
            path = os.path.join(export, name)
        img = Image.open(path).convert("RGB")
        if img.size != (size, size):
            w, h = img.size
            scale = size / min(w, h)
            img = img.resize((max(size, round(w * scale)), max(size, round(h * scale))),
                             Image.BILINEAR)
            left, top = (img.size[0] - size) // 2, (img.size[1] - size) // 2
            img = img.crop((left, top, left + size, top + size))
        images[i] = np.asarray(img, dtype=np.uint8).transpose(2, 0, 1)
    return torch.from_numpy(images)


def load_triplets(export):
    """Every training triplet of the export's lists, as [T, 3] (anchor, close, far) image ids."""
    rows = []
    for path in sorted(glob.glob(os.path.join(export, "tripletlists", "*_tripletlist_train.txt"))):
        for line in open(path):
            parts = line.split()
            if len(parts) >= 3:
                a, far, close = (int(p) for p in parts[:3])
                rows.append((a, close, far))
    if not rows:
        sys.exit(f"eager_reference: {export}/tripletlists has no training triplets")
    return torch.tensor(rows, dtype=torch.long)


def make_batch(images, triplets, step, batch, normalize, flip, generator):
    """The float32 images of batch `step` by role, on the CPU."""
    rows = triplets[(torch.arange(batch) + step * batch) % triplets.size(0)]
    out = []
    for role in range(3):
        x = images.index_select(0, rows[:, role]).float().div_(255)
        if flip:
            flipped = torch.rand(x.size(0), generator=generator) < 0.5
            x[flipped] = x[flipped].flip(3)
        if normalize:
            mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
            std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
            x = (x - mean) / std
        out.append(x)
    return out


class TripletDistances(torch.nn.Module):
    """The backbone on each role and the set module's fused distances: the one module that
    DistributedDataParallel wraps (it sees one forward per backward)."""

    def __init__(self, backbone, module):
        super().__init__()
        self.backbone, self.module = backbone, module

    def forward(self, anchor, close, far):
        phi_a, phi_c, phi_f = self.backbone(anchor), self.backbone(close), self.backbone(far)
        return fused_distances(self.module, phi_a, phi_c, phi_f)


def fused_distances(module, phi_a, phi_c, phi_f):
    """DiscoverNet's Eq. 6: Σ_k p_k ‖ψ_k(a) − ψ_k(x)‖₂ for x = close and far."""
    p = module.triplet_weights(phi_a, phi_c, phi_f)
    psi_a, psi_c, psi_f = module.embed(phi_a), module.embed(phi_c), module.embed(phi_f)
    d_close = ((psi_a - psi_c).pow(2).sum(2).sqrt() * p).sum(1)
    d_far = ((psi_a - psi_f).pow(2).sum(2).sqrt() * p).sum(1)
    return d_close, d_far


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("export", help="a folder `wscsl export` wrote")
    parser.add_argument("--model", choices=["default", "resnet18"], default="default")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--steps", type=int, default=300, help="timed steps")
    parser.add_argument("--warmup", type=int, default=None, help="steps before timing "
                        "(default: a fifth of --steps, at least 5)")
    parser.add_argument("--batch", type=int, default=64, help="triplets per step")
    parser.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: keep)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--precision", choices=["32", "bf16-mixed"], default="32")
    parser.add_argument("--nproc", type=int, default=1,
                        help="processes of a DistributedDataParallel job over Gloo (CPU only)")
    parser.add_argument("--port", type=int, default=29533, help="the job's rendezvous port")
    args = parser.parse_args()
    if args.nproc == 1:
        train(0, args)
        return
    if args.device != "cpu" or args.batch % args.nproc:
        sys.exit("eager_reference: --nproc runs on --device cpu, with --batch a multiple of it")
    import torch.multiprocessing as mp
    mp.spawn(train, args=(args,), nprocs=args.nproc)


def train(rank, args):
    """The run of process `rank` of args.nproc."""
    warmup = args.warmup if args.warmup is not None else max(5, args.steps // 5)
    if args.nproc > 1:
        import torch.distributed as dist
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(args.port))
        dist.init_process_group("gloo", rank=rank, world_size=args.nproc)
    share = args.batch // args.nproc
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        sys.exit("eager_reference: --device cuda, and this PyTorch sees no GPU")
    torch.manual_seed(args.seed)
    generator = torch.Generator().manual_seed(args.seed)

    if args.model == "default":
        size, normalize, flip = 32, False, False
        backbone = ConvNet(width=16, depth=3, dim=64)
    else:
        size, normalize, flip = 112, True, True
        backbone = ResNet18Trunk(dim=64)
    module = DiscoverNetSet(d=64, k=4)
    backbone.to(device).train()
    module.to(device).train()
    trainable = [p for p in list(backbone.parameters()) + list(module.parameters())
                 if p.requires_grad]
    distances = TripletDistances(backbone, module)
    if args.nproc > 1:
        distances = torch.nn.parallel.DistributedDataParallel(
            distances, broadcast_buffers=False, gradient_as_bucket_view=True)
    optimiser = torch.optim.Adam(trainable, lr=1e-3, betas=(0.9, 0.999))
    images = load_images(args.export, size)
    triplets = load_triplets(args.export)
    margin = 0.2

    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    data_seconds = 0.0

    def step(i):
        nonlocal data_seconds
        start = time.perf_counter()
        batch = make_batch(images, triplets, i, args.batch, normalize, flip, generator)
        batch = [x[rank * share:(rank + 1) * share] for x in batch]
        if device.type == "cuda":
            batch = [x.pin_memory() for x in batch]
        anchor, close, far = (x.to(device, non_blocking=True) for x in batch)
        data_seconds += time.perf_counter() - start
        with torch.autocast(device.type, dtype=torch.bfloat16,
                            enabled=args.precision == "bf16-mixed"):
            d_close, d_far = distances(anchor, close, far)
            loss = F.margin_ranking_loss(d_far, d_close, torch.ones_like(d_far), margin=margin)
        loss = loss.float()
        optimiser.zero_grad(set_to_none=False)
        if args.nproc > 1:
            whole = loss.detach() / args.nproc
            summing = dist.all_reduce(whole, async_op=True)
        loss.backward()
        if args.nproc > 1:
            summing.wait()
            loss = whole
        optimiser.step()
        return loss.item()

    first = None
    for i in range(warmup):
        loss = step(i)
        first = loss if first is None else first
    sync()
    if args.nproc > 1:
        dist.barrier()
    data_seconds = 0.0
    start = time.perf_counter()
    for i in range(warmup, warmup + args.steps):
        loss = step(i)
    sync()
    if args.nproc > 1:
        dist.barrier()
    seconds = time.perf_counter() - start
    if rank > 0:
        return
    print(json.dumps({
        "model": args.model, "precision": args.precision, "device": str(device),
        "steps": args.steps, "warmup": warmup,
        "batch": args.batch, "seconds": round(seconds, 6),
        "steps_per_s": round(args.steps / seconds, 4), "data_s": round(data_seconds, 6),
        "torch": torch.__version__, "threads": torch.get_num_threads(), "nproc": args.nproc,
        "images": int(images.size(0)), "triplets": int(triplets.size(0)),
        "loss_first": first, "loss_last": loss}))


if __name__ == "__main__":
    main()
