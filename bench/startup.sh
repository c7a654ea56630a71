#!/bin/sh
# Startup cost of the command (docs/GPU.md, "The plugin"): `hogtrain
# --version` as built (CUDA a plugin, loaded on the first GPU call) against
# the same objects linked with cudart, cuSPARSE and libstdc++ as before the
# split, linked in this run. Interleaved runs, medians of wall time and of
# max RSS, and their ratio. Needs a CUDA build (make, with nvcc).
#   sh bench/startup.sh [BUILD] [RUNS]
set -eu
BUILD=${1:-build}
RUNS=${2:-40}
BIN=$BUILD/hogtrain
if [ ! -f "$BUILD/libhogtrain-cuda.so" ]; then
    echo "startup: $BUILD/libhogtrain-cuda.so not built (no nvcc): nothing to compare"
    exit 0
fi
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CUDA_HOME=${CUDA_HOME:-${NVCC%/bin/nvcc}}
OLD=$BUILD/bench/hogtrain-linked-cuda
mkdir -p "$BUILD/bench"
MPI_LIBS=$(command -v mpicc >/dev/null && mpicc --showme:link 2>/dev/null || true)
# shellcheck disable=SC2046,SC2086
${CC:-cc} -o "$OLD" "$BUILD"/src/cli/*.o "$BUILD/libhogtrain.a" \
    $(pkg-config --libs hwloc liburing openblas libsodium) -lm -pthread -ldl $MPI_LIBS \
    -Wl,--no-as-needed -L"$CUDA_HOME/lib64" -lcusparse -lcudart -lstdc++ \
    -Wl,-rpath,"$CUDA_HOME/lib64"
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$BIN" "$OLD" "$RUNS" <<'PY'
import statistics, subprocess, sys, time
new, old, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
def once(b):
    t = time.perf_counter()
    subprocess.run([b, "--version"], stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t
    # Max RSS through /usr/bin/time: the rusage of a child of Python counts
    # the interpreter's pages from before the exec.
    r = subprocess.run(["/usr/bin/time", "-f", "%M", b, "--version"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       check=True, text=True)
    return wall, int(r.stderr.strip().splitlines()[-1])
res = {new: [], old: []}
for _ in range(runs):
    for b in (old, new):
        res[b].append(once(b))
def med(b, i): return statistics.median(r[i] for r in res[b])
print("| command | median wall (ms) | median max RSS (MB) |")
print("|---|---|---|")
for name, b in (("linked with CUDA (before)", old), ("CUDA as a plugin", new)):
    print(f"| {name} | {med(b, 0) * 1e3:.1f} | {med(b, 1) / 1024:.1f} |")
print(f"plugin / linked: wall {med(new, 0) / med(old, 0):.2f}, "
      f"RSS {med(new, 1) / med(old, 1):.2f} ({runs} interleaved runs each)")
PY
