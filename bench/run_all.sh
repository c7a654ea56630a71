#!/bin/sh
# make bench: every benchmark, results as Markdown tables (paste into
# docs/BENCHMARKS.md) and CSV under BUILD/bench/.
set -e
BUILD=${1:-build}
/usr/bin/python3 "$(dirname "$0")/foundation.py" "$BUILD"
