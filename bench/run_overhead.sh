#!/bin/sh
# run_overhead.sh: what the preload costs (numbers, not pass/fail).
#
#   bench/run_overhead.sh XFERPROF LIBXFERPROF SIM_DIR BENCH_OVERHEAD STUB_DIR MAKE_DB [CALLS [RECORDS]]
#
# (meson test -C BUILD --benchmark -v passes the first six.)
#
# 1. ns per intercepted call: cudaMemcpyAsync, 8 bytes pinned -> device, on
#    a stream, made from 32 nested frames (so a 32-frame stack is full);
#    without the preload, under `xferprof run` at default settings (32-frame
#    stacks, fingerprints sampled: exact for these 8 bytes), with
#    --stack-depth 0, and with --stack-depth 0 --fingerprint=off.  The best of
#    ROUNDS rounds x 5 repetitions of CALLS calls, the settings interleaved so
#    that drift hits them alike.  Twice: on the simulator (XFERPROF_SIM_LATENCY=0), and
#    on STUB_DIR's libcudart.so.13, whose calls return at once: the preload
#    alone, without the simulator's stream threads competing for the CPUs.
# 2. one unw_backtrace from 32 frames (libunwind as the preload uses it).
# 2b. what fingerprints cost on larger copies (stub runtime, stacks off):
#    64 KiB (the largest copy hashed in full by default) and 1 MiB (sampled by
#    default), each at the default setting, with --fingerprint=full and =off.
# 3. ingestion rate: a journal of RECORDS copies (and the allocations, syncs,
#    stacks and modules around them) written by the real journal writer
#    (MAKE_DB --journal-only, bench/xp_synth.c) is ingested by `xferprof
#    recover`, timed: records per second.  (Not the journal of a SIGKILLed
#    run: the run's own ingest gives the blocks of what it stored back to the
#    file system, so a copy of that journal holds only its unstored rest.)
# 4. database bytes per copy: the recovered database's size / its copies.
# 5. an NVTX push+pop pair (nvtxRangePushA + nvtxRangePop, NVTX3 header-only):
#    without the preload (NVTX without a tool) and under `xferprof run` (the
#    preload as NVTX's injection, recording both), best of ROUNDS x 5 runs
#    of CALLS pairs, on the stub runtime.
set -eu

if [ $# -lt 6 ]; then
    echo "usage: $0 XFERPROF LIBXFERPROF SIM_DIR BENCH_OVERHEAD STUB_DIR MAKE_DB [CALLS [RECORDS]]" >&2
    exit 2
fi
XP=$1 LIB=$2 SIM=$3 BENCH=$4 STUB=$5 MAKE_DB=$6
CALLS=${7:-200000}
RECORDS=${8:-1000000}
ROUNDS=${ROUNDS:-3}
FRAMES=32

# meson puts the folders of the libraries it built in LD_LIBRARY_PATH; each
# run below says exactly what it gets.
unset LD_LIBRARY_PATH LD_PRELOAD XFERPROF_OUTPUT XFERPROF_STACK_DEPTH XFERPROF_QUIET
unset XFERPROF_FINGERPRINT
export XFERPROF_SIM_LATENCY=0

tmp=$(mktemp -d "${TMPDIR:-/tmp}/xpbench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

ns() { awk '/^ns_per_call/ { print $2 }'; }
min() { awk 'NR == 1 || $1 < m { m = $1 } END { print m }'; }

echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo "kernel: $(uname -sr)"
echo "calls per measurement: $CALLS from $FRAMES nested frames (best of 5 repetitions x $ROUNDS rounds)"

# overhead LABEL RUNTIME_DIR [--sim]: the four settings, interleaved.
overhead() {
    label=$1 dir=$2 sim=${3:-}
    : >"$tmp/base" && : >"$tmp/def" && : >"$tmp/d0" && : >"$tmp/d0off"
    r=1
    while [ $r -le "$ROUNDS" ]; do
        LD_LIBRARY_PATH=$dir "$BENCH" time "$CALLS" 5 $FRAMES | ns >>"$tmp/base"
        LD_LIBRARY_PATH=$dir "$XP" run $sim --quiet -o "$tmp/def.db" -- \
            "$BENCH" time "$CALLS" 5 $FRAMES | ns >>"$tmp/def"
        LD_LIBRARY_PATH=$dir "$XP" run $sim --quiet --stack-depth 0 -o "$tmp/d0.db" -- \
            "$BENCH" time "$CALLS" 5 $FRAMES | ns >>"$tmp/d0"
        LD_LIBRARY_PATH=$dir "$XP" run $sim --quiet --stack-depth 0 --fingerprint=off \
            -o "$tmp/d0off.db" -- "$BENCH" time "$CALLS" 5 $FRAMES | ns >>"$tmp/d0off"
        r=$((r + 1))
    done
    base=$(min <"$tmp/base") def=$(min <"$tmp/def") d0=$(min <"$tmp/d0") d0off=$(min <"$tmp/d0off")
    if [ -z "$base" ] || [ -z "$def" ] || [ -z "$d0" ] || [ -z "$d0off" ]; then
        echo "$0: $label: a measurement is missing (base '$base', default '$def', depth 0 '$d0', depth 0 no fingerprints '$d0off')" >&2
        exit 1
    fi
    depth=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT max(depth) FROM stacks").fetchone()[0])' "$tmp/def.db")
    echo "$label:"
    awk -v b="$base" -v d="$def" -v z="$d0" -v o="$d0off" -v k="$depth" 'BEGIN {
        printf "  without the preload:        %7.1f ns/call\n", b
        printf "  defaults (%2d-frame stacks): %7.1f ns/call  added %6.1f ns  (budget 300: %s)\n", k, d, d - b, (d - b < 300 ? "met" : "MISSED")
        printf "  --stack-depth 0:            %7.1f ns/call  added %6.1f ns  (budget 100: %s)\n", z, z - b, (z - b < 100 ? "met" : "MISSED")
        printf "  ... and --fingerprint=off:  %7.1f ns/call  added %6.1f ns\n", o, o - b
    }'
}

# fingerprints BYTES: ns per call of BYTES-byte copies on the stub, stacks
# off, at each fingerprint setting (interleaved, best of ROUNDS).  The
# default is measured twice: sending the same bytes every call (from 64 KiB
# on, each repeated sample is confirmed by a full hash) and new bytes every
# call (a changed sample costs no confirmation).
fingerprints() {
    bytes=$1
    for m in sampled sampled-new full off; do : >"$tmp/fp-$m"; done
    r=1
    while [ $r -le "$ROUNDS" ]; do
        for m in sampled sampled-new full off; do
            content=same
            [ "$m" = sampled-new ] && content=new
            LD_LIBRARY_PATH=$STUB "$XP" run --quiet --stack-depth 0 --fingerprint=${m%-new} \
                -o "$tmp/fp.db" -- "$BENCH" time "$FPCALLS" 5 $FRAMES "$bytes" $content | ns >>"$tmp/fp-$m"
        done
        r=$((r + 1))
    done
    awk -v n="$bytes" -v s="$(min <"$tmp/fp-sampled")" -v sn="$(min <"$tmp/fp-sampled-new")" \
        -v f="$(min <"$tmp/fp-full")" -v o="$(min <"$tmp/fp-off")" 'BEGIN {
        printf "  %8d-byte copies: default %9.1f ns/call (new content each call %9.1f), full %9.1f, off %7.1f: the default'"'"'s fingerprint %8.1f ns (%.1f with new content, so confirming a repeat costs %.1f), full %9.1f ns (%.2f GB/s)\n", n, s, sn, f, o, s - o, sn - o, s - sn, f - o, n / (f - o)
    }'
}

