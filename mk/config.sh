#!/bin/sh
# Writes the build's configuration, as make assignments, to standard output:
# the compile and link flags of the installed packages (pkg-config) and
# whether the MPI backend can be built. The Makefile includes the result
# ($(BUILD)/config.mk) and rereads itself once it is written, so a build
# that first installs its packages (make deps) links with their flags.
#
# Usage: sh mk/config.sh "PKGS" "MPICC" "CC"
set -eu
pkgs=$1 mpicc=$2 cc=$3

# Every package is there (check-deps ran first); a failure here is a
# broken pkg-config installation, said as such.
if ! cflags=$(pkg-config --cflags $pkgs) || ! libs=$(pkg-config --libs $pkgs); then
    echo "hogtrain: pkg-config cannot describe $pkgs" >&2
    exit 1
fi

# MPI: mpicc can exist without the headers (Debian's openmpi-bin without
# libopenmpi-dev leaves a wrapper that fails, or a dangling link), so the
# test is a program that includes mpi.h and links, not the wrapper's
# presence.
have_mpi=0 mpi_cflags= mpi_libs=
if [ -z "$mpicc" ]; then
    echo "hogtrain: building without the MPI backend (no mpicc; Debian: libopenmpi-dev)" >&2
elif mpi_cflags=$("$mpicc" --showme:compile 2>/dev/null) &&
     mpi_libs=$("$mpicc" --showme:link 2>/dev/null) &&
     probe=$(mktemp "${TMPDIR:-/tmp}/hogtrain-mpi.XXXXXX") &&
     printf '#include <mpi.h>\nint main(void) { return MPI_Init(0, 0); }\n' |
         $cc $mpi_cflags -x c - -o "$probe" $mpi_libs 2>/dev/null; then
    have_mpi=1
    rm -f "$probe"
else
    [ -n "${probe:-}" ] && rm -f "$probe"
    mpi_cflags= mpi_libs=
    echo "hogtrain: building without the MPI backend ($mpicc cannot compile a program with mpi.h; Debian: libopenmpi-dev)" >&2
fi

printf '# made by mk/config.sh; `make config` makes it again\n'
printf 'PKG_CFLAGS := %s\n' "$cflags"
printf 'PKG_LIBS := %s\n' "$libs"
printf 'HAVE_MPI := %s\n' "$have_mpi"
printf 'MPI_CFLAGS := %s\n' "$mpi_cflags"
printf 'MPI_LIBS := %s\n' "$mpi_libs"
