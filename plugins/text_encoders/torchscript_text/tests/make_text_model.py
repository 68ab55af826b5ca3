#!/usr/bin/env python3
"""Writes the text model the torchscript_text test loads, and what Python computes with it.

Usage: make_text_model.py <output directory>
Writes model.pt (a scripted character-trigram bag: each text, padded with a space on both sides,
counts its trigrams hashed into 32 buckets; the mean count vector goes through Linear(32, 6) and
tanh), texts.txt (the test texts, one per line), expected.npy (the model's output on them in eval
mode, float32 [B, 6]) and scale.npy (|W| |x| + |b| per output, the magnitudes the float32 sums
involve, from which the test derives its tolerance).
"""
import pathlib
import sys
from typing import List

import numpy as np
import torch

BUCKETS = 32
DIM = 6
TEXTS = ["Red dress", "black leather boots, size 9", "a", "Hello, wörld!", "scarf scarf scarf"]


class TrigramBag(torch.nn.Module):
    buckets: int

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(BUCKETS, DIM)
        self.buckets = BUCKETS

    @torch.jit.export
    def bags(self, texts: List[str]) -> torch.Tensor:
        counts = torch.zeros(len(texts), self.buckets, device=self.linear.weight.device)
        for i, text in enumerate(texts):
            padded = " " + text + " "
            n = len(padded) - 2
            for j in range(n):
                h = (ord(padded[j]) * 961 + ord(padded[j + 1]) * 31 + ord(padded[j + 2])) % self.buckets
                counts[i, h] += 1.0 / n
        return counts

    def forward(self, texts: List[str]) -> torch.Tensor:
        return torch.tanh(self.linear(self.bags(texts)))


def main():
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model = torch.jit.script(TrigramBag())
    model.eval()
    torch.jit.save(model, str(out / "model.pt"))
    with torch.no_grad():
        expected = model(TEXTS)
        x = model.bags(TEXTS)
        scale = x.abs().mm(model.linear.weight.abs().t()) + model.linear.bias.abs()
    (out / "texts.txt").write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    np.save(out / "expected.npy", expected.numpy().astype(np.float32))
    np.save(out / "scale.npy", scale.numpy().astype(np.float32))


if __name__ == "__main__":
    main()
