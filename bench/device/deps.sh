# bench/device/deps.sh: sourced (POSIX sh) by bench/gpu_check.sh on the
# device machine, which has CUDA, gcc and Python but none of the build's
# Debian packages and no network. fetch.sh downloaded them here into
# .gpudeps/; the device tool carries that folder.
#
#   device_deps DEBDIR DEST  when the system lacks any of the packages (or
#                            make, pkg-config or xz), unpacks every DEBDIR/*.deb
#                            into DEST (never into /: it would overwrite the
#                            system's libraries) and points pkg-config, the
#                            linker and the loader at them; returns 1 with a
#                            sentence when something is still missing
#   deps_sources             each package's version and .pc file, and the
#                            tools' paths: which copy the build used
#
# No CPATH or LIBRARY_PATH: pkgconf treats those folders as system ones and
# then drops the -I and -L flags it prints, which the build relies on.

DEVICE_PKGS="hwloc liburing openblas libsodium zlib liblzma libzstd criterion"
# Where stubpc/ is: the caller sets it, or sources this from the tree's root.
DEVICE_DIR=${DEVICE_DIR:-$(pwd)/bench/device}

deps_missing() {
    m=""
    for t in make pkg-config xz; do
        command -v $t >/dev/null 2>&1 || m="$m $t"
    done
    for p in $DEVICE_PKGS; do
        pkg-config --exists $p 2>/dev/null || m="$m $p"
    done
    echo "${m# }"
}

# dpkg -x, or Python (ar members, then tarfile) where dpkg is absent: xz
# itself is among the packages, so tar -J cannot be relied on before them.
deb_extract() {
    if command -v dpkg >/dev/null 2>&1; then
        dpkg -x "$1" "$2"
    else
        python3 - "$1" "$2" <<'PY'
import io, sys, tarfile
deb, dest = sys.argv[1], sys.argv[2]
with open(deb, "rb") as f:
    b = f.read()
assert b[:8] == b"!<arch>\n", deb + ": not an ar archive"
at = 8
while at < len(b):
    name = b[at:at + 16].decode().strip().rstrip("/")
    size = int(b[at + 48:at + 58].decode())
    if name.startswith("data.tar"):
        t = tarfile.open(fileobj=io.BytesIO(b[at + 60:at + 60 + size]))
        # Our own download: trusted as dpkg -x trusts it (absolute links).
        if hasattr(tarfile, "fully_trusted_filter"):
            t.extractall(dest, filter="fully_trusted")
        else:
            t.extractall(dest)
        break
    at += 60 + size + (size & 1)
else:
    sys.exit(deb + ": no data.tar member")
PY
    fi
}

device_deps() {
    deps_debs=$1 deps_root=$2
    missing=$(deps_missing)
    if [ -z "$missing" ]; then
        echo "packages: the system has all of them ($DEVICE_PKGS, make, pkg-config, xz)"
        return 0
    fi
    echo "packages missing on the system: $missing"
    if ! ls "$deps_debs"/*.deb >/dev/null 2>&1; then
        echo "FAILED: no .deb files in $deps_debs: run 'make gpu-carry' on the build machine and carry .gpudeps"
        return 1
    fi
    mkdir -p "$deps_root"
    n=0
    for f in "$deps_debs"/*.deb; do
        deb_extract "$f" "$deps_root" || { echo "FAILED: cannot unpack $f"; return 1; }
        n=$((n + 1))
    done
    echo "unpacked $n packages from $deps_debs into $deps_root ($(command -v dpkg >/dev/null 2>&1 && echo dpkg -x || echo python3))"
    deps_lib="$deps_root/usr/lib/x86_64-linux-gnu"
    export PATH="$deps_root/usr/bin:$PATH"
    export PKG_CONFIG_LIBDIR="$deps_lib/pkgconfig:$deps_lib/openblas-pthread/pkgconfig:$deps_root/usr/share/pkgconfig:$DEVICE_DIR/stubpc"
    export PKG_CONFIG_SYSROOT_DIR="$deps_root"
    export LDFLAGS="-Wl,-rpath-link,$deps_lib -Wl,-rpath,$deps_lib -Wl,-rpath,$deps_lib/openblas-pthread"
    export LD_LIBRARY_PATH="$deps_lib:$deps_lib/openblas-pthread${LD_LIBRARY_PATH:+:$deps_libD_LIBRARY_PATH}"
    missing=$(deps_missing)
    if [ -n "$missing" ]; then
        echo "FAILED: still missing after unpacking $deps_debs: $missing"
        return 1
    fi
    return 0
}

deps_sources() {
    for p in $DEVICE_PKGS; do
        printf '  %-10s %-10s %s\n' "$p" "$(pkg-config --modversion $p 2>&1)" \
            "$(pkg-config --path $p 2>&1)"
    done
    for t in make pkg-config xz gcc nvcc python3 dpkg; do
        printf '  %-10s %s\n' "$t" "$(command -v $t || echo '(none)')"
    done
}
