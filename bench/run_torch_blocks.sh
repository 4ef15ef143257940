#!/bin/sh
# run_torch_blocks.sh: what recording PyTorch's blocks costs per tensor
# (numbers, not pass/fail).
#
#   bench/run_torch_blocks.sh XFERPROF [PYTHON [TENSORS]]
#
# A Python loop that makes and drops one small CUDA tensor (one block taken
# and returned: two reports of PyTorch's caching allocator, which the
# preload records with their stacks, and no CUDA call), on the simulator:
# ns per tensor without the preload (the simulator's libcudart.so.12 alone),
# under `xferprof run --sim` at default settings (native and Python frames),
# and with --stack-depth 0; best of ROUNDS rounds x 5 repetitions.
set -eu
if [ $# -lt 1 ]; then
    echo "usage: $0 XFERPROF [PYTHON [TENSORS]]" >&2
    exit 2
fi
XP=$1
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${2:-$ROOT/.venv/bin/python3}
N=${3:-100000}
ROUNDS=${ROUNDS:-3}
BENCH=$ROOT/bench/bench_torch_blocks.py
SIM=$(dirname "$(dirname "$XP")")/sim
unset LD_PRELOAD XFERPROF_OUTPUT XFERPROF_STACK_DEPTH XFERPROF_QUIET
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xpblocks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
ns() { awk '/^ns_per_tensor/ { print $2 }'; }
min() { awk 'NR == 1 || $1 < m { m = $1 } END { print m }'; }
: >"$tmp/base" && : >"$tmp/def" && : >"$tmp/d0"
r=1
while [ $r -le "$ROUNDS" ]; do
    LD_LIBRARY_PATH=$SIM LD_PRELOAD=$SIM/cuda12/libxpsim_cudart12.so "$PY" "$BENCH" "$N" | ns >>"$tmp/base"
    "$XP" run --sim --quiet -o "$tmp/def.db" -- "$PY" "$BENCH" "$N" | ns >>"$tmp/def"
    "$XP" run --sim --quiet --stack-depth 0 -o "$tmp/d0.db" -- "$PY" "$BENCH" "$N" | ns >>"$tmp/d0"
    r=$((r + 1))
done
base=$(min <"$tmp/base") def=$(min <"$tmp/def") d0=$(min <"$tmp/d0")
echo "machine: $(nproc) CPUs; $N tensors per measurement, best of 5 x $ROUNDS"
echo "without the preload:        $base ns per tensor"
echo "defaults (stacks):          $def ns per tensor, added $((def - base)) ns ($(( (def - base) / 2 )) per block event)"
echo "--stack-depth 0:            $d0 ns per tensor, added $((d0 - base)) ns ($(( (d0 - base) / 2 )) per block event)"
echo "block events recorded: $(sqlite3 "$tmp/def.db" 'SELECT count(*) FROM block_events' 2>/dev/null || echo '?')"