# The simulator's libraries in SIM, plus --sim so the launcher puts them first.
overhead "simulator (xferprof run --sim)" "$SIM" --sim
overhead "stub runtime (calls return at once: the preload alone)" "$STUB"
echo "unw_backtrace from $FRAMES frames: $("$BENCH" unwind "$CALLS" $FRAMES | awk '{ printf "%.1f ns per walk of %d frames", $2, $4 }')"
FPCALLS=$((CALLS / 200))
echo "fingerprints (stub runtime, --stack-depth 0, $FPCALLS calls per measurement):"
fingerprints 65536
fingerprints 1048576

# Ingestion: a journal of RECORDS copies from the real writer.
"$MAKE_DB" -n "$RECORDS" --journal-only "$tmp/ingest.db" >/dev/null
jbytes=$(stat -c %s "$tmp/ingest.db.xpj")
t0=$(date +%s%N)
"$XP" recover "$tmp/ingest.db" >"$tmp/recover.out"
t1=$(date +%s%N)
records=$(sed -n 's/.*recovered \([0-9][0-9]*\) record.*/\1/p' "$tmp/recover.out")
[ -n "$records" ] || { echo "$0: recover said: $(cat "$tmp/recover.out")" >&2; exit 1; }
dbbytes=$(stat -c %s "$tmp/ingest.db")
copies=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM copies").fetchone()[0])' "$tmp/ingest.db")
awk -v n="$records" -v ns="$((t1 - t0))" -v j="$jbytes" 'BEGIN {
    printf "ingestion (xferprof recover): %d records (journal %.1f MB) in %.3f s = %.0f records/s  (budget 1000000: %s)\n", n, j / 1e6, ns / 1e9, n / (ns / 1e9), (n / (ns / 1e9) >= 1e6 ? "met" : "MISSED")
}'
awk -v s="$dbbytes" -v c="$copies" 'BEGIN {
    printf "database: %d bytes / %d copies = %.1f bytes per copy  (budget 64: %s)\n", s, c, s / c, (s / c < 64 ? "met" : "MISSED")
}'

# NVTX ranges: a push+pop pair, without and with the preload, interleaved.
pairs() { awk '/^ns_per_pair/ { print $2 }'; }
: >"$tmp/nvtx-base" && : >"$tmp/nvtx-xp"
r=1
while [ $r -le "$ROUNDS" ]; do
    LD_LIBRARY_PATH=$STUB "$BENCH" nvtx "$CALLS" 5 | pairs >>"$tmp/nvtx-base"
    LD_LIBRARY_PATH=$STUB "$XP" run --quiet -o "$tmp/nvtx.db" -- "$BENCH" nvtx "$CALLS" 5 |
        pairs >>"$tmp/nvtx-xp"
    r=$((r + 1))
done
ranges=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM nvtx_ranges").fetchone()[0])' "$tmp/nvtx.db")
awk -v b="$(min <"$tmp/nvtx-base")" -v x="$(min <"$tmp/nvtx-xp")" -v n="$ranges" 'BEGIN {
    printf "NVTX push+pop pair: %.1f ns without the preload (no tool), %.1f ns under xferprof run: added %.1f ns (%d ranges recorded in the last run)\n", b, x, x - b, n
}'
