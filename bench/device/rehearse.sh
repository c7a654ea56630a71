#!/bin/sh
# bench/device/rehearse.sh [DIR]: the device run rehearsed here, as root,
# so that the device machine is never the first place bench/gpu_check.sh
# runs. Copies what the device tool would send (the tracked and untracked
# files git does not ignore, plus .gpudeps and .gpudata: run `make
# gpu-carry` first) into DIR/tree (default /tmp/hogtrain-rehearse), then,
# in a mount namespace of its own (unshare -m: nothing leaks to the host),
# hides the system's copies of the build's packages (headers, libraries,
# .pc files, pkg-config, xz) and runs bench/gpu_check.sh there with DIR/out
# as $OUT. Last it checks what came back: at most 8 files in $OUT, and the
# test program linked against the carried libraries, not the system's.
#
# GPU_CHECK_BUDGET (default 1800 s here), GPU_CHECK_SLOW (4: every step's
# time guard 4 times the device's; the build alone takes 5 minutes or more
# on 2 shared cores) and CPU_CURVE_THREADS (default 1,2) pass through. Where nvcc is
# absent the rehearsal covers everything but the CUDA build and says so.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DIR=${1:-/tmp/hogtrain-rehearse}

if [ -z "${REHEARSE_INNER:-}" ]; then
    [ "$(id -u)" = 0 ] || { echo "rehearse: run as root (unshare -m, mount --bind)" >&2; exit 1; }
    for d in .gpudeps .gpudata; do
        [ -d "$ROOT/$d" ] || { echo "rehearse: no $d: run 'make gpu-carry' first" >&2; exit 1; }
    done
    rm -rf "$DIR/tree" "$DIR/out"
    mkdir -p "$DIR/tree" "$DIR/out"
    (cd "$ROOT" && git ls-files -co --exclude-standard -z |
        tar --null -T - -cf - | tar -xf - -C "$DIR/tree") || exit 1
    cp -r "$ROOT/.gpudeps" "$ROOT/.gpudata" "$DIR/tree/"
    echo "rehearse: the tree as the device tool sends it, $(du -sk "$DIR/tree" | cut -f1) KiB, in $DIR/tree"
    command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
        echo "rehearse: no nvcc here: everything but the CUDA build is rehearsed"
    REHEARSE_INNER=1 exec unshare -m sh "$0" "$DIR"
fi

# ---- inside the namespace ----------------------------------------------------
E=$(mktemp -d)
mkdir -p "$E/dir"
printf '#error hidden system copy\n' >"$E/file"
printf '#!/bin/sh\necho "hidden by bench/device/rehearse.sh: $0" >&2\nexit 127\n' >"$E/tool"
chmod +x "$E/tool"
hd() { [ -e "$1" ] && mount --bind "$E/dir" "$1"; }
hf() { [ -e "$1" ] && mount --bind "$E/file" "$1"; }
ht() { [ -e "$1" ] && mount --bind "$E/tool" "$1"; }
L=/usr/lib/x86_64-linux-gnu
hd $L/pkgconfig; hd /usr/share/pkgconfig
ht /usr/bin/pkg-config; ht /usr/bin/pkgconf; ht /usr/bin/x86_64-linux-gnu-pkg-config
ht /usr/bin/xz
ht /usr/bin/make    # the device image may lack it: the carried one is used
ht /usr/bin/mpicc   # the device has no MPI: build without it, as there
for d in hwloc criterion liburing sodium lzma boxfort x86_64-linux-gnu/openblas-pthread; do
    hd /usr/include/$d
done
for f in hwloc.h liburing.h sodium.h zlib.h zconf.h lzma.h zstd.h zstd_errors.h zdict.h boxfort.h; do
    hf /usr/include/$f
done
hd $L/openblas-pthread
for f in $L/libhwloc.so* $L/libcriterion.so* $L/liburing.so* $L/libsodium.so* \
         $L/libgit2.so* $L/libnanomsg.so* $L/libmbed*.so* $L/libhttp_parser.so* \
         $L/libssh2.so* $L/libblas.so* $L/liblapack.so* $L/libopenblas.so*; do
    [ -L "$f" ] || hf "$f"
done
echo "rehearse: hidden: pkg-config $(pkg-config --version 2>&1 | head -1); xz: $(xz --version 2>&1 | head -1); /usr/include/hwloc.h: $(head -c 30 /usr/include/hwloc.h)"

cd "$DIR/tree" || exit 1
OUT="$DIR/out" GPU_CHECK_BUDGET=${GPU_CHECK_BUDGET:-1800} \
    GPU_CHECK_SLOW=${GPU_CHECK_SLOW:-4} \
    CPU_CURVE_THREADS=${CPU_CURVE_THREADS:-1,2} sh bench/gpu_check.sh >/dev/null 2>&1
rc=$?
tail -30 "$DIR/out/gpu_check.log"
echo
echo "rehearse: bench/gpu_check.sh ended with status $rc (0 passed, 1 failed, 2 passed without a device)"
n=$(ls "$DIR/out" | wc -l)
echo "rehearse: \$OUT holds $n files (the device tool returns at most 8):"
ls -la "$DIR/out" | sed 1d
echo "rehearse: the test program's libraries:"
[ -f build/hogtrain-tests ] || { echo "rehearse: FAILED: no build/hogtrain-tests"; exit 1; }
# As gpu_check.sh runs them: the carried libraries' own needs (libgit2 for
# Criterion, ...) are found through LD_LIBRARY_PATH, not the RUNPATH.
D=$DIR/tree/build/gpudeps/usr/lib/x86_64-linux-gnu
export LD_LIBRARY_PATH="$D:$D/openblas-pthread"
ldd build/hogtrain-tests 2>&1 | grep -E 'hwloc|criterion|uring|sodium|openblas|git2|nanomsg|not found' | sed 's/^/  /'
bad=$(ldd build/hogtrain-tests 2>&1 | grep -E 'hwloc|criterion|uring|sodium|openblas|git2|nanomsg|not found' | grep -v "$D")
[ -z "$bad" ] || { echo "rehearse: FAILED: linked against the system's copies"; rc=1; }
[ "$n" -le 8 ] || { echo "rehearse: FAILED: more than 8 files in \$OUT"; rc=1; }
exit $rc
