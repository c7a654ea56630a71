"""What the Python bench scripts share: their command line and the build's
folders, the load average beside each figure, the data sets decompressed
once under BUILD/benchdata, and timed runs of a command."""
import csv, json, os, subprocess, sys, time, types

DATA = os.environ.get("HOGTRAIN_DATA", os.path.abspath("../shared/data"))


def setup(argv, timeout=None):
    """The scripts' common command line, `BUILD_DIR [--only A,B] [--timeout
    S] [--quick]` (HOGTRAIN_BENCH_QUICK=1 is --quick too; timeout: the
    default of --timeout), and the build's paths: build, only (a set or
    None), timeout, quick, hog (the command), work (BUILD/benchdata) and
    out (BUILD/bench), both made."""
    def value(flag):
        return argv[argv.index(flag) + 1] if flag in argv else None
    build = os.path.abspath(argv[1] if len(argv) > 1 and
                            not argv[1].startswith("--") else "build")
    only = value("--only")
    a = types.SimpleNamespace(
        build=build, only=set(only.split(",")) if only else None,
        timeout=float(value("--timeout")) if "--timeout" in argv else timeout,
        quick="--quick" in argv or
        os.environ.get("HOGTRAIN_BENCH_QUICK") == "1",
        hog=os.path.join(build, "hogtrain"),
        work=os.path.join(build, "benchdata"),
        out=os.path.join(build, "bench"))
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    return a


def load():
    """The 1-minute load average, printed beside each figure."""
    return os.getloadavg()[0]


def data(work, name, who):
    """DATA/name.xz decompressed once into work/name; exits naming the file
    when it is absent (who: the script's name, for the message)."""
    dst = os.path.join(work, name)
    if os.path.exists(dst):
        return dst
    src = os.path.join(DATA, name + ".xz")
    if not os.path.exists(src):
        sys.exit(f"{who}: {src} not found (set HOGTRAIN_DATA)")
    with open(dst + ".part", "wb") as f:
        subprocess.run(["xz", "-dc", src], stdout=f, check=True)
    os.rename(dst + ".part", dst)
    return dst


def timed(cmd, timeout):
    """Runs cmd; its wall seconds and the finished process. A failure is a
    RuntimeError with the end of what it printed."""
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[0]} failed: "
                           f"{(p.stderr or p.stdout).strip()[-300:]}")
    return time.perf_counter() - t0, p


def save(base, rows, quick=False):
    """rows (a list of dicts with the same keys) as base.csv and base.json
    ("-quick" added to base in quick mode); returns the base written."""
    base += "-quick" if quick else ""
    with open(base + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["none"])
        w.writeheader()
        w.writerows(rows)
    with open(base + ".json", "w") as f:
        json.dump(rows, f, indent=1)
    return base


def generated_split(hog, work):
    """The recorded 1M-row set: 1M rows x 1M features, 30 nonzeros a row
    (hogtrain gen, seed 7; default_path.py's whole set), split 800,000 /
    200,000 by lines, made once under work. Returns (train, test)."""
    whole = os.path.join(work, "gen1000000.svm")
    if not os.path.exists(whole):
        subprocess.run([hog, "gen", "-q", "--rows", "1000000", "--features",
                        "1000000", "--nnz", "30", "--seed", "7", "-o", whole],
                       check=True)
    tr, te = whole + ".train", whole + ".test"
    if not os.path.exists(te):
        with open(whole) as f, open(tr + ".part", "w") as a, \
                open(te + ".part", "w") as b:
            for i, line in enumerate(f):
                (a if i < 800000 else b).write(line)
        os.rename(tr + ".part", tr)
        os.rename(te + ".part", te)
    return tr, te
