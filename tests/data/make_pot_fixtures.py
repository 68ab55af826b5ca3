#!/usr/bin/python3
"""Writes pot_sinkhorn.txt: cost matrices and the plans POT's plain ot.sinkhorn returns for them.

Run with Debian's python3-pot (0.8.2): /usr/bin/python3 tests/data/make_pot_fixtures.py
The C++ test (tests/core/test_alignment.cpp) checks sinkhorn_log against these plans.
"""
import warnings

import numpy as np
import ot

rng = np.random.RandomState(20261121)
cases = [
    ("square4_reg1e-3", rng.uniform(0.05, 0.6, (4, 4)), 1e-3),
    ("square4_reg5e-2", rng.uniform(0.0, 1.0, (4, 4)), 5e-2),
    ("square5_reg1e-3", rng.uniform(0.1, 0.5, (5, 5)), 1e-3),
    ("rect3x5_reg1e-2", rng.uniform(0.0, 1.0, (3, 5)), 1e-2),
    ("rect5x3_reg2e-2", rng.uniform(0.0, 1.0, (5, 3)), 2e-2),
]
with open("pot_sinkhorn.txt", "w") as out:
    out.write("# name rows cols reg converged, then the cost rows, then POT's plan rows\n")
    for name, cost, reg in cases:
        n, m = cost.shape
        a, b = np.full(n, 1.0 / n), np.full(m, 1.0 / m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plan, log = ot.sinkhorn(a, b, cost, reg, log=True)
        converged = int(log["err"][-1] < 1e-9)
        out.write(f"{name} {n} {m} {reg!r} {converged}\n")
        for row in cost:
            out.write(" ".join(repr(float(v)) for v in row) + "\n")
        for row in plan:
            out.write(" ".join(repr(float(v)) for v in row) + "\n")
    # POT's plain solver underflows: exp(-1/1e-3) == 0 for a whole column.
    cost = rng.uniform(0.1, 0.4, (4, 4))
    cost[:, 2] = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plan = ot.sinkhorn(np.full(4, 0.25), np.full(4, 0.25), cost, 1e-3)
    out.write(f"underflow_column 4 4 0.001 0\n")
    for row in cost:
        out.write(" ".join(repr(float(v)) for v in row) + "\n")
    for row in plan:
        out.write(" ".join(repr(float(v)) for v in row) + "\n")
