#!/bin/sh
# make tsan: the threaded code under ThreadSanitizer. Runs each tests/tsan_*
# program, then threaded training runs of the command on real data (skipped
# with a sentence where the data is absent). Any race report fails the run.
set -u
B=$1; shift
HOG=$B/hogtrain
DATA=${HOGTRAIN_DATA:-../shared/data}
T=$B/testdata
pass=0 fail=0
check() { # name, command...
    name=$1; shift
    if "$@" >"$T/$name.log" 2>&1; then pass=$((pass + 1)); echo "tsan: ok   $name"
    else fail=$((fail + 1)); echo "tsan: FAIL $name"; tail -n 40 "$T/$name.log"; fi
}
for p in "$@"; do check "$p" "$B/tests/$p"; done

# Interactions: each thread crosses the rows it reads into a buffer of its
# own (src/core/cross.h), Hogwild! and softmax, on a generated VW file.
awk 'BEGIN { srand(3); for (i = 0; i < 4000; i++) { u = int(rand() * 9);
    a = int(rand() * 9); printf "%d |user u%d |ad a%d\n",
    1 + (u % 3 + a % 3) % 3, u, a } }' >"$T/cross.vw"
awk 'BEGIN { srand(4); for (i = 0; i < 4000; i++) { u = int(rand() * 10);
    a = int(rand() * 10); printf "%d |user u%d |ad a%d\n",
    (u < 5) == (a < 5) ? 1 : -1, u, a } }' >"$T/cross2.vw"
for u in none atomic; do
    check "hogwild-interactions-$u" "$HOG" train "$T/cross2.vw" \
        --algo hogwild --update "$u" --threads 2 --interactions ua \
        --epochs 2 --quiet
done
check "softmax-interactions" "$HOG" train "$T/cross.vw" --algo hogwild \
    --threads 2 --multiclass softmax --interactions ua --epochs 2 --quiet

# Newton's passes over row blocks and its vector work over ranges of
# weights (src/newton/): enough of both (100,000 weights, 400,000
# nonzeros) that each runs on the pool.
check "newton" sh -c "'$HOG' gen -q --rows 20000 --features 100000 --nnz 20 \
    -o '$T/newton.svm' && '$HOG' train '$T/newton.svm' --algo newton \
    --threads 2 --epochs 3 --quiet"

