#!/bin/sh
# The portable build (make PORTABLE=1: baseline x86-64-v2, the vector
# kernels chosen at load time) against the native one (-march=native) on
# this machine: the same training runs with both binaries, taken in turn,
# the best of RUNS (5) each, the ratio portable/native (target, issue 42:
# <= 1.05), and whether the two models are the same file. The load average
# before and after beside the figures. Run it alone.
#
#   bench/portable.sh [NATIVE_DIR [PORTABLE_DIR]]   (default build and
#                     build-portable; a missing one is built first)
set -eu
cd "$(dirname "$0")/.."
NAT=${1:-build}
POR=${2:-build-portable}
DATA=${HOGTRAIN_DATA:-../shared/data}
RUNS=${RUNS:-5}
[ -x "$NAT/hogtrain" ] || make -s BUILD="$NAT" "$NAT/hogtrain"
[ -x "$POR/hogtrain" ] || make -s BUILD="$POR" PORTABLE=1 NVCC= "$POR/hogtrain"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/hogtrain-portable.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
for f in news20.binary.train.svm a9a; do xz -dc "$DATA/$f.xz" > "$TMP/$f"; done
"$POR/hogtrain" --version | sed -n 2p
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

secs() { # BIN OUT ARGS...: wall seconds of one run
    b=$1; o=$2; shift 2
    t0=$(date +%s.%N)
    "$b" train -q "$@" -o "$o"
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{ printf "%.4f", $2 - $1 }'
}

printf '%-44s %9s %9s %7s %s\n' run native portable ratio model
run() { # NAME ARGS...
    name=$1; shift
    bn=999; bp=999
    i=0
    while [ $i -lt "$RUNS" ]; do
        n=$(secs "$NAT/hogtrain" "$TMP/n.hgm" "$@")
        p=$(secs "$POR/hogtrain" "$TMP/p.hgm" "$@")
        bn=$(echo "$bn $n" | awk '{ print ($2 < $1) ? $2 : $1 }')
        bp=$(echo "$bp $p" | awk '{ print ($2 < $1) ? $2 : $1 }')
        i=$((i + 1))
    done
    same=$(cmp -s "$TMP/n.hgm" "$TMP/p.hgm" && echo same || echo DIFFERS)
    printf '%-44s %9.3f %9.3f %7.3f %s\n' "$name" "$bn" "$bp" \
        "$(echo "$bp $bn" | awk '{ print $1 / $2 }')" "$same"
}
N20=$TMP/news20.binary.train.svm
run "serial ftrl news20.binary 5 epochs" "$N20"
run "serial adagrad news20.binary 5 epochs" --schedule adagrad "$N20"
run "serial invscaling l2 news20.binary 5 epochs" --schedule invscaling "$N20"
run "hogwild 1 thread adagrad a9a 10 epochs" --algo hogwild --threads 1 \
    --schedule adagrad --epochs 10 --seed 3 "$TMP/a9a"
run "cyclades 2 threads news20.binary 5 epochs" --algo cyclades --threads 2 "$N20"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
