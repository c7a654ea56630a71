#!/usr/bin/python3
"""K classes end to end (docs/BENCHMARKS.md, "K classes"): wall time from
the text files (parse included on every side) to the test accuracy, in one
run on this machine:

  hogtrain   the defaults (logistic, one-vs-rest), the hinge loss, dual CD
             with LIBLINEAR -s 1's problem (squared hinge, C = 1), and
             softmax, all on every core
  LIBLINEAR  liblinear-train -s 1, -s 2, -s 4 and -s 7 (C = 1), then
             liblinear-predict
  sklearn    SGDClassifier (hinge, alpha 1e-5... the defaults but 5 epochs,
             n_jobs=-1), load_svmlight_file included

on news20 (20 classes) and fashion-mnist (10 classes). Target: LIBLINEAR
-s 1's accuracy within 0.5 point in at most half its wall time. Throughput
in nonzeros x classes per second of training, beside the binary kernel's
(news20.binary, the same options).

usage: /usr/bin/python3 bench/multiclass.py BUILD_DIR [--only news20,fashion]
       [--timeout S] [--softmax]
--softmax: the softmax trainers alone, side by side (serial, Hogwild! on
all cores, Cyclades on one core and on all), no other tool: parallel runs
against the same binary's serial run.
Prints a table with the load average beside each figure, and writes
BUILD_DIR/bench/multiclass.csv, .json and .svg (accuracy against seconds).
Run it alone on the machine.
"""
import json, os, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

A = benchlib.setup(sys.argv, timeout=900)
BUILD, ONLY, TIMEOUT = A.build, A.only, A.timeout
SOFTMAX_ONLY = "--softmax" in sys.argv
HOG, WORK, OUT = A.hog, A.work, A.out
ROWS = []

SETS = {
    "news20": ("news20.train.svm", "news20.test.svm"),
    "fashion": ("fashion-mnist.train.svm", "fashion-mnist.test.svm"),
}


def load():
    return benchlib.load()


def data(name):
    return benchlib.data(WORK, name, "multiclass")


def timed(cmd):
    return benchlib.timed(cmd, TIMEOUT)


def hogtrain(name, tr, te, extra):
    la = load()
    with tempfile.NamedTemporaryFile(suffix=".json", dir=WORK) as j:
        secs, _ = timed([HOG, "train", "-q", "--json", j.name, tr, "-t", te]
                        + extra)
        rep = json.load(open(j.name))
    e = rep["epochs"][-1]
    train_s = rep["timings"]["train_seconds"]
    # nonzeros x classes per second of the epochs (the report counts each
    # nonzero once an epoch; one-vs-rest reports once for all epochs)
    k = rep.get("classes", {}).get("count", 1)
    rates = [x["nnz_per_s"] * k for x in rep["epochs"] if x["nnz_per_s"]]
    ROWS.append(dict(tool="hogtrain " + name, wall=secs,
                     accuracy=e["test_accuracy"], train_seconds=train_s,
                     nnz_classes_per_s=sum(rates) / len(rates) if rates
                     else None, load=la))


def liblinear(s, tr, te):
    la = load()
    with tempfile.TemporaryDirectory(dir=WORK) as d:
        m, out = os.path.join(d, "m"), os.path.join(d, "out")
        t1, _ = timed(["liblinear-train", "-q", "-s", str(s), tr, m])
        t2, p = timed(["liblinear-predict", te, m, out])
    acc = float(p.stdout.split("=")[1].split("%")[0]) / 100
    ROWS.append(dict(tool=f"liblinear-train -s {s}", wall=t1 + t2,
                     accuracy=acc, train_seconds=None, nnz_classes_per_s=None,
                     load=la))


def sgdclassifier(tr, te):
    try:
        from sklearn.datasets import load_svmlight_file
        from sklearn.linear_model import SGDClassifier
    except ImportError:
        print("sklearn: scikit-learn not installed (python3-sklearn); skipped")
        return
    import warnings
    warnings.filterwarnings("ignore")
    la = load()
    t0 = time.perf_counter()
    X, y = load_svmlight_file(tr)
    Xt, yt = load_svmlight_file(te, n_features=X.shape[1])
    t1 = time.perf_counter()
    m = SGDClassifier(loss="hinge", alpha=1e-5, max_iter=5, tol=None,
                      n_jobs=-1, random_state=1).fit(X, y)
    t2 = time.perf_counter()
    acc = m.score(Xt, yt)
    ROWS.append(dict(tool="SGDClassifier (hinge, 5 epochs)",
                     wall=time.perf_counter() - t0, accuracy=acc,
                     train_seconds=t2 - t1, nnz_classes_per_s=None, load=la))


def binary_kernel():
    """The binary kernel's nonzeros/s at the same options, on every core."""
    tr, te = (data("news20.binary.train.svm"), data("news20.binary.test.svm"))
    for name, extra in (("binary default", []),
                        ("binary hinge", ["--loss", "hinge"])):
        try:
            hogtrain(name + " (news20.binary)", tr, te, extra)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print(f"hogtrain {name}: {e}")


