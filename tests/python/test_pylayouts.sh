#!/bin/sh
# test_pylayouts.sh: the committed CPython layout table (src/xp_pylayouts.h)
# is what scripts/gen-pylayouts.sh makes from the installed headers of every
# supported version, Debian's python3.11 included (the same row as pyenv's
# 3.11: a table row is per minor version).
set -eu
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$root/scripts/gen-pylayouts.sh" "$tmp/pyenv.h"
if ! cmp -s "$tmp/pyenv.h" "$root/src/xp_pylayouts.h"; then
    echo "src/xp_pylayouts.h differs from the installed headers (run scripts/gen-pylayouts.sh):"
    diff -u "$root/src/xp_pylayouts.h" "$tmp/pyenv.h" || true
    exit 1
fi
XP_PY_PREFIXES=/usr "$root/scripts/gen-pylayouts.sh" "$tmp/debian.h"
sed -n '/minor = 11,/,/nchecks/p' "$tmp/pyenv.h" >"$tmp/a"
sed -n '/minor = 11,/,/nchecks/p' "$tmp/debian.h" >"$tmp/b"
if ! cmp -s "$tmp/a" "$tmp/b"; then
    echo "Debian's python3.11 headers give another 3.11 layout than pyenv's:"
    diff -u "$tmp/a" "$tmp/b" || true
    exit 1
fi
echo ok
