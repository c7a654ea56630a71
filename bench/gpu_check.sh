#!/bin/sh
# bench/gpu_check.sh: everything the GPU issues leave to a machine with a
# CUDA device, in one run of about 400 s (GPU_CHECK_BUDGET), prepared so
# that the device machine's first call is the one that counts. The steps,
# each with a timestamp and a time guard, in the order of their worth:
#
#   1. the machine: /etc/os-release, the kernel, gcc, glibc, `command -v
#      nvcc` and its version, the CUDA libraries, nvidia-smi (name, compute
#      capability, driver), the CPUs and memory
#   2. the packages: the system's, or the .debs carried in .gpudeps/,
#      unpacked into build/gpudeps/ (bench/device/deps.sh), and where each
#      package came from; pkg-config and xz are checked too
#   3. the build with nvcc (sm_90 + PTX; CUDA_ARCH=NN to change), without
#      -Werror (the device's gcc is not the build machine's); stops with a
#      sentence when the CUDA plugin was not built; the plugin's libraries,
#      `cuobjdump --list-elf --list-ptx`, `hogtrain topo`
#   4. the GPU tests (suites gpu and gpu_device), each test's figures; a
#      crashed test is run again alone with CUDA_LAUNCH_BLOCKING=1
#   5. compute-sanitizer memcheck (leak check, the devices reset at exit)
#      on the small device tests and on command_trains_on_gpu (both steps'
#      kernels, through the command)
#   6. the GPU bench (bench/gpu_bench.c) on news20.binary: copy bandwidth,
#      nonzeros/s of each step kind, the bytes an epoch moves against the
#      copy bandwidth, CPU Hogwild! on every core on the same data
#   7. --algo newton and lbfgs with --gpus (suites newton_gpu and
#      newton_gpu_device, then the objective and time against the CPU)
#   8. the GPU bench on `hogtrain gen` data (1M rows, 64 nonzeros a row)
#   9. the CPU scaling curves (1, 2, 4, 8 and 16 threads on 16 cores) on
#      news20.binary: Hogwild! (plain and --hot auto; a constant step and
#      the default schedule), FTRL with one model shared or one per
#      thread (--algo auto's candidate) and the default's whole run on
#      every core against --threads 1, Cyclades, each beside its control,
#      dual CD, trust-region Newton
#  10. racecheck, with the time that is left
#
# A step that needs a device says so and is skipped on a machine without
# one, so that the script runs to its end anywhere (bench/device/
# rehearse.sh runs it here with the system's packages hidden).
#
# What comes back: everything goes to $OUT (the device tool's folder;
# build/gpucheck/out where OUT is unset) as each step ends, 7 files:
# gpu_check.log (the whole output, written as it goes), build.log,
# tests.log, sanitizer.log, bench.log, newton.log, curves.log.
#
# Data: the device machine has no ../shared and no network. `make
# gpu-carry` here fills .gpudeps/ (the packages) and .gpudata/
# (news20.binary, a9a); the device tool carries both (docs/GPU.md, "The
# device run", has the one command). Without .gpudata the tests use
# synthetic stand-ins and say so, and the bench runs on generated data only.
#
# GPU_CHECK_SLOW=N multiplies every step's time guard (a rehearsal on 2
# shared cores). CPU_CURVE_ONLY=1: the build and step 9 alone. NEWTON_ONLY=1: the build
# and step 7 alone. Exit status: 0 when everything ran and passed, 1 when
# something failed, 2 when nothing failed but there was no device.
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
WORK="$ROOT/build/gpucheck"
OUT=${OUT:-$WORK/out}
mkdir -p "$WORK" "$OUT"

# The whole output into $OUT as it is written: the device tool returns only
# the last 12,000 characters of it, and nothing at all of build/.
if [ -z "${GPU_CHECK_INNER:-}" ]; then
    rm -f "$WORK/status" "$WORK/failed"
    GPU_CHECK_INNER=1 sh "$ROOT/bench/gpu_check.sh" "$@" 2>&1 | tee "$OUT/gpu_check.log"
    exit "$(cat "$WORK/status" 2>/dev/null || echo 1)"
