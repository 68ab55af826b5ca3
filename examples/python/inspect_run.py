#!/usr/bin/python3
"""Reads a trained run back in Python and draws what each learned embedding is about.

    examples/python/inspect_run.py RUN [--weights RUN/weights.pt] [--out RUN/embeddings.png]

Uses `wscsl embed RUN --split test` (RUN/embeddings/*.npy) and `wscsl export-weights RUN --out
RUN/weights.pt`. For each embedding ψ_k and each condition c it measures how well ψ_k separates
the condition's values — the ratio of the mean distance between images whose value of c differs
to the mean distance between images that share it (1 = blind to c) — and draws the K × C matrix,
with the norm of each exported tensor of the condition module listed beside it. Needs Debian's
python3-torch and python3-pil.
"""
import argparse
import os

import numpy as np
import torch
from PIL import Image, ImageDraw


def separation(psi, factors, pairs=4000, seed=0):
    """[K, C]: mean distance of pairs differing in c over pairs agreeing in c, under each ψ_k."""
    rng = np.random.default_rng(seed)
    i, j = rng.integers(0, len(psi), size=(2, pairs))
    distances = np.linalg.norm(psi[i] - psi[j], axis=2)  # [pairs, K]
    out = np.ones((psi.shape[1], factors.shape[1]))
    for c in range(factors.shape[1]):
        known = (factors[i, c] >= 0) & (factors[j, c] >= 0)
        same = known & (factors[i, c] == factors[j, c])
        differ = known & (factors[i, c] != factors[j, c])
        if same.any() and differ.any():
            out[:, c] = distances[differ].mean(0) / distances[same].mean(0)
    return out


def draw(matrix, conditions, lines, path):
    cell, left, top = 72, 120, 30
    k, c = matrix.shape
    image = Image.new("RGB", (left + c * cell + 20, top + k * cell + 20 + 14 * len(lines)), "white")
    pen = ImageDraw.Draw(image)
    high = max(matrix.max(), 1.0 + 1e-9)
    for col, name in enumerate(conditions):
        pen.text((left + col * cell + 2, 10), name[:11], fill="black")
    for row in range(k):
        pen.text((10, top + row * cell + cell // 2 - 5), f"psi_{row + 1}", fill="black")
        for col in range(c):
            level = int(255 * (1 - (matrix[row, col] - 1) / (high - 1)))
            x, y = left + col * cell, top + row * cell
            pen.rectangle([x, y, x + cell - 2, y + cell - 2], fill=(255, level, level))
            pen.text((x + 6, y + cell // 2 - 5), f"{matrix[row, col]:.2f}", fill="black")
    for n, line in enumerate(lines):
        pen.text((10, top + k * cell + 10 + 14 * n), line, fill="black")
    image.save(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("--weights", help="default: RUN/weights.pt")
    parser.add_argument("--out", help="default: RUN/embeddings.png")
    args = parser.parse_args()
    folder = os.path.join(args.run, "embeddings")
    psi = np.load(os.path.join(folder, "test_psi.npy"))
    factors = np.load(os.path.join(folder, "test_factors.npy"))
    with open(os.path.join(folder, "conditions.txt")) as f:
        conditions = f.read().split()
    weights = torch.load(args.weights or os.path.join(args.run, "weights.pt"))
    module = {k: v for k, v in weights.items() if k.startswith("condition_module.")}
    lines = [f"{name}: {list(t.shape)}, norm {t.float().norm():.3f}" for name, t in module.items()]
    matrix = separation(psi, factors)
    out = args.out or os.path.join(args.run, "embeddings.png")
    draw(matrix, conditions, lines, out)
    for row, values in enumerate(matrix):
        best = conditions[int(values.argmax())]
        print(f"psi_{row + 1}: most separates {best} ({values.max():.2f}x)")
    print(f"{out} written")


if __name__ == "__main__":
    main()
