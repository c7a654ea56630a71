#!/bin/sh
# The Python package as pip installs it (docs/PYTHON.md): a fresh venv of
# Debian's python3 that sees its numpy, scipy and scikit-learn
# (--system-site-packages), `pip install --no-build-isolation --no-index`
# of the repository (nothing may come from a package index), then the
# package's tests run from outside the tree against the installed package.
#
#   sh tests/pip_install.sh [BUILD]
#
# BUILD: make's folder for the extension (default build, natively, where
# `make test` has built the library already: only the link may be new);
# HOGTRAIN_PORTABLE=1 with BUILD=build/portable is pip's own default.
# PIP_TESTS: pytest's -k (default: a short subset, about a minute here;
# "" runs them all).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build}
case $build in /*) bdir=$build ;; *) bdir=$root/$build ;; esac
py=${PYTHON:-/usr/bin/python3}
tests=${PIP_TESTS-"test_build or a9a_model_equals_the_commands or string_labels_round_trip or pickle_and_save or zero_copy_fit or classifier_passes_check_estimator"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" -m venv --system-site-packages "$tmp/venv"
cd "$root"
HOGTRAIN_PORTABLE=${HOGTRAIN_PORTABLE:-0} HOGTRAIN_BUILD=$build \
  "$tmp/venv/bin/pip" install -q --no-build-isolation --no-index .
cd "$tmp"
"$tmp/venv/bin/python" - <<'PY'
import sys
import hogtrain
# the installed package, not the tree's python/ or build/python
assert hogtrain.__file__.startswith(sys.prefix), hogtrain.__file__
print("pip_install:", hogtrain.__file__, hogtrain.build_info())
PY
mkdir -p "$bdir/testdata"
HOGTRAIN_BIN="$bdir/hogtrain" HOGTRAIN_TEST_TMP="$bdir/testdata" \
  "$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider "$root/python/tests" \
  ${tests:+-k "$tests"}
