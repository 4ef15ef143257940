#!/usr/bin/env bash
# Sets up, builds, and runs the demo: an ordinary CUDA program, linked against
# NVIDIA's libcudart, profiled by xferprof on the simulated platform, and the
# report on its run (examples/pinned_vs_pageable.c says what it should find).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/configure.sh build
meson compile -C build >/dev/null
db=build/demo.db
echo "== xferprof run --sim -o $db -- examples/pinned_vs_pageable"
build/analyzer/xferprof run --sim -o "$db" -- build/examples/pinned_vs_pageable
echo
echo "== xferprof report $db"
build/analyzer/xferprof report "$db"