fi

START=$(date +%s)
BUDGET=${GPU_CHECK_BUDGET:-400}   # seconds; the device tool allows 600
FAIL=0
NODEV=0
export PATH="$PATH:/usr/local/cuda/bin"
JOBS=$(nproc 2>/dev/null || echo 4)
DATA="$ROOT/.gpudata"
DEVICE_DIR="$ROOT/bench/device"

elapsed() { echo $(( $(date +%s) - START )); }
left() { echo $(( BUDGET - $(elapsed) )); }
# The smaller of the time left and $1 seconds (times GPU_CHECK_SLOW), at
# least 1.
guard() {
    _gc=$(( $1 * ${GPU_CHECK_SLOW:-1} )); _gl=$(left)
    [ "$_gl" -gt "$_gc" ] && _gl=$_gc; [ "$_gl" -lt 1 ] && _gl=1; echo "$_gl"
}
# guarded CAP CMD...: CMD under its time guard; a kill says so (a quiet
# command killed would otherwise fail without a word).
guarded() {
    _gg=$(guard "$1"); shift
    timeout "$_gg" "$@"; _gr=$?
    [ $_gr = 124 ] && echo "(killed by its time guard, $_gg s: $*)"
    return $_gr
}
step() { printf '\n## %s  (%s, t = %ss)\n\n' "$*" "$(date -u +%H:%M:%S)" "$(elapsed)"; }
# Failures are also kept in a file: a step run in a pipeline (run_to) is a
# subshell, whose FAIL=1 the script would not see.
fail() { echo "FAILED: $*"; echo "$*" >>"$WORK/failed"; FAIL=1; }
keep() { for f in "$@"; do [ -f "$f" ] && cp "$f" "$OUT/"; done; }
finish() {
    st=$FAIL
    [ -s "$WORK/failed" ] && st=1
    [ $st = 0 ] && [ $NODEV = 1 ] && st=2
    step "done in $(elapsed) s: $(case $st in 0) echo all passed ;;
          1) echo SOME FAILED ;; *) echo "no CUDA device: every step that needs none ran" ;; esac)"
    echo "$st" >"$WORK/status"
    exit "$st"
}
# run_to LOG CMD...: CMD's output on stdout and appended to LOG; its status.
run_to() {
    log=$1; shift
    { "$@"; echo $? >"$WORK/rc"; } 2>&1 | tee -a "$log"
    return "$(cat "$WORK/rc")"
}

# ---- 1. the machine --------------------------------------------------------
step "1. the machine"
echo "os: $(sed -n 's/^PRETTY_NAME=//p' /etc/os-release 2>/dev/null | tr -d '"')"
echo "kernel: $(uname -srm)"
echo "gcc: $(gcc --version 2>&1 | head -1)"
echo "glibc: $(ldd --version 2>&1 | head -1)"
echo "CPUs: $JOBS; memory: $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
NVCC=$(command -v nvcc || true)
echo "command -v nvcc: ${NVCC:-(none)}"
if [ -n "$NVCC" ]; then
    "$NVCC" --version 2>&1 | tail -2
    CUDA_LIB=$(dirname "$(dirname "$NVCC")")/lib64
    echo "CUDA libraries in $CUDA_LIB:"
    ls "$CUDA_LIB"/libcudart.so* "$CUDA_LIB"/libcusparse.so* 2>&1 | sed 's/^/  /'
fi
drv=$(ldconfig -p 2>/dev/null | grep -m1 'libcuda\.so\.1' | sed 's/.*=> //')
echo "libcuda (the driver's): ${drv:-(none found by ldconfig)}"
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=index,name,compute_cap,driver_version,memory.total,pci.bus_id \
        --format=csv 2>&1
    nvidia-smi topo -m 2>&1 | head -12
else
    echo "(nvidia-smi not available)"
fi
echo "CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-(unset)}"

# ---- 2. the packages -------------------------------------------------------
step "2. the packages"
. "$DEVICE_DIR/deps.sh"
device_deps "$ROOT/.gpudeps" "$ROOT/build/gpudeps" || { FAIL=1; finish; }
deps_sources
if [ -f "$DATA/news20.binary.train.svm.xz" ]; then
    echo "data: $(cd "$DATA" && ls | tr '\n' ' ')in .gpudata (xz: $(command -v xz))"
