#!/usr/bin/env bash
# Coordinate descent against LIBLINEAR: seconds to reach LIBLINEAR's
# objective (within 1e-3 relative) for each solver pair, in one run, on the
# same files, parse time included on both sides.
#
#   bench/coordinate.sh [OUT.csv]      (after make; needs liblinear-train)
#   ONLY=reuters bench/coordinate.sh   only the pairs whose "data -s S algo"
#                                      line matches the regular expression
#
# For each pair (data, LIBLINEAR -s S, hogtrain --algo A --loss L, C):
#   1. reference: liblinear-train with a tight -e; its model's objective F*
#      (hogtrain objective, which reads LIBLINEAR models); target
#      T = F* (1 + 1e-3).
#   2. LIBLINEAR: for -e in a decreasing ladder, wall time of
#      liblinear-train (parse + train); its time is that of the loosest -e
#      whose model reaches T, best of 3 (the ladder's run and two more).
#   3. hogtrain, 1 and 2 threads: one run with a tight --tol and --json; its
#      time is load_seconds + the training seconds up to the first epoch
#      whose objective reaches T (the epoch's objective is the one the
#      solver keeps from its margins; the full metrics of the last epoch
#      are not counted: LIBLINEAR computes none). Best of 3 seeds. Also
#      the wall time of that whole tight-tolerance run (past the target,
#      process start and final metrics included), and for 1 thread the
#      same (one run) with --metrics-every 1 (accuracy and AUC every epoch,
#      the front door's pass over the data).
#   4. the machine's parallel capacity: the 1-thread hogtrain run alone
#      (the best wall of step 3's 3 runs), then 2 copies at once, each on
#      its own copy of the file;
#      capacity = 2 t1 / t2copies (2.0 on two idle cores). The 2-thread
#      target is 1.5 x capacity / 2 times LIBLINEAR's speed; 1 thread's,
#      1x.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${HOGTRAIN_BIN:-build/hogtrain}
DATA=${HOGTRAIN_DATA:-../shared/data}
OUT=${1:-build/bench/coordinate.csv}
TMP=${TMPDIR:-/tmp}/hogtrain-bench-coord.$$
mkdir -p "$TMP" "$(dirname "$OUT")"
trap 'rm -rf "$TMP"' EXIT
T_START=$(date +%s)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
command -v liblinear-train >/dev/null || { echo "liblinear-train not found (apt-get install liblinear-tools)" >&2; exit 1; }
[ -x "$BIN" ] || { echo "$BIN not built (make)" >&2; exit 1; }

data() { # name -> decompressed path
    local f="$TMP/$1"
    [ -f "$f" ] || xz -dc "$DATA/$1.xz" > "$f"
    echo "$f"
}
now() { date +%s.%N; }
wall() { # command... -> seconds
    local t0 t1; t0=$(now); "$@" >/dev/null 2>&1; t1=$(now)
    python3 -c "print($t1 - $t0)"
}
objective() { # model data C reg -> LIBLINEAR-scale objective
    "$BIN" objective -q --C "$3" --reg "$4" "$1" "$2" | awk '$1 == "liblinear_objective" { print $2 }'
}
# Seconds to reach the target from a --json report: load + training time up
# to the first epoch at or below it (epoch objectives are F = liblinear * lam).
json_time() { # json target lam
    python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1])); target = float(sys.argv[2]); lam = float(sys.argv[3])
for e in j["epochs"]:
    if e["objective"] / lam <= target:
        print(j["data"]["train"]["load_seconds"] + e["total_seconds"], e["epoch"]); break
else:
    print("nan", len(j["epochs"]))
EOF
}

echo "data,liblinear,algo,loss,C,threads,update,target,liblinear_e,liblinear_s,hogtrain_s,hogtrain_epochs,hogtrain_tight_run_wall_s,speedup,capacity,target_speedup,tight_run_wall_metrics_every_epoch_s" > "$OUT"

