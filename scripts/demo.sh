#!/usr/bin/env bash
# Sets up, builds, and runs the demo: an ordinary CUDA program, linked against
# NVIDIA's libcudart, run unchanged on the simulated platform.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [ -f build/build.ninja ]; then
  meson setup --reconfigure build >/dev/null
else
  meson setup build >/dev/null
fi
meson compile -C build >/dev/null
echo "== examples/pinned_vs_pageable on the simulator (LD_LIBRARY_PATH=build/sim)"
LD_LIBRARY_PATH="$PWD/build/sim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" build/examples/pinned_vs_pageable
