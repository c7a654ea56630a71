#!/usr/bin/python3
"""Cross-validation and the search of C (docs/BENCHMARKS.md, "Model
selection"): hogtrain train --cv 5 and --search-C against liblinear-train
-v 5 and -C on the same problem, in one run on this machine:

  --cv 5      hogtrain --algo dcd --loss sqhinge --C 1 --cv 5 (every core)
              against liblinear-train -s 1 -c 1 -B 1 -v 5
  --search-C  hogtrain --algo dcd --loss sqhinge --search-C (5 folds)
              against liblinear-train -s 2 -B 1 -C (the same problem, the
              same start C and doubling; LIBLINEAR's own stopping rule)

on a9a and news20.binary: wall time (parse included on both sides), the
CV accuracy and, for the search, the chosen C, with the 1-minute load
average beside each figure.

usage: /usr/bin/python3 bench/cv.py BUILD_DIR [--only a9a,news20]
       [--timeout S] [--quick]
Prints a table and writes BUILD_DIR/bench/cv.csv and cv.json. Run it alone
on the machine. --quick (or HOGTRAIN_BENCH_QUICK=1): a check that the
script works, on the first 2000 rows of a9a only (no figures to record).
"""
import json, os, re, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

A = benchlib.setup(sys.argv, timeout=3600)
BUILD, ONLY, TIMEOUT, QUICK = A.build, A.only, A.timeout, A.quick
HOG, WORK, OUT = A.hog, A.work, A.out
ROWS = []

SETS = {"a9a": "a9a", "news20": "news20.binary.train.svm"}


def load():
    return benchlib.load()


def data(name):
    dst = benchlib.data(WORK, name, "cv")
    if not QUICK:
        return dst
    small = dst + ".quick"
    with open(dst) as f, open(small, "w") as g:
        for i, line in enumerate(f):
            if i >= 2000:
                break
            g.write(line)
    return small


def timed(cmd):
    return benchlib.timed(cmd, TIMEOUT)


def row(set_, task, tool, wall, acc, c, la):
    ROWS.append(dict(set=set_, task=task, tool=tool, wall=wall, accuracy=acc,
                     best_C=c, load=la))


def hog_cv(set_, path):
    la = load()
    with tempfile.NamedTemporaryFile(suffix=".json", dir=WORK) as j:
        secs, _ = timed([HOG, "train", "-q", "--algo", "dcd", "--loss",
                         "sqhinge", "--C", "1", "--cv", "5", "--json", j.name,
                         path])
        cv = json.load(open(j.name))["cross_validation"]
    row(set_, "cv 5", "hogtrain dcd sqhinge --C 1 --cv 5", secs,
        cv["accuracy"], 1.0, la)


def hog_search(set_, path):
    la = load()
    with tempfile.NamedTemporaryFile(suffix=".json", dir=WORK) as j:
        secs, _ = timed([HOG, "train", "-q", "--algo", "dcd", "--loss",
                         "sqhinge", "--search-C", "--json", j.name, path])
        s = json.load(open(j.name))["search_C"]
    row(set_, "search C", f"hogtrain dcd sqhinge --search-C "
        f"({len(s['steps'])} C)", secs, s["best_accuracy"], s["best_C"], la)


def ll_cv(set_, path):
    la = load()
    secs, p = timed(["liblinear-train", "-q", "-s", "1", "-c", "1", "-B", "1",
                     "-v", "5", path])
    acc = float(re.search(r"Accuracy = ([0-9.]+)%", p.stdout).group(1)) / 100
    row(set_, "cv 5", "liblinear-train -s 1 -c 1 -B 1 -v 5", secs, acc, 1.0,
        la)


def ll_search(set_, path):
    la = load()
    secs, p = timed(["liblinear-train", "-s", "2", "-B", "1", "-C", path])
    m = re.search(r"Best C = ([0-9.e+-]+)\s+CV accuracy = ([0-9.]+)%",
                  p.stdout)
    n = len(re.findall(r"log2c=", p.stdout))
    row(set_, "search C", f"liblinear-train -s 2 -B 1 -C ({n} C)", secs,
        float(m.group(2)) / 100, float(m.group(1)), la)


def main():
    if not os.path.exists(HOG):
        sys.exit(f"cv: {HOG} not built (make)")
    for key, name in SETS.items():
        if (ONLY and key not in ONLY) or (QUICK and key != "a9a"):
            continue
        path = data(name)
        for fn in (hog_cv, ll_cv, hog_search, ll_search):
            try:
                fn(key, path)
            except (RuntimeError, subprocess.TimeoutExpired, OSError,
                    AttributeError) as e:
                print(f"{key} {fn.__name__}: {e}")
    if not ROWS:
        sys.exit("cv: nothing ran")
    print(f"{'set':8} {'task':9} {'tool':46} {'wall s':>8} {'CV acc':>8} "
          f"{'best C':>10} {'load':>5}")
    for r in ROWS:
        print(f"{r['set']:8} {r['task']:9} {r['tool']:46} {r['wall']:8.2f} "
              f"{100 * r['accuracy']:7.2f}% {r['best_C']:10.4g} "
              f"{r['load']:5.2f}")
    for key in SETS:
        for task in ("cv 5", "search C"):
            pair = [r for r in ROWS if r["set"] == key and r["task"] == task]
            if len(pair) == 2:
                h, l = pair if pair[0]["tool"].startswith("hogtrain") \
                    else pair[::-1]
                print(f"{key} {task}: hogtrain {h['wall'] / l['wall']:.2f}x "
                      f"LIBLINEAR's wall time, CV accuracy "
                      f"{100 * (h['accuracy'] - l['accuracy']):+.2f} points")
    base = benchlib.save(os.path.join(OUT, "cv"), ROWS, QUICK)
    print(f"wrote {base}.csv and .json" +
          (" (quick mode: a check of the script, not figures)" if QUICK
           else ""))


if __name__ == "__main__":
    main()