else
    echo "data: no .gpudata/news20.binary.train.svm.xz: the tests use synthetic stand-ins, the bench generated data only"
fi

# ---- 3. the build ----------------------------------------------------------
step "3. the build (make -j$JOBS, no -Werror)"
if ! guarded 300 make -j"$JOBS" all build/hogtrain-tests build/bench/gpu_bench \
     >"$WORK/build.log" 2>&1; then
    keep "$WORK/build.log"
    tail -40 "$WORK/build.log"
    fail "the build (build.log)"; finish
fi
keep "$WORK/build.log"
echo "warnings: $(grep -c 'warning:' "$WORK/build.log"); nvcc units: $(grep -c NVCC "$WORK/build.log")"
grep 'warning:' "$WORK/build.log" | sort | uniq | head -10
if [ ! -f build/libhogtrain-cuda.so ]; then
    echo "FAILED: the CUDA plugin build/libhogtrain-cuda.so was not built (nvcc: ${NVCC:-none on PATH or in /usr/local/cuda/bin}); the GPU steps cannot run"
    FAIL=1; finish
fi
ls -la build/hogtrain build/libhogtrain-cuda.so | sed 's/^/  /'
echo "the plugin's libraries:"
ldd build/libhogtrain-cuda.so | grep -E 'cuda|cusparse|stdc|hwloc|not found' | sed 's/^/  /'
if command -v cuobjdump >/dev/null; then
    cuobjdump --list-elf --list-ptx build/libhogtrain-cuda.so 2>&1 | head -20
else
    echo "(no cuobjdump)"
fi
./build/hogtrain topo 2>&1
./build/hogtrain topo 2>&1 | grep -q '^GPUs        none' && NODEV=1

TEST_ENV="HOGTRAIN_BIN=$ROOT/build/hogtrain HOGTRAIN_DATA=$DATA HOGTRAIN_TEST_TMP=$ROOT/build/testdata"
mkdir -p build/testdata

# The tests' figures (the lines they print) and verdicts, from a log.
verdicts() {
    grep -E '^\[(PASS|FAIL|SKIP|CRASH)|^\[====\] Synthesis|^data: |^[a-z_]+: ' "$1" |
        grep -v -e 'Test is disabled'
}

# ---- 7. the exact solvers (a function: NEWTON_ONLY runs it alone) ------------
json_num() { grep -o "\"$2\": *[-0-9.e+]*" "$1" | tail -1 | sed 's/.*: *//'; }
newton_run() { # name file algo loss gpus -> prints "objective seconds"
  j="$WORK/newton-$1-$3-$4-$(echo "$5" | tr , _).json"
  g=""; [ "$5" != cpu ] && g="--gpus $5"
  t=""; [ "$5" = cpu ] && t="--threads $JOBS"
  if guarded 120 ./build/hogtrain train -q \
       --algo "$3" --loss "$4" --C 1 --tol 1e-4 $g $t --json "$j" "$2" \
       -o "$WORK/newton.hgm" >"$j.log" 2>&1; then
    echo "$(json_num "$j" objective) $(json_num "$j" total_seconds)"
  else
    echo "failed: $(tail -1 "$j.log")" >&2; echo "nan nan"
  fi
}
newton_check() {
  step "7. newton and lbfgs with --gpus: tests"
  guarded 150 env $TEST_ENV \
    build/hogtrain-tests --filter='newton_gpu*/*' --verbose \
    >"$WORK/newton-tests.log" 2>&1 || fail "newton_gpu tests"
  verdicts "$WORK/newton-tests.log" | tee -a "$OUT/newton.log"
  if [ $NODEV = 1 ]; then
    echo "skipped the objectives on the GPU: no CUDA device" | tee -a "$OUT/newton.log"; return
  fi
  step "7. newton and lbfgs with --gpus: objective and time against the CPU"
  sets=""
  if [ -f "$DATA/news20.binary.train.svm.xz" ]; then
    [ -f "$WORK/news20.binary.train.svm" ] || xz -dc \
      "$DATA/news20.binary.train.svm.xz" >"$WORK/news20.binary.train.svm"
    sets="news20:$WORK/news20.binary.train.svm"
  fi
  [ -f "$WORK/gen500k.svm" ] || ./build/hogtrain gen -q --rows 500000 \
    --features 1000000 --nnz 64 --seed 3 -o "$WORK/gen500k.svm"
  sets="$sets gen500k:$WORK/gen500k.svm"
  echo "data: $sets" | tee -a "$OUT/newton.log"
  printf '%-8s %-6s %-8s %-5s %18s %10s %18s %10s %9s\n' set algo loss gpus \
    objective_gpu secs_gpu objective_cpu secs_cpu rel_diff | tee -a "$OUT/newton.log"
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
        "$loss" "$gpus" "$og" "$tg" "$oc" "$tc" "$rel" | tee -a "$OUT/newton.log"
      awk -v r="$rel" 'BEGIN { exit !(r != "nan" && r + 0 <= 1e-6) }' \
        || fail "$name $algo $loss --gpus $gpus: objective off by $rel"
    done
  done
}

