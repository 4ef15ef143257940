#!/usr/bin/env bash
# Compares the simulator with a real GPU, for a session lent one: builds, runs
# every program of examples/ and examples/torch_transfers.py under
# `xferprof run` on the GPU and under `xferprof run --sim`, and prints, per
# program, both reports' totals (copies, bytes, blocked time per direction)
# and findings (rule ids and counts) side by side.  A difference is a bug of
# the simulator (or of the profiler on one of them) to look into.
#
#   scripts/gpu-check.sh [OUTDIR]      (default build/gpu-check)
#
# Without a GPU (no nvidia-smi, or it sees no device) only the simulator's
# column is filled, and the script says so.  Exit status 0 unless the build
# or a report fails.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/gpu-check}
scripts/setup.sh
scripts/configure.sh build
meson compile -C build >/dev/null
mkdir -p "$out"
xferprof=build/analyzer/xferprof

gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  gpu=1
  nvidia-smi -L
else
  echo "gpu-check: no GPU here (nvidia-smi sees none): the GPU column stays empty"
fi

python=python3
[ -x .venv/bin/python3 ] && python=.venv/bin/python3

# name, then the command
programs=()
for exe in build/examples/*; do
  [ -f "$exe" ] && [ -x "$exe" ] && programs+=("$(basename "$exe")|$exe")
done
programs+=("torch_transfers|$python examples/torch_transfers.py")

status=0
for entry in "${programs[@]}"; do
  name=${entry%%|*}
  cmd=${entry#*|}
  for where in sim gpu; do
    [ "$where" = gpu ] && [ "$gpu" = 0 ] && continue
    db="$out/$name-$where.db"
    opts=(-q -o "$db")
    [ "$where" = sim ] && opts+=(--sim)
    # The program's own status is not the check (oom exits non-zero on
    # purpose; torch stops at cuBLAS on the simulator): its database is.
    # shellcheck disable=SC2086
    "$xferprof" run "${opts[@]}" -- $cmd >"$out/$name-$where.out" 2>&1 || true
    if [ -f "$db" ]; then
      "$xferprof" report --format json -o "$out/$name-$where.json" "$db" || status=1
    fi
  done
done

"$python" - "$out" "$gpu" "${programs[@]}" <<'PY'
import json, os, sys

out, gpu = sys.argv[1], sys.argv[2] == '1'
names = [e.split('|', 1)[0] for e in sys.argv[3:]]


def load(name, where):
    p = os.path.join(out, '%s-%s.json' % (name, where))
    if not os.path.exists(p):
        return None
    with open(p) as f:
        return json.load(f)


def totals(doc):
    """direction -> (copies, bytes, blocked ms) from the report's totals."""
    if doc is None:
        return {}
    t = doc.get('totals', {})
    res = {}
    for d, v in (t.get('directions') or {}).items():
        if isinstance(v, dict) and v.get('count'):
            res[d] = (v['count'], v.get('bytes', 0), (v.get('blocked_ns') or 0) / 1e6)
    return res


def findings(doc):
    if doc is None:
        return {}
    c = {}
    for f in doc.get('findings', []):
        c[f['rule']] = c.get(f['rule'], 0) + 1
    return c


def cell(v):
    return '-' if v is None else str(v)


for name in names:
    sim, real = load(name, 'sim'), load(name, 'gpu')
    print('\n== %s' % name)
    print('  %-28s %-28s %s' % ('', 'simulator', 'GPU' if gpu else 'GPU (none here)'))
    ts, tg = totals(sim), totals(real)
    for d in sorted(set(ts) | set(tg)):
        def fmt(x):
            return '-' if x is None else '%d copies %.1f MiB %.1f ms' % (x[0], x[1] / 2**20, x[2])
        print('  %-28s %-28s %s' % ('totals ' + d, fmt(ts.get(d)), fmt(tg.get(d))))
    fs, fg = findings(sim), findings(real)
    for r in sorted(set(fs) | set(fg)):
        mark = '' if not gpu or fs.get(r) == fg.get(r) else '   <- differs'
        print('  %-28s %-28s %s%s' % ('finding ' + r, cell(fs.get(r)), cell(fg.get(r)), mark))
    if not fs and not fg:
        print('  (no findings)')
PY
exit $status
