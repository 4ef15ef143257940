#!/bin/sh
# run_peers.sh: xferprof side by side with uftrace and ltrace (issue 15; numbers, not pass/fail).
#
#   bench/run_peers.sh XFERPROF STUB_DIR BENCH_OVERHEAD [CALLS]
#
# (meson test -C BUILD --benchmark -v peers passes the first three.)
#
# The same binary (bench_overhead cputime CALLS 5 32: CALLS calls of
# cudaMemcpyAsync, 8 bytes pinned -> device, from 32 nested frames, 5
# repetitions, plus a warm-up of CALLS/10+1) on the same runtime
# (STUB_DIR/libcudart.so.13, whose calls return at once, so all that is
# measured is the tool), under each tool below.  The program reads the
# calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID) around its timed loop:
# what each tool costs the thread that makes the calls.  Work a tool does in
# another thread or process (xferprof's ingest thread, uftrace's writer
# threads, the ltrace process) is not in it; the wall time per call, printed
# beside it, shows what the program waits for in all.
#
#   none       no tool
#   xp         xferprof run (defaults: 32-frame stacks, fingerprints sampled)
#   xp-d0      xferprof run --stack-depth 0
#   xp-d0-fp0  xferprof run --stack-depth 0 --fingerprint=off
#   uf         uftrace record --force --no-event -F '^cuda'
#   uf-all     uftrace record --force --no-event
#   uf-args    uf, with -A/-R: cudaMemcpyAsync's five arguments and result
#   ltrace     ltrace -e 'cuda*'
#
# Why these uftrace modes.  bench_overhead is not built with -pg, so
# uftrace records library calls only: it hooks the executable's PLT
# (--force says so) and writes an entry and an exit record (timestamp,
# function) per hooked call into shared memory, which its own threads save.
# -F '^cuda' keeps exactly the CUDA runtime calls: what xferprof records,
# no more, no less (every call reaches the database: the script checks the
# count).  uf-all drops the filter: every call from the executable is traced
# (also clock_gettime, 4 per 1000 copies here), which is cheaper per copy
# because no filter is matched; the ratios use the cheaper of uf and uf-all.
# --no-event: scheduler events are not the calls (xferprof records none);
# with them uftrace measured the same here.  Not used: -e
# (--estimate-return) records the entry only and guesses the return time,
# where xferprof measures how long each call held its caller, so it is not
# the same facts; --libmcount-single (single-threaded programs only, CUDA
# programs are not; it measured no cheaper).  uftrace has no stack option
# for library calls: the call chain comes from tracing the program's own
# functions too (-pg builds, or -P patching, which this Debian build, without
# capstone, cannot do on a binary without -pg), i.e. tracing many more calls
# than these; so "uftrace" in the ratios is uftrace without stacks, and
# uf-args (the arguments xferprof records too) is shown beside it.
# ltrace -e 'cuda*': a breakpoint on each CUDA entry of the executable's PLT,
# the same calls (counted too); its output goes to a file.
#
# The settings interleaved, each run's best of 5 repetitions, the best of
# ROUNDS rounds (default 5).  Then, where valgrind is installed, the
# instructions per call the calling thread runs (callgrind, collected only
# inside bench_overhead's timed function `calls`, exact): the difference
# between runs of CG_CALLS and 6 x CG_CALLS calls, so that one-time work (the
# first unwind, uftrace's buffers) cancels out.  Not for ltrace: its cost is
# kernel traps and a second process, which instruction counts do not see (and
# valgrind's programs cannot be ptraced).
#
# Targets (issue 15), on the calling thread's CPU time added per call:
#   xferprof defaults       <= uftrace's
#   xferprof --stack-depth 0 <= 1/2 of uftrace's
#   xferprof defaults       <= 1/20 of ltrace's
#
# uftrace, ltrace and valgrind are not needed by xferprof; the script says
# how to install what is missing and measures without it.
set -eu