# ---- 9. the CPU scaling curves (a function: CPU_CURVE_ONLY runs it alone) -----
# CPU_CURVE_THREADS overrides the thread counts (default: powers of two up
# to the usable CPUs, at most 16, when there are at least 8). Each bench
# runs when its share of time is left: Hogwild! (plain and hot, a constant
# step and the default schedule; the control rows are in its table),
# Cyclades (with its control), and dual CD (a fixed 20 epochs at every
# thread count, so the epoch times compare).
cpu_curve() {
  step "9. CPU scaling curves on news20.binary"
  CURVE=${CPU_CURVE_THREADS:-}
  if [ -z "$CURVE" ] && [ "$JOBS" -ge 8 ]; then
    CURVE=1; n=2
    while [ $n -le "$JOBS" ] && [ $n -le 16 ]; do CURVE="$CURVE,$n"; n=$((n * 2)); done
  fi
  if [ -z "$CURVE" ]; then
    echo "skipped: $JOBS CPUs (the curve wants at least 8)"; return
  fi
  if [ ! -f "$DATA/news20.binary.train.svm.xz" ]; then
    echo "skipped: no .gpudata/news20.binary.train.svm.xz (make gpu-carry)"; return
  fi
  echo "data: news20.binary from .gpudata; threads $CURVE"
  for f in news20.binary.train.svm news20.binary.test.svm; do
    [ -f "$WORK/$f.hgb" ] || { xz -dc "$DATA/$f.xz" >"$WORK/$f" &&
      ./build/hogtrain convert -q "$WORK/$f" "$WORK/$f.hgb"; }
  done
  TR="$WORK/news20.binary.train.svm.hgb" TE="$WORK/news20.binary.test.svm.hgb"
  for sched in "--schedule constant --eta 0.1" ""; do
    [ "$(left)" -lt 95 ] && { echo "skipped Hogwild! ($sched): $(left) s left"; continue; }
    echo "hogtrain bench news20.binary --loss hinge $sched --epochs 20 --threads $CURVE --update none --hot 0,auto --repeat 3"
    guarded 90 ./build/hogtrain bench "$TR" -t "$TE" --loss hinge $sched --epochs 20 \
      --threads "$CURVE" --update none --hot 0,auto --repeat 3 -q \
      || fail "CPU scaling curve, Hogwild! ($sched)"
  done
  # --algo auto's candidate: FTRL, one model shared or one per thread
  if [ "$(left)" -ge 90 ]; then
    echo "hogtrain bench news20.binary --schedule ftrl --epochs 20 --threads $CURVE --update none --replicas shared,core --repeat 3"
    guarded 50 ./build/hogtrain bench "$TR" -t "$TE" --schedule ftrl --epochs 20 \
      --threads "$CURVE" --update none --replicas shared,core --repeat 3 -q \
      || fail "CPU scaling curve, FTRL with replicas"
    # and what the default chose on every core against one thread, whole runs
    for t in 0 1 0 1 0 1; do
      guarded 20 ./build/hogtrain train -q --threads "$t" --json "$WORK/auto-$t.json" \
        "$TR" || fail "the default at --threads $t"
      echo "default, --threads $t (0: all): $(grep -o '"total_seconds": [0-9.e+-]*' \
        "$WORK/auto-$t.json" | tail -1), $(grep -o '"why": "[^"]*"' "$WORK/auto-$t.json" | head -1)"
    done
  else
    echo "skipped FTRL with replicas: $(left) s left"
  fi
  if [ "$(left)" -ge 70 ]; then
    echo "hogtrain bench news20.binary --algo cyclades --loss hinge --epochs 10 --threads $CURVE --update none --repeat 1"
    guarded 60 ./build/hogtrain bench "$TR" -t "$TE" --algo cyclades --loss hinge \
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
      if guarded 30 ./build/hogtrain train -q --algo dcd --loss sqhinge --l2 8.8386e-5 --tol 0 \
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
  # trust-region Newton (issue 39: 16 threads >= 8x one): the same model at
  # every count, so its train seconds (the products) and the whole run's
  if [ "$(left)" -ge 40 ]; then
    echo "newton, logistic, C = 1, -e 0.01: seconds by threads (train; whole run)"
    printf '%8s %10s %8s %10s %8s\n' threads train "x 1thr" total "x 1thr"
    one=""; onet=""
    for n in $(echo "$CURVE" | tr ',' ' '); do
      [ "$(left)" -lt 15 ] && { echo "  (out of time)"; break; }
      if guarded 30 ./build/hogtrain train -q --algo newton --C 1 --threads "$n" \
           --json "$WORK/newton-$n.json" "$TR"; then
        sec=$(json_num "$WORK/newton-$n.json" train_seconds)
        tot=$(json_num "$WORK/newton-$n.json" total_seconds)
        [ -z "$one" ] && { one=$sec; onet=$tot; }
        printf '%8s %10s %8s %10s %8s\n' "$n" "$sec" \
          "$(awk -v a="$one" -v b="$sec" 'BEGIN { printf "%.2f", a / b }')" "$tot" \
          "$(awk -v a="$onet" -v b="$tot" 'BEGIN { printf "%.2f", a / b }')"
      else
        fail "newton at $n threads"
      fi
    done
  else
    echo "skipped newton: $(left) s left"
  fi
}

if [ "${CPU_CURVE_ONLY:-0}" = 1 ]; then
  run_to "$OUT/curves.log" cpu_curve || true
  finish
fi
if [ "${NEWTON_ONLY:-0}" = 1 ]; then
  newton_check
  finish
fi

# ---- 4. the GPU tests ------------------------------------------------------
step "4. the GPU tests (suites gpu and gpu_device)"
guarded 150 env $TEST_ENV \
  build/hogtrain-tests --filter='gpu*/*' --verbose >"$WORK/tests.log" 2>&1 \
  || fail "GPU tests"
verdicts "$WORK/tests.log"
# A crash leaves the device's error for the next call to report; alone and
# with CUDA_LAUNCH_BLOCKING=1 the failing launch names itself.
for t in $(sed -n 's/.*\] \([a-z0-9_]*\)::\([a-z0-9_]*\): CRASH.*/\1\/\2/p' "$WORK/tests.log" | sort -u); do
  [ "$(left)" -lt 30 ] && { echo "no time left to rerun $t"; break; }
  echo "rerun of the crashed $t with CUDA_LAUNCH_BLOCKING=1:"
  guarded 60 env $TEST_ENV CUDA_LAUNCH_BLOCKING=1 \
    build/hogtrain-tests --filter="$t" --verbose -j1 >"$WORK/rerun.log" 2>&1
  verdicts "$WORK/rerun.log"; tail -15 "$WORK/rerun.log"
  { echo "---- rerun of $t, CUDA_LAUNCH_BLOCKING=1"; cat "$WORK/rerun.log"; } >>"$WORK/tests.log"
done
keep "$WORK/tests.log"

# ---- 5. memcheck -----------------------------------------------------------
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/compute-sanitizer/compute-sanitizer)
SMALL='gpu_device/@(minibatch_is_deterministic|streamed_equals_resident|two_replicas_one_gpu_equal_one_replica|command_trains_on_gpu)'
sanitize() { # tool extra-args...
  tool=$1; shift
  echo "$tool on $SMALL (the hogwild kernels through command_trains_on_gpu)"
  if guarded 120 env $TEST_ENV HOGTRAIN_CUDA_RESET_AT_EXIT=1 "$SAN" --tool "$tool" "$@" \
       --target-processes all --error-exitcode 99 \
       build/hogtrain-tests --filter="$SMALL" -j1 --verbose \
       >"$WORK/san-$tool.log" 2>&1; then
    verdicts "$WORK/san-$tool.log"
    echo "$tool: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY' "$WORK/san-$tool.log" | sort | uniq -c | tr '\n' ' ')"
  else
    fail "$tool"; grep -v '^\[SKIP\].*disabled' "$WORK/san-$tool.log" | tail -40
  fi
  { echo "---- $tool"; cat "$WORK/san-$tool.log"; } >>"$OUT/sanitizer.log"
}
step "5. compute-sanitizer memcheck"
if [ $NODEV = 1 ]; then
  echo "skipped: no CUDA device"
