#!/usr/bin/env bash
# Sets up, builds, and runs the demo: an ordinary CUDA program, linked against
# NVIDIA's libcudart, profiled by xferprof on the simulated platform.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [ -f build/build.ninja ]; then
  meson setup --reconfigure build >/dev/null
else
  meson setup build >/dev/null
fi
meson compile -C build >/dev/null
db=build/demo.db
echo "== xferprof run --sim -o $db -- examples/pinned_vs_pageable"
build/analyzer/xferprof run --sim -o "$db" -- build/examples/pinned_vs_pageable
echo
echo "== what the database says (sqlite3 $db)"
sqlite3 -header -column "$db" \
  "SELECT api, direction, host_mem, blocking, count(*) AS copies,
          sum(bytes) >> 20 AS MiB, round(avg(end_ns - start_ns) / 1e6, 2) AS avg_held_ms
     FROM copies GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4"
