#!/bin/sh
# bench/gpu_check.sh: everything the GPU issue leaves to a machine with a
# CUDA device, in one run of at most 8 minutes. Prints what goes into
# docs/BENCHMARKS.md (the "GPU" section) and docs/GPU.md.
#
#   1. the device, driver and toolkit
#   2. the build with nvcc (sm_90 + PTX; CUDA_ARCH=NN to change)
#   3. the GPU tests (suites gpu and gpu_device)
#   4. the GPU bench (bench/gpu_bench.c): copy bandwidth, nonzeros/s of each
#      step kind, bytes moved per epoch as a fraction of the copy
#      bandwidth, and CPU Hogwild! on all cores on the same data; on
#      news20.binary (when carried) and on `hogtrain gen` data
#   5. compute-sanitizer memcheck and racecheck on the small GPU tests,
#      with the time that is left
#   6. the CPU scaling curves (1, 2, 4, 8 and 16 threads on a machine with
#      16 cores) on news20.binary: Hogwild! (hinge loss, constant step and
#      the default schedule, plain and with hot replicas), Cyclades, each
#      next to the control, and dual CD, with the time that is left (also
#      without a device); CPU_CURVE_ONLY=1 runs the build and this alone
#   7. --algo newton and lbfgs with --gpus (issue 39): the suites
#      newton_gpu and newton_gpu_device, then on news20.binary (when
#      carried) and a generated 500k-row set the final objective with
#      --gpus 0 (and 0,0: two shards) against the CPU on every core,
#      within 1e-6 relative, and both times; NEWTON_ONLY=1 runs the build
#      and this alone (about 3 minutes)
#
# The device machine has no ../shared and no network. news20.binary rides
# along compressed in .gpudata/ (gitignored), passed with the device tool's
# carry:
#
#   mkdir -p .gpudata
#   cp ../shared/data/news20.binary.train.svm.xz \
#      ../shared/data/news20.binary.test.svm.xz .gpudata/     # 25 MB
#   cp ../shared/data/a9a.xz .gpudata/    # step 7's tests (newton_gpu_device)
#   run: command "sh bench/gpu_check.sh", carry [".gpudata"], timeout 540
#
# Without .gpudata the tests use synthetic stand-ins and the bench runs on
# generated data only. Exit status: 0 when everything ran and passed.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
START=$(date +%s)
BUDGET=${GPU_CHECK_BUDGET:-470}   # seconds, under the 8-minute limit
FAIL=0
export PATH="/usr/local/cuda/bin:$PATH"
JOBS=$(nproc 2>/dev/null || echo 4)
DATA="$ROOT/.gpudata"
WORK="$ROOT/build/gpucheck"
mkdir -p "$WORK"

elapsed() { echo $(( $(date +%s) - START )); }
left() { echo $(( BUDGET - $(elapsed) )); }
step() { printf '\n## %s  (t = %ss)\n\n' "$*" "$(elapsed)"; }
fail() { echo "FAILED: $*"; FAIL=1; }

