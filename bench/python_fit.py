#!/usr/bin/python3
"""The Python package against scikit-learn, in one run (docs/BENCHMARKS.md,
"Python"): reading LIBSVM text (hogtrain.load_svmlight against
sklearn.datasets.load_svmlight_file), and fitting (hogtrain.Classifier on
all cores, Hogwild!, hinge and logistic, against SGDClassifier with 5
epochs, LinearSVC and LogisticRegression(solver="liblinear")), fit time and
test accuracy, on news20.binary, news20 (20 classes) and a generated set
of 1M rows (hogtrain gen; 80% train, 20% test). Each side fits the matrix
its own loader gave (float32 for hogtrain, float64 for scikit-learn).
Targets (issue 20): load_svmlight at least 8x faster; Classifier.fit at
most 0.6x SGDClassifier's fit time at equal or better accuracy.

usage: /usr/bin/python3 bench/python_fit.py BUILD_DIR [--quick]
       [--only news20.binary,news20,gen] [--repeat N]
--quick: a 20,000-row generated set and a9a only, once each (a check of
the script itself, seconds). Prints a table with the load average beside
each figure and writes BUILD_DIR/bench/python_fit.csv. Run it alone on the
machine.
"""
import os
import subprocess
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

A = benchlib.setup(sys.argv)
BUILD, ONLY, QUICK, HOG, WORK, OUT = (A.build, A.only, A.quick, A.hog, A.work,
                                      A.out)
sys.path.insert(0, os.path.join(BUILD, "python"))
import numpy as np  # noqa: E402
from sklearn.datasets import load_svmlight_file  # noqa: E402
from sklearn.linear_model import LogisticRegression, SGDClassifier  # noqa: E402
from sklearn.svm import LinearSVC  # noqa: E402

import hogtrain  # noqa: E402

REPEAT = 1 if QUICK else 3
if "--repeat" in sys.argv:
    REPEAT = int(sys.argv[sys.argv.index("--repeat") + 1])
GEN_ROWS = 20_000 if QUICK else 1_000_000
ROWS = []


def generated():
    """GEN_ROWS x 1.25 rows of hogtrain gen (1M features, 30 nonzeros a
    row, seed 7): the first GEN_ROWS train, the rest test."""
    n = GEN_ROWS * 5 // 4
    path = os.path.join(WORK, f"pyfit-gen{n}.svm")
    if not os.path.exists(path):
        subprocess.run([HOG, "gen", "-q", "--rows", str(n), "--features",
                        "1000000", "--nnz", "30", "--seed", "7", "-o", path],
                       check=True)
    return path


def sets():
    if QUICK:
        yield "a9a", benchlib.data(WORK, "a9a", "python_fit"), \
            benchlib.data(WORK, "a9a.t", "python_fit")
        yield f"gen{GEN_ROWS}", generated(), None
        return
    for name, tr, te in (
            ("news20.binary", "news20.binary.train.svm",
             "news20.binary.test.svm"),
            ("news20", "news20.train.svm", "news20.test.svm")):
        if ONLY is None or name in ONLY:
            yield name, benchlib.data(WORK, tr, "python_fit"), \
                benchlib.data(WORK, te, "python_fit")
    if ONLY is None or "gen" in ONLY:
        yield f"gen{GEN_ROWS}", generated(), None


def best(fn):
    """fn()'s result and its best wall time of REPEAT runs."""
    t_best, out = None, None
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        out = fn()
        t = time.perf_counter() - t0
        t_best = t if t_best is None or t < t_best else t_best
    return out, t_best


def row(data, what, seconds, acc=None, ratio=None, note=""):
    r = dict(data=data, what=what, seconds=seconds,
             accuracy="" if acc is None else f"{acc:.4f}",
             ratio="" if ratio is None else f"{ratio:.2f}",
             load=f"{benchlib.load():.2f}", note=note)
    ROWS.append(r)
    print(f"{data:14} {what:44} {seconds:8.3f} s  "
          f"{'' if acc is None else f'acc {100 * acc:6.2f}%':12} "
          f"{'' if ratio is None else f'x{ratio:5.2f}':8} "
          f"load {r['load']} {note}", flush=True)


def split(X, y, Xt, yt, n_features):
    if Xt is None:  # the generated set: 80/20
        n = X.shape[0] * 4 // 5
        return X[:n], y[:n], X[n:], y[n:]
    return X, y, Xt[:, :n_features], yt


def run(name, train, test):
    (X, y), t_hog = best(lambda: hogtrain.load_svmlight(train))
    (Xs, ys), t_sk = best(lambda: load_svmlight_file(train))
    row(name, "load: hogtrain.load_svmlight", t_hog, ratio=t_hog / t_sk)
    row(name, "load: sklearn load_svmlight_file", t_sk, ratio=1.0)
    Xt = yt = Xst = yst = None
    if test:
        Xt, yt = hogtrain.load_svmlight(test, n_features=X.shape[1])
        Xst, yst = load_svmlight_file(test, n_features=max(
            Xs.shape[1], load_svmlight_file(test)[0].shape[1]))
    X, y, Xt, yt = split(X, y, Xt, yt, X.shape[1])
    Xs, ys, Xst, yst = split(Xs, ys, Xst, yst, Xs.shape[1])

    def fit(est, X, y):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence warnings
            return est.fit(X, y)

    sgd, t_sgd = best(lambda: fit(SGDClassifier(max_iter=5, tol=None,
                                                n_jobs=-1, random_state=0),
                                  Xs, ys))
    row(name, "fit: SGDClassifier (hinge, 5 epochs)", t_sgd,
        sgd.score(Xst, yst), 1.0)
    for label, est in (
            ("fit: hogtrain hinge, hogwild, all cores",
             hogtrain.Classifier(loss="hinge", algorithm="hogwild",
                                 n_jobs=-1)),
            ("fit: hogtrain hinge, ftrl, hogwild, all cores",
             hogtrain.Classifier(loss="hinge", schedule="ftrl",
                                 algorithm="hogwild", n_jobs=-1)),
            ("fit: hogtrain logistic, hogwild, all cores",
             hogtrain.Classifier(algorithm="hogwild", n_jobs=-1)),
            ("fit: hogtrain logistic, serial",
             hogtrain.Classifier())):
        m, t = best(lambda: fit(est, X, y))
        row(name, label, t, m.score(Xt, yt), t / t_sgd)
    for label, est in (
            ("fit: LinearSVC", LinearSVC()),
            ("fit: LogisticRegression(liblinear)",
             LogisticRegression(solver="liblinear"))):
        m, t = best(lambda: fit(est, Xs, ys))
        row(name, label, t, m.score(Xst, yst), t / t_sgd)


def main():
    print(f"python_fit: {'quick check' if QUICK else 'full run'}, best of "
          f"{REPEAT}, {os.cpu_count()} CPUs; ratios against scikit-learn's "
          f"loader and SGDClassifier", flush=True)
    for name, train, test in sets():
        run(name, train, test)
    out = benchlib.save(os.path.join(OUT, "python_fit"), ROWS)
    print(f"wrote {out}.csv and .json")


if __name__ == "__main__":
    main()
