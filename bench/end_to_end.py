#!/usr/bin/python3
"""End to end (docs/BENCHMARKS.md, "End to end"): each tool from the text
file to its test accuracy, parse included on every side, in one run:

  hogtrain train TRAIN, hogtrain predict   the defaults (FTRL-Proximal, l2
                                           4e-6, 5 epochs)
  the same with --schedule adagrad         the former default, AdaGrad at
    --l2 1e-5                              l2 1e-5
  liblinear-train -s 0, 1, 2, 7 -c 1 -B 1  then liblinear-predict
  SGDClassifier (log loss, alpha 1e-5, 5 epochs), load_svmlight_file
                                           included

on a9a, news20.binary, ijcnn1, reuters money-fx and a generated 1M-row set
(hogtrain gen, 80/20 split: the last 200,000 rows are the test set). Wall
seconds, test accuracy, and each tool's time against hogtrain's default,
with the 1-minute load average beside each figure; the fastest of 3 runs
(of 1 on the generated set).

usage: /usr/bin/python3 bench/end_to_end.py BUILD_DIR
       [--only a9a,news20.binary,ijcnn1,reuters,gen] [--timeout S] [--quick]
Prints a table and writes BUILD_DIR/bench/end_to_end.csv and .json. Run it
alone on the machine. --quick (or HOGTRAIN_BENCH_QUICK=1): a9a only, a
check that the script works (no figures to record).
"""
import os, re, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

A = benchlib.setup(sys.argv, timeout=1800)
ONLY, TIMEOUT, QUICK = A.only, A.timeout, A.quick
HOG, WORK, OUT = A.hog, A.work, A.out
ROWS = []

SETS = {"a9a": ("a9a", "a9a.t"),
        "news20.binary": ("news20.binary.train.svm", "news20.binary.test.svm"),
        "ijcnn1": ("ijcnn1", "ijcnn1.t"),
        "reuters": ("reuters_moneyfx.trn", "reuters_moneyfx.tst"),
        "gen": None}


def generated():
    return benchlib.generated_split(HOG, WORK)


def row(set_, tool, wall, acc, la):
    """One run; a tool run again keeps its fastest."""
    for r in ROWS:
        if r["set"] == set_ and r["tool"] == tool:
            if wall < r["wall"]:
                r.update(wall=wall, accuracy=acc, load=la)
            return
    ROWS.append(dict(set=set_, tool=tool, wall=wall, accuracy=acc, load=la))


def hogtrain(set_, tr, te, label, extra):
    """train then predict, as LIBLINEAR's pair (no per-epoch metrics)."""
    la = benchlib.load()
    with tempfile.NamedTemporaryFile(suffix=".hgm", dir=WORK) as m, \
            tempfile.NamedTemporaryFile(suffix=".out", dir=WORK) as o:
        t1, _ = benchlib.timed([HOG, "train", "-q", tr, "-o", m.name] + extra,
                               TIMEOUT)
        t2, p = benchlib.timed([HOG, "predict", m.name, te, "-o", o.name],
                               TIMEOUT)
    acc = float(re.search(r"accuracy ([0-9.]+)%", p.stderr).group(1)) / 100
    row(set_, label, t1 + t2, acc, la)


def liblinear(set_, tr, te, s):
    la = benchlib.load()
    with tempfile.NamedTemporaryFile(suffix=".model", dir=WORK) as m, \
            tempfile.NamedTemporaryFile(suffix=".out", dir=WORK) as o:
        t1, _ = benchlib.timed(["liblinear-train", "-q", "-s", str(s), "-c",
                                "1", "-B", "1", tr, m.name], TIMEOUT)
        t2, p = benchlib.timed(["liblinear-predict", te, m.name, o.name],
                               TIMEOUT)
    acc = float(re.search(r"Accuracy = ([0-9.]+)%", p.stdout).group(1)) / 100
    row(set_, f"liblinear-train -s {s} -c 1 -B 1", t1 + t2, acc, la)


def sgdclassifier(set_, tr, te):
    try:
        from sklearn.datasets import load_svmlight_file
        from sklearn.linear_model import SGDClassifier
    except ImportError:
        print("scikit-learn not installed (python3-sklearn): skipped")
        return
    la = benchlib.load()
    t0 = time.perf_counter()
    X, y = load_svmlight_file(tr)
    Xt, yt = load_svmlight_file(te, n_features=X.shape[1])
    m = SGDClassifier(loss="log_loss", alpha=1e-5, max_iter=5, tol=None,
                      random_state=1).fit(X, y)
    secs = time.perf_counter() - t0
    row(set_, "SGDClassifier (log, alpha 1e-5, 5 epochs)", secs,
        m.score(Xt, yt), la)


def main():
    if not os.path.exists(HOG):
        sys.exit(f"end_to_end: {HOG} not built (make)")
    for key, names in SETS.items():
        if (ONLY and key not in ONLY) or (QUICK and key != "a9a"):
            continue
        if names is None:
            tr, te = generated()
        else:
            tr, te = (benchlib.data(WORK, n, "end_to_end") for n in names)
        runs = [lambda: hogtrain(key, tr, te, "hogtrain (defaults)", []),
                lambda: hogtrain(key, tr, te, "hogtrain --schedule adagrad",
                                 ["--schedule", "adagrad", "--l2", "1e-5"])]
        runs += [lambda s=s: liblinear(key, tr, te, s) for s in (0, 1, 2, 7)]
        runs.append(lambda: sgdclassifier(key, tr, te))
        for fn in runs * (1 if key == "gen" or QUICK else 3):
            try:
                fn()
            except (RuntimeError, subprocess.TimeoutExpired, OSError,
                    AttributeError) as e:
                print(f"{key}: {e}")
    if not ROWS:
        sys.exit("end_to_end: nothing ran")
    print("\n| data | tool | wall s | test acc | time / hogtrain's | load |\n"
          "|---|---|---|---|---|---|")
    for r in ROWS:
        base = next(b["wall"] for b in ROWS if b["set"] == r["set"]
                    and b["tool"] == "hogtrain (defaults)")
        r["vs_default"] = r["wall"] / base
        print(f"| {r['set']} | {r['tool']} | {r['wall']:.3f} | "
              f"{100 * r['accuracy']:.2f}% | {r['vs_default']:.2f} | "
              f"{r['load']:.2f} |")
    out = benchlib.save(os.path.join(OUT, "end_to_end"), ROWS, QUICK)
    print(f"\n{os.cpu_count()} CPUs; wrote {out}.csv and .json" +
          (" (quick mode: a check of the script, not figures)" if QUICK
           else ""))


main()
