#!/usr/bin/python3
"""Hashing and Vowpal Wabbit text against the LIBSVM path, same data, same run.

usage: /usr/bin/python3 bench/hashing.py BUILD_DIR [--rows N] [--repeat N] [--quick]

Generates a click-log-like data set (under BUILD_DIR/benchdata, kept for
the next run): N rows (default 3,000,000) of 13 numeric fields (log-normal
values, about a fifth of them absent) and 26 categorical fields whose
values are drawn log-uniformly from vocabularies of 10 to 2,000,000 values
(a few fields of millions, as in display-advertising logs), labelled +1/-1
by a planted logistic model of the values. The same rows are written twice:

  VW      "1 |n n1:0.52 n4:3.1 ... |c c1_3f c2_1a0b ..."  (names hashed)
  LIBSVM  "1 1:0.52 4:3.1 ... 14:1 977:1 ..."              (the categorical
          values numbered by first appearance, so every value has an index)

and each is trained for one epoch with `hogtrain train --json` (serial SGD,
the defaults) as:

  libsvm        the LIBSVM text, unhashed (a weight per distinct value)
  libsvm-h24    the LIBSVM text, --hash-bits 24
  vw-h24        the VW text, --hash-bits 24
  vw-h18        the VW text, VW's default 2^18 weights
  vw-h24-q-nc   the VW text, --hash-bits 24 --interactions nc: every
                numeric field crossed with every categorical one (about
                10 x 26 crossed features a row, generated as each row is
                read, never stored)

reporting the load (parse) time and MB/s of text, the epoch's training
seconds and rows/s, the nonzeros per second the kernel ran (crossed
entries counted), the collisions the hashing counted, the peak resident
set of the run (wait4), the model file's size, and the 1-minute load
average beside each: on a shared machine it says what a figure is worth.
Medians of --repeat rounds (default 3). The table goes to standard output,
CSV and JSON to BUILD_DIR/bench/hashing.{csv,json}.

--quick (or HOGTRAIN_BENCH_QUICK=1): 20,000 rows, one round: checks that
the script runs, measures nothing.
"""
import json, math, os, random, statistics, subprocess, sys, tempfile

args = sys.argv[1:]
QUICK = "--quick" in args or os.environ.get("HOGTRAIN_BENCH_QUICK") == "1"
args = [a for a in args if a != "--quick"]


def take(flag, default):
    if flag in args:
        i = args.index(flag)
        v = int(args[i + 1])
        del args[i:i + 2]
        return v
    return default


ROWS = take("--rows", 20000 if QUICK else 3000000)
REPEAT = take("--repeat", 1 if QUICK else 3)
BUILD = os.path.abspath(args[0] if args else "build")
HOG = os.path.join(BUILD, "hogtrain")
WORK = os.path.join(BUILD, "benchdata")
OUT = os.path.join(BUILD, "bench")
os.makedirs(WORK, exist_ok=True)
os.makedirs(OUT, exist_ok=True)

N_NUM, N_CAT = 13, 26


def load_avg():
    return round(os.getloadavg()[0], 2)


def vocab(f):
    """Field f's vocabulary: 10 to 2e6 values, log-spaced over the fields."""
    return int(10 * (2e5 ** (f / (N_CAT - 1))))


def planted(f, v):
    """The planted weight of value v of field f, in [-1, 1), no table."""
    x = (v * 2654435761 + f * 40503 + 12345) & 0xFFFFFFFF
    return (x / 2**31 - 1.0) * 0.6


def generate(rows, vw_path, svm_path, seed=1):
    rng = random.Random(seed)
    ids = {}
    next_id = N_NUM + 1
    wn = [rng.gauss(0, 0.3) for _ in range(N_NUM)]
    with open(vw_path + ".part", "w") as fv, open(svm_path + ".part", "w") as fs:
        bv, bs = [], []
        for r in range(rows):
            num = []
            m = -0.4
            for k in range(N_NUM):
                if rng.random() < 0.2:
                    continue
                x = round(math.exp(rng.gauss(0, 1)) / 3, 3)
                if x == 0:
                    continue
                num.append((k + 1, x))
                m += wn[k] * min(x, 3.0)
            cat = []
            for f in range(N_CAT):
                v = int(vocab(f) ** rng.random()) - 1
                key = (f, v)
                j = ids.get(key)
                if j is None:
                    j = ids[key] = next_id
                    next_id += 1
                cat.append((f, v, j))
                m += planted(f, v)
            y = 1 if rng.random() < 1 / (1 + math.exp(-m)) else -1
            bv.append(f"{y} |n " + " ".join(f"n{k}:{x}" for k, x in num) +
                      " |c " + " ".join(f"c{f + 1}_{v:x}" for f, v, _ in cat))
            ent = [f"{k}:{x}" for k, x in num]
            ent += [f"{j}:1" for j in sorted(j for _, _, j in cat)]
            bs.append(f"{y} " + " ".join(ent))
            if len(bv) == 10000:
                fv.write("\n".join(bv) + "\n")
                fs.write("\n".join(bs) + "\n")
                bv, bs = [], []
        if bv:
            fv.write("\n".join(bv) + "\n")
            fs.write("\n".join(bs) + "\n")
    os.rename(vw_path + ".part", vw_path)
    os.rename(svm_path + ".part", svm_path)
    return next_id - 1


