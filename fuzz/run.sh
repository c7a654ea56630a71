#!/bin/sh
# make fuzz-ci / fuzz-run: for each harness, replay its seed corpus
# (fuzz/corpus/<name>, which also holds every past finding as a regression
# input), then fuzz it for SECONDS, JOBS harnesses at a time. New inputs go
# to $FUZZ_OUT/corpus/<name>, never into the repository. Any crash, leak,
# sanitizer report, timeout (10 s per input) or RSS over 2 GiB fails.
#   sh fuzz/run.sh BINDIR SECONDS JOBS NAME...
# FUZZ_OUT (default build-fuzz) is where corpus/ and logs/ go.
set -u
O=${FUZZ_OUT:-build-fuzz}
if [ "$1" = --one ]; then
    B=$2 SECS=$3 n=$4
    L=$O/logs/$n
    mkdir -p "$O/corpus/$n" "$L"
    rm -f "$L/status"
    if ! "$B/$n" -runs=0 -rss_limit_mb=2048 -timeout=10 "fuzz/corpus/$n" \
            >"$L/replay.log" 2>&1; then
        echo "fuzz: FAIL $n: replay of fuzz/corpus/$n (log $L/replay.log)"
        tail -n 30 "$L/replay.log"; exit 1
    fi
    if ! "$B/$n" -max_total_time="$SECS" -rss_limit_mb=2048 -timeout=10 \
            -max_len=65536 -print_final_stats=1 -artifact_prefix="$L/" \
            "$O/corpus/$n" "fuzz/corpus/$n" >"$L/fuzz.log" 2>&1; then
        echo "fuzz: FAIL $n: finding (log $L/fuzz.log, reproducer in $L/)"
        tail -n 40 "$L/fuzz.log"; exit 1
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$L/fuzz.log")
    echo "fuzz: ok   $n: $SECS s, $execs executions, no finding"
    echo ok >"$L/status"
    exit 0
fi
B=$1 SECS=$2 JOBS=$3; shift 3
printf '%s\n' "$@" | xargs -P "$JOBS" -I{} sh "$0" --one "$B" "$SECS" {}
