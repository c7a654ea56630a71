#!/usr/bin/python3
"""--algo auto, the default, against what a user would otherwise run: the
same command with --algo serial (the default before auto, on all cores for
parsing and metrics) and with --threads 1 (one core for everything). On
the recorded sets: a9a, news20.binary, ijcnn1, reuters money-fx, news20
(20 classes) and the 1M-row generated set (end_to_end.py's, 800,000 rows
trained, 200,000 tested). Whole runs, parse included, `train -q TRAIN -o
MODEL`, taken in turn REPEAT times (default 11), the median each and
the median of the ratios of each turn's runs (paired: the machine's
drift cancels); test
accuracy and auto's choice from one --json run with the test set. The
target (docs/BENCHMARKS.md, "--algo auto"): the default never slower than
--threads 1.

Then, on the 1M-row set, every other --algo at its default threads
against the default, once each (a failed or timed-out run is said): the
rows behind "auto never picks them" in --help.

usage: /usr/bin/python3 bench/auto.py BUILD_DIR [--only a9a,...,algos]
       [--quick]
Prints one table with the load average beside each row and writes
BUILD_DIR/bench/auto.csv and .json. Run it alone on the machine.
"""
import json, os, statistics, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

A = benchlib.setup(sys.argv, timeout=600)
REPEAT = 1 if A.quick else int(os.environ.get("REPEAT", "11"))
SETS = {"a9a": ("a9a", "a9a.t"),
        "news20.binary": ("news20.binary.train.svm", "news20.binary.test.svm"),
        "ijcnn1": ("ijcnn1", "ijcnn1.t"),
        "reuters": ("reuters_moneyfx.trn", "reuters_moneyfx.tst"),
        "news20": ("news20.train.svm", "news20.test.svm"),
        "gen": None}
ALGO_TIMEOUT = 150  # s: dcd and scd to their tol on 1M rows can take long
RUNS = {"default": [], "serial": ["--algo", "serial"],
        "threads1": ["--threads", "1"]}


def files(key):
    if SETS[key] is None:
        return benchlib.generated_split(A.hog, A.work)
    return tuple(benchlib.data(A.work, n, "auto") for n in SETS[key])


def report(args, train, test, timeout=None):
    """Test accuracy and auto's choice, from a --json run."""
    with tempfile.NamedTemporaryFile(suffix=".json", dir=A.work) as j:
        benchlib.timed([A.hog, "train", "-q", "--json", j.name] + args +
                       [train, "-t", test], timeout or A.timeout)
        with open(j.name) as f:
            r = json.load(f)
    auto = r["options"]["auto"]
    chose = f"{auto['algo']} x{auto['threads']}" if auto else "-"
    return r["epochs"][-1]["test_accuracy"], chose


def main():
    rows = []
    print(f"{'set':14} {'default s':>9} {'serial s':>9} {'1 thread s':>10} "
          f"{'def/1t':>7} {'def/ser':>7} {'acc def':>8} {'acc 1t':>8}  "
          f"auto chose   load")
    for key in SETS:
        if (A.only and key not in A.only) or (A.quick and key == "gen"):
            continue
        train, test = files(key)
        model = os.path.join(A.work, "auto-bench.hgm")
        times = {k: [] for k in RUNS}
        for _ in range(REPEAT):
            for k, extra in RUNS.items():
                t, _p = benchlib.timed([A.hog, "train", "-q"] + extra +
                                       [train, "-o", model], A.timeout)
                times[k].append(t)
        med = {k: statistics.median(v) for k, v in times.items()}
        pair = {k: statistics.median(a / b for a, b in
                                     zip(times["default"], times[k]))
                for k in ("serial", "threads1")}
        acc_d, chose = report([], train, test)
        acc_1, _c = report(RUNS["threads1"], train, test)
        la = benchlib.load()
        r = dict(set=key, default_s=med["default"], serial_s=med["serial"],
                 threads1_s=med["threads1"],
                 default_vs_threads1=pair["threads1"],
                 default_vs_serial=pair["serial"],
                 acc_default=acc_d, acc_threads1=acc_1, auto_chose=chose,
                 load=la)
        rows.append(r)
        print(f"{key:14} {r['default_s']:9.3f} {r['serial_s']:9.3f} "
              f"{r['threads1_s']:10.3f} {r['default_vs_threads1']:7.2f} "
              f"{r['default_vs_serial']:7.2f} {100 * acc_d:7.2f}% "
              f"{100 * acc_1:7.2f}%  {chose:12} {la:.2f}", flush=True)
    if not A.only or "algos" in A.only:
        algos(rows)
    base = benchlib.save(os.path.join(A.out, "auto"), rows, A.quick)
    print(f"wrote {base}.csv and .json")


def algos(rows):
    train, test = benchlib.generated_split(A.hog, A.work)
    print(f"\n{'1M rows: --algo':16} {'s':>8} {'/default':>8} {'test acc':>9}"
          f"   load")
    base = None
    for algo in ("auto", "serial", "hogwild", "cyclades", "dcd", "scd",
                 "newton", "lbfgs"):
        try:
            t, _p = benchlib.timed([A.hog, "train", "-q", "--algo", algo,
                                    train, "-o",
                                    os.path.join(A.work, "auto-bench.hgm")],
                                   ALGO_TIMEOUT)
            acc, _c = report(["--algo", algo], train, test, ALGO_TIMEOUT)
        except Exception as e:  # a refusal or a timeout, said
            print(f"{algo:16} {str(e)[:60]}")
            continue
        base = base or t
        la = benchlib.load()
        rows.append(dict(set="gen-algos", default_s=base, serial_s=None,
                         threads1_s=None, default_vs_threads1=None,
                         default_vs_serial=t / base, acc_default=acc,
                         acc_threads1=None, auto_chose=algo, load=la))
        print(f"{algo:16} {t:8.3f} {t / base:8.2f} {100 * acc:8.2f}%   "
              f"{la:.2f}", flush=True)


if __name__ == "__main__":
    main()
