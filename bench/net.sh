#!/bin/sh
# Scale-out benchmarks (docs/BENCHMARKS.md):
#  1. all-reduce of 1, 16 and 256 MB with 2, 3 and 4 ranks on loopback:
#     algorithm bandwidth as a fraction of a plain point-to-point TCP
#     transfer measured in the same run, and MPI_Allreduce of the same
#     sizes (when mpirun and an MPI build are there);
#  2. time to accuracy on news20.binary: 1 process on all rows against 3
#     processes on a third each (MA and BMUF with serial SGD inside, MA with
#     Hogwild! on 2 threads inside);
#  3. exact solving (issue 39): --algo newton and lbfgs, 1 process on all
#     rows against --world 3 on loopback (--shard stride), the objective of
#     each model on all the rows (target: within 1e-9 relative) and the
#     wall time, parse included.
# CSV under BUILD/bench/, Markdown tables on stdout.
#   sh bench/net.sh [BUILD]      (make bench-progs first)
#   PARTS="exact" EXACT_SETS="a9a" sh bench/net.sh    only part 3, on a9a
set -eu
BUILD=${1:-build}
OUT=$BUILD/bench
DATA=${HOGTRAIN_DATA:-../shared/data}
BIN=$BUILD/hogtrain
PARTS=${PARTS:-allreduce tta exact}
EXACT_SETS=${EXACT_SETS:-a9a news20.binary.train.svm}
mkdir -p "$OUT"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

# ---- 1. all-reduce bandwidth ------------------------------------------------
if part allreduce; then
CSV=$OUT/net_allreduce.csv
"$OUT/net_bench" tcp 1 16 256 > "$CSV"
if command -v mpirun >/dev/null 2>&1; then
    for np in 2 3 4; do
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo \
        OMPI_MCA_oob_tcp_if_include=lo \
            mpirun --oversubscribe -np $np "$OUT/net_bench" mpi 1 16 256 \
            >> "$CSV" 2>/dev/null || echo "(MPI run with $np ranks failed)"
    done
fi
python3 - "$CSV" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), fieldnames=None))
p2p = {r['bytes']: float(r['algbw_GBps']) for r in rows if r['backend'] == 'p2p'}
print("\nalgorithm bandwidth = vector bytes / seconds per all-reduce (float32 sums; not"
      "\nbus bandwidth: a ring rank sends and receives 2 (N-1)/N of the vector, 1x at"
      "\nN = 2); p2p = bytes / seconds of one plain TCP transfer between two processes,"
      "\nmeasured in the same run; fraction = ring / p2p (target >= 0.5 at 256 MB)")
print("\n| size | ranks | TCP ring GB/s | fraction of p2p | MPI_Allreduce GB/s | fraction of p2p |")
print("|---:|---:|---:|---:|---:|---:|")
for b in sorted(p2p, key=int):
    print(f"| {int(b) >> 20} MB | p2p | {p2p[b]:.3f} | 1 | | |")
    for w in ('2', '3', '4'):
        t = [r for r in rows if r['backend'] == 'tcp' and r['bytes'] == b and r['ranks'] == w]
        m = [r for r in rows if r['backend'] == 'mpi' and r['bytes'] == b and r['ranks'] == w]
        tb = float(t[0]['algbw_GBps']) if t else float('nan')
        mb = float(m[0]['algbw_GBps']) if m else float('nan')
        print(f"| {int(b) >> 20} MB | {w} | {tb:.3f} | {tb / p2p[b]:.2f} | "
              f"{mb:.3f} | {mb / p2p[b]:.2f} |")
PY
fi

# ---- 2. time to accuracy ----------------------------------------------------
if part tta; then
T=$OUT/net_tta
mkdir -p "$T"
for f in news20.binary.train.svm news20.binary.test.svm; do
    [ -f "$T/$f" ] || xz -dc "$DATA/$f.xz" > "$T/$f"