if [ $# -lt 3 ]; then
    echo "usage: $0 XFERPROF STUB_DIR BENCH_OVERHEAD [CALLS]" >&2
    exit 2
fi
XP=$1 STUB=$2 BENCH=$3
CALLS=${4:-20000}
ROUNDS=${ROUNDS:-5}
CG_CALLS=${CG_CALLS:-2000}
REPS=5
FRAMES=32
# What each run makes: REPS x CALLS timed calls and the warm-up's.
EXPECT=$((REPS * CALLS + CALLS / 10 + 1))

unset LD_PRELOAD XFERPROF_OUTPUT XFERPROF_STACK_DEPTH XFERPROF_QUIET XFERPROF_FINGERPRINT
export LD_LIBRARY_PATH=$STUB

tmp=$(mktemp -d "${TMPDIR:-/tmp}/xppeers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1); $(uname -sr)"
missing=
settings="none xp xp-d0 xp-d0-fp0"
if command -v uftrace >/dev/null 2>&1; then
    settings="$settings uf uf-all uf-args"
    echo "uftrace: $(uftrace --version | head -1)"
else
    missing="$missing uftrace"
fi
if command -v ltrace >/dev/null 2>&1; then
    settings="$settings ltrace"
    echo "ltrace: $(ltrace -V | head -1)"
else
    missing="$missing ltrace"
fi
command -v valgrind >/dev/null 2>&1 || missing="$missing valgrind"
if [ -n "$missing" ]; then
    echo "NOT INSTALLED:$missing -- measuring without; to compare, install them:"
    echo "    apt-get install -y$missing    (Debian/Ubuntu; as root)"
fi
echo "calls per run: $CALLS x $REPS repetitions (+ $((CALLS / 10 + 1)) warm-up) from $FRAMES frames; best of $ROUNDS rounds, settings interleaved"

UFARGS='cudaMemcpyAsync@arg1/x,arg2/x,arg3/u,arg4/i32,arg5/x'

# run SETTING PROGRAM...: PROGRAM under SETTING's tool, the whole command
# under $WRAP if set (valgrind: around the tool, since `uftrace record`
# mangles the options of a valgrind it starts); leaves the tool's record of
# the calls in $tmp/SETTING.*.
WRAP=
run() {
    s=$1
    shift
    case $s in
    none) $WRAP "$@" ;;
    xp) $WRAP "$XP" run --quiet -o "$tmp/xp.db" -- "$@" ;;
    xp-d0) $WRAP "$XP" run --quiet --stack-depth 0 -o "$tmp/xp-d0.db" -- "$@" ;;
    xp-d0-fp0) $WRAP "$XP" run --quiet --stack-depth 0 --fingerprint=off -o "$tmp/xp-d0-fp0.db" -- "$@" ;;
    uf) rm -rf "$tmp/uf.d" && $WRAP uftrace record --force --no-event -F '^cuda' -d "$tmp/uf.d" "$@" ;;
    uf-all) rm -rf "$tmp/uf-all.d" && $WRAP uftrace record --force --no-event -d "$tmp/uf-all.d" "$@" ;;
    uf-args) rm -rf "$tmp/uf-args.d" &&
        $WRAP uftrace record --force --no-event -F '^cuda' -A "$UFARGS" \
            -R cudaMemcpyAsync@retval/i32 -d "$tmp/uf-args.d" "$@" ;;
    ltrace) $WRAP ltrace -e 'cuda*' -o "$tmp/ltrace.out" "$@" ;;
    esac
}

# recorded SETTING: how many cudaMemcpyAsync calls the last run's tool recorded.
recorded() {
    case $1 in
    none) echo - ;;
    xp*) python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM copies").fetchone()[0])' "$tmp/$1.db" ;;
    uf*) uftrace report -d "$tmp/$1.d" | awk '$NF == "cudaMemcpyAsync" { print $(NF - 1) }' ;;
    ltrace) grep -c 'cudaMemcpyAsync(' "$tmp/ltrace.out" ;;
    esac
}

min() { awk 'NR == 1 || $1 < m { m = $1 } END { print m }'; }

for s in $settings; do : >"$tmp/$s.cpu" && : >"$tmp/$s.wall"; done
r=1
while [ $r -le "$ROUNDS" ]; do
    for s in $settings; do
        run $s "$BENCH" cputime "$CALLS" $REPS $FRAMES >"$tmp/out" 2>"$tmp/err" || {
            echo "$0: $s failed: $(cat "$tmp/err")" >&2
            exit 1
        }
        awk '/^cpu_ns_per_call/ { print $2 }' "$tmp/out" >>"$tmp/$s.cpu"
        awk '/^ns_per_call/ { print $2 }' "$tmp/out" >>"$tmp/$s.wall"
    done
    r=$((r + 1))
done

echo
echo "calling thread's CPU time per cudaMemcpyAsync (ns; added = minus no tool), and wall time:"
printf '  %-10s %10s %10s %10s %10s %12s\n' setting cpu added wall added recorded
base_cpu=$(min <"$tmp/none.cpu") base_wall=$(min <"$tmp/none.wall")
for s in $settings; do
    c=$(min <"$tmp/$s.cpu") w=$(min <"$tmp/$s.wall") n=$(recorded $s)
    [ -n "$c" ] && [ -n "$w" ] || { echo "$0: $s: no measurement" >&2; exit 1; }
    if [ "$n" != - ] && [ "$n" != "$EXPECT" ]; then
        echo "$0: $s recorded $n of the $EXPECT calls: not the same work" >&2
        exit 1
    fi
    echo "$s $c $w" >>"$tmp/table"
    awk -v s="$s" -v c="$c" -v w="$w" -v bc="$base_cpu" -v bw="$base_wall" -v n="$n" 'BEGIN {
        printf "  %-10s %10.1f %10.1f %10.1f %10.1f %12s\n", s, c, c - bc, w, w - bw, n }'
