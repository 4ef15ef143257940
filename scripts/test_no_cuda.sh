#!/usr/bin/env bash
# test_no_cuda.sh BUILD OUT_DIR: the analyzer builds and works where the CUDA
# toolkit is not installed (a laptop reading databases copied from a GPU
# machine; issue 16 item 10).  In a mount namespace of its own, the toolkit
# is hidden (an empty tmpfs over /usr/local/cuda's target and over
# /usr/local/include, where some images link its headers), OUT_DIR is
# configured and built from scratch, and its xferprof must report, compare,
# export and recover a database that BUILD's preload recorded, with the
# same output as BUILD's xferprof.  Writes "no-cuda OK" or "no-cuda FAIL" to
# OUT_DIR.result.  Needs root (mount namespaces), as the capture tests do.
set -uo pipefail
cd "$(dirname "$0")/.."
build=$1
out=$2
result=$out.result
rm -f "$result"
fail() { echo "test_no_cuda: $*" >&2; echo "no-cuda FAIL" >"$result"; exit 1; }

tmp=$(mktemp -d /tmp/xp-nocuda.XXXXXX) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
# A database recorded with the full build, and what its xferprof says of it.
"$build/analyzer/xferprof" run --sim --quiet -o "$tmp/run.db" -- "$build/examples/async_pageable" \
  >/dev/null || fail "recording with $build failed"
"$build/analyzer/xferprof" report "$tmp/run.db" >"$tmp/report.want" || fail "report with $build"

# shellcheck disable=SC2016  # expanded by the inner shell
unshare -m bash -euo pipefail -c '
  out=$1 tmp=$2
  for d in "$(readlink -f /usr/local/cuda)" /usr/local/include; do
    if [ -d "$d" ]; then mount -t tmpfs -o size=1m nocuda "$d"; fi
  done
  if echo "#include <cuda.h>" | cc -E -x c - >/dev/null 2>&1; then
    echo "test_no_cuda: cuda.h is still visible to the compiler" >&2; exit 3
  fi
  rm -rf "$out"
  meson setup "$out" -Dwerror=true >"$out.setup.log" 2>&1 || { cat "$out.setup.log" >&2; exit 4; }
  grep -q "building the analyzer only" "$out.setup.log" || { echo "no warning said so" >&2; exit 5; }
  meson compile -C "$out" >"$out.compile.log" 2>&1 || { cat "$out.compile.log" >&2; exit 6; }
  [ -x "$out/analyzer/xferprof" ] || { echo "no xferprof built" >&2; exit 7; }
  if [ -e "$out/hooks/libxferprof.so" ]; then echo "a preload was built" >&2; exit 8; fi
  x=$out/analyzer/xferprof
  "$x" report "$tmp/run.db" >"$tmp/report.got"
  "$x" report --format json "$tmp/run.db" >/dev/null
  "$x" diff "$tmp/run.db" "$tmp/run.db" >/dev/null
  "$x" export -f perfetto -o "$tmp/trace.json" "$tmp/run.db"
  "$x" export -f csv -o "$tmp/copies.csv" "$tmp/run.db"
  "$x" recover "$tmp/run.db" >/dev/null
  set +e
  "$x" run -- true 2>"$tmp/run.err"
  rc=$?
  set -e
  [ $rc -ne 0 ] && grep -q "built without the CUDA toolkit" "$tmp/run.err" || {
    echo "run without a preload: status $rc, said: $(cat "$tmp/run.err")" >&2; exit 9; }
' nocuda "$out" "$tmp" || fail "the analyzer-only build or one of its commands failed (status $?)"
# The same version of the same code: the same report.
cmp -s "$tmp/report.want" "$tmp/report.got" ||
  fail "its report differs from $build's: $(diff "$tmp/report.want" "$tmp/report.got" | head -5)"
[ -s "$tmp/trace.json" ] && [ -s "$tmp/copies.csv" ] || fail "export wrote nothing"
echo "no-cuda OK" >"$result"
echo "test_no_cuda: the analyzer built and ran with the CUDA toolkit hidden" >&2