elif [ ! -x "$SAN" ]; then
  echo "compute-sanitizer not found: memcheck NOT run"
elif [ "$(left)" -lt 100 ]; then
  echo "skipped memcheck: $(left) s left"
else
  "$SAN" --version 2>&1 | head -1
  sanitize memcheck --leak-check full
fi

# ---- 6. the GPU bench on news20.binary -----------------------------------------
step "6. GPU bench: news20.binary"
if [ $NODEV = 1 ]; then
  echo "skipped: no CUDA device"
elif [ -f "$DATA/news20.binary.train.svm.xz" ] && [ "$(left)" -gt 30 ]; then
  for f in news20.binary.train.svm news20.binary.test.svm; do
    [ -f "$WORK/$f" ] || xz -dc "$DATA/$f.xz" >"$WORK/$f"
  done
  echo "data: news20.binary from .gpudata" | tee -a "$OUT/bench.log"
  run_to "$OUT/bench.log" guarded 100 build/bench/gpu_bench \
    "$WORK/news20.binary.train.svm" "$WORK/news20.binary.test.svm" 3 \
    || fail "gpu_bench news20.binary"
else
  echo "skipped: no .gpudata/news20.binary.train.svm.xz (make gpu-carry), or out of time"
fi

# ---- 7. the exact solvers ------------------------------------------------------
newton_check

