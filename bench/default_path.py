#!/usr/bin/python3
"""The default path's targets, each against a baseline from the same run on
the same binary (docs/BENCHMARKS.md, "Default path"):

  kernel    the default (FTRL-Proximal, its --l2 4e-6), and the former
            default (--schedule adagrad --l2 1e-5), against --schedule
            constant: nonzeros/s per thread on news20.binary, 1 thread, and
            test accuracy (target: default >= 0.5x constant)
  sklearn   the default's training seconds at 1 thread (5 epochs) against
            scikit-learn's SGDClassifier fit of 5 epochs (log loss, alpha
            1e-5) on news20.binary, the fastest of 5 runs each taken in
            turn, and both test accuracies (target: no slower, equal or
            better accuracy)
  metrics   a whole run with per-epoch metrics on (--json) against the same
            run without them (-q) on a 1M-row generated .hgb (target <= 1.15x)
  coord     dcd and scd epoch time at 2 threads against 1 on news20.binary,
            C = 1 (target <= 0.7x); and dcd's --update none (wild) at 2
            threads, with its objective's distance from the exact one
  cyclades  Cyclades at 2 threads against the serial trainer, whole runs on
            the 1M-row generated set, both AdaGrad (Cyclades' schedule; FTRL
            does not run there) (target <= 0.7x)
  parse     peak RSS of loading the generated text against its in-memory
            size (target <= 1.5x + 100 MiB)

usage: /usr/bin/python3 bench/default_path.py BUILD_DIR [--only kernel,...]
Prints a table with the load average beside each figure, and writes
BUILD_DIR/bench/default_path.csv and .json. Run it alone on the machine.
"""
import json, os, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

A = benchlib.setup(sys.argv)
BUILD, ONLY, HOG, WORK, OUT = A.build, A.only, A.hog, A.work, A.out
ROWS = []
# the former default, AdaGrad at l2 1e-5 (Cyclades' default schedule)
ADAGRAD = ["--schedule", "adagrad", "--l2", "1e-5"]


def load():
    return benchlib.load()


def data(name):
    return benchlib.data(WORK, name, "default_path")


def hgb(txt):
    out = txt + ".hgb"
    if not os.path.exists(out):
        subprocess.run([HOG, "convert", "-q", txt, out], check=True)
    return out


def generated():
    """The generated set: 1M rows x 1M features, 30 nonzeros a row
    (DEFAULT_PATH_ROWS=N for a quick check of the script itself)."""
    rows = os.environ.get("DEFAULT_PATH_ROWS", "1000000")
    txt = os.path.join(WORK, f"gen{rows}.svm")
    if not os.path.exists(txt):
        subprocess.run([HOG, "gen", "-q", "--rows", rows, "--features",
                        "1000000", "--nnz", "30", "--seed", "7", "-o", txt],
                       check=True)
    return txt


def train_json(args):
    """Runs hogtrain train with --json; returns the report."""
    with tempfile.NamedTemporaryFile(suffix=".json", dir=WORK) as j:
        subprocess.run([HOG, "train", "-q", "--json", j.name] + args,
                       check=True, capture_output=True)
        with open(j.name) as f:
            return json.load(f)


def wall(cmd, repeat=3):
    best = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        t = time.perf_counter() - t0
        best = t if best is None else min(best, t)
    return best


def epoch_seconds(rep):
    return sum(e["seconds"] for e in rep["epochs"])


def row(what, ours, base, ratio, target, met, la):
    ROWS.append(dict(measure=what, hogtrain=ours, baseline=base,
                     ratio=ratio, target=target, met=bool(met), load=la))


def kernel(tr, te):
    la = load()
    reps = {}
    for name, extra in (("default", []),
                        ("constant", ["--schedule", "constant", "--eta", "0.1"]),
                        ("adagrad", ADAGRAD)):
        rs = [train_json([tr, "-t", te, "--threads", "1"] + extra) for _ in range(3)]
        nnz = statistics.median(
            statistics.median(e["nnz_per_s"] for e in r["epochs"]) for r in rs)
        reps[name] = (nnz, rs[0]["epochs"][-1]["test_accuracy"])
    d, c, f = reps["default"], reps["constant"], reps["adagrad"]
    for what, x in (("default", d), ("the former default", f)):
        r = x[0] / c[0]
        row(f"{what} vs constant, M nnz/s (test acc)",
            f"{x[0] / 1e6:.0f} M ({100 * x[1]:.2f}%)",
            f"{c[0] / 1e6:.0f} M ({100 * c[1]:.2f}%)", f"{r:.2f}", ">= 0.5",
            r >= 0.5, la)


def sklearn(tr, te):
    try:
        from sklearn.datasets import load_svmlight_file
        from sklearn.linear_model import SGDClassifier
    except ImportError:
        print("sklearn: scikit-learn not installed (python3-sklearn); skipped")
        return
    la = load()
    X, y = load_svmlight_file(tr)
    Xt, yt = load_svmlight_file(te, n_features=X.shape[1])
    theirs = {}

    def fit():
        m = SGDClassifier(loss="log_loss", alpha=1e-5, max_iter=5, tol=None,
                          random_state=1)
        t0 = time.perf_counter()
        m.fit(X, y)
        seconds = time.perf_counter() - t0
        theirs["acc"] = m.score(Xt, yt)
        return seconds

    for what, extra in (("default", []), ("the former default", ADAGRAD)):
        rep = {}

        def ours():
            rep["r"] = train_json([tr, "-t", te, "--threads", "1",
                                   "--epochs", "5"] + extra)
            return epoch_seconds(rep["r"])

        secs, base = interleaved(ours, fit)
        ours_acc = rep["r"]["epochs"][-1]["test_accuracy"]
        r = secs / base
        row(f"{what} 5 epochs vs SGDClassifier fit, s (test acc)",
            f"{secs:.3f} s ({100 * ours_acc:.2f}%)",
            f"{base:.3f} s ({100 * theirs['acc']:.2f}%)", f"{r:.2f}",
            "<= 1.0", r <= 1.0 and ours_acc >= theirs["acc"], la)


