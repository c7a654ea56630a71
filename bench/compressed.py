#!/usr/bin/python3
"""Loading compressed text: hogtrain's own decompression against a pipe
from the command-line tool and against the plain text, same run.

usage: /usr/bin/python3 bench/compressed.py BUILD_DIR [FILE.xz ...] [--repeat N] [--quick]

For each file (default: news20.binary.train.svm.xz and
fashion-mnist.train.svm.xz from HOGTRAIN_DATA), as xz and as gzip and zstd
copies made from its text (gzip -6, zstd -3, under BUILD_DIR/benchdata),
the load time `hogtrain train` reports ("loaded ... in T s", measured
inside the command, one epoch after it) for:

  direct   hogtrain train FILE.xz           (the reading thread decompresses
                                             window i + 1 while window i is
                                             parsed)
  pipe     xzcat FILE.xz | hogtrain train -  (the tool decompresses, a pipe)
  text     hogtrain train FILE              (the plain text, mapped)

and the tool alone (`xzcat FILE.xz > /dev/null`, wall clock): the most a
single decompressing thread can deliver. Throughput is MB of text per
second; medians of N rounds (default 3). The load average (1 minute) is
printed beside each figure: on a shared machine it says how much the
figure is worth.

--quick (or HOGTRAIN_BENCH_QUICK=1): one round on a9a, to check that the
script runs, not to measure.
"""
import os, re, shutil, statistics, subprocess, sys, tempfile, time

args = sys.argv[1:]
QUICK = "--quick" in args or os.environ.get("HOGTRAIN_BENCH_QUICK") == "1"
args = [a for a in args if a != "--quick"]
repeat = 1 if QUICK else 3
if "--repeat" in args:
    i = args.index("--repeat"); repeat = int(args[i + 1]); del args[i:i + 2]
BUILD = os.path.abspath(args[0] if args else "build")
HOG = os.path.join(BUILD, "hogtrain")
DATA = os.environ.get("HOGTRAIN_DATA", os.path.abspath("../shared/data"))
WORK = os.path.join(BUILD, "benchdata")
os.makedirs(WORK, exist_ok=True)

# format: extension, the command that writes it to stdout, the one that
# decompresses to stdout
FORMATS = [
    ("xz", None, ["xz", "-dc"]),
    ("gz", ["gzip", "-6", "-c"], ["gzip", "-dc"]),
    ("zst", ["zstd", "-3", "-q", "-c"], ["zstd", "-dcq"]),
]


def load_avg():
    return f"{os.getloadavg()[0]:.2f}"


def made(path, cmd, src):
    """path, written by cmd from src unless it is there already."""
    if not os.path.exists(path):
        with open(path + ".part", "wb") as f:
            subprocess.run(cmd + [src], stdout=f, check=True)
        os.rename(path + ".part", path)
    return path


def loaded_seconds(cmd, stdin=None):
    """The load seconds hogtrain train reports on standard error."""
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        r = subprocess.run(cmd + ["--epochs", "1", "-o", os.path.join(tmp, "m.hgm")],
                           stdin=stdin, capture_output=True, text=True)
    m = re.search(r"^loaded .*? in ([0-9.]+) s$", r.stderr, re.M)
    if r.returncode != 0 or not m:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return float(m.group(1))


def piped_seconds(tool, path):
    p = subprocess.Popen(tool + [path], stdout=subprocess.PIPE)
    try:
        return loaded_seconds([HOG, "train", "-"], stdin=p.stdout)
    finally:
        p.stdout.close()
        p.wait()


def tool_seconds(tool, path):
    with open(os.devnull, "wb") as null:
        t0 = time.perf_counter()
        subprocess.run(tool + [path], stdout=null, check=True)
        return time.perf_counter() - t0


def median_of(fn):
    """Median seconds of `repeat` rounds, and the load average at the end."""
    s = statistics.median(fn() for _ in range(repeat))
    return s, load_avg()


names = args[1:] or (["a9a.xz"] if QUICK else
                     ["news20.binary.train.svm.xz", "fashion-mnist.train.svm.xz"])
print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
      f"{os.cpu_count()} CPUs, median of {repeat}"
      f"{' (quick: a check that the script runs, not a measurement)' if QUICK else ''}")
hdr = ["file", "format", "text MB", "how", "MB/s", "seconds", "load avg"]
print("| " + " | ".join(hdr) + " |")
print("|" + "---|" * len(hdr))
for name in names:
    xz = name if os.path.isabs(name) or os.path.exists(name) else os.path.join(DATA, name)
    if not os.path.exists(xz):
        print(f"| {os.path.basename(name)} | (not found under {DATA}: skipped) |")
        continue
    base = os.path.basename(xz)[:-3] if xz.endswith(".xz") else os.path.basename(xz)
    text = made(os.path.join(WORK, base), ["xz", "-dc"], xz)
    mb = os.path.getsize(text) / 1e6

    def row(fmt, how, s, la):
        print(f"| {base} | {fmt} | {mb:.1f} | {how} | {mb / s:.0f} | {s:.3f} | {la} |")
        sys.stdout.flush()

    s, la = median_of(lambda: loaded_seconds([HOG, "train", text]))
    row("text", "hogtrain train FILE (mapped)", s, la)
    for ext, pack, unpack in FORMATS:
        if shutil.which(unpack[0]) is None or (pack and shutil.which(pack[0]) is None):
            print(f"| {base} | {ext} | {mb:.1f} | ({unpack[0]} not installed: skipped) | | | |")
            continue
        f = xz if ext == "xz" else made(os.path.join(WORK, f"{base}.{ext}"), pack, text)
        tool = " ".join(unpack)
        s, la = median_of(lambda: tool_seconds(unpack, f))
        row(ext, f"{tool} FILE > /dev/null (the tool alone)", s, la)
        s, la = median_of(lambda: piped_seconds(unpack, f))
        row(ext, f"{tool} FILE \\| hogtrain train -", s, la)
        s, la = median_of(lambda: loaded_seconds([HOG, "train", f]))
        row(ext, f"hogtrain train FILE.{ext} (direct)", s, la)
print(f"load average after: {load_avg()}")
