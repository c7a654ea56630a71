#!/usr/bin/python3
""".hgb load throughput against `cat FILE > /dev/null`, same run, same cache.

usage: /usr/bin/python3 bench/hgb_load.py BUILD_DIR FILE.hgb... [--repeat N] [--threads 1,2]

For each file (page cache warmed first) and thread count, N rounds, each:
`cat FILE > /dev/null` as a process (timed by wall clock, like the
issue's target), then build/bench/load_bench FILE T 1, which reads the file
once more the way cat does (128 KiB read()s, no process start) and then
loads it with hog_data_load (timed inside the process). Medians of the N
rounds. Ratios: cat / load (target >= 0.70), against the `cat` process and
against the in-process cat-like read. Load average printed with the table.
"""
import os, statistics, subprocess, sys, time

args = [a for a in sys.argv[1:]]
repeat, threads = 7, [1, os.cpu_count() or 1]
if "--repeat" in args:
    i = args.index("--repeat"); repeat = int(args[i + 1]); del args[i:i + 2]
if "--threads" in args:
    i = args.index("--threads"); threads = [int(x) for x in args[i + 1].split(",")]; del args[i:i + 2]
if len(args) < 2:
    sys.exit(__doc__)
build, files = args[0], args[1:]
LOADB = os.path.join(build, "bench", "load_bench")
threads = sorted(set(threads))


def cat_seconds(path):
    with open(os.devnull, "wb") as null:
        t0 = time.perf_counter()
        subprocess.run(["cat", path], stdout=null, check=True)
        return time.perf_counter() - t0


def load_round(path, t):
    out = subprocess.run([LOADB, path, str(t), "1"], capture_output=True, text=True,
                         check=True).stdout.strip().split(",")
    return float(out[7]), float(out[8])  # load seconds, cat-like read seconds


print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
      f"{os.getloadavg()[2]:.2f}, {os.cpu_count()} CPUs, median of {repeat}")
hdr = ["file", "MB", "cat MB/s", "cat-like read MB/s"]
for t in threads:
    hdr += [f"load {t}T MB/s", f"ratio {t}T", f"ratio {t}T vs read"]
print("| " + " | ".join(hdr) + " |")
print("|" + "---|" * len(hdr))
for path in files:
    mb = os.path.getsize(path) / 1e6
    cat_seconds(path)  # into the page cache
    tcat, tread, tload = [], [], {t: [] for t in threads}
    for _ in range(repeat):
        for t in threads:
            tcat.append(cat_seconds(path))
            l, r = load_round(path, t)
            tload[t].append(l)
            tread.append(r)
    c, r = statistics.median(tcat), statistics.median(tread)
    row = [os.path.basename(path), f"{mb:.1f}", f"{mb / c:.0f}", f"{mb / r:.0f}"]
    for t in threads:
        l = statistics.median(tload[t])
        row += [f"{mb / l:.0f}", f"{c / l:.2f}", f"{r / l:.2f}"]
    print("| " + " | ".join(row) + " |")
    sys.stdout.flush()
print(f"load average after: {os.getloadavg()[0]:.2f}")
