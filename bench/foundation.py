#!/usr/bin/python3
"""Foundation benchmarks, each against a baseline measured in the same run.

  parse   LIBSVM text -> memory, MB/s, hogtrain (1 thread, all threads)
          against scikit-learn's load_svmlight_file on the same files
  hgb     .hgb load against `cat FILE > /dev/null` from the page cache
  sgd     serial SGD: seconds (parse + train) to reach LIBLINEAR's test
          accuracy (within 0.5 points) against liblinear-train -s 0/1/2

usage: /usr/bin/python3 bench/foundation.py BUILD_DIR [--quick] [--only parse,hgb,sgd]
Writes BUILD_DIR/bench/foundation-*.csv and prints Markdown tables.
"""
import csv, json, os, statistics, subprocess, sys, tempfile, time

BUILD = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build")
QUICK = "--quick" in sys.argv
ONLY = None
if "--only" in sys.argv:
    ONLY = set(sys.argv[sys.argv.index("--only") + 1].split(","))
HOG = os.path.join(BUILD, "hogtrain")
LOADB = os.path.join(BUILD, "bench", "load_bench")
DATA = os.environ.get("HOGTRAIN_DATA", os.path.abspath("../shared/data"))
WORK = os.path.join(BUILD, "benchdata")
OUT = os.path.join(BUILD, "bench")
os.makedirs(WORK, exist_ok=True)
os.makedirs(OUT, exist_ok=True)
NPROC = os.cpu_count() or 1


def data(name):
    """Decompressed path of a real data file, or None when absent."""
    dst = os.path.join(WORK, name)
    if os.path.exists(dst):
        return dst
    src = os.path.join(DATA, name)
    if os.path.exists(src):
        return src
    if not os.path.exists(src + ".xz"):
        return None
    with open(dst + ".part", "wb") as f:
        subprocess.run(["xz", "-dc", src + ".xz"], stdout=f, check=True)
    os.rename(dst + ".part", dst)
    return dst


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, check=True, **kw)


def timed(cmd):
    t0 = time.perf_counter()
    run(cmd)
    return time.perf_counter() - t0


def table(title, header, rows):
    print(f"\n### {title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")
    sys.stdout.flush()