def run_train(path, extra):
    """One `hogtrain train --epochs 1` run: its --json report, peak RSS
    (KiB, wait4) and the model's size."""
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        j, m = os.path.join(tmp, "r.json"), os.path.join(tmp, "m.hgm")
        cmd = [HOG, "train", "-q", "--epochs", "1", "--json", j, "-o", m] + \
              extra + [path]
        la = load_avg()
        p = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        _, status, ru = os.wait4(p.pid, 0)
        err = p.stderr.read()
        p.stderr.close()
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{err}")
        with open(j) as f:
            rep = json.load(f)
        return rep, ru.ru_maxrss, os.path.getsize(m), la


CASES = [
    ("libsvm", "svm", []),
    ("libsvm-h24", "svm", ["--hash-bits", "24"]),
    ("vw-h24", "vw", ["--hash-bits", "24"]),
    ("vw-h18", "vw", []),
    ("vw-h24-q-nc", "vw", ["--hash-bits", "24", "--interactions", "nc"]),
]


def main():
    tag = f"click{ROWS}"
    vw, svm = os.path.join(WORK, tag + ".vw"), os.path.join(WORK, tag + ".svm")
    if not (os.path.exists(vw) and os.path.exists(svm)):
        print(f"generating {ROWS} rows into {WORK} ...", file=sys.stderr)
        generate(ROWS, vw, svm)
    sizes = {"vw": os.path.getsize(vw), "svm": os.path.getsize(svm)}
    paths = {"vw": vw, "svm": svm}
    results = []
    for name, kind, extra in CASES:
        runs = [run_train(paths[kind], extra) for _ in range(REPEAT)]
        load = statistics.median(r[0]["data"]["train"]["load_seconds"] for r in runs)
        train = statistics.median(r[0]["epochs"][-1]["seconds"] for r in runs)
        rep = runs[0][0]
        h = rep.get("hashing") or {}
        results.append({
            "case": name,
            "rows": rep["data"]["train"]["rows"],
            "features": rep["data"]["train"]["features"],
            "nonzeros": rep["data"]["train"]["nonzeros"],
            "text_bytes": sizes[kind],
            "load_s": load,
            "load_mb_s": sizes[kind] / 1e6 / load if load > 0 else None,
            "train_s": train,
            "rows_per_s": rep["data"]["train"]["rows"] / train if train > 0 else None,
            "nonzeros_run": rep["data"]["train"].get("nonzeros_crossed")
            or rep["data"]["train"]["nonzeros"],
            "nnz_per_s": statistics.median(r[0]["epochs"][-1]["nnz_per_s"]
                                           for r in runs),
            "train_accuracy": rep["epochs"][-1].get("train_accuracy"),
            "hash_bits": h.get("bits"),
            "collisions": h.get("collisions"),
            "merged": h.get("merged"),
            "peak_rss_mib": statistics.median(r[1] for r in runs) / 1024,
            "model_mib": runs[0][2] / 2**20,
            "load_avg": statistics.median(r[3] for r in runs),
            "rounds": REPEAT,
        })
    cols = ["case", "features", "load_s", "load_mb_s", "train_s", "rows_per_s",
            "nnz_per_s",
            "train_accuracy", "collisions", "peak_rss_mib", "model_mib", "load_avg"]

    def fmt(v):
        if v is None:
            return "-"
        if isinstance(v, float):
            return f"{v:.3g}" if abs(v) < 1000 else f"{v:.0f}"
        return str(v)

    print(f"hashing: {ROWS} rows, {N_NUM} numeric and {N_CAT} categorical "
          f"fields, 1 epoch, medians of {REPEAT}" + (" (--quick: measures "
                                                    "nothing)" if QUICK else ""))
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in results:
        print("| " + " | ".join(fmt(r[c]) for c in cols) + " |")
    with open(os.path.join(OUT, "hashing.csv"), "w") as f:
        keys = list(results[0].keys())
        f.write(",".join(keys) + "\n")
        for r in results:
            f.write(",".join("" if r[k] is None else str(r[k]) for k in keys) + "\n")
    with open(os.path.join(OUT, "hashing.json"), "w") as f:
        json.dump({"rows": ROWS, "quick": QUICK, "results": results}, f, indent=1)


main()
