#!/bin/sh
# run_html.sh: the size of `xferprof report --format html` pages and how long
# they take to write and to draw (numbers, not pass/fail; docs/performance.md).
#
#   bench/run_html.sh XFERPROF LIBXFERPROF SIM_DIR BENCH_OVERHEAD EXAMPLE [RECORDS]
#
# Two runs: the pinned_vs_pageable example (EXAMPLE) under `xferprof run
# --sim`, and RECORDS (1000000) async copies made as run_overhead.sh makes
# its ingestion run (BENCH_OVERHEAD kill under the preload, then `xferprof
# recover`).  For each: the time `report --format html` took, the page's
# size, the marks drawn, the page script's own time (performance.now() from
# its start to data-rendered, written into #xp-render-ms) and the wall time
# of `chromium --headless --dump-dom` (its start-up included).
set -eu
if [ $# -lt 5 ]; then
    echo "usage: $0 XFERPROF LIBXFERPROF SIM_DIR BENCH_OVERHEAD EXAMPLE [RECORDS]" >&2
    exit 2
fi
XP=$1 LIB=$2 SIM=$3 BENCH=$4 EXAMPLE=$5
RECORDS=${6:-1000000}
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || { echo "$0: no chromium (scripts/setup.sh installs it)" >&2; exit 77; }
unset LD_LIBRARY_PATH LD_PRELOAD XFERPROF_OUTPUT
export XFERPROF_SIM_LATENCY=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xphtml.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
ms() { echo $(( ($2 - $1) / 1000000 )); }

set +e
LD_LIBRARY_PATH=$SIM LD_PRELOAD=$LIB XFERPROF_OUTPUT="$tmp/big.db" "$BENCH" kill "$RECORDS" >/dev/null
set -e
"$XP" recover "$tmp/big.db" >/dev/null
"$XP" run --sim --quiet -o "$tmp/small.db" -- "$EXAMPLE" >/dev/null
for r in small big; do
    t0=$(date +%s%N)
    "$XP" report "$tmp/$r.db" --format html -o "$tmp/$r.html"
    t1=$(date +%s%N)
    copies=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM copies").fetchone()[0])' "$tmp/$r.db")
    "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --user-data-dir="$tmp/profile-$r" \
        --window-size=1400,1800 --dump-dom "file://$tmp/$r.html" >"$tmp/$r.dom" 2>/dev/null
    t2=$(date +%s%N)
    drawn=$(sed -n 's/.*id="xp-render-ms">\([0-9.]*\)<.*/\1/p' "$tmp/$r.dom")
    marks=$(grep -o 'class="xp-copy' "$tmp/$r.dom" | wc -l)
    echo "$r: $copies copies; report --format html $(ms "$t0" "$t1") ms; page $(stat -c %s "$tmp/$r.html") bytes;" \
         "$marks marks; script $drawn ms; chromium --dump-dom $(ms "$t1" "$t2") ms wall"
done
