#!/usr/bin/env python3
"""Recomputes MAP@R, R-precision, MRR and precision@1 with PyPI's pytorch-metric-learning on the
embeddings the retrieval test wrote, and compares them with the evaluator's numbers.

Usage: compare_with_pml.py DIR. DIR holds, per condition C (listed in conditions.txt), C.psi.csv
(one row of ψ per image: the embedding aligned to C), C.labels.csv (its label per image) and
expected.txt ("metric value" lines, the evaluator's numbers). Exits 77 when
pytorch_metric_learning cannot be imported, so that the test is reported as skipped.
"""
import sys
from pathlib import Path

try:
    import numpy as np
    import torch
    from pytorch_metric_learning.distances import LpDistance
    from pytorch_metric_learning.utils.accuracy_calculator import AccuracyCalculator
    from pytorch_metric_learning.utils.inference import CustomKNN
except ImportError as e:
    print(f"pytorch-metric-learning is not importable here ({e}); scripts/pml-venv.sh makes a "
          "venv that has it")
    sys.exit(77)

# pml's names of the evaluator's metrics.
NAMES = {
    "map_at_r": "mean_average_precision_at_r",
    "r_precision": "r_precision",
    "mrr": "mean_reciprocal_rank",
    "nn": "precision_at_1",
}


def main(directory: Path) -> int:
    expected = {}
    for line in (directory / "expected.txt").read_text().splitlines():
        name, value = line.split()
        expected[name] = float(value)
    failures = 0
    for condition in (directory / "conditions.txt").read_text().split():
        psi = torch.from_numpy(np.loadtxt(directory / f"{condition}.psi.csv", delimiter=",",
                                          dtype=np.float32, ndmin=2))
        labels = torch.from_numpy(np.loadtxt(directory / f"{condition}.labels.csv",
                                             dtype=np.int64, ndmin=1))
        n = len(labels)
        # Every image a query against all the others (reference = query: ref_includes_query),
        # ranked by the Euclidean distance over the whole reference set (k = None).
        calculator = AccuracyCalculator(include=tuple(NAMES.values()), k=None,
                                        device=torch.device("cpu"),
                                        knn_func=CustomKNN(LpDistance(normalize_embeddings=False)))
        theirs = calculator.get_accuracy(psi, labels)
        for ours_name, pml_name in NAMES.items():
            ours = expected[f"{ours_name}/{condition}"]
            # Both average per-query ratios of the same rankings; they differ only by rounding:
            # a mean of n terms in float64 (n·2⁻⁵²), pml's MRR in float32 (n·2⁻²⁴).
            tolerance = n * (2.0 ** -24 if ours_name == "mrr" else 2.0 ** -52)
            ok = abs(ours - theirs[pml_name]) <= tolerance
            failures += not ok
            print(f"{condition} {ours_name}: wscsl {ours:.12f}, pml {pml_name} "
                  f"{theirs[pml_name]:.12f} (tolerance {tolerance:.1e}) {'ok' if ok else 'DIFFERS'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
