#!/bin/sh
# run_export.sh: how fast `xferprof export` writes a large run (numbers, not pass/fail).
#
#   bench/run_export.sh XFERPROF LIBXFERPROF SIM_DIR BENCH_OVERHEAD [RECORDS]
#
# Makes a database of RECORDS (default 1000000) async copies the way
# run_overhead.sh does (bench_overhead under the preload SIGKILLs itself;
# `xferprof recover` ingests its journal), then exports it ROUNDS times
# (default 3) per format to a file and reports the best wall time, the CPU time
# of that run, its peak memory, the events (perfetto: lines of the file, one
# per event) or rows (csv) and the rate.
set -eu

if [ $# -lt 4 ]; then
    echo "usage: $0 XFERPROF LIBXFERPROF SIM_DIR BENCH_OVERHEAD [RECORDS]" >&2
    exit 2
fi
XP=$1 LIB=$2 SIM=$3 BENCH=$4
RECORDS=${5:-1000000}
ROUNDS=${ROUNDS:-3}
unset LD_LIBRARY_PATH LD_PRELOAD XFERPROF_OUTPUT XFERPROF_STACK_DEPTH XFERPROF_QUIET
export XFERPROF_SIM_LATENCY=0

tmp=$(mktemp -d "${TMPDIR:-/tmp}/xpexport.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)"
LD_LIBRARY_PATH=$SIM LD_PRELOAD=$LIB XFERPROF_OUTPUT="$tmp/run.db" "$BENCH" kill "$RECORDS" \
    >/dev/null 2>&1 || true
"$XP" recover "$tmp/run.db" >/dev/null
echo "database: $RECORDS copies, $(wc -c <"$tmp/run.db") bytes"

for fmt in perfetto csv; do
    : >"$tmp/times"
    r=1
    while [ "$r" -le "$ROUNDS" ]; do
        /usr/bin/time -f '%e %U %S %M' -o "$tmp/t" "$XP" export "$tmp/run.db" --format $fmt \
            -o "$tmp/out"
        cat "$tmp/t" >>"$tmp/times"
        r=$((r + 1))
    done
    events=$(wc -l <"$tmp/out")
    [ $fmt = csv ] && events=$((events - 1)) # the header
    size=$(wc -c <"$tmp/out")
    sort -n "$tmp/times" | head -1 | awk -v f=$fmt -v n="$events" -v b="$size" '{
        printf "%-8s %d %s, %.0f MB: best %.2f s wall (%.2f s user + %.2f s sys, %d MiB peak) = %.0f %s/s\n",
            f, n, (f == "csv" ? "rows" : "events"), b / 1e6, $1, $2, $3, $4 / 1024, n / $1,
            (f == "csv" ? "rows" : "events") }'
done