# The CPU scaling curves (step 6). CPU_CURVE_THREADS overrides the thread
# counts (default: powers of two up to the usable CPUs, at most 16, when
# there are at least 8). Each bench runs when its share of time is left:
# Hogwild! (plain and hot, constant step and the default schedule; the
# control rows are in its table), Cyclades (with its control), and dual CD
# (a fixed 20 epochs at every thread count, so the epoch times compare).
cpu_curve() {
  step "CPU scaling curves on news20.binary"
  CURVE=${CPU_CURVE_THREADS:-}
  if [ -z "$CURVE" ] && [ "$JOBS" -ge 8 ]; then
    CURVE=1; n=2
    while [ $n -le "$JOBS" ] && [ $n -le 16 ]; do CURVE="$CURVE,$n"; n=$((n * 2)); done
  fi
  if [ -z "$CURVE" ]; then
    echo "skipped: $JOBS CPUs (the curve wants at least 8)"; return
  fi
  if [ ! -f "$DATA/news20.binary.train.svm.xz" ]; then
    echo "skipped: no .gpudata/news20.binary.train.svm.xz (see the header)"; return
  fi
  for f in news20.binary.train.svm news20.binary.test.svm; do
    [ -f "$WORK/$f.hgb" ] || { xz -dc "$DATA/$f.xz" >"$WORK/$f" &&
      ./build/hogtrain convert -q "$WORK/$f" "$WORK/$f.hgb"; }
  done
  TR="$WORK/news20.binary.train.svm.hgb" TE="$WORK/news20.binary.test.svm.hgb"
  for sched in "--schedule constant --eta 0.1" ""; do
    [ "$(left)" -lt 95 ] && { echo "skipped Hogwild! ($sched): $(left) s left"; continue; }
    echo "hogtrain bench news20.binary --loss hinge $sched --epochs 20 --threads $CURVE --update none --hot 0,auto --repeat 3"
    timeout 90 ./build/hogtrain bench "$TR" -t "$TE" --loss hinge $sched --epochs 20 \
      --threads "$CURVE" --update none --hot 0,auto --repeat 3 -q \
      || fail "CPU scaling curve, Hogwild! ($sched)"
  done
  if [ "$(left)" -ge 70 ]; then
    echo "hogtrain bench news20.binary --algo cyclades --loss hinge --epochs 10 --threads $CURVE --update none --repeat 1"
    timeout 60 ./build/hogtrain bench "$TR" -t "$TE" --algo cyclades --loss hinge \
      --epochs 10 --threads "$CURVE" --update none --repeat 1 -q \
      || fail "CPU scaling curve, Cyclades"
  else
    echo "skipped Cyclades: $(left) s left"
  fi
  if [ "$(left)" -ge 50 ]; then
    # dcd at LIBLINEAR's C = 1: l2 = 1 / (C n), n = 11314 rows.
    echo "dual CD, squared hinge, C = 1, 20 epochs (--tol 0): train seconds by threads"
    printf '%8s %12s %10s\n' threads seconds "x 1thr"
    one=""
    for n in $(echo "$CURVE" | tr ',' ' '); do
      [ "$(left)" -lt 15 ] && { echo "  (out of time)"; break; }
      if timeout 30 ./build/hogtrain train -q --algo dcd --loss sqhinge --l2 8.8386e-5 --tol 0 \
           --epochs 20 --threads "$n" --json "$WORK/dcd-$n.json" "$TR"; then
        sec=$(sed -n 's/.*"train_seconds": *\([0-9.e+-]*\).*/\1/p' "$WORK/dcd-$n.json" | head -1)
        [ -z "$one" ] && one=$sec
        printf '%8s %12s %10s\n' "$n" "$sec" "$(awk -v a="$one" -v b="$sec" 'BEGIN { printf "%.2f", a / b }')"
      else
        fail "dcd at $n threads"
      fi
    done
  else
    echo "skipped dual CD: $(left) s left"
  fi
}

step "device"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=index,name,pci.bus_id,memory.total,driver_version \
  --format=csv 2>&1 || echo "(nvidia-smi not available)"
nvidia-smi topo -m 2>/dev/null | head -20
nvcc --version 2>&1 | tail -2
echo "CPUs: $JOBS; CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-(unset)}"
missing=""
for p in hwloc liburing openblas libsodium criterion; do
  pkg-config --exists $p 2>/dev/null || missing="$missing $p"
done
# The machine has no network: make deps cannot install what is missing, so
# say what is and stop rather than let apt-get wait on a mirror.
if [ -n "$missing" ]; then
  echo "FAILED: missing development packages:$missing (the build needs them; this machine cannot install them)"
  exit 1
fi

step "build (nvcc, CI=1: warnings are errors)"
if ! make -j"$JOBS" CI=1 all build/hogtrain-tests build/bench/gpu_bench \
     >"$WORK/build.log" 2>&1; then
  tail -40 "$WORK/build.log"
  echo "FAILED: build"; exit 1
fi
echo "nvcc units compiled by this run: $(grep -c NVCC "$WORK/build.log")"
ls -la build/hogtrain build/libhogtrain.so.* build/libhogtrain-cuda.so | sed 's/^/  /'
./build/hogtrain topo | sed -n '/^GPUs/,$p'

