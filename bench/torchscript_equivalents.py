#!/usr/bin/python3
"""Scripted equivalents of the default pipeline's native plugins, for bench/torchscript_overhead.sh
(bench/eager_reference.py trains them eagerly beside wscsl on a GPU):
convnet (strided 16-32-64 stages of 3×3 conv → BN → ReLU, channels-last, mean pool, Linear to 64)
and DiscoverNet-Set (K linear projections of φ, L2-normalised; g = the 2-pair set module with its
anchors, not trained, as the released code). Writes OUT/convnet.pt, OUT/discovernet_set.pt and
the pipelines OUT/scripted_backbone.toml, OUT/scripted_module.toml, OUT/scripted_both.toml
(default.toml with one or both replaced).

Usage: torchscript_equivalents.py OUT_DIR DEFAULT_PIPELINE
"""
import os
import re
import sys
from typing import Optional

import torch


class ConvNet(torch.nn.Module):
    embedding_dim: int

    def __init__(self, width: int = 16, depth: int = 3, dim: int = 64):
        super().__init__()
        layers, channels = [], 3
        for stage in range(depth):
            out = width * 2 ** stage
            layers += [torch.nn.Conv2d(channels, out, 3, stride=2, padding=1, bias=False),
                       torch.nn.BatchNorm2d(out), torch.nn.ReLU(inplace=True)]
            channels = out
        self.features = torch.nn.Sequential(*layers)
        self.head = torch.nn.Linear(channels, dim)
        self.embedding_dim = dim

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        maps = self.features(images.contiguous(memory_format=torch.channels_last))
        return self.head(maps.mean(dim=[2, 3]))


class DiscoverNetSet(torch.nn.Module):
    num_embeddings: int

    def __init__(self, d: int = 64, k: int = 4):
        super().__init__()
        self.num_embeddings = k
        self.k, self.d = k, d
        self.projection = torch.nn.Linear(d, k * d, bias=False)
        # g and the anchors stay at their initialisation, as in the released code: buffers.
        pair = torch.nn.Sequential(torch.nn.Linear(2 * d, 2 * d), torch.nn.ReLU(),
                                   torch.nn.Linear(2 * d, d))
        after = torch.nn.Sequential(torch.nn.Linear(d, 2 * d), torch.nn.ReLU(),
                                    torch.nn.Linear(2 * d, d))
        for p in list(pair.parameters()) + list(after.parameters()):
            p.requires_grad_(False)
        self.pair_mlp, self.set_mlp = pair, after
        self.register_buffer("anchors", torch.empty(k, d).uniform_(-d ** -0.5, d ** -0.5))

    @torch.jit.export
    def embed(self, phi: torch.Tensor) -> torch.Tensor:
        psi = self.projection(phi).view(phi.size(0), self.k, self.d)
        return torch.nn.functional.normalize(psi, dim=2)

    @torch.jit.export
    def weights(self, phi: torch.Tensor, first: torch.Tensor, second: torch.Tensor,
                third: Optional[torch.Tensor]) -> torch.Tensor:
        assert third is not None  # g summarises three items: it scores triplets only
        return self.triplet_weights(phi.index_select(0, first), phi.index_select(0, second),
                                    phi.index_select(0, third))

    def triplet_weights(self, phi_a: torch.Tensor, phi_c: torch.Tensor,
                        phi_f: torch.Tensor) -> torch.Tensor:
        """p(k | a, c, f) of each triplet's anchor, close and far φ."""
        pairs = torch.stack([torch.cat([phi_a, phi_c], 1), torch.cat([phi_a, phi_f], 1)], 1)
        g = self.set_mlp(self.pair_mlp(pairs).max(dim=1)[0])
        return torch.softmax(g.mm(torch.nn.functional.normalize(self.anchors, dim=1).t()), dim=1)


def replace_table(text, name, body):
    return re.sub(r"\[" + name + r"\]\n(?:[^\[\n].*\n|\n)*", f"[{name}]\n{body}\n", text, count=1)


def main():
    out, default = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(1)
    torch.jit.save(torch.jit.script(ConvNet()), os.path.join(out, "convnet.pt"))
    torch.jit.save(torch.jit.script(DiscoverNetSet()), os.path.join(out, "discovernet_set.pt"))
    text = open(default).read()
    backbone = f'type = "torchscript"\nfile = "{out}/convnet.pt"\n'
    module = f'type = "torchscript"\nfile = "{out}/discovernet_set.pt"\n'
    variants = {"scripted_backbone": replace_table(text, "backbone", backbone),
                "scripted_module": replace_table(text, "condition_module", module)}
    variants["scripted_both"] = replace_table(variants["scripted_backbone"], "condition_module",
                                              module)
    for name, pipeline in variants.items():
        with open(os.path.join(out, name + ".toml"), "w") as f:
            f.write(pipeline)


if __name__ == "__main__":
    main()
