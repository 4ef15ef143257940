#!/usr/bin/env bash
# Builds the fuzz configuration (clang, libFuzzer, ASan + UBSan) and runs each
# fuzz target for a bounded time.
#
#   scripts/fuzz.sh SECONDS [BUILD_DIR]
#
# Seeds: the committed corpora (tests/fuzz/corpus_*: small inputs and every
# crash once fixed) and fresh ones written by bench/make_db (a synthetic
# journal, as it is and marked for fuzz_journal to keep its checksums right;
# its database) and by the compiler (a small shared object with DWARF, and
# the same stripped).  New inputs the fuzzer finds go to BUILD_DIR's
# corpus, not the source tree.  Prints "fuzz TARGET: ok" or "fuzz TARGET:
# FAILED" per target and writes the same to BUILD_DIR/fuzz-results.txt (for
# scripts/test.sh); exits 1 if any target failed.  A crash leaves its input
# as BUILD_DIR/crash-* (reproduce: BUILD_DIR/tests/fuzz/TARGET FILE).
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:?usage: scripts/fuzz.sh SECONDS [BUILD_DIR]}
dir=${2:-build-fuzz}

CC=clang scripts/configure.sh "$dir" -Dfuzz=true -Dtests=false -Dwerror=true \
  -Db_sanitize=address,undefined -Db_lundef=false || exit 1
# Only what fuzzing needs: the targets and the seed generator.
meson compile -C "$dir" tests/fuzz/fuzz_journal tests/fuzz/fuzz_db tests/fuzz/fuzz_symbols bench/make_db \
  >"$dir.compile.log" 2>&1 || { cat "$dir.compile.log" >&2; exit 1; }

mkdir -p "$dir/corpus_journal" "$dir/corpus_db" "$dir/corpus_symbols" "$dir/seeds"
rm -f "$dir/seeds/"*
# A journal as a crashed run leaves it, cut after its last record (the
# writer grows the file by megabytes of zeros), and the database it makes.
ASAN_OPTIONS=detect_leaks=0 "$dir/bench/make_db" --journal-only -n 40 -s 5 "$dir/seeds/j.db" >/dev/null &&
  python3 - "$dir/seeds/j.db.xpj" "$dir/corpus_journal/seed-40-copies.xpj" <<'PY' &&
import struct, sys
d = open(sys.argv[1], 'rb').read().rstrip(b'\0')
d += b'\0' * (-len(d) % 8)
open(sys.argv[2], 'wb').write(d)
# reserved0 (offset 28) odd: fuzz_journal recomputes the checksums.
open(sys.argv[2].replace('.xpj', '-fixsum.xpj'), 'wb').write(d[:28] + struct.pack('<I', 1) + d[32:])
PY
  clang -g -O1 -shared -fPIC -o "$dir/corpus_symbols/seed-inline.so" tests/symbols/sym_inline_c.c &&
  strip -o "$dir/corpus_symbols/seed-stripped.so" "$dir/corpus_symbols/seed-inline.so" &&
  ASAN_OPTIONS=detect_leaks=0 "$dir/bench/make_db" -n 40 -s 5 "$dir/corpus_db/seed-40-copies.db" >/dev/null ||
  { echo "fuzz.sh: could not make the seeds" >&2; exit 1; }

# target : max input length (a journal's 4 KiB header plus records; a small
# database is about 100 KiB; a small shared object with DWARF about 16 KiB)
declare -A max_len=([fuzz_journal]=32768 [fuzz_db]=131072 [fuzz_symbols]=65536)
declare -A corpus=([fuzz_journal]=journal [fuzz_db]=db [fuzz_symbols]=symbols)
: >"$dir/fuzz-results.txt"
status=0
for t in fuzz_journal fuzz_db fuzz_symbols; do
  c=${corpus[$t]}
  if (cd "$dir" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
      "tests/fuzz/$t" -max_total_time="$secs" -max_len="${max_len[$t]}" -timeout=20 \
      -rss_limit_mb=2048 -print_final_stats=1 "corpus_$c" "$OLDPWD/tests/fuzz/corpus_$c") \
      >"$dir/$t.log" 2>&1; then
    echo "fuzz $t: ok ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$dir/$t.log" | grep -o '[0-9]*$') runs in ${secs} s)"
    echo "$t OK" >>"$dir/fuzz-results.txt"
  else
    echo "fuzz $t: FAILED (log: $dir/$t.log)" >&2
    tail -40 "$dir/$t.log" >&2
    echo "$t FAIL" >>"$dir/fuzz-results.txt"
    status=1
  fi
done
exit $status