def interleaved(a, b, repeat=5):
    """The fastest of `repeat` runs of each of two measurements, taken in
    turn (a, b, a, b, ...): a drift of the machine's speed during the
    benchmark (other virtual machines on its host) falls on both."""
    xs, ys = [], []
    for _ in range(repeat):
        xs.append(a())
        ys.append(b())
    return min(xs), min(ys)


def metrics(g):
    la = load()
    gh = hgb(g)
    base = [HOG, "train", "--schedule", "constant", "--eta", "0.1", gh]
    with tempfile.NamedTemporaryFile(suffix=".json", dir=WORK) as j:
        off, on = interleaved(lambda: wall(base + ["-q"], 1),
                              lambda: wall(base + ["-q", "--json", j.name], 1))
    r = on / off
    row("1M rows, whole run with metrics (--json) vs -q, s", f"{on:.2f} s",
        f"{off:.2f} s", f"{r:.2f}", "<= 1.15", r <= 1.15, la)


def coord(tr):
    n = int(subprocess.run([HOG, "info", tr], capture_output=True, text=True,
                           check=True).stdout.split("rows")[1].split()[0])
    for algo, loss in (("dcd", "sqhinge"), ("scd", "squared")):
        la = load()
        objective = {}

        def epoch(t, extra=()):
            r = train_json([tr, "--algo", algo, "--loss", loss, "--l2",
                            f"{1.0 / n:.6g}", "--tol", "0", "--epochs", "10",
                            "--threads", str(t), *extra])
            objective[(t, extra)] = r["epochs"][-1]["objective"]
            return statistics.mean(e["seconds"] for e in r["epochs"])
        per = dict(zip((1, 2), interleaved(lambda: epoch(1),
                                           lambda: epoch(2), 7)))
        r = per[2] / per[1]
        row(f"{algo} epoch at 2 threads vs 1, ms", f"{1e3 * per[2]:.1f} ms",
            f"{1e3 * per[1]:.1f} ms", f"{r:.2f}", "<= 0.7", r <= 0.7, la)
        if algo != "dcd":
            continue
        # dcd's wild mode (no compare-and-swap; docs/COORDINATE.md): the
        # same target, and how far its objective ends from the exact one
        la = load()
        wild = ("--update", "none")
        one, two = interleaved(lambda: epoch(1), lambda: epoch(2, wild), 7)
        r = two / one
        rel = objective[(2, wild)] / objective[(1, ())] - 1
        row(f"dcd --update none epoch at 2 threads vs 1, ms (objective "
            f"{rel:+.1e} relative)", f"{1e3 * two:.1f} ms",
            f"{1e3 * one:.1f} ms", f"{r:.2f}", "<= 0.7", r <= 0.7, la)


def cyclades(g):
    la = load()
    gh = hgb(g)
    ser, cyc = interleaved(
        lambda: wall([HOG, "train", "-q", "--algo", "serial", *ADAGRAD, gh],
                     1),
        lambda: wall([HOG, "train", "-q", "--algo", "cyclades", "--threads",
                      "2", gh], 1), 3)
    r = cyc / ser
    row("1M rows, Cyclades 2 threads vs serial, s", f"{cyc:.2f} s",
        f"{ser:.2f} s", f"{r:.2f}", "<= 0.7", r <= 0.7, la)


def parse(g):
    la = load()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", HOG, "info", g],
                       capture_output=True, text=True, check=True)
    rss = int(p.stderr.strip().split("\n")[-1]) * 1024
    info = p.stdout
    rows = int(info.split("rows")[1].split()[0])
    nnz = int(info.split("nonzeros")[1].split()[0])
    mem = 8 * (rows + 1) + 4 * rows + 8 * nnz
    limit = 1.5 * mem + 100 * 2**20
    row("peak RSS loading 1M-row text vs its data, MiB",
        f"{rss / 2**20:.0f} MiB", f"{mem / 2**20:.0f} MiB",
        f"{rss / mem:.2f}", f"<= {limit / 2**20:.0f} MiB", rss <= limit, la)


def main():
    if not os.access(HOG, os.X_OK):
        sys.exit(f"default_path: {HOG} not built (make)")
    t0 = time.time()
    tr = data("news20.binary.train.svm")
    te = data("news20.binary.test.svm")
    trh, teh = hgb(tr), hgb(te)
    steps = [("kernel", lambda: kernel(trh, teh)), ("sklearn", lambda: sklearn(tr, te)),
             ("coord", lambda: coord(trh))]
    if not ONLY or ONLY & {"metrics", "cyclades", "parse"}:
        g = generated()
        steps += [("metrics", lambda: metrics(g)), ("cyclades", lambda: cyclades(g)),
                  ("parse", lambda: parse(g))]
    for name, fn in steps:
        if ONLY and name not in ONLY:
            continue
        fn()
    print("\n| measure | hogtrain | baseline | ratio | target | met | load |")
    print("|---|---|---|---|---|---|---|")
    for r in ROWS:
        print(f"| {r['measure']} | {r['hogtrain']} | {r['baseline']} | "
              f"{r['ratio']} | {r['target']} | {'yes' if r['met'] else 'no'} | "
              f"{r['load']:.2f} |")
    print(f"\n{os.cpu_count()} CPUs, load average {load():.2f} at the end, "
          f"{time.time() - t0:.0f} s")
    benchlib.save(os.path.join(OUT, "default_path"), ROWS)


main()
