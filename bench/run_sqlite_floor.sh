#!/bin/sh
# run_sqlite_floor.sh: SQLite's own instructions per row inserted (callgrind,
# exact), the floor under the ingest's cost per record (issue 15).
#
#   bench/run_sqlite_floor.sh BENCH_SQLITE_FLOOR
#
# For 4, 8, 11 and 14 integer columns, 32 rows per prepared statement and 1
# row per statement (binding every value); then the shape of the rows the
# ingest writes most, copy_rows (13 columns, 4 of them NULL in the
# benchmark's copies: nvtx_range, full_fp, graph_node, launch_stack), at 32
# and 128 rows per statement; then the ingest's way of storing rows, INSERT
# ... SELECT from a virtual table of 256 rows (XP_ROW_BATCH), nothing bound,
# for copy_rows and for tables of 1, 2 and 4 columns: the floor of one row
# per record whatever its width.  Per row: the instructions of a run of
# 103,424 rows minus one of 1,024, divided by 102,400.  The database is
# opened with the ingest's flags and PRAGMAs (bench_sqlite_floor.c).
set -eu
B=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xpsqlfloor.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
instr() {
    rm -f "$tmp/x.db" "$tmp/x.db-wal" "$tmp/x.db-shm"
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$B" "$tmp/x.db" "$@" 2>&1 |
        sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
per_row() {   # COLUMNS ROWS_PER_STATEMENT NULLS
    # Multiples of every batch size, so that both runs insert whole batches.
    a=$(instr 1024 "$@") b=$(instr 103424 "$@")
    echo $(( (b - a) / 102400 ))
}
echo "SQLite $(sqlite3 --version 2>/dev/null | cut -d' ' -f1); instructions per row inserted"
for per in 32 1; do
    for cols in 4 8 11 14; do
        echo "$cols columns, $per row(s) per statement: $(per_row "$cols" "$per" 0)"
    done
done
for per in 32 128; do
    echo "copy_rows (13 columns, 4 NULL, a copy's values), $per rows per statement: $(per_row copy "$per")"
done
echo "copy_rows, INSERT ... SELECT from a virtual table of 256 rows: $(per_row copy v256)"
for cols in 1 2 4; do
    echo "$cols column(s), INSERT ... SELECT from a virtual table of 256 rows: $(per_row "$cols" v256)"
done