# ---- 8. the GPU bench on generated data ----------------------------------------
step "8. GPU bench: hogtrain gen, 1M rows, 1M features, 64 nonzeros a row"
if [ $NODEV = 1 ]; then
  echo "skipped: no CUDA device"
elif [ "$(left)" -gt 120 ]; then
  [ -f "$WORK/gen.svm" ] || ./build/hogtrain gen -q --rows 1000000 \
    --features 1000000 --nnz 64 --seed 1 -o "$WORK/gen.svm"
  echo "data: hogtrain gen --rows 1000000 --features 1000000 --nnz 64 --seed 1" | tee -a "$OUT/bench.log"
  run_to "$OUT/bench.log" guarded 90 build/bench/gpu_bench "$WORK/gen.svm" - 3 \
    || fail "gpu_bench gen"
else
  echo "skipped: $(left) s left"
fi

# ---- 9. the CPU curves -----------------------------------------------------------
run_to "$OUT/curves.log" cpu_curve || true

# ---- 10. racecheck: these kernels use no shared memory, which is all it
# inspects, so it comes last, with what time is left ------------------------------
step "10. compute-sanitizer racecheck"
if [ $NODEV = 1 ]; then
  echo "skipped: no CUDA device"
elif [ ! -x "$SAN" ] || [ "$(left)" -lt 60 ]; then
  echo "skipped racecheck: $(left) s left, or no compute-sanitizer"
else
  sanitize racecheck
fi

finish