def write_csv(name, header, rows):
    with open(os.path.join(OUT, name), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def hog_load(path, threads, repeat=3):
    out = run([LOADB, path, str(threads), str(repeat)]).stdout.strip().split(",")
    return float(out[3])  # best seconds


def generated(size_mb):
    path = os.path.join(WORK, f"gen{size_mb}m.svm")
    if not os.path.exists(path):
        rows = int(size_mb * 1e6 / 640)  # about 640 bytes a row at 50 nnz
        run([HOG, "gen", "--rows", str(rows), "--features", "1000000",
             "--nnz", "50", "--seed", "7", "-o", path])
    return path


def sk_load(path):
    code = ("import time,sys\nfrom sklearn.datasets import load_svmlight_file\n"
            "t=time.perf_counter();load_svmlight_file(sys.argv[1]);"
            "print(time.perf_counter()-t)")
    return float(run(["/usr/bin/python3", "-c", code, path]).stdout)


def bench_parse():
    files = ["a9a", "ijcnn1", "reuters_moneyfx.trn", "news20.binary.train.svm"]
    paths = [(f, data(f)) for f in files]
    paths.append(("generated", generated(100 if QUICK else 1000)))
    rows = []
    for name, p in paths:
        if not p:
            print(f"(parse: {name} not found, skipped)")
            continue
        mb = os.path.getsize(p) / 1e6
        rep = 1 if mb > 500 else 3
        t1 = hog_load(p, 1, rep)
        tn = hog_load(p, NPROC, rep)
        ts = sk_load(p)
        rows.append([name, f"{mb:.1f}", f"{mb / ts:.1f}", f"{mb / t1:.1f}",
                     f"{mb / tn:.1f}", f"{ts / t1:.1f}x", f"{ts / tn:.1f}x"])
    header = ["file", "MB", "sklearn MB/s", "hogtrain 1T MB/s",
              f"hogtrain {NPROC}T MB/s", "1T vs sklearn", f"{NPROC}T vs sklearn"]
    write_csv("foundation-parse.csv", header, rows)
    table("Parse throughput (target: 1 thread >= 5x scikit-learn)", header, rows)


def hgb_version(path):
    with open(path, "rb") as f:
        head = f.read(12)
    return int.from_bytes(head[8:12], "little") if len(head) == 12 else 0


def bench_hgb():
    """Medians of interleaved rounds: `cat FILE > /dev/null` (a process, as
    the target says), then load_bench with 1 and with all threads, each of
    which also reads the file cat's way in-process just before its load."""
    files = ["a9a", "news20.binary.train.svm"]
    rows = []
    for name, p in [(f, data(f)) for f in files] + [("generated", generated(100 if QUICK else 1000))]:
        if not p:
            continue
        hgb = os.path.join(WORK, os.path.basename(p) + ".hgb")
        if not os.path.exists(hgb) or hgb_version(hgb) != 2:
            run([HOG, "convert", p, hgb])  # a cache from an older hogtrain
        mb = os.path.getsize(hgb) / 1e6
        timed(["sh", "-c", f"cat '{hgb}' > /dev/null"])  # into the page cache
        tcat, tread, tl = [], [], {1: [], NPROC: []}
        for _ in range(7):
            tcat.append(timed(["sh", "-c", f"cat '{hgb}' > /dev/null"]))
            for t in tl:
                out = run([LOADB, hgb, str(t), "1"]).stdout.strip().split(",")
                tl[t].append(float(out[7]))
                tread.append(float(out[8]))
        c, r = statistics.median(tcat), statistics.median(tread)
        l1, ln = statistics.median(tl[1]), statistics.median(tl[NPROC])
        rows.append([name, f"{mb:.1f}", f"{mb / c:.0f}", f"{mb / l1:.0f}",
                     f"{c / l1:.2f}", f"{mb / ln:.0f}", f"{c / ln:.2f}",
                     f"{r / l1:.2f}", f"{r / ln:.2f}"])
    header = ["file", ".hgb MB", "cat MB/s", "load 1T MB/s", "ratio 1T",
              f"load {NPROC}T MB/s", f"ratio {NPROC}T",
              "1T vs in-process read", f"{NPROC}T vs in-process read"]
    write_csv("foundation-hgb.csv", header, rows)
    table(".hgb load from the page cache (target: ratio >= 0.70; "
          f"load average {os.getloadavg()[0]:.1f})", header, rows)


# (train, test, liblinear C) — C = 1 as LIBLINEAR's default.
SETS = [("a9a", "a9a", "a9a.t"), ("ijcnn1", "ijcnn1", "ijcnn1.t"),
        ("reuters_moneyfx", "reuters_moneyfx.trn", "reuters_moneyfx.tst"),
        ("news20.binary", "news20.binary.train.svm", "news20.binary.test.svm")]
SOLVERS = {0: ("logistic", "L2 logistic"), 1: ("sqhinge", "L2-loss SVM (dual)"),
           2: ("sqhinge", "L2-loss SVM (primal)")}


def liblinear(s, tr, te, tmp):
    model = os.path.join(tmp, f"ll{s}.model")
    t = timed(["liblinear-train", "-q", "-s", str(s), "-c", "1", "-B", "1", tr, model])
    pred = run(["liblinear-predict", te, model, os.path.join(tmp, "pred")]).stdout
    acc = float(pred.split("=")[1].split("%")[0])
    return t, acc


def rows_of(path):
    with open(path, "rb") as f:
        return sum(1 for line in f if line.strip() and not line.startswith(b"#"))


def hog_run(loss, tr, te, tmp, epochs):
    """hogtrain on LIBLINEAR's problem: C = 1 is l2 = 1/n, bias 1."""
    js = os.path.join(tmp, "run.json")
    t0 = time.perf_counter()
    run([HOG, "train", tr, "-t", te, "--loss", loss, "--epochs", str(epochs),
         "--l2", repr(1.0 / rows_of(tr)), "--bias", "1", "--quiet", "--json", js])
    wall = time.perf_counter() - t0
    return json.load(open(js)), wall


def bench_sgd():
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, trn, tst in SETS:
            tr, te = data(trn), data(tst)
            if not tr or not te:
                print(f"(sgd: {name} not found, skipped)")
                continue
            for s, (loss, label) in SOLVERS.items():
                lt, lacc = liblinear(s, tr, te, tmp)
                rep, wall = hog_run(loss, tr, te, tmp, 10)
                load = rep["timings"]["load_train_seconds"]
                reached = None
                for ep in rep["epochs"]:
                    if ep["test_accuracy"] * 100 >= lacc - 0.5:
                        reached = (ep["epoch"], load + ep["total_seconds"])
                        break
                final = rep["epochs"][-1]["test_accuracy"] * 100
                if reached:
                    rows.append([name, f"-s {s} ({label})", f"{lacc:.2f}", f"{lt:.3f}",
                                 f"{final:.2f}", reached[0], f"{reached[1]:.3f}",
                                 f"{lt / reached[1]:.1f}x"])
                else:
                    rows.append([name, f"-s {s} ({label})", f"{lacc:.2f}", f"{lt:.3f}",
                                 f"{final:.2f}", "not reached", "-", "-"])
    header = ["data", "LIBLINEAR solver", "LIBLINEAR test acc %", "LIBLINEAR s",
              "hogtrain acc % (10 ep)", "epoch reached", "hogtrain s (parse+train)",
              "speedup"]
    write_csv("foundation-sgd.csv", header, rows)
    table("Serial SGD: time to LIBLINEAR's test accuracy - 0.5 points", header, rows)


if __name__ == "__main__":
    print(f"# hogtrain foundation benchmarks ({NPROC} CPUs, {time.strftime('%Y-%m-%d %H:%M')})")
    for name, fn in [("parse", bench_parse), ("hgb", bench_hgb), ("sgd", bench_sgd)]:
        if ONLY is None or name in ONLY:
            fn()
