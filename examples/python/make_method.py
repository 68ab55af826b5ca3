#!/usr/bin/python3
"""A new weakly supervised condition module written in PyTorch-Python, scripted for wscsl.

GatedProjections: K linear projections of φ, each L2-normalised (the embeddings ψ_k), and a gate
that reads the whole triplet — |φ_a − φ_c| and |φ_a − φ_f|, which say along which features the
close image agrees with the anchor and the far one does not — and outputs the condition weights.
Unlike DiscoverNet's set module it has no anchor vectors: the gate's last layer plays their part.
wscsl gives weights the φ of a batch's items and, per triplet, the rows of its anchor (first),
close (second) and far (third) items.

    examples/python/make_method.py examples/python/gated_projections.pt [--dim 64 --k 4 --e 64]

Then train it (examples/python/gated_projections.toml names the file):

    build/bin/wscsl train examples/python/gated_projections.toml

Needs Debian's python3-torch (scripts/setup.sh installs it).
"""
import argparse
from typing import Optional

import torch


class GatedProjections(torch.nn.Module):
    num_embeddings: int
    supervision: str
    scores_pairs: bool

    def __init__(self, dim: int, k: int, e: int, hidden: int = 64):
        super().__init__()
        self.num_embeddings = k
        self.supervision = "weak"
        # The gate weighs a comparison by its far item, which a pair lacks: triplets only.
        self.scores_pairs = False
        self.k, self.e = k, e
        self.project = torch.nn.Linear(dim, k * e, bias=False)
        self.gate = torch.nn.Sequential(
            torch.nn.Linear(2 * dim, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, k))

    # torch.jit.script compiles forward and what it calls; wscsl's methods need the export mark.
    @torch.jit.export
    def embed(self, phi: torch.Tensor) -> torch.Tensor:
        psi = self.project(phi).view(phi.size(0), self.k, self.e)
        return torch.nn.functional.normalize(psi, dim=2)

    @torch.jit.export
    def weights(self, phi: torch.Tensor, first: torch.Tensor, second: torch.Tensor,
                third: Optional[torch.Tensor]) -> torch.Tensor:
        assert third is not None  # None only for pairs, which scores_pairs = False never gets
        phi_a = phi.index_select(0, first)
        phi_c, phi_f = phi.index_select(0, second), phi.index_select(0, third)
        evidence = torch.cat([(phi_a - phi_c).abs(), (phi_a - phi_f).abs()], dim=1)
        return torch.softmax(self.gate(evidence), dim=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="TorchScript file to write")
    parser.add_argument("--dim", type=int, default=64, help="D, the backbone's embedding size")
    parser.add_argument("--k", type=int, default=4, help="K, the number of embeddings")
    parser.add_argument("--e", type=int, default=64, help="E, the size of each embedding")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    torch.manual_seed(args.seed)
    module = torch.jit.script(GatedProjections(args.dim, args.k, args.e))
    torch.jit.save(module, args.out)
    print(f"{args.out}: GatedProjections with D={args.dim}, K={args.k}, E={args.e}")


if __name__ == "__main__":
    main()
