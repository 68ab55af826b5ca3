#!/usr/bin/python3
"""Re-saves PyTorch weights as a plain dict of tensors in PyTorch's zip format, the form wscsl
reads (LibTorch cannot rebuild an OrderedDict, nor read files saved before PyTorch 1.6).

    scripts/convert-weights.py resnet18-5c106cde.pth resnet18-torchvision.pt
    scripts/convert-weights.py resnet50-19c8e357.pth resnet50-torchvision.pt

The first is what backbone/resnet18_trunk's `weights` reads, the second backbone/resnet50_trunk's
(the file the ASEN and ASEN++ releases load).

    scripts/convert-weights.py --prefix backbone. s1.pt s1-backbone.pt

keeps only the entries under a prefix, without it: the backbone of a `wscsl export-weights` file,
for a run that starts its trunk from another run's (ASEN++'s second stage).

IN is anything torch.load opens that holds a state dict: torchvision's published files, a
model.state_dict() saved with torch.save, or a training checkpoint with a "state_dict" entry
(its "module." prefixes, left by DataParallel, are removed). Needs Debian's python3-torch.
"""
import sys

import torch


def state_dict_of(loaded, source):
    if isinstance(loaded, dict) and "state_dict" in loaded and isinstance(loaded["state_dict"], dict):
        loaded = loaded["state_dict"]
    if not isinstance(loaded, dict):
        sys.exit(f"{source}: holds a {type(loaded).__name__}, not a state dict")
    tensors = {}
    for name, value in loaded.items():
        if not torch.is_tensor(value):
            sys.exit(f"{source}: '{name}' is a {type(value).__name__}, not a tensor")
        tensors[name[len("module."):] if name.startswith("module.") else name] = value.detach().cpu()
    return tensors


def main():
    args = sys.argv[1:]
    prefix = None
    if len(args) == 4 and args[0] == "--prefix":
        prefix, args = args[1], args[2:]
    if len(args) != 2:
        sys.exit("usage: scripts/convert-weights.py [--prefix PREFIX] IN OUT")
    source, target = args
    tensors = state_dict_of(torch.load(source, map_location="cpu", weights_only=True), source)
    if prefix is not None:
        tensors = {name[len(prefix):]: value for name, value in tensors.items()
                   if name.startswith(prefix)}
        if not tensors:
            sys.exit(f"{source}: no entry starts with '{prefix}'")
    torch.save(tensors, target)
    print(f"{target}: {len(tensors)} tensors from {source}")


if __name__ == "__main__":
    main()
