#!/bin/sh
# run_sqlite_floor.sh: SQLite's own instructions per row inserted (callgrind,
# exact), the floor under the ingest's cost per record (issue 15).
#
#   bench/run_sqlite_floor.sh BENCH_SQLITE_FLOOR
#
# For 4, 8, 11 and 14 integer columns, 32 rows per prepared statement (the
# ingest's XP_ROW_BATCH) and 1 row per statement; then the shape of the rows
# the ingest writes most, copy_rows (13 columns, 4 of them NULL in the
# benchmark's copies: nvtx_range, full_fp, graph_node, launch_stack), at 32
# and 128 rows per statement: instructions of a run of 101,000 rows minus one
# of 1,000, per row.  The database is opened with the ingest's flags and
# PRAGMAs (bench_sqlite_floor.c).
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
    a=$(instr 1000 "$@") b=$(instr 101000 "$@")
    echo $(( (b - a) / 100000 ))
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
