#!/bin/sh
# The first `make demo` on a fresh machine, reproduced: a copy of this tree
# is built where pkg-config knows no package until `make deps` installs them
# (a stand-in apt-get on PATH copies this machine's .pc files into an empty
# PKG_CONFIG_LIBDIR), and where mpicc exists but mpi.h does not compile (as
# with Debian's openmpi-bin without libopenmpi-dev). The build must install,
# then link with the installed packages' flags, build the no-MPI backend and
# say so, and run the demo to its end, all in the first `make demo`.
#
# Usage: sh tests/first_contact.sh   (as root, as make deps needs; CI runs it)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" != 0 ]; then
    echo "first_contact: skipped: make deps installs packages as root only, and this is not root"
    exit 0
fi
real_pc=$(pkg-config --variable pc_path pkg-config)
for p in hwloc liburing openblas libsodium zlib liblzma libzstd; do
    pkg-config --exists "$p" || { echo "first_contact: FAILED: the real $p package is not installed here (make deps)"; exit 1; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hogtrain-first.XXXXXX")
[ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src" "$tmp/pc" "$tmp/bin"
# The working tree as a clone would have it (tracked and unignored files).
(cd "$root" && git ls-files -co --exclude-standard -z | xargs -0 tar -cf - 2>/dev/null) |
    tar -xf - -C "$tmp/src"

# apt-get: "installs" by making every package this machine has visible.
cat > "$tmp/bin/apt-get" <<SH
#!/bin/sh
[ "\$1" = install ] || exit 0
echo "$real_pc" | tr ':' '\n' | while read -r d; do
    [ -d "\$d" ] && for f in "\$d"/*.pc; do [ -e "$tmp/pc/\${f##*/}" ] || ln -s "\$f" "$tmp/pc/"; done
done
exit 0
SH
# mpicc: the wrapper answers, but its headers are not installed.
cat > "$tmp/bin/mpicc" <<SH
#!/bin/sh
case "\$1" in
--showme:compile) echo "-I$tmp/no-openmpi-headers" ;;
--showme:link) echo "-L$tmp/no-openmpi-libs -lmpi" ;;
*) echo "mpicc: headers not installed" >&2; exit 1 ;;
esac
SH
chmod +x "$tmp/bin/apt-get" "$tmp/bin/mpicc"

log=$tmp/make.log
if ! PATH="$tmp/bin:$PATH" PKG_CONFIG_LIBDIR="$tmp/pc" PKG_CONFIG_PATH= \
     make -C "$tmp/src" --no-print-directory NVCC= demo >"$log" 2>&1; then
    tail -n 30 "$log"
    echo "first_contact: FAILED: the first make demo on a fresh machine failed (above)"
    exit 1
fi
fail=0
# The installed pkg-config file: hwloc, liburing, OpenBLAS, libsodium and
# the decompressors (zlib, liblzma, libzstd) are Requires.private, so a
# static link gets them and their own dependencies (hwloc's libudev) and
# the README's program links against libhogtrain.a.
stage=$tmp/stage
if make -C "$tmp/src" --no-print-directory NVCC= install DESTDIR="$stage" PREFIX=/usr >>"$log" 2>&1; then
    pcdir=$stage/usr/lib/pkgconfig
    for p in hwloc zlib liblzma libzstd; do
        grep -q "^Requires.private:.*\<$p\>" "$pcdir/hogtrain.pc" ||
            { echo "first_contact: FAILED: hogtrain.pc does not require $p privately"; fail=1; }
    done
    sed -n '/^```c$/,/^```$/p' "$root/README.md" | sed '1d;$d' > "$tmp/example.c"
    static_libs=$(PKG_CONFIG_PATH="$pcdir" PKG_CONFIG_SYSROOT_DIR= pkg-config --static --libs hogtrain |
                  sed 's/-lhogtrain//')
    if ! cc -o "$tmp/example" "$tmp/example.c" -I"$stage/usr/include" \
            "$stage/usr/lib/libhogtrain.a" $static_libs >>"$log" 2>&1; then
        echo "first_contact: FAILED: the README's program does not link against libhogtrain.a with pkg-config --static"
        fail=1
    fi
else
    echo "first_contact: FAILED: make install"; fail=1
fi
grep -q 'running make deps' "$log" || { echo "first_contact: FAILED: make demo did not install the missing packages"; fail=1; }
grep -q 'building without the MPI backend' "$log" || { echo "first_contact: FAILED: no line saying MPI was left out"; fail=1; }
grep -q '^  CC     src/net/nompi.c' "$log" || { echo "first_contact: FAILED: the no-MPI backend was not built"; fail=1; }
grep -q 'accuracy' "$log" || { echo "first_contact: FAILED: the demo did not reach its predictions"; fail=1; }
if [ $fail = 0 ]; then
    echo "first_contact: the first make demo on a fresh machine installs, builds without MPI and runs the demo"
else
    tail -n 30 "$log"
    exit 1
fi
