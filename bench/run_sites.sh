#!/bin/sh
# run_sites.sh: what the preload costs per call when the calls come from many
# call sites in turn (issue 15: 64 sites round-robin), on the stub runtime.
#
#   bench/run_sites.sh LIBXFERPROF BENCH_OVERHEAD STUB_DIR [SITES...]
#
# For each SITES (default 1 and 64): instructions per call in the calling
# thread (callgrind, collected in bench_overhead's `calls` only; a run of
# 20000 calls minus one of 10000, so that start-up and the first walk of
# each site cancel out) and system calls per call in steady state (strace
# -f -c: the whole process, the background ingest's included; same
# difference).  Numbers, not pass/fail.
set -eu
if [ $# -lt 3 ]; then
    echo "usage: $0 LIBXFERPROF BENCH_OVERHEAD STUB_DIR [SITES...]" >&2
    exit 2
fi
LIB=$1 BENCH=$2 STUB=$3
shift 3
[ $# -gt 0 ] || set -- 1 64
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

instructions() { # N SITES
    rm -f "$tmp"/cg.*
    LD_LIBRARY_PATH=$STUB LD_PRELOAD=$LIB XFERPROF_OUTPUT="$tmp/cg.db" \
        valgrind --tool=callgrind --toggle-collect=calls --callgrind-out-file="$tmp/cg.out.%p" \
        "$BENCH" time "$1" 1 32 8 same "$2" >/dev/null 2>"$tmp/cg.err"
    callgrind_annotate "$tmp"/cg.out.* 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
}
syscalls() { # N SITES
    LD_LIBRARY_PATH=$STUB LD_PRELOAD=$LIB XFERPROF_OUTPUT="$tmp/st-$1.db" \
        strace -f -c -o "$tmp/strace" "$BENCH" time "$1" 1 32 8 same "$2" >/dev/null
    rm -f "$tmp"/st-*
    awk '$NF == "total" { print $(NF-2) }' "$tmp/strace"
}
for sites in "$@"; do
    # The warm-up runs N/10 + 1 calls more: 11000 calls between the two runs.
    a=$(instructions 10000 "$sites") b=$(instructions 20000 "$sites")
    sa=$(syscalls 10000 "$sites") sb=$(syscalls 20000 "$sites")
    awk -v s="$sites" -v a="$a" -v b="$b" -v sa="$sa" -v sb="$sb" 'BEGIN {
        printf "%2d site(s) in turn: %.0f instructions per call (budget 1500), %.3f system calls per call (whole process)\n", s, (b - a) / 11000, (sb - sa) / 11000
    }'
done