# Step 7: the exact solvers with their products on the GPU. Each run's
# final objective and time come from its --json report; the GPU's must be
# within 1e-6 relative of the CPU's (all cores, the blocks on the pool).
json_num() { grep -o "\"$2\": *[-0-9.e+]*" "$1" | tail -1 | sed 's/.*: *//'; }
newton_run() { # name file algo loss gpus -> prints "objective seconds"
  j="$WORK/newton-$1-$3-$4-$(echo "$5" | tr , _).json"
  g=""; [ "$5" != cpu ] && g="--gpus $5"
  t=""; [ "$5" = cpu ] && t="--threads $JOBS"
  if timeout $(( $(left) > 120 ? 120 : $(left) )) ./build/hogtrain train -q \
       --algo "$3" --loss "$4" --C 1 --tol 1e-4 $g $t --json "$j" "$2" \
       -o "$WORK/newton.hgm" >"$j.log" 2>&1; then
    echo "$(json_num "$j" objective) $(json_num "$j" total_seconds)"
  else
    echo "failed: $(tail -1 "$j.log")" >&2; echo "nan nan"
  fi
}
newton_check() {
  step "newton and lbfgs with --gpus: tests"
  env $TEST_ENV timeout $(( $(left) > 150 ? 150 : $(left) )) \
    build/hogtrain-tests --filter='newton_gpu*/*' --verbose \
    >"$WORK/newton-tests.log" 2>&1 || fail "newton_gpu tests"
  grep -E '^\[(PASS|FAIL|SKIP|CRASH)|^newton_gpu_device:' \
    "$WORK/newton-tests.log" | grep -v 'Test is disabled'
  step "newton and lbfgs with --gpus: objective and time against the CPU"
  sets=""
  if [ -f "$DATA/news20.binary.train.svm.xz" ]; then
    [ -f "$WORK/news20.binary.train.svm" ] || xz -dc \
      "$DATA/news20.binary.train.svm.xz" >"$WORK/news20.binary.train.svm"
    sets="news20:$WORK/news20.binary.train.svm"
  fi
  [ -f "$WORK/gen500k.svm" ] || ./build/hogtrain gen -q --rows 500000 \
    --features 1000000 --nnz 64 --seed 3 -o "$WORK/gen500k.svm"
  sets="$sets gen500k:$WORK/gen500k.svm"
  printf '%-8s %-6s %-8s %-5s %18s %10s %18s %10s %9s\n' set algo loss gpus \
    objective_gpu secs_gpu objective_cpu secs_cpu rel_diff
  for s in $sets; do
    name=${s%%:*}; file=${s#*:}
    for run in newton:logistic:0 newton:sqhinge:0 lbfgs:logistic:0 \
               newton:logistic:0,0; do
      [ "$(left)" -lt 40 ] && { echo "out of time"; break 2; }
      algo=${run%%:*}; rest=${run#*:}; loss=${rest%%:*}; gpus=${rest#*:}
      set -- $(newton_run "$name" "$file" "$algo" "$loss" cpu)
      oc=$1; tc=$2
      set -- $(newton_run "$name" "$file" "$algo" "$loss" "$gpus")
      og=$1; tg=$2
      rel=$(awk -v a="$oc" -v b="$og" 'BEGIN { d = a - b; if (d < 0) d = -d;
            if (a != a || b != b || a == 0) print "nan"; else printf "%.2g", d / (a < 0 ? -a : a) }')
      printf '%-8s %-6s %-8s %-5s %18s %10s %18s %10s %9s\n' "$name" "$algo" \
        "$loss" "$gpus" "$og" "$tg" "$oc" "$tc" "$rel"
      awk -v r="$rel" 'BEGIN { exit !(r != "nan" && r + 0 <= 1e-6) }' \
        || fail "$name $algo $loss --gpus $gpus: objective off by $rel"
    done
  done
}

# CPU_CURVE_ONLY=1: the build and the CPU scaling curve, nothing else.
if [ "${CPU_CURVE_ONLY:-0}" = 1 ]; then
  cpu_curve
  step "done in $(elapsed) s: $( [ $FAIL = 0 ] && echo all passed || echo SOME FAILED)"
  exit $FAIL
fi

# The tests read news20.binary from .gpudata (decompressed once under build/).
TEST_ENV="HOGTRAIN_BIN=$ROOT/build/hogtrain HOGTRAIN_DATA=$DATA HOGTRAIN_TEST_TMP=$ROOT/build/testdata"
mkdir -p build/testdata

# NEWTON_ONLY=1: the build and step 7, nothing else.
if [ "${NEWTON_ONLY:-0}" = 1 ]; then
  newton_check
  step "done in $(elapsed) s: $( [ $FAIL = 0 ] && echo all passed || echo SOME FAILED)"
  exit $FAIL
fi

step "GPU tests"
env $TEST_ENV timeout $(( $(left) > 200 ? 200 : $(left) )) \
  build/hogtrain-tests --filter='gpu*/*' --verbose >"$WORK/tests.log" 2>&1 \
  || fail "GPU tests"
grep -E '^\[(PASS|FAIL|SKIP|CRASH|----|====)' "$WORK/tests.log" \
  | grep -v -e 'Test is disabled' -e 'Criterion v' -e 'Running [0-9]'

if ./build/hogtrain topo | grep -q '^GPUs        none'; then
  echo "no usable CUDA device: the sanitizer runs and the bench need one"
  cpu_curve
  step "done in $(elapsed) s: NO DEVICE"
  exit 1
fi

newton_check

step "GPU bench: news20.binary"
if [ -f "$DATA/news20.binary.train.svm.xz" ] && [ "$(left)" -gt 30 ]; then
  for f in news20.binary.train.svm news20.binary.test.svm; do
    [ -f "$WORK/$f" ] || xz -dc "$DATA/$f.xz" >"$WORK/$f"
  done
  timeout $(( $(left) > 150 ? 150 : $(left) )) build/bench/gpu_bench \
    "$WORK/news20.binary.train.svm" "$WORK/news20.binary.test.svm" 3 \
    || fail "gpu_bench news20.binary"
else
  echo "skipped: no .gpudata/news20.binary.train.svm.xz (see the header), or out of time"
fi

step "GPU bench: hogtrain gen, 1M rows, 1M features, 64 nonzeros a row"
if [ "$(left)" -gt 150 ]; then
  [ -f "$WORK/gen.svm" ] || ./build/hogtrain gen -q --rows 1000000 \
    --features 1000000 --nnz 64 --seed 1 -o "$WORK/gen.svm"
  timeout $(( $(left) - 60 )) build/bench/gpu_bench "$WORK/gen.svm" - 3 \
    || fail "gpu_bench gen"
else
  echo "skipped: $(left) s left"
fi

step "compute-sanitizer"
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/compute-sanitizer/compute-sanitizer)
SMALL='gpu_device/@(minibatch_is_deterministic|streamed_equals_resident|two_replicas_one_gpu_equal_one_replica)'
if [ -x "$SAN" ]; then
  "$SAN" --version 2>&1 | head -1
  for tool in memcheck racecheck; do
    [ "$(left)" -lt 100 ] && { echo "skipped $tool: out of time"; continue; }
    extra=""; [ $tool = memcheck ] && extra="--leak-check full"
    if env $TEST_ENV timeout $(( $(left) - 10 )) "$SAN" --tool $tool $extra \
         --target-processes all --error-exitcode 99 \
         build/hogtrain-tests --filter="$SMALL" -j1 --verbose \
         >"$WORK/san-$tool.log" 2>&1; then
      grep -E '^\[(PASS|FAIL|SKIP|CRASH)' "$WORK/san-$tool.log" | grep -v disabled
      echo "$tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$WORK/san-$tool.log" | sort | uniq -c | tr '\n' ' ')"
    else
      fail "$tool"; grep -v '^\[SKIP\].*disabled' "$WORK/san-$tool.log" | tail -40
    fi
  done
else
  echo "compute-sanitizer not found: memcheck and racecheck NOT run"
fi

cpu_curve

step "done in $(elapsed) s: $( [ $FAIL = 0 ] && echo all passed || echo SOME FAILED)"
exit $FAIL
