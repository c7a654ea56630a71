#!/bin/sh
# make demo: generate a sparse classification problem, train on all cores
# with progress and test metrics, write the model, predict, describe it.
# Usage: sh bench/demo.sh [path/to/hogtrain]   (from a fresh clone: make demo)
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/hogtrain}
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
dir=$root/build/demo
mkdir -p "$dir"
cd "$dir"

step() { printf '\n==> %s\n' "$*"; }
run() { printf '$ hogtrain %s\n' "$*"; "$bin" "$@"; }

rows=250000        # 200,000 to train on, 50,000 to test on
features=50000

step "generate $rows rows x $features features (power-law features, planted model, 3% label noise)"
run gen --rows $rows --features $features --nnz 30 --zipf 1.1 --noise 0.03 \
    --seed 42 -o "all.svm"
# One generated file split in two: both halves share the planted model.
head -n 200000 "all.svm" > "train.svm"
tail -n 50000 "all.svm" > "test.svm"
rm -f "all.svm"

step "convert the training set to the .hgb binary cache (loads without parsing)"
run convert "train.svm" "train.hgb"

# Hogwild! on every core when this build has it, else the serial trainer.
printf '1 1:1\n-1 2:1\n' > "probe.svm"
if "$bin" train -q --algo hogwild --threads 0 --epochs 1 "probe.svm" 2>/dev/null; then
    algo="--algo hogwild --threads 0"
    what="Hogwild! on all $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo ?) cores"
else
    algo="--algo serial"
    what="the serial trainer (this build has no Hogwild! yet)"
fi
rm -f "probe.svm"

step "train logistic regression with $what"
# shellcheck disable=SC2086 # $algo is a list of options
run train $algo --epochs 5 "train.hgb" -t "test.svm" \
    -o "model.hgm" --json "report.json"

step "predict the test set"
run predict "model.hgm" "test.svm" -o "predictions.txt"
printf 'first predictions: %s\n' "$(head -n 5 "predictions.txt" | tr '\n' ' ')"

step "describe the model"
run info "model.hgm"

printf '\nfiles in %s: train.svm test.svm train.hgb model.hgm predictions.txt report.json\n' \
    "${dir#"$root"/}"
