#!/usr/bin/env python3
"""Checks libxferprof.so's dynamic exports against the hook tables: every
runtime hook as name@@libcudart.so.13, name@libcudart.so.12 and
name@libcudart.so.11.0, at the versions its table entries say; every driver
hook, dlsym and dlvsym unversioned (as
NVIDIA's libcuda.so.1 and glibc's interposable names are bound); and nothing
else (no internal name leaks out).

usage: check_exports.py NM LIB --runtime A.def... --driver B.def... [--allow NAME...]
"""
import platform
import subprocess
import sys

import xp_hook_table
# dlsym/dlvsym are trampolines written for these machines only.
DL_NAMES = ('dlsym', 'dlvsym') if platform.machine() in ('x86_64', 'aarch64') else ()


def main():
    nm, lib = sys.argv[1:3]
    groups = {'--runtime': [], '--driver': [], '--allow': []}
    current = None
    for a in sys.argv[3:]:
        if a in groups:
            current = a
        elif current:
            groups[current].append(a)
        else:
            sys.exit(__doc__)
    runtime = [e for d in groups['--runtime'] for e in xp_hook_table.entries(d)]
    driver = [n for d in groups['--driver'] for n in xp_hook_table.names(d)]
    out = subprocess.run([nm, '-D', '--defined-only', '--with-symbol-versions', lib],
                         check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
    got = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] != 'A':   # A: the version nodes themselves
            got.add(parts[2])
    want = set()
    for e in runtime:
        for v in e.versions:
            want.add(e.name + ('@@' if v == 13 else '@') + xp_hook_table.NODES[v])
    want |= set(driver) | set(DL_NAMES) | set(groups['--allow'])
    failures = []
    for n in sorted(want - got):
        failures.append('not exported: %s' % n)
    for n in sorted(got - want):
        failures.append('exported but not a hook: %s' % n)
    for f in failures:
        print('FAIL: ' + f, file=sys.stderr)
    if failures:
        sys.exit(1)
    print('ok: %d runtime hook exports, %d driver hooks, %d others'
          % (sum(len(e.versions) for e in runtime), len(driver),
             len(DL_NAMES) + len(groups['--allow'])))


if __name__ == '__main__':
    main()
