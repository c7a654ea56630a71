#!/usr/bin/env python3
"""The cost of one partial_fit call against the size of the model: pieces
of PIECE rows (default 100) of news20.binary's training rows (377,295
features), the time per call after the first, median and quartiles over
CALLS calls, for the defaults (FTRL) and AdaGrad; beside them the rows'
nonzeros per call. The estimators keep a trainer (hog_trainer) between
the calls, so a call should cost its rows' nonzeros and Python's checks,
not the model (docs/BENCHMARKS.md, "Online learning": 12.8 ms a call
before it, 0.85 ms after, FTRL). The machine may be shared: the figures are for comparing two builds run
in turn, not a verdict.

    PYTHONPATH=build/python HOGTRAIN_DATA=/work/shared/data \\
        /usr/bin/python3 bench/partial_fit_calls.py [PIECE] [CALLS]
"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import hogtrain

PIECE = int(sys.argv[1]) if len(sys.argv) > 1 else 100
CALLS = int(sys.argv[2]) if len(sys.argv) > 2 else 200
DATA = os.environ.get("HOGTRAIN_DATA", "/work/shared/data")


def load(name):
    src = os.path.join(DATA, name)
    if os.path.exists(src):
        return hogtrain.load_svmlight(src)
    with tempfile.NamedTemporaryFile(suffix=".svm") as f:
        subprocess.run(["xz", "-dc", src + ".xz"], stdout=f, check=True)
        f.flush()
        return hogtrain.load_svmlight(f.name)


def main():
    X, y = load("news20.binary.train.svm")
    classes = np.unique(y)
    print(f"news20.binary: {X.shape[0]} rows, {X.shape[1]} features, "
          f"{X.nnz / X.shape[0] * PIECE:.0f} nonzeros in {PIECE} rows on "
          f"average; {CALLS} calls")
    for name, kw in (("ftrl (default)", {}),
                     ("adagrad, alpha 0", {"schedule": "adagrad",
                                           "alpha": 0.0})):
        est = hogtrain.Classifier(**kw)
        est.partial_fit(X[:PIECE], y[:PIECE], classes=classes)
        times = []
        for c in range(1, CALLS + 1):
            i = (c * PIECE) % (X.shape[0] - PIECE)
            a, b = X[i:i + PIECE], y[i:i + PIECE]
            t = time.perf_counter()
            est.partial_fit(a, b)
            times.append(time.perf_counter() - t)
        q = np.percentile(times, [25, 50, 75]) * 1e3
        # the rows' own share: one unshuffled epoch of fit over every row,
        # per PIECE rows
        t = time.perf_counter()
        hogtrain.Classifier(epochs=1, shuffle=False, **kw).fit(X, y)
        rows = (time.perf_counter() - t) / X.shape[0] * PIECE * 1e3
        print(f"{name:18s} per call: median {q[1]:.3f} ms "
              f"(quartiles {q[0]:.3f}-{q[2]:.3f} ms); one epoch of fit: "
              f"{rows:.3f} ms per {PIECE} rows")


if __name__ == "__main__":
    main()
