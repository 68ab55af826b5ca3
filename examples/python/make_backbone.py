#!/usr/bin/python3
"""A backbone written in PyTorch-Python, scripted for wscsl's `backbone/torchscript`.

SmallNet: two strided convolutions with batch norm, global average pooling and a linear layer to
φ of `--dim` features. Its `embedding_dim` attribute tells wscsl D before it runs the module.

    examples/python/make_backbone.py examples/pipelines/small_net.pt [--dim 64]

Then train it (examples/pipelines/torchscript_backbone.toml names the file):

    build/bin/wscsl train examples/pipelines/torchscript_backbone.toml

Needs Debian's python3-torch (scripts/setup.sh installs it).
"""
import argparse

import torch


class SmallNet(torch.nn.Module):
    embedding_dim: int

    def __init__(self, channels: int, dim: int):
        super().__init__()
        self.embedding_dim = dim
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(channels, 16, 3, stride=2, padding=1), torch.nn.BatchNorm2d(16),
            torch.nn.ReLU(),
            torch.nn.Conv2d(16, 32, 3, stride=2, padding=1), torch.nn.BatchNorm2d(32),
            torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1))
        self.embed = torch.nn.Linear(32, dim)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.embed(self.features(images).flatten(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", help="the TorchScript file to write (.pt)")
    parser.add_argument("--channels", type=int, default=3, help="image channels (Fashion-CRB: 3)")
    parser.add_argument("--dim", type=int, default=64, help="D, the size of φ")
    args = parser.parse_args()
    torch.manual_seed(0)
    torch.jit.save(torch.jit.script(SmallNet(args.channels, args.dim)), args.out)


if __name__ == "__main__":
    main()
