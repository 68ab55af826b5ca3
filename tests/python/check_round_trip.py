#!/usr/bin/python3
"""Checks in Python what wscsl did with two scripted modules: loads the weights `wscsl
export-weights` wrote (with PyTorch's weights-only loader) into the scripted backbone and condition
module, runs them (eval mode) on the test images `wscsl export` wrote, and compares φ and ψ with `wscsl embed`'s files to the
bound of float32 summation order (TOLERANCE).

Usage: check_round_trip.py SCRIPTS_DIR DATA_DIR RUN_DIR
"""
import os
import sys

import numpy as np
import torch
from PIL import Image


# Python and wscsl run the same float32 operations with kernels that may differ (ctest runs wscsl
# again under other CPU capabilities). An element of ψ is accumulated along a path of n
# multiply-adds: the three 3×3 convolutions (3·9 + 16·9 + 32·9), the 4×4 mean pool, the linear
# head (64) and the projection (64) = 603; two orders of a sum of n terms differ by at most
# n·u·Σ|terms| (u = 2^-24), which the test scales by the largest element of the tensor.
PATH_LENGTH = 603
TOLERANCE = PATH_LENGTH * 2.0 ** -24


def load_part(script_file, weights, prefix):
    module = torch.jit.load(script_file)
    state = {k[len(prefix):]: v for k, v in weights.items() if k.startswith(prefix)}
    module.load_state_dict(state, strict=True)
    return module.eval()


def main():
    scripts, data, run = sys.argv[1:]
    # weights_only: the safe loader that PyTorch 2.6 and later use by default, which refuses any
    # pickled object but tensors and plain containers.
    weights = torch.load(os.path.join(run, "weights.pt"), weights_only=True)
    if not isinstance(weights, dict) or not all(
        isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in weights.items()
    ):
        sys.exit("weights.pt is not a plain dict of names and tensors")
    backbone = load_part(os.path.join(scripts, "convnet.pt"), weights, "backbone.")
    module = load_part(os.path.join(scripts, "discovernet_set.pt"), weights, "condition_module.")

    embeddings = os.path.join(run, "embeddings")
    ids = np.load(os.path.join(embeddings, "test_image_ids.npy"))
    # The test split's image ids are its own (0 … M−1), as `wscsl export` names its files.
    images = np.stack([np.asarray(Image.open(os.path.join(data, "images", "test", f"{i}.png"))
                                  .convert("RGB")) for i in ids])
    images = torch.from_numpy(images).permute(0, 3, 1, 2).float() / 255.0
    with torch.no_grad():
        phi = backbone(images)
        psi = module.embed(phi)
    for name, ours in (("phi", phi), ("psi", psi)):
        theirs = torch.from_numpy(np.load(os.path.join(embeddings, f"test_{name}.npy")))
        difference = (ours - theirs).abs().max().item()
        bound = TOLERANCE * theirs.abs().max().item()
        print(f"{name} {list(ours.shape)}: largest difference {difference:.3g} (bound {bound:.3g})")
        if not difference <= bound:
            sys.exit(f"Python's {name} differs from wscsl embed's by {difference}, more than {bound}")


if __name__ == "__main__":
    main()