done
TR=$T/news20.binary.train.svm
TE=$T/news20.binary.test.svm
EP=10
"$BIN" train -q --epochs $EP "$TR" -t "$TE" --json "$T/single.json"
run3() { # name, options...
    name=$1; shift
    port=$((20000 + $$ % 20000))
    for r in 0 1 2; do
        "$BIN" train -q --world 3 --rank $r --coordinator 127.0.0.1:$port \
            --shard stride --epochs $EP "$@" "$TR" -t "$TE" \
            --json "$T/$name.$r.json" &
    done
    wait
}
run3 ma --sync ma --eta 1.5 --sync-every 4000
run3 bmuf --sync bmuf --sync-every 1000
run3 hogwild --sync ma --eta 1.5 --sync-every 4000 --algo hogwild --threads 2
python3 - "$T" <<'PY'
import json, sys
d = sys.argv[1]
def load(p):
    j = json.load(open(p))
    return [(e['total_seconds'], 100 * e['test_accuracy']) for e in j['epochs']]
runs = {'1 process': load(f"{d}/single.json"),
        '3 processes, MA': load(f"{d}/ma.0.json"),
        '3 processes, BMUF': load(f"{d}/bmuf.0.json"),
        '3 processes, MA, Hogwild! 2 threads each': load(f"{d}/hogwild.0.json")}
best = max(a for _, a in runs['1 process'])
target = best - 0.5
print(f"\ntime to {target:.2f}% test accuracy (the single process's best minus 0.5 points):\n")
print("| run | epochs | final test accuracy | training s | s to target |")
print("|---|---:|---:|---:|---:|")
for k, v in runs.items():
    hit = next((t for t, a in v if a >= target), float('nan'))
    print(f"| {k} | {len(v)} | {v[-1][1]:.2f}% | {v[-1][0]:.2f} | {hit:.2f} |")
PY
fi

# ---- 3. exact solving across processes --------------------------------------
if part exact; then
X=$OUT/net_exact
mkdir -p "$X"
CSV=$X/net_exact.csv
echo "data,algo,options,single_s,world3_s,ratio,obj_single,obj_world3,obj_rel" > "$CSV"
secs() { python3 -c 'import time; print(f"{time.perf_counter():.6f}")'; }
for set in $EXACT_SETS; do
    f=$X/$set
    [ -f "$f" ] || xz -dc "$DATA/$set.xz" > "$f"
    for run in "newton --loss logistic --C 1" "lbfgs --loss logistic --C 1" \
               "lbfgs --loss logistic --l1 1e-4 --l2 0"; do
        t0=$(secs)
        "$BIN" train -q --algo $run "$f" -o "$X/single.hgm"
        t1=$(secs)
        port=$((20000 + $$ % 20000))
        for r in 0 1 2; do
            "$BIN" train -q --world 3 --rank $r --coordinator 127.0.0.1:$port \
                --shard stride --algo $run "$f" -o "$X/world.$r.hgm" &
        done
        wait
        t2=$(secs)
        cmp -s "$X/world.0.hgm" "$X/world.1.hgm" &&
            cmp -s "$X/world.0.hgm" "$X/world.2.hgm" ||
            echo "$set $run: the ranks' models differ" >&2
        o1=$("$BIN" objective -q "$X/single.hgm" "$f" | awk '$1 == "objective" { print $2 }')
        o3=$("$BIN" objective -q "$X/world.0.hgm" "$f" | awk '$1 == "objective" { print $2 }')
        python3 - "$set" "$run" "$t0" "$t1" "$t2" "$o1" "$o3" >> "$CSV" <<'PY'
import sys
s, run, t0, t1, t2, o1, o3 = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:])
algo, opts = run.split(' ', 1)
print(f"{s},{algo},{opts},{t1 - t0:.3f},{t2 - t1:.3f},{(t2 - t1) / (t1 - t0):.2f},"
      f"{o1:.12g},{o3:.12g},{abs(o3 - o1) / abs(o1):.2e}")
PY
    done
done
python3 - "$CSV" <<'PY'
import csv, sys
print("\nexact solving: 1 process on all rows against --world 3 on loopback "
      "(--shard stride; wall s, parse included; objective on all rows)\n")
print("| data | algo | options | 1 process s | 3 ranks s | ratio | objective | relative difference |")
print("|---|---|---|---:|---:|---:|---:|---:|")
for r in csv.DictReader(open(sys.argv[1])):
    print(f"| {r['data']} | {r['algo']} | {r['options']} | {r['single_s']} | "
          f"{r['world3_s']} | {r['ratio']} | {r['obj_single']} | {r['obj_rel']} |")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