pair() { # name solver algo loss C reg update tight_e tight_tol
    local name=$1 s=$2 algo=$3 loss=$4 C=$5 reg=$6 upd=$7 te=$8 tt=$9
    [[ -z "${ONLY:-}" || "$name -s $s $algo $upd" =~ $ONLY ]] || return 0
    local f; f=$(data "$name")
    local n; n=$(wc -l < "$f")
    local lam; lam=$(python3 -c "print(1.0 / ($C * $n))")
    liblinear-train -s "$s" -c "$C" -e "$te" -B 1 -q "$f" "$TMP/ref.model"
    local fstar; fstar=$(objective "$TMP/ref.model" "$f" "$C" "$reg")
    local target; target=$(python3 -c "print($fstar * (1 + 1e-3))")
    # LIBLINEAR: the loosest -e that reaches the target.
    local ll_e=nan ll_s=nan e
    for e in 1 0.3 0.1 0.03 0.01 0.003 0.001 0.0003 0.0001; do
        local w1; w1=$(wall liblinear-train -s "$s" -c "$C" -e "$e" -B 1 -q "$f" "$TMP/ll.model")
        local fo; fo=$(objective "$TMP/ll.model" "$f" "$C" "$reg")
        if python3 -c "import sys; sys.exit(0 if $fo <= $target else 1)"; then
            ll_e=$e
            # best of 3: the ladder's run and two more
            local w2 w3
            w2=$(wall liblinear-train -s "$s" -c "$C" -e "$e" -B 1 -q "$f" "$TMP/ll.model")
            w3=$(wall liblinear-train -s "$s" -c "$C" -e "$e" -B 1 -q "$f" "$TMP/ll.model")
            ll_s=$(python3 -c "print(min($w1, $w2, $w3))")
            break
        fi
    done
    local regopt; regopt=$([ "$reg" = l1 ] && echo "--l1 $lam --l2 0" || echo "--l2 $lam")
    local ups; IFS=, read -ra ups <<< "$upd"
    cp "$f" "$TMP/copy.svm"
    local c0 c1 cap=nan tgt
    local configs=("1:${ups[0]}") u
    for u in "${ups[@]}"; do configs+=("2:$u"); done
    local cfg t
    for cfg in "${configs[@]}"; do
        t=${cfg%%:*}; u=${cfg#*:}
        local updopt=""; [ "$u" != "-" ] && updopt="--update $u"
        local best=nan ep=nan wbest=nan r
        for r in 1 2 3; do
            local w0 w1; w0=$(now)
            "$BIN" train -q --algo "$algo" --loss "$loss" $regopt --threads $t $updopt \
                --tol "$tt" --seed $r --json "$TMP/j.json" "$f"
            w1=$(now)
            read -r sec epn < <(json_time "$TMP/j.json" "$target" "$lam")
            best=$(python3 -c "import math; a=float('$best'); b=float('$sec'); print(b if math.isnan(a) or b < a else a)")
            [ "$best" = "$sec" ] && ep=$epn
            wbest=$(python3 -c "import math; a=float('$wbest'); b=$w1-$w0; print(b if math.isnan(a) or b < a else a)")
        done
        if [ "$t" = 1 ]; then
            # Parallel capacity: the 1-thread run alone (the best of the 3
            # above), then two at once, each on its own copy of the file.
            c0=$(now)
            "$BIN" train -q --algo "$algo" --loss "$loss" $regopt --threads 1 $updopt \
                --tol "$tt" --seed 1 --json "$TMP/c1.json" "$f" &
            "$BIN" train -q --algo "$algo" --loss "$loss" $regopt --threads 1 $updopt \
                --tol "$tt" --seed 1 --json "$TMP/c2.json" "$TMP/copy.svm" &
            wait; c1=$(now)
            cap=$(python3 -c "print(2 * $wbest / ($c1 - $c0))")
        fi
        tgt=$([ "$t" = 1 ] && echo 1 || python3 -c "print(1.5 * $cap / 2)")
        local sp; sp=$(python3 -c "print(float('$ll_s') / float('$best'))")
        # What the full training metrics of every epoch (--metrics-every 1,
        # the front door's pass over the data with AUC) would add to the
        # tight run: 1 thread only.
        local wfull=nan
        [ "$t" = 1 ] && wfull=$(wall "$BIN" train -q --algo "$algo" --loss "$loss" $regopt \
            --threads 1 $updopt --tol "$tt" --metrics-every 1 --json "$TMP/jm.json" "$f")
        echo "$name,-s $s,$algo,$loss,$C,$t,$u,$target,$ll_e,$ll_s,$best,$ep,$wbest,$sp,$cap,$tgt,$wfull" | tee -a "$OUT"
    done
}

# upd: the update modes; 1 thread runs the first (atomic with one worker
# is plain adds), 2 threads each.
#    data                      s  algo loss     C  reg upd          tight_e  tight_tol
pair news20.binary.train.svm   3  dcd  hinge    1  l2  atomic,none  0.01     0.01
pair news20.binary.train.svm   1  dcd  sqhinge  1  l2  atomic,none  0.0001   0.001
pair news20.binary.train.svm   7  dcd  logistic 1  l2  atomic,none  0.0001   0.0001
pair a9a                       7  dcd  logistic 1  l2  atomic,none  0.0001   0.0001
pair reuters_moneyfx.trn       6  scd  logistic 1  l1  -      0.0001   0.0001
pair news20.binary.train.svm   6  scd  logistic 1  l1  -      0.0001   0.0001
echo "results in $OUT; $(( $(date +%s) - T_START )) s; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end, $LOAD0 at the start; $(nproc) CPUs" >&2
# The table for docs/BENCHMARKS.md.
python3 - "$OUT" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print("| data | LIBLINEAR | hogtrain | threads | LIBLINEAR -e | LIBLINEAR s | hogtrain s (epochs) | speedup | capacity | target | met | tight run s | same, metrics every epoch |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
for r in rows:
    algo = f"{r['algo']} {r['loss']}" + (f" --update {r['update']}" if r['update'] != '-' else "")
    sp, tg = float(r['speedup']), float(r['target_speedup'])
    met = "yes" if sp >= tg else "no"
    print(f"| {r['data']} | {r['liblinear']} -c {r['C']} | {algo} | {r['threads']} | {r['liblinear_e']} | "
          f"{float(r['liblinear_s']):.2f} | {float(r['hogtrain_s']):.2f} ({r['hogtrain_epochs']}) | {sp:.2f}x | "
          f"{float(r['capacity']):.2f} | {tg:.2f}x | {met} | {float(r['hogtrain_tight_run_wall_s']):.2f} | "
          + ("-" if r['tight_run_wall_metrics_every_epoch_s'] == 'nan' else f"{float(r['tight_run_wall_metrics_every_epoch_s']):.2f}") + " |")
EOF
