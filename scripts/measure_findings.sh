#!/usr/bin/env bash
# The full measurement of the findings' precision and recall for
# docs/findings.md ("Measured precision and recall"): every program of
# tests/findings run 3 times idle and 3 times with one busy process per CPU,
# scored against the truth in each program's first comment.
#   scripts/measure_findings.sh [BUILD_DIR] [score.py options...]
# BUILD_DIR defaults to build (configured and compiled: meson compile -C build).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
programs=$(cd tests/findings && ls fp_*.c torch_*.py)
# shellcheck disable=SC2086  # one word per program
exec python3 tests/findings/score.py --xferprof "$build/analyzer/xferprof" \
  --bin-dir "$build/tests/findings" --src-dir tests/findings \
  --python .venv/bin/python3 --runs 3 --load both "$@" $programs