done

# added SETTING: CPU ns per call added by SETTING ("" when not measured).
added() { awk -v s="$1" -v b="$base_cpu" '$1 == s { print $2 - b }' "$tmp/table"; }
# target WHAT XP PEER FACTOR [UNIT]: is XP <= FACTOR x PEER, and by how much not.
target() {
    awk -v what="$1" -v x="$2" -v p="$3" -v f="$4" -v u="${5:-ns}" 'BEGIN {
        lim = p * f
        printf "  %-44s %7.1f vs %7.1f %s: ratio %.3f (target <= %g): ", what, x, p, u, x / p, f
        if (x <= lim) printf "met (%.1f %s to spare)\n", lim - x, u
        else printf "MISSED by %.1f %s (%.0f %%)\n", x - lim, u, 100 * (x - lim) / lim
    }'
}

echo
echo "targets (issue 15; added thread CPU time per call):"
if [ -n "$(added uf)" ]; then
    ufmin=$(printf '%s\n%s\n' "$(added uf)" "$(added uf-all)" | min)
    target "xferprof defaults <= uftrace" "$(added xp)" "$ufmin" 1
    target "xferprof --stack-depth 0 <= uftrace / 2" "$(added xp-d0)" "$ufmin" 0.5
    target "(... and --fingerprint=off <= uftrace / 2)" "$(added xp-d0-fp0)" "$ufmin" 0.5
    target "(xferprof defaults <= uftrace with arguments)" "$(added xp)" "$(added uf-args)" 1
else
    echo "  uftrace targets: not measured (uftrace not installed)"
fi
if [ -n "$(added ltrace)" ]; then
    target "xferprof defaults <= ltrace / 20" "$(added xp)" "$(added ltrace)" 0.05
else
    echo "  ltrace target: not measured (ltrace not installed)"
fi

command -v valgrind >/dev/null 2>&1 || exit 0

# instructions SETTING N: instructions callgrind counted in `calls` (N
# calls and the warm-up's).  valgrind follows the tool into the program
# (the tool's own processes never enter `calls`: they count 0).
WRAP="valgrind --tool=callgrind --trace-children=yes --toggle-collect=calls --callgrind-out-file=$tmp/cg.%p"
instructions() {
    rm -f "$tmp"/cg.*
    run "$1" "$BENCH" cputime "$2" 1 $FRAMES >/dev/null 2>"$tmp/err" || {
        echo "$0: callgrind under $1 failed: $(tail -5 "$tmp/err")" >&2
        exit 1
    }
    for f in "$tmp"/cg.*; do
        callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }'
    done | awk '{ t += $1 } END { print t + 0 }'
}

echo
big=$((6 * CG_CALLS))
echo "instructions per call in the calling thread (callgrind; runs of $CG_CALLS and $big calls, the difference):"
for s in $settings; do
    [ "$s" = ltrace ] && continue
    i1=$(instructions $s "$CG_CALLS") i2=$(instructions $s $big)
    calls1=$((CG_CALLS + CG_CALLS / 10 + 1)) calls2=$((big + big / 10 + 1))
    echo "$s $(awk -v a="$i1" -v b="$i2" -v m="$calls1" -v n="$calls2" 'BEGIN { print (b - a) / (n - m) }')" >>"$tmp/cg"
done
base_ins=$(awk '$1 == "none" { print $2 }' "$tmp/cg")
awk -v b="$base_ins" '{ printf "  %-10s %8.0f instructions per call, added %8.0f\n", $1, $2, $2 - b }' "$tmp/cg"
ins() { awk -v s="$1" -v b="$base_ins" '$1 == s { print $2 - b }' "$tmp/cg"; }
if [ -n "$(ins uf)" ]; then
    echo "targets in instructions added per call:"
    ufmin=$(printf '%s\n%s\n' "$(ins uf)" "$(ins uf-all)" | min)
    target "xferprof defaults <= uftrace" "$(ins xp)" "$ufmin" 1 ins
    target "xferprof --stack-depth 0 <= uftrace / 2" "$(ins xp-d0)" "$ufmin" 0.5 ins
    target "(... and --fingerprint=off <= uftrace / 2)" "$(ins xp-d0-fp0)" "$ufmin" 0.5 ins
    target "(xferprof defaults <= uftrace with arguments)" "$(ins xp)" "$(ins uf-args)" 1 ins
fi
