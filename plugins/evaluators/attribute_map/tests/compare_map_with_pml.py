#!/usr/bin/env python3
"""Recomputes attribute_map's per-attribute MAP with PyPI's pytorch-metric-learning on the
embeddings the AttributeMap.PmlParity test wrote, and compares it with the evaluator's numbers.

Usage: compare_map_with_pml.py DIR. DIR holds, per attribute A (listed in attributes.txt),
A.query.csv and A.candidate.csv (one row of ψ per line: the attribute's embedding),
A.query_labels.csv and A.candidate_labels.csv (each line's value) and expected.txt ("metric
value" lines). Exits 77 when pytorch_metric_learning cannot be imported, so that the test is
reported as skipped.
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


def load(path: Path, dtype):
    rows = 2 if dtype == np.float32 else 1
    return torch.from_numpy(np.loadtxt(path, delimiter=",", dtype=dtype, ndmin=rows))


def main(directory: Path) -> int:
    expected = {}
    for line in (directory / "expected.txt").read_text().splitlines():
        name, value = line.split()
        expected[name] = float(value)
    failures = 0
    for attribute in (directory / "attributes.txt").read_text().split():
        queries = load(directory / f"{attribute}.query.csv", np.float32)
        candidates = load(directory / f"{attribute}.candidate.csv", np.float32)
        query_labels = load(directory / f"{attribute}.query_labels.csv", np.int64)
        candidate_labels = load(directory / f"{attribute}.candidate_labels.csv", np.int64)
        # Every candidate retrieved (k = None), ranked by the Euclidean distance; queries and
        # candidates are different lines (ref_includes_query = False).
        calculator = AccuracyCalculator(include=("mean_average_precision",), k=None,
                                        device=torch.device("cpu"),
                                        knn_func=CustomKNN(LpDistance(normalize_embeddings=False)))
        theirs = calculator.get_accuracy(queries, query_labels, candidates, candidate_labels,
                                         ref_includes_query=False)["mean_average_precision"]
        ours = expected[f"map/{attribute}"]
        # The same rankings: each AP is a sum of at most N terms in [0, 1], which pml may add in
        # float32 (an error of at most N·2⁻²⁴); their mean keeps that bound.
        tolerance = len(candidate_labels) * 2.0 ** -24
        ok = abs(ours - theirs) <= tolerance
        failures += not ok
        print(f"{attribute} map: wscsl {ours:.12f}, pml mean_average_precision {theirs:.12f} "
              f"(tolerance {tolerance:.1e}) {'ok' if ok else 'DIFFERS'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
