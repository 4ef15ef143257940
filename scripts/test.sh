#!/usr/bin/env bash
# Sets up, builds with warnings as errors, and runs the whole test suite: the
# default build, then the simulator's tests, all unit tests and the capture
# scenarios again under AddressSanitizer (with UBSan) and under
# ThreadSanitizer, then each fuzz target for FUZZ_SECONDS (default 20) in the
# fuzz build (scripts/fuzz.sh), then the analyzer alone with the CUDA toolkit hidden (scripts/test_no_cuda.sh).
# Ends with one line "N passed, N failed" (", N skipped" when any were) summed
# over the three runs, each fuzz target and the analyzer-only build counting
# as one test.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || exit 1

status=0
run_suite() {
  local dir=$1 suite=$2; shift 2
  rm -f "$dir/meson-logs/testlog.json"
  scripts/configure.sh "$dir" -Dwerror=true "$@" || { echo "configure of $dir failed" >&2; status=1; return; }
  meson compile -C "$dir" >"$dir.compile.log" 2>&1 || {
    cat "$dir.compile.log" >&2; echo "build of $dir failed" >&2; status=1; return; }
  echo "== $dir: meson test $suite" >&2
  meson test -C "$dir" --print-errorlogs --num-processes 2 $suite || status=1
}

run_suite build ""
# The capture scenarios too: real programs under the real preload, where a
# race or an overflow of the preload's would show (the few a sanitizer makes
# meaningless are left out by tests/capture/meson.build, each with its reason).
run_suite build-asan "--suite sim --suite unit --suite capture" -Db_sanitize=address,undefined -Db_lundef=false
run_suite build-tsan "--suite sim --suite unit --suite capture" -Db_sanitize=thread -Db_lundef=false

# The fuzz targets: a failure is counted below (from fuzz-results.txt), not here.
rm -f build-fuzz/fuzz-results.txt
echo "== build-fuzz: scripts/fuzz.sh ${FUZZ_SECONDS:-20}" >&2
scripts/fuzz.sh "${FUZZ_SECONDS:-20}" build-fuzz >&2 || true
if [ ! -s build-fuzz/fuzz-results.txt ]; then
  echo "fuzz build or seeds failed" >&2
  status=1
fi

# The analyzer alone, built with the CUDA toolkit hidden (counted below from
# build-nocuda.result).
echo "== build-nocuda: scripts/test_no_cuda.sh" >&2
scripts/test_no_cuda.sh build build-nocuda || true
[ -s build-nocuda.result ] || { echo "test_no_cuda.sh wrote no result" >&2; status=1; }

python3 - build build-asan build-tsan <<'PY'
import json, os, sys
passed = failed = skipped = 0
for results in (os.path.join('build-fuzz', 'fuzz-results.txt'), 'build-nocuda.result'):
    if not os.path.exists(results):
        continue
    for line in open(results):
        if line.split()[1:] == ['OK']:
            passed += 1
        elif line.strip():
            failed += 1
for d in sys.argv[1:]:
    log = os.path.join(d, 'meson-logs', 'testlog.json')
    if not os.path.exists(log):
        continue
    for line in open(log):
        r = json.loads(line).get('result')
        if r in ('OK', 'EXPECTEDFAIL'):
            passed += 1
        elif r == 'SKIP':
            skipped += 1
        else:
            failed += 1
tail = ', %d skipped' % skipped if skipped else ''
print('%d passed, %d failed%s' % (passed, failed, tail))
sys.exit(1 if failed or passed == 0 else 0)
PY
rc=$?
[ $status -ne 0 ] && exit 1
exit $rc
