#!/usr/bin/env bash
# Trust-region Newton against LIBLINEAR's: wall time, parse included, of
# `hogtrain train --algo newton` at 1 and 2 threads and of
# `liblinear-train -s 0` (and -s 2), at the same C and -e / --tol, on the
# same files, in one run; the objectives of both models (hogtrain
# objective, which reads LIBLINEAR models) and the ratios. Best of 3 runs
# each; the load average before and after beside the figures.
#
#   bench/newton.sh [OUT.csv]       (after make; needs liblinear-train)
#   SETS="a9a" bench/newton.sh      only these data sets
#   SOLVERS="0" bench/newton.sh     only these LIBLINEAR solvers (0, 2)
#
# Targets (issue 39): one thread no slower than liblinear-train -s 0;
# two threads <= 0.6x one thread; objectives within 1e-6 relative.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${HOGTRAIN_BIN:-build/hogtrain}
DATA=${HOGTRAIN_DATA:-../shared/data}
OUT=${1:-build/bench/newton.csv}
SETS=${SETS:-a9a news20.binary.train.svm}
SOLVERS=${SOLVERS:-0 2}
C=${C:-1}
EPS=${EPS:-0.0001}
TMP=${TMPDIR:-/tmp}/hogtrain-bench-newton.$$
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
best3() { # command... -> the best wall seconds of 3 runs
    python3 - "$@" <<'EOF'
import subprocess, sys, time
best = None
for _ in range(3):
    t0 = time.perf_counter()
    subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    t = time.perf_counter() - t0
    best = t if best is None else min(best, t)
print(f"{best:.4f}")
EOF
}
objective() { # model data loss -> LIBLINEAR-scale objective
    "$BIN" objective -q --C "$C" --loss "$3" "$1" "$2" |
        awk '$1 == "liblinear_objective" { print $2 }'
}

echo "data,solver,C,eps,liblinear_s,newton_1t_s,newton_2t_s,ratio_1t_ll,ratio_2t_1t,obj_liblinear,obj_newton,obj_rel" > "$OUT"
printf '%-26s %3s %9s %9s %9s %8s %8s %10s\n' data -s liblinear 1-thread 2-thread 1t/ll 2t/1t obj-rel
for set in $SETS; do
    f=$(data "$set")
    for s in $SOLVERS; do
        loss=logistic
        [ "$s" = 2 ] && loss=sqhinge
        ll=$(best3 liblinear-train -s "$s" -c "$C" -e "$EPS" -B 1 "$f" "$TMP/ll.model")
        t1=$(best3 "$BIN" train -q --algo newton --loss "$loss" --C "$C" --tol "$EPS" --threads 1 "$f" -o "$TMP/n1.hgm")
        t2=$(best3 "$BIN" train -q --algo newton --loss "$loss" --C "$C" --tol "$EPS" --threads 2 "$f" -o "$TMP/n2.hgm")
        ol=$(objective "$TMP/ll.model" "$f" "$loss")
        on=$(objective "$TMP/n1.hgm" "$f" "$loss")
        read -r r1 r2 rel < <(python3 -c "
ll, t1, t2, ol, on = $ll, $t1, $t2, $ol, $on
print(f'{t1 / ll:.3f} {t2 / t1:.3f} {abs(on - ol) / abs(ol):.2e}')")
        echo "$set,$s,$C,$EPS,$ll,$t1,$t2,$r1,$r2,$ol,$on,$rel" >> "$OUT"
        printf '%-26s %3s %9s %9s %9s %8s %8s %10s\n' "$set" "$s" "$ll" "$t1" "$t2" "$r1" "$r2" "$rel"
    done
done
echo "load average before: $LOAD0; after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "written: $OUT"