if [ -f "$DATA/a9a.xz" ]; then
    [ -f "$T/a9a" ] || xz -dc "$DATA/a9a.xz" >"$T/a9a"
    [ -f "$T/a9a.t" ] || xz -dc "$DATA/a9a.t.xz" >"$T/a9a.t"
    # Each threaded algorithm the command knows: Hogwild! in every update
    # mode and with replicas, Cyclades on two threads.
    for u in none atomic striped mutex; do
        check "hogwild-$u" "$HOG" train "$T/a9a" -t "$T/a9a.t" --algo hogwild \
            --update "$u" --threads 2 --epochs 1 --quiet
    done
    check "hogwild-replicas" "$HOG" train "$T/a9a" --algo hogwild \
        --threads 2 --replicas core --epochs 1 --quiet
    check "hogwild-hot" "$HOG" train "$T/a9a" --algo hogwild \
        --threads 2 --hot auto --sync-every 4096 --epochs 1 --quiet
    check "cyclades" "$HOG" train "$T/a9a" -t "$T/a9a.t" --algo cyclades \
        --threads 2 --epochs 1 --quiet
    # The read-ahead thread handing windows of text to the parser's threads
    # (docs/FORMATS.md): an xz file decompressed in windows of 1.1 MB (each
    # parsed in two slices), a pipe in windows of 64 KiB, convert's windows.
    check "readahead-xz" env HOGTRAIN_TEST_TEXT_WINDOW=1100000 "$HOG" train \
        "$DATA/a9a.xz" --epochs 1 --quiet
    check "readahead-pipe" sh -c "xz -dc '$DATA/a9a.xz' | HOGTRAIN_TEST_TEXT_WINDOW=65536 \
        '$HOG' train - --epochs 1 --quiet"
    check "readahead-convert" "$HOG" convert -q --threads 2 --window 64K \
        "$DATA/a9a.xz" "$T/a9a-xz.hgb"
    # Weighted rows (docs/TRAINING.md, "Weights"): the weighted kernels.
    check "hogwild-weighted" "$HOG" train "$T/a9a" --algo hogwild \
        --update atomic --threads 2 --class-weight balanced --epochs 1 --quiet
    check "hogwild-hot-weighted" "$HOG" train "$T/a9a" --algo hogwild \
        --threads 2 --hot auto --class-weight 1:3 --epochs 1 --quiet
    check "cyclades-weighted" "$HOG" train "$T/a9a" --algo cyclades \
        --threads 2 --class-weight balanced --epochs 1 --quiet
    # Model selection (docs/TRAINING.md): folds spread over the threads
    # (src/train/spread.c), early stopping stopping Hogwild!'s threads, and
    # one-vs-rest's classes each stopping on its own (3 classes from a9a).
    check "cv-spread" "$HOG" train "$T/a9a" --cv 4 --threads 2 --epochs 1 \
        --quiet
    check "early-stop-hogwild" "$HOG" train "$T/a9a" --algo hogwild \
        --threads 2 --holdout 0.2 --early-stop 1 --schedule constant --eta 3 \
        --l2 0 --epochs 8 --quiet
    [ -f "$T/a9a.k3" ] || awk '{ $1 = NF % 3; print }' "$T/a9a" >"$T/a9a.k3"
    check "early-stop-ovr" "$HOG" train "$T/a9a.k3" --algo hogwild --threads 2 \
        --holdout 0.2 --early-stop 1 --schedule constant --eta 3 --l2 0 \
        --epochs 8 --quiet
    # Two processes averaging their Hogwild! models over loopback
    # (docs/SCALEOUT.md): threads meet at the pool barrier, thread 0 averages.
    port=$((20000 + $$ % 20000))
    "$HOG" train "$T/a9a" --algo hogwild --threads 2 --world 2 --rank 1 \
        --coordinator "127.0.0.1:$port" --shard stride --sync-every 2000 \
        --epochs 1 --quiet >"$T/hogwild-world-1.log" 2>&1 &
    peer=$!
    check "hogwild-world" "$HOG" train "$T/a9a" --algo hogwild --threads 2 \
        --world 2 --rank 0 --coordinator "127.0.0.1:$port" --shard stride \
        --sync-every 2000 --epochs 1 --quiet
    if ! wait "$peer"; then
        fail=$((fail + 1)); echo "tsan: FAIL hogwild-world (rank 1)"
        tail -n 40 "$T/hogwild-world-1.log"
    fi
else
    echo "tsan: real data a9a not found under $DATA; threaded runs skipped"
fi
# Coordinate descent with weights on two workers: w8a is large enough for
# two (a9a runs on one, coordinate.h).
if [ -f "$DATA/w8a.xz" ]; then
    [ -f "$T/w8a" ] || xz -dc "$DATA/w8a.xz" >"$T/w8a"
    check "dcd-weighted" "$HOG" train "$T/w8a" --algo dcd --loss hinge \
        --threads 2 --class-weight balanced --epochs 5 --quiet
    check "scd-weighted" "$HOG" train "$T/w8a" --algo scd --l1 1e-4 --l2 0 \
        --threads 2 --class-weight balanced --epochs 5 --quiet
else
    echo "tsan: real data w8a not found under $DATA; weighted coordinate runs skipped"
fi
# Streamed training (docs/STREAMING.md): the pread reader threads and the
# pool over a ring of chunk buffers; generated data, several chunks.
if "$HOG" gen -q --rows 60000 --features 20000 --nnz 20 -o "$T/stream.svm" &&
   "$HOG" convert -q "$T/stream.svm" "$T/stream.hgb"; then
    for io in pread auto; do   # auto: io_uring where the kernel allows it
        check "stream-serial-$io" "$HOG" train "$T/stream.hgb" --stream \
            $([ "$io" = pread ] && echo --io pread) --mem-budget 9M --epochs 2 --quiet
        check "stream-hogwild-$io" "$HOG" train "$T/stream.hgb" --stream \
            $([ "$io" = pread ] && echo --io pread) --mem-budget 9M --algo hogwild --threads 2 --epochs 2 --quiet
    done
    # The epochs' metrics on all CPUs (blocks claimed by the threads of
    # hog_fork_join, the AUC's two sorts), in memory with --json.
    check "metrics-threads" "$HOG" train "$T/stream.hgb" --epochs 2 --quiet \
        --json "$T/metrics-threads.json"
else
    echo "tsan: could not make the streaming data; streamed runs skipped"
fi
echo "tsan: $pass passed, $fail failed"
[ "$fail" = 0 ]