def svg(path, sets):
    """Accuracy against wall seconds, one panel per data set."""
    w, h, pad = 420, 300, 50
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w * len(sets)}"'
             f' height="{h}" font-family="sans-serif" font-size="10">']
    for i, (name, rows) in enumerate(sets.items()):
        x0 = i * w
        rows = [r for r in rows if r["wall"] and r["accuracy"]]
        if not rows:
            continue
        tmax = max(r["wall"] for r in rows) * 1.1
        amin = min(r["accuracy"] for r in rows) - 0.01
        amax = max(r["accuracy"] for r in rows) + 0.005
        px = lambda t: x0 + pad + (w - 2 * pad) * t / tmax
        py = lambda a: h - pad - (h - 2 * pad) * (a - amin) / (amax - amin)
        parts.append(f'<text x="{x0 + w / 2}" y="20" text-anchor="middle">'
                     f'{name}: test accuracy against wall seconds</text>')
        parts.append(f'<line x1="{x0 + pad}" y1="{h - pad}" x2="{x0 + w - pad}"'
                     f' y2="{h - pad}" stroke="black"/>')
        parts.append(f'<line x1="{x0 + pad}" y1="{pad}" x2="{x0 + pad}" '
                     f'y2="{h - pad}" stroke="black"/>')
        parts.append(f'<text x="{x0 + w - pad}" y="{h - pad + 15}" '
                     f'text-anchor="end">{tmax:.1f} s</text>')
        parts.append(f'<text x="{x0 + 5}" y="{pad}">{100 * amax:.1f}%</text>')
        parts.append(f'<text x="{x0 + 5}" y="{h - pad}">{100 * amin:.1f}%'
                     '</text>')
        for r in rows:
            col = "#c33" if r["tool"].startswith("hogtrain") else "#36c"
            x, y = px(r["wall"]), py(r["accuracy"])
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4" '
                         f'fill="{col}"/>')
            parts.append(f'<text x="{x + 6:.1f}" y="{y + 3:.1f}">'
                         f'{r["tool"].replace("hogtrain ", "")}</text>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts))


def main():
    if not os.path.exists(HOG):
        sys.exit(f"multiclass: {HOG} not built (make)")
    by_set = {}
    for key, (trn, ten) in SETS.items():
        if ONLY and key not in ONLY:
            continue
        tr, te = data(trn), data(ten)
        start = len(ROWS)
        runs = [("defaults", []),
                ("hinge", ["--loss", "hinge"]),
                ("hinge, 3 epochs", ["--loss", "hinge", "--epochs", "3"]),
                ("dcd sqhinge C=1", ["--algo", "dcd", "--loss", "sqhinge",
                                     "--C", "1"]),
                ("softmax", ["--multiclass", "softmax"]),
                ("softmax, 2 epochs", ["--multiclass", "softmax",
                                       "--epochs", "2"]),
                ("softmax, Hogwild! on all cores",
                 ["--multiclass", "softmax", "--algo", "hogwild"]),
                ("softmax, Cyclades on all cores",
                 ["--multiclass", "softmax", "--algo", "cyclades"]),
                ("ftrl hinge", ["--loss", "hinge", "--schedule", "ftrl"]),
                ("ftrl hinge, all cores", ["--loss", "hinge", "--schedule",
                                           "ftrl", "--algo", "hogwild"]),
                ("ftrl, all cores", ["--schedule", "ftrl",
                                     "--algo", "hogwild"])]
        if SOFTMAX_ONLY:
            sm = ["--multiclass", "softmax"]
            runs = [("softmax", sm),
                    ("softmax, Hogwild! on all cores",
                     sm + ["--algo", "hogwild"]),
                    ("softmax, Cyclades on one core",
                     sm + ["--algo", "cyclades", "--threads", "1"]),
                    ("softmax, Cyclades on all cores",
                     sm + ["--algo", "cyclades"])]
        for name, extra in runs:
            try:
                hogtrain(name, tr, te, extra)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                print(f"hogtrain {name}: {e}")
        for s in () if SOFTMAX_ONLY else (1, 2, 4, 7):
            try:
                liblinear(s, tr, te)
            except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                print(f"liblinear -s {s}: {e}")
        if not SOFTMAX_ONLY:
            sgdclassifier(tr, te)
        for r in ROWS[start:]:
            r["set"] = key
        by_set[key] = ROWS[start:]
    if not SOFTMAX_ONLY and (not ONLY or "news20" in ONLY):
        start = len(ROWS)
        binary_kernel()
        for r in ROWS[start:]:
            r["set"] = "news20.binary"

    print(f"{'set':14} {'tool':40} {'wall s':>8} {'test acc':>9} "
          f"{'M nnz x classes/s':>18} {'load':>5}")
    for r in ROWS:
        tp = (f"{r['nnz_classes_per_s'] / 1e6:.1f}"
              if r["nnz_classes_per_s"] else "-")
        print(f"{r['set']:14} {r['tool']:40} {r['wall']:8.2f} "
              f"{100 * r['accuracy']:8.2f}% {tp:>18} {r['load']:5.2f}")
    for key, rows in by_set.items():
        ref = [r for r in rows if r["tool"] == "liblinear-train -s 1"]
        if not ref:
            continue
        ref = ref[0]
        ok = [r for r in rows if r["tool"].startswith("hogtrain") and
              r["accuracy"] >= ref["accuracy"] - 0.005]
        if ok:
            best = min(ok, key=lambda r: r["wall"])
            ratio = best["wall"] / ref["wall"]
            print(f"{key}: fastest hogtrain within 0.5 point of -s 1 "
                  f"({100 * ref['accuracy']:.2f}%, {ref['wall']:.2f} s): "
                  f"{best['tool']}, {best['wall']:.2f} s = {ratio:.2f}x "
                  f"(target <= 0.5: {'met' if ratio <= 0.5 else 'not met'})")
        else:
            print(f"{key}: no hogtrain run within 0.5 point of -s 1")
    base = benchlib.save(os.path.join(OUT, "multiclass"), ROWS)
    svg(base + ".svg", by_set)
    print(f"wrote {base}.csv, .json and .svg")


if __name__ == "__main__":
    main()
