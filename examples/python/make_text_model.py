#!/usr/bin/python3
"""A text encoder written in PyTorch-Python, scripted for wscsl's `text_encoder/torchscript_text`.

TrigramBag: each text's character trigrams hashed into `--buckets` counts, a linear layer to
`--dim` features, L2-normalised. Tokenising is the module's own business (TorchScript on strings).

    examples/python/make_text_model.py examples/python/trigram_bag.pt [--dim 64]

Then train it (examples/python/title_model.toml names the file):

    build/bin/wscsl train examples/python/title_model.toml --run-dir runs/title_model

Needs Debian's python3-torch (scripts/setup.sh installs it).
"""
import argparse
from typing import List

import torch


class TrigramBag(torch.nn.Module):
    buckets: int

    def __init__(self, buckets: int, dim: int):
        super().__init__()
        self.buckets = buckets
        self.linear = torch.nn.Linear(buckets, dim)

    def forward(self, texts: List[str]) -> torch.Tensor:
        counts = torch.zeros(len(texts), self.buckets, device=self.linear.weight.device)
        for i, text in enumerate(texts):
            padded = " " + text.lower() + " "
            for j in range(len(padded) - 2):
                h = ord(padded[j]) * 961 + ord(padded[j + 1]) * 31 + ord(padded[j + 2])
                counts[i, h % self.buckets] += 1.0
        return torch.nn.functional.normalize(self.linear(counts), dim=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", help="the TorchScript file to write (.pt)")
    parser.add_argument("--buckets", type=int, default=1024, help="hashed trigram buckets")
    parser.add_argument("--dim", type=int, default=64, help="E, the backbone's embedding size")
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.jit.save(torch.jit.script(TrigramBag(args.buckets, args.dim)), args.out)


if __name__ == "__main__":
    main()
