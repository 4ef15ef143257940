#!/bin/sh
# run_sqlite_floor.sh: SQLite's own instructions per row inserted (callgrind,
# exact), the floor under the ingest's cost per record (issue 15).
#
#   bench/run_sqlite_floor.sh BENCH_SQLITE_FLOOR
#
# For 4, 8, 11 and 14 integer columns (copy_rows has 14), 32 rows per
# prepared statement (the ingest's XP_ROW_BATCH) and 1 row per statement:
# instructions of a run of 101,000 rows minus one of 1,000, per row.
set -eu
B=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xpsqlfloor.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
instr() {
    rm -f "$tmp/x.db" "$tmp/x.db-wal" "$tmp/x.db-shm"
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$B" "$tmp/x.db" "$1" "$2" "$3" 2>&1 |
        sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
echo "SQLite $(sqlite3 --version 2>/dev/null | cut -d' ' -f1); instructions per row inserted"
for per in 32 1; do
    for cols in 4 8 11 14; do
        a=$(instr 1000 "$cols" "$per") b=$(instr 101000 "$cols" "$per")
        echo "$cols columns, $per row(s) per statement: $(( (b - a) / 100000 ))"
    done
done
