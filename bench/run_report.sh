#!/bin/sh
# run_report.sh: how fast `xferprof report` reads a large run (a number, not
# pass/fail).
#
#   bench/run_report.sh BUILD [COPIES]
#
# Makes BUILD/bench/report-COPIES.db with bench/make_db (COPIES copies,
# default 10 million, through the real journal writer and ingest; kept for
# later runs), then times `xferprof report --format json` on it and prints
# seconds per million copies.  Without the report command it says so and
# exits 0.
set -eu
if [ $# -lt 1 ]; then
    echo "usage: $0 BUILD [COPIES]" >&2
    exit 2
fi
BUILD=$1
COPIES=${2:-10000000}
XP=$BUILD/analyzer/xferprof
DB=$BUILD/bench/report-$COPIES.db

# `xferprof report` with no database is a usage error when the command
# exists, "unknown command" when it does not.
if "$XP" report 2>&1 | grep -qi "unknown command"; then
    echo "run_report.sh: this xferprof has no report command; nothing to time" >&2
    exit 0
fi
if [ ! -f "$DB" ]; then
    "$BUILD/bench/make_db" -n "$COPIES" "$DB"
fi
start=$(date +%s.%N)
"$XP" report --format json "$DB" >/dev/null
end=$(date +%s.%N)
python3 -c "import sys; s = float(sys.argv[2]) - float(sys.argv[1]); n = int(sys.argv[3]); \
print('xferprof report: %.2f s for %d copies, %.3f s per million' % (s, n, s / (n / 1e6)))" \
    "$start" "$end" "$COPIES"
