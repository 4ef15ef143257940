#!/usr/bin/env bash
# configure.sh DIR [MESON_OPTIONS...]: a fresh meson build directory DIR, or
# DIR reconfigured with those options when it exists (what scripts/demo.sh,
# scripts/gpu-check.sh, scripts/test.sh and scripts/fuzz.sh each need before
# they compile).
set -euo pipefail
dir=$1
shift
if [ -f "$dir/build.ninja" ]; then
  meson setup --reconfigure "$dir" "$@" >/dev/null
else
  meson setup "$dir" "$@" >/dev/null
fi
