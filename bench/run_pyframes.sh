#!/bin/sh
# run_pyframes.sh: what Python frames cost per recorded call (numbers, not pass/fail).
#
#   bench/run_pyframes.sh XFERPROF STUB_DIR [PYTHON [CALLS]]
#
# cudaMemcpyAsync (8 bytes, pinned -> device, on a stream) made from Python
# through ctypes, on STUB_DIR's libcudart.so.13 (calls return at once: the
# preload alone), with 20 Python frames on the stack and with 2 (the module's
# and the loop's):
# 1. ns per call without the preload, under `xferprof run` at default
#    settings (native and Python frames), and with --stack-depth 0 (no
#    stacks at all): best of ROUNDS rounds x 5 repetitions, interleaved.
# 2. instructions per call (callgrind, exact) in the stack capture
#    (xp_stack_capture: native walk or cache check, Python frames, record)
#    and in its Python part alone (xp_python_capture), with 20 and 2 frames.
set -eu
if [ $# -lt 2 ]; then
    echo "usage: $0 XFERPROF STUB_DIR [PYTHON [CALLS]]" >&2
    exit 2
fi
XP=$1 STUB=$2
PY=${3:-/root/.pyenv/versions/3.12.1/bin/python3.12}
CALLS=${4:-100000}
ROUNDS=${ROUNDS:-3}
BENCH=$(cd "$(dirname "$0")" && pwd)/bench_pyframes.py
unset LD_PRELOAD XFERPROF_OUTPUT XFERPROF_STACK_DEPTH XFERPROF_QUIET XFERPROF_FINGERPRINT
export LD_LIBRARY_PATH=$STUB
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xppybench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
ns() { awk '/^ns_per_call/ { print $2 }'; }
min() { awk 'NR == 1 || $1 < m { m = $1 } END { print m }'; }

echo "machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
echo "python: $("$PY" -c 'import sys; print(sys.version.split()[0])') ($PY); $CALLS calls per measurement, best of 5 x $ROUNDS"
for depth in 20 2; do
    : >"$tmp/base" && : >"$tmp/def" && : >"$tmp/d0"
    r=1
    while [ $r -le "$ROUNDS" ]; do
        "$PY" "$BENCH" $depth "$CALLS" 5 | ns >>"$tmp/base"
        "$XP" run --quiet -o "$tmp/def.db" -- "$PY" "$BENCH" $depth "$CALLS" 5 | ns >>"$tmp/def"
        "$XP" run --quiet --stack-depth 0 -o "$tmp/d0.db" -- "$PY" "$BENCH" $depth "$CALLS" 5 |
            ns >>"$tmp/d0"
        r=$((r + 1))
    done
    pyf=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT max(length(pyframes)) / 16 FROM stacks").fetchone()[0])' "$tmp/def.db")
    awk -v k="$depth" -v p="$pyf" -v b="$(min <"$tmp/base")" -v d="$(min <"$tmp/def")" \
        -v z="$(min <"$tmp/d0")" 'BEGIN {
        printf "%d Python frames on the stack (%s recorded):\n", k, p
        printf "  without the preload:   %7.1f ns/call\n", b
        printf "  defaults:              %7.1f ns/call  added %6.1f ns  (budget 1000: %s)\n", d, d - b, (d - b <= 1000 ? "met" : "MISSED")
        printf "  --stack-depth 0:       %7.1f ns/call  added %6.1f ns  (stacks: %.1f ns of it)\n", z, z - b, d - z
    }'
done
if command -v valgrind >/dev/null 2>&1; then
    n=2000
    for depth in 20 2; do
        "$XP" run --quiet -o "$tmp/cg.db" -- valgrind --tool=callgrind \
            --callgrind-out-file="$tmp/cg.out" "$PY" "$BENCH" $depth $n 1 >/dev/null 2>&1
        callgrind_annotate --inclusive=yes "$tmp/cg.out" 2>/dev/null |
            awk -v k="$depth" -v n="$n" '
                /xp_stack.c:xp_stack_capture / { gsub(",", "", $1); s = $1 }
                /xp_python.c:xp_python_capture / { gsub(",", "", $1); p = $1 }
                END { printf "instructions per call, %d Python frames (callgrind, %d calls): stack capture %.0f, of which Python frames %.0f\n", k, n, s / n, p / n }'
    done
fi
