#!/bin/sh
# Cyclades against Hogwild!, the locked update modes, the serial trainer and
# the machine's own parallel control, measured in one run.
#
#   bench/cyclades.sh DATA [TEST]
#
# Environment: HOGTRAIN (default build/hogtrain next to this script), THREADS (default "1 2"),
# EPOCHS (default 10), REPEAT (default 3; medians), OUT (default
# build/bench/cyclades), EXTRA (more options for every run, e.g. "--l2 1e-4").
#
# `hogtrain bench` runs serial, the control (each thread its own private
# model over its own rows) and Hogwild! in every update mode; then
# `hogtrain train --algo cyclades --json` runs at each thread count, with
# the partition computed once (the default) and every epoch
# (--repartition). Cyclades' time includes everything: pool start, degrees,
# hot set, partitioning. Printed: nonzeros/s, speedup over 1 thread of the
# same kind, parallel efficiency (that speedup over the control's), the
# ratio to Hogwild! at the same thread count, seconds to reach the serial
# run's final objective (within 0.1%, as in hogtrain bench), the partition's
# share of the time and the final test accuracy.
set -eu
DATA=${1:?usage: bench/cyclades.sh DATA [TEST]}
TEST=${2:-}
HOGTRAIN=${HOGTRAIN:-$(dirname "$0")/../build/hogtrain}
THREADS=${THREADS:-"1 2"}
EPOCHS=${EPOCHS:-10}
REPEAT=${REPEAT:-3}
OUT=${OUT:-build/bench/cyclades}
EXTRA=${EXTRA:-}
mkdir -p "$OUT"
name=$(basename "$DATA")
tlist=$(echo $THREADS | tr ' ' ',')
topt=""
[ -n "$TEST" ] && topt="-t $TEST"

# shellcheck disable=SC2086
"$HOGTRAIN" bench "$DATA" $topt --threads "$tlist" --epochs "$EPOCHS" \
    --repeat "$REPEAT" --csv "$OUT/$name.hogwild.csv" -q $EXTRA \
    > "$OUT/$name.hogwild.txt"
for t in $THREADS; do
    for mode in once repartition; do
        r=1
        while [ "$r" -le "$REPEAT" ]; do
            flag=""
            [ "$mode" = repartition ] && flag="--repartition"
            # shellcheck disable=SC2086
            "$HOGTRAIN" train -q --algo cyclades --threads "$t" \
                --epochs "$EPOCHS" $flag $topt $EXTRA \
                --json "$OUT/$name.cyc.$mode.$t.$r.json" "$DATA"
            r=$((r + 1))
        done
    done
done

/usr/bin/env python3 - "$OUT" "$name" "$THREADS" "$REPEAT" <<'EOF'
import csv, json, statistics, sys
out, name, threads, repeat = sys.argv[1], sys.argv[2], sys.argv[3].split(), int(sys.argv[4])
rows = list(csv.DictReader(open(f"{out}/{name}.hogwild.csv")))
serial = next(r for r in rows if r["algo"] == "serial")
target = float(serial["objective"])
def rate(r): return float(r["nnz_per_s"])
def find(algo, update, t):
    for r in rows:
        if r["algo"] == algo and r["update"] == update and int(r["threads"]) == t and r["replicas"] in ("shared", "core"):
            return r
    return None

def cyc(mode, t):
    runs = []
    for k in range(1, repeat + 1):
        j = json.load(open(f"{out}/{name}.cyc.{mode}.{t}.{k}.json"))
        nnz = j["data"]["train"]["nonzeros"]
        ep = j["epochs"]
        secs = sum(e["seconds"] for e in ep)
        to_obj, acc = float("nan"), 0.0
        for e in ep:
            if e["objective"] <= target * 1.001:
                to_obj = e["total_seconds"]
                break
        last = ep[-1]
        acc = last.get("test_accuracy", last["train_accuracy"])
        c = j["cyclades"]
        runs.append((len(ep) * nnz / secs, to_obj, acc, c["partition_seconds"] / secs,
                     c["setup_seconds"] / secs, c))
    med = lambda i: statistics.median(r[i] for r in runs)
    return {"rate": med(0), "to_obj": med(1), "acc": med(2), "part": med(3),
            "setup": med(4), "stats": runs[0][5]}

ts = [int(t) for t in threads]
ctrl1 = rate(find("control", "none", ts[0])) if ts[0] == 1 else float("nan")
print(f"# {name}: serial {rate(serial)/1e6:.2f} M nnz/s, target objective {target:.6g}")
print(open(f"{out}/{name}.hogwild.txt").read())
hdr = f"{'algo':<22} {'threads':>7} {'M nnz/s':>9} {'x 1thr':>7} {'control':>8} {'eff':>6} {'x hogwild':>9} {'to obj s':>9} {'part %':>7} {'test acc':>9}"
print(hdr)
for mode in ("once", "repartition"):
    base = None
    for t in ts:
        c = cyc(mode, t)
        if base is None:
            base = c["rate"]
        ctl = find("control", "none", t)
        ctl_speed = rate(ctl) / rate(find("control", "none", ts[0])) if ctl else float("nan")
        hw = find("hogwild", "none", t)
        x1 = c["rate"] / base
        eff = x1 / ctl_speed
        xh = c["rate"] / rate(hw) if hw else float("nan")
        print(f"{'cyclades ' + mode:<22} {t:>7} {c['rate']/1e6:>9.2f} {x1:>7.2f} {ctl_speed:>8.2f} {eff:>6.2f} {xh:>9.2f} {c['to_obj']:>9.3f} {100*c['part']:>7.1f} {100*c['acc']:>8.2f}%")
        locked = [(u, rate(find("hogwild", u, t))) for u in ("atomic", "striped", "mutex") if find("hogwild", u, t)]
        if locked:
            faster = all(c["rate"] > r for _, r in locked)
            print(f"{'':<22} {'':>7} vs locked: " + ", ".join(f"{u} {r/1e6:.2f}" for u, r in locked) +
                  f" M nnz/s -> {'faster than every locked mode' if faster else 'NOT faster than every locked mode'}")
s = cyc("once", ts[-1])["stats"]
print(f"\ncomponents ({ts[-1]} threads): batch {s['batch_size']} rows x {s['batches_per_epoch']}, "
      f"hot: {s['hot_features']} features{' + bias' if s['bias_hot'] else ''} (degree > {s['hot_degree']}, "
      f"{100*s['hot_nnz_share']:.1f}% of nonzeros)")
cp, ca = s["components"], s["components_every_feature"]
print(f"  with hot features apart: {cp['per_batch']:.1f} components per batch, largest {cp['largest_rows']} rows "
      f"(mean share {100*cp['largest_share']:.1f}%), thread imbalance {cp['thread_imbalance']:.2f}")
print(f"  every feature in the graph: {ca['per_batch']:.1f} components per batch, largest {ca['largest_rows']} rows "
      f"(mean share {100*ca['largest_share']:.1f}%)")
EOF
