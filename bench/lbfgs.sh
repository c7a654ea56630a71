#!/usr/bin/env bash
# L-BFGS and OWL-QN against LIBLINEAR and scd: wall time, parse included,
# of `hogtrain train --algo lbfgs` at 1 and 2 threads and of
# `liblinear-train` at the same C and -e / --tol, on the same files, in
# one run: L2 logistic against -s 0, and L1 logistic (OWL-QN, --reg l1)
# against -s 6 and against `--algo scd` (one thread: its exact mode). The
# objectives of every model (hogtrain objective, which reads LIBLINEAR
# models) and the ratios. Best of RUNS runs each; the load average before
# and after beside the figures.
#
#   bench/lbfgs.sh [OUT.csv]        (after make; needs liblinear-train)
#   SETS="a9a" bench/lbfgs.sh       only these data sets
#   SOLVERS="6" bench/lbfgs.sh      only these LIBLINEAR solvers (0, 6)
#   RUNS=1 SETS=a9a bench/lbfgs.sh  a quick check that the script runs
#
# Targets (issue 39): objectives within 1e-6 relative of -s 0's, within
# 1e-4 of -s 6's; the time against scd on the L1 problem.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${HOGTRAIN_BIN:-build/hogtrain}
DATA=${HOGTRAIN_DATA:-../shared/data}
OUT=${1:-build/bench/lbfgs.csv}
SETS=${SETS:-a9a news20.binary.train.svm}
SOLVERS=${SOLVERS:-0 6}
RUNS=${RUNS:-3}
C=${C:-1}
EPS0=${EPS0:-0.0001}  # -s 0's -e (the newton bench's)
EPS6=${EPS6:-0.01}    # -s 6's: LIBLINEAR's default
TMP=${TMPDIR:-/tmp}/hogtrain-bench-lbfgs.$$
mkdir -p "$TMP" "$(dirname "$OUT")"
trap 'rm -rf "$TMP"' EXIT
command -v liblinear-train >/dev/null || { echo "liblinear-train not found (apt-get install liblinear-tools)" >&2; exit 1; }
[ -x "$BIN" ] || { echo "$BIN not built (make)" >&2; exit 1; }
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

data() { # name -> decompressed path
    local f="$TMP/$1"
    [ -f "$f" ] || xz -dc "$DATA/$1.xz" > "$f"
    echo "$f"
}
best() { # command... -> the best wall seconds of RUNS runs
    python3 - "$RUNS" "$@" <<'EOF'
import subprocess, sys, time
best = None
for _ in range(int(sys.argv[1])):
    t0 = time.perf_counter()
    subprocess.run(sys.argv[2:], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    t = time.perf_counter() - t0
    best = t if best is None else min(best, t)
print(f"{best:.4f}")
EOF
}
objective() { # model data reg -> LIBLINEAR-scale objective
    "$BIN" objective -q --C "$C" --reg "$3" --loss logistic "$1" "$2" |
        awk '$1 == "liblinear_objective" { print $2 }'
}

echo "data,solver,C,eps,liblinear_s,lbfgs_1t_s,lbfgs_2t_s,scd_s,ratio_1t_ll,ratio_2t_1t,ratio_1t_scd,obj_liblinear,obj_lbfgs,obj_scd,obj_rel_ll" > "$OUT"
printf '%-26s %3s %9s %9s %9s %9s %7s %7s %7s %10s\n' data -s liblinear 1-thread 2-thread scd 1t/ll 2t/1t 1t/scd obj-rel
for set in $SETS; do
    f=$(data "$set")
    for s in $SOLVERS; do
        reg=l2 eps=$EPS0
        [ "$s" = 6 ] && reg=l1 eps=$EPS6
        ll=$(best liblinear-train -s "$s" -c "$C" -e "$eps" -B 1 "$f" "$TMP/ll.model")
        train=("$BIN" train -q --algo lbfgs --loss logistic --C "$C" --reg "$reg" --tol "$eps")
        t1=$(best "${train[@]}" --threads 1 "$f" -o "$TMP/l1.hgm")
        t2=$(best "${train[@]}" --threads 2 "$f" -o "$TMP/l2.hgm")
        ol=$(objective "$TMP/ll.model" "$f" "$reg")
        on=$(objective "$TMP/l1.hgm" "$f" "$reg")
        ts=nan os=nan
        if [ "$s" = 6 ]; then
            ts=$(best "$BIN" train -q --algo scd --loss logistic --C "$C" --reg l1 --tol "$eps" --threads 1 "$f" -o "$TMP/scd.hgm")
            os=$(objective "$TMP/scd.hgm" "$f" "$reg")
        fi
        read -r r1 r2 r3 rel < <(python3 -c "
ll, t1, t2, ts, ol, on = $ll, $t1, $t2, float('$ts'), $ol, $on
print(f'{t1 / ll:.3f} {t2 / t1:.3f} {t1 / ts:.3f} {(on - ol) / abs(ol):.2e}')")
        echo "$set,$s,$C,$eps,$ll,$t1,$t2,$ts,$r1,$r2,$r3,$ol,$on,$os,$rel" >> "$OUT"
        printf '%-26s %3s %9s %9s %9s %9s %7s %7s %7s %10s\n' "$set" "$s" "$ll" "$t1" "$t2" "$ts" "$r1" "$r2" "$r3" "$rel"
    done
done
echo "load average before: $LOAD0; after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "written: $OUT"
