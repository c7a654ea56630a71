#!/bin/sh
# bench/stream.sh [BUILD] [WORKDIR]: the out-of-core benchmarks of
# docs/BENCHMARKS.md. Prints Markdown tables; CSV lines under WORKDIR.
#
#   1. training throughput from the page cache: in-memory against --stream,
#      Hogwild! and serial, same file, same options, same run;
#   2. the streamer against dd from disk with a cold cache: O_DIRECT reads of
#      a file several times the ring (dd iflag=direct is the baseline);
#   3. io_uring against pread on the same file, O_DIRECT and buffered.
#
# Best of REPEAT runs each, alternating (the machine is shared). Needs
# python3 for reading the JSON reports. WORKDIR keeps the generated data
# (about 1.4 GB) between runs.
set -eu
BUILD=${1:-build}
W=${2:-/tmp/hogtrain-stream-bench}
REPEAT=${REPEAT:-3}
HOG=$BUILD/hogtrain
SR=$BUILD/bench/stream_read
mkdir -p "$W"
[ -x "$SR" ] || { echo "build $SR first: make bench-progs" >&2; exit 1; }

gen() { # name rows
    [ -f "$W/$1.hgb" ] && return
    "$HOG" gen -q --rows "$2" --features 200000 --nnz 40 --seed 1 -o "$W/$1.svm"
    "$HOG" convert -q "$W/$1.svm" "$W/$1.hgb"
    rm -f "$W/$1.svm"
}
gen mid 1000000   # about 330 MB: stays in the page cache
gen big 3000000   # about 1 GB: 16x a 64 MiB ring

# rows/s over the epochs after the first (warm) of a JSON report: rows
# trained over seconds spent training
rate() {
    python3 -c 'import json,sys
e=json.load(open(sys.argv[1]))["epochs"]; e=e[1:] or e
print(sum(x["rows_per_s"]*x["seconds"] for x in e)/sum(x["seconds"] for x in e))' "$1"
}
best() { sort -g | tail -1; }
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
TREPEAT=${TREPEAT:-5}

echo "## Training from the page cache ($(basename "$W")/mid.hgb, $(du -Lm "$W/mid.hgb" | cut -f1) MB)"
echo
cat "$W/mid.hgb" >/dev/null
echo "Median over $TREPEAT alternating pairs of runs of each run's rows/s over"
echo "epochs 2 to 4; the ratio column is the median of the pairs' ratios."
echo
echo "| algorithm | in memory rows/s | --stream rows/s | ratio |"
echo "|---|---:|---:|---:|"
for algo in hogwild serial; do
    m=""; s=""; q=""
    for r in $(seq "$TREPEAT"); do
        "$HOG" train -q --algo "$algo" --epochs 4 --json "$W/m.json" "$W/mid.hgb"
        m="$m $(rate "$W/m.json")"
        "$HOG" train -q --algo "$algo" --epochs 4 --stream --mem-budget 256M \
            --json "$W/s.json" "$W/mid.hgb"
        s="$s $(rate "$W/s.json")"
        q="$q $(python3 -c 'import sys; print(float(sys.argv[2])/float(sys.argv[1]))' \
              "$(echo "$m" | awk '{print $NF}')" "$(echo "$s" | awk '{print $NF}')")"
    done
    echo "train,$algo,pairs:$m |$s" >>"$W/stream.csv"
    m=$(echo "$m" | tr ' ' '\n' | grep . | median)
    s=$(echo "$s" | tr ' ' '\n' | grep . | median)
    q=$(echo "$q" | tr ' ' '\n' | grep . | median)
    python3 -c 'import sys; m,s,q=map(float,sys.argv[2:]); print("| %s | %.3g M | %.3g M | %.2f |" % (sys.argv[1], m/1e6, s/1e6, q))' "$algo" "$m" "$s" "$q"
done
echo

echo "## From disk, cold cache: O_DIRECT ($(basename "$W")/big.hgb, $(du -Lm "$W/big.hgb" | cut -f1) MB)"
echo
echo "| reader | ring | MB/s (best of $REPEAT) | vs dd |"
echo "|---|---:|---:|---:|"
dd_best=""; u64=""; p64=""; u256=""; p256=""
for r in $(seq "$REPEAT"); do
    d=$(dd if="$W/big.hgb" of=/dev/null bs=16M iflag=direct 2>&1 | tail -1 |
        sed -E 's/.* s, ([0-9.]+) ([MG])B\/s/\1 \2/' |
        awk '{print ($2=="G") ? $1*1000 : $1}')
    dd_best="$dd_best $d"
    u64="$u64 $("$SR" "$W/big.hgb" uring on 64 | cut -d, -f8)"
    p64="$p64 $("$SR" "$W/big.hgb" pread on 64 | cut -d, -f8)"
    u256="$u256 $("$SR" "$W/big.hgb" uring on 256 | cut -d, -f8)"
    p256="$p256 $("$SR" "$W/big.hgb" pread on 256 | cut -d, -f8)"
done
D=$(echo "$dd_best" | tr ' ' '\n' | grep . | best)
row() { # name ring values
    v=$(echo "$3" | tr ' ' '\n' | grep . | best)
    echo "direct,$1,$2,$v,$D" >>"$W/stream.csv"
    python3 -c 'import sys; print("| %s | %s | %.0f | %.2f |" % (sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[3])/float(sys.argv[4])))' "$1" "$2" "$v" "$D"
}
echo "| dd bs=16M iflag=direct | - | $D | 1.00 |"
row "streamer, io_uring" "64 MiB" "$u64"
row "streamer, pread" "64 MiB" "$p64"
row "streamer, io_uring" "256 MiB" "$u256"
row "streamer, pread" "256 MiB" "$p256"
echo

echo "## Training from disk: --stream --direct on (big.hgb, 64 MiB budget)"
echo
echo "| algorithm | backend | rows/s | MB/s of chunks | waiting for reads |"
echo "|---|---|---:|---:|---:|"
for io in uring pread; do
    "$HOG" train -q --algo hogwild --epochs 2 --stream --mem-budget 64M \
        --direct on --io "$io" --json "$W/d.json" "$W/big.hgb"
    python3 -c 'import json,sys
j=json.load(open(sys.argv[1])); s=j["stream"]; t=j["timings"]["train_seconds"]
r=max(x["rows_per_s"] for x in j["epochs"])
print("| hogwild | %s | %.3g M | %.0f | %.0f%% |" % (s["backend"], r/1e6, s["bytes_read"]/t/1e6, 100*s["read_wait_seconds"]/t))' "$W/d.json"
done
echo

echo "## io_uring against pread, buffered (big.hgb, 256 MiB ring, from the page cache)"
echo
cat "$W/big.hgb" >/dev/null
echo "| backend | MB/s (best of $REPEAT) |"
echo "|---|---:|"
ub=""; pb=""
for r in $(seq "$REPEAT"); do
    ub="$ub $("$SR" "$W/big.hgb" uring off 256 | cut -d, -f8)"
    pb="$pb $("$SR" "$W/big.hgb" pread off 256 | cut -d, -f8)"
done
echo "| io_uring | $(echo "$ub" | tr ' ' '\n' | grep . | best) |"
echo "| pread (2 reader threads) | $(echo "$pb" | tr ' ' '\n' | grep . | best) |"
echo
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r)"
