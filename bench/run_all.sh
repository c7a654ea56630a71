#!/bin/sh
# make bench: the foundation benchmarks (parse, .hgb load, serial SGD against
# LIBLINEAR), as Markdown tables for docs/BENCHMARKS.md and CSV under
# BUILD/bench/. The other sections of docs/BENCHMARKS.md each have their own
# script: bench/hogwild.sh, bench/cyclades.sh, bench/coordinate.sh,
# bench/stream.sh, bench/net.sh, bench/compressed.py (loading gzip, xz and
# zstd files against a pipe from the tool and the plain text; --quick checks
# that it runs), bench/startup.sh (CUDA build: startup with
# the GPU plugin), bench/gpu_check.sh (on a GPU machine); and the default
# path's targets, bench/default_path.py; K classes against LIBLINEAR and
# scikit-learn, bench/multiclass.py; cross-validation and the search of C
# against liblinear-train -v and -C, bench/cv.py; hashing and Vowpal Wabbit
# text against the LIBSVM path, bench/hashing.py.
set -e
BUILD=${1:-build}
/usr/bin/python3 "$(dirname "$0")/foundation.py" "$BUILD"
/usr/bin/python3 "$(dirname "$0")/default_path.py" "$BUILD"
/usr/bin/python3 "$(dirname "$0")/multiclass.py" "$BUILD"
/usr/bin/python3 "$(dirname "$0")/cv.py" "$BUILD"
