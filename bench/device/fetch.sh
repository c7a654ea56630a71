#!/bin/sh
# bench/device/fetch.sh: run HERE (a machine with Debian's mirror), before a
# device run. Fills the two folders the device tool carries (both ignored
# by git):
#
#   .gpudeps/  the .deb files of bench/device/packages.txt (apt-get
#              download: about 18 MB), unpacked on the device by deps.sh
#   .gpudata/  news20.binary (train and test), a9a and heart_scale from
#              HOGTRAIN_DATA (default ../shared/data), as stored (about 25 MB)
#
# and checks that the working tree and both stay under the tool's 64 MiB.
# `make gpu-carry` runs it. Exit status 1 with a sentence when a package
# cannot be downloaded or a data file is missing.
set -eu
cd "$(dirname "$0")/../.."
DEBS=.gpudeps
DATA=.gpudata
SRC=${HOGTRAIN_DATA:-../shared/data}
pkgs=$(grep -v '^#' bench/device/packages.txt | tr '\n' ' ')

mkdir -p "$DEBS" "$DATA"
# A package's older version left beside the new one would be unpacked too.
rm -f "$DEBS"/*.deb
if ! (cd "$DEBS" && apt-get download -q $pkgs >/dev/null 2>&1); then
    echo "fetch: apt-get download failed; running apt-get update once" >&2
    apt-get update -qq
    if ! (cd "$DEBS" && apt-get download -q $pkgs); then
        echo "fetch: apt-get download of bench/device/packages.txt failed" >&2
        exit 1
    fi
fi
n=$(ls "$DEBS"/*.deb | wc -l)
want=$(echo $pkgs | wc -w)
if [ "$n" -ne "$want" ]; then
    echo "fetch: $n .deb files in $DEBS for $want packages" >&2
    exit 1
fi

for f in news20.binary.train.svm.xz news20.binary.test.svm.xz a9a.xz heart_scale; do
    if [ ! -f "$SRC/$f" ]; then
        echo "fetch: $SRC/$f is missing (set HOGTRAIN_DATA to the data folder)" >&2
        exit 1
    fi
    cmp -s "$SRC/$f" "$DATA/$f" 2>/dev/null || cp "$SRC/$f" "$DATA/"
done

kib() { du -sk "$@" | awk '{ s += $1 } END { print s }'; }
tree=$(git ls-files -co --exclude-standard -z | xargs -0 du -ck 2>/dev/null | tail -1 | cut -f1)
total=$(( tree + $(kib "$DEBS") + $(kib "$DATA") ))
echo "fetch: $n packages in $DEBS ($(kib "$DEBS") KiB), data in $DATA ($(kib "$DATA") KiB), working tree $tree KiB: $total KiB of the 65536 the device tool carries"
if [ "$total" -ge 65536 ]; then
    echo "fetch: over the device tool's 64 MiB; leave a9a.xz out or clean the tree" >&2
    exit 1
fi
