#!/usr/bin/env python3
"""Checks the hottest hooks' machine code for instructions that cost time
out of proportion to their count (issue 15): no locked read-modify-write
(a `lock` prefix, or `xchg` with memory, locked by itself), no `mfence` and
no `lfence` in the 1D copy hooks and the sync hooks, nor in what they call
(xp_copy_1d, a 1D copy's whole call; xp_record_sync, a sync's record).  Their out-of-line slow paths
are separate functions, so this holds for every path through them.

usage: check_hot_path.py OBJDUMP LIBXFERPROF RUNTIME_DEF
"""
import re
import subprocess
import sys

objdump, lib, defs = sys.argv[1:4]
# The hook table's 1D copies and syncs (their symbols, every version).
hooks = set(re.findall(r'^XP_(?:COPY|SYNC)\((\w+),', open(defs).read(), re.M))
engine = {'xp_copy_1d', 'xp_record_sync'}
costly = re.compile(r'\block\b|\bxchg\b.*\(|\bmfence\b|\blfence\b')

out = subprocess.run([objdump, '-d', '--no-show-raw-insn', lib], check=True,
                     capture_output=True, text=True).stdout
seen, bad = set(), []
fn = None
for line in out.splitlines():
    m = re.match(r'^[0-9a-f]+ <([^>@]+)(@[^>]*)?>:$', line)
    if m:
        fn = m.group(1) if m.group(1) in hooks | engine else None
        if fn:
            seen.add(fn)
        continue
    if fn and costly.search(line):
        bad.append('%s: %s' % (fn, line.strip()))
missing = (hooks | engine) - seen
for name in sorted(missing):
    print('not found in %s: %s' % (lib, name))
for b in bad:
    print('costly instruction on the hot path: ' + b)
if not hooks:
    print('no XP_COPY/XP_SYNC entries in ' + defs)
sys.exit(1 if bad or missing or not hooks else 0)
