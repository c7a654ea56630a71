#!/bin/sh
# Reproduces docs/BENCHMARKS.md, section "Hogwild! and locked updates":
# hogtrain bench on news20.binary (all update modes; replicas), a9a, and a
# generated data set of more than 2 GB of LIBSVM text (converted to .hgb).
#
#   sh bench/hogwild.sh [BUILD] [OUT]
#
# BUILD: the build folder with the hogtrain command (default build);
# OUT: where tables, CSV files and plots go (default BUILD/bench/hogwild).
# Data come from HOGTRAIN_DATA (default ../shared/data, .xz files) and are
# decompressed and converted under OUT/data. REPEAT (default 3) runs per
# cell; THREADS (default 1,2) the thread counts; SKIP_BIG=1 skips the
# generated set (it needs about 3 GB of disk for a few minutes).
set -eu
BUILD=${1:-build}
OUT=${2:-$BUILD/bench/hogwild}
DATA=${HOGTRAIN_DATA:-$(dirname "$0")/../../shared/data}
REPEAT=${REPEAT:-3}
THREADS=${THREADS:-1,2}
H=$BUILD/hogtrain
[ -x "$H" ] || { echo "hogwild.sh: build hogtrain first (make)"; exit 1; }
mkdir -p "$OUT/data"

hgb() { # NAME: OUT/data/NAME.hgb from DATA/NAME.xz
    [ -f "$OUT/data/$1.hgb" ] && return
    xz -dc "$DATA/$1.xz" > "$OUT/data/$1"
    "$H" convert -q "$OUT/data/$1" "$OUT/data/$1.hgb"
    rm -f "$OUT/data/$1"
}

machine() {
    echo "machine: $(nproc) CPUs online, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
}

run() { # NAME ARGS...: the table to OUT/NAME.txt, CSV to OUT/NAME.csv
    name=$1; shift
    echo "== $name: hogtrain bench $*"
    { machine; "$H" bench "$@" --repeat "$REPEAT" --csv "$OUT/$name.csv" -q; } \
        | tee "$OUT/$name.txt"
}

hgb news20.binary.train.svm
hgb news20.binary.test.svm
hgb a9a
hgb a9a.t
N20="$OUT/data/news20.binary.train.svm.hgb -t $OUT/data/news20.binary.test.svm.hgb"

# news20.binary, the original Hogwild! setting: hinge-loss SVM with a
# constant step, 20 epochs; every update mode, plain (--hot 0) and with
# hot-feature replicas (hot:auto; not with striped locks).
run news20 $N20 --loss hinge --schedule constant --eta 0.1 --epochs 20 \
    --threads "$THREADS" --update none,atomic,striped,mutex --hot 0,auto \
    --plot "$OUT/news20.svg"
# The default schedule (AdaGrad: dearer steps, longer epochs).
run news20-adagrad $N20 --loss hinge --epochs 20 --threads "$THREADS" \
    --update none --hot 0,auto
# The same with one model per thread, averaged every 4096 rows.
run news20-replicas $N20 --loss hinge --epochs 20 --threads "$THREADS" \
    --update none --replicas shared,core --sync-every 4096
# a9a: 123 features, every thread writes the same cache lines.
run a9a "$OUT/data/a9a.hgb" -t "$OUT/data/a9a.t.hgb" --loss hinge \
    --epochs 20 --threads "$THREADS" --update none,mutex --replicas shared,core
run a9a-hot "$OUT/data/a9a.hgb" -t "$OUT/data/a9a.t.hgb" --loss hinge \
    --epochs 20 --threads "$THREADS" --update none --hot 0,auto

if [ "${SKIP_BIG:-0}" != 1 ]; then
    # 2.7 M rows x 50 nonzeros of power-law features: 2.1 GB of text.
    if [ ! -f "$OUT/data/gen.hgb" ]; then
        "$H" gen --rows 2700000 --features 1000000 --nnz 50 --seed 1 \
            -o "$OUT/data/gen.svm"
        ls -l "$OUT/data/gen.svm"
        "$H" convert "$OUT/data/gen.svm" "$OUT/data/gen.hgb"
        rm -f "$OUT/data/gen.svm"
    fi
    run gen "$OUT/data/gen.hgb" --loss hinge --epochs 2 --threads "$THREADS" \
        --update none --replicas shared,core --sync-every 65536
    run gen-hot "$OUT/data/gen.hgb" --loss hinge --epochs 2 \
        --threads "$THREADS" --update none --hot 0,auto
fi
echo "results under $OUT"
