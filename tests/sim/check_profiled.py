#!/usr/bin/env python3
"""check_profiled.py: a simulator scenario program gives the same output and exit status under `xferprof run --sim` as without it.

Usage: check_profiled.py XFERPROF [--expect SQL VALUE]... PROGRAM [ARGS...];
the environment (meson's scenario environment) is the one both runs get.  The
profiled run must also have written its database, so that the comparison is
not with a run the profiler stayed out of; each --expect is a query on that
database whose single value, as text, must be VALUE (what the profiler
recorded of the program).
"""
import glob
import os
import sqlite3
import subprocess
import sys
import tempfile


def run(cmd, env):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode(errors='replace'), p.stderr.decode(errors='replace')


def main():
    xferprof, rest = sys.argv[1], sys.argv[2:]
    expects = []
    while rest[:1] == ['--expect']:
        expects.append((rest[1], rest[2]))
        rest = rest[3:]
    prog = rest
    env = dict(os.environ)
    rc, out, err = run(prog, env)
    if rc != 0:
        sys.stderr.write('plain run failed (%d):\n%s' % (rc, err))
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        prc, pout, perr = run([xferprof, 'run', '--sim', '-o', os.path.join(tmp, 'run-%p.db'),
                               '--'] + prog, env)
        dbs = glob.glob(os.path.join(tmp, 'run-*.db'))
        got = []
        if len(dbs) == 1:
            conn = sqlite3.connect(dbs[0])
            got = [(sql, want, conn.execute(sql).fetchone()) for sql, want in expects]
            conn.close()
    ok = True
    if prc != rc:
        sys.stderr.write('exit status %d under the profiler, %d without\n' % (prc, rc))
        ok = False
    if pout != out:
        sys.stderr.write('output differs:\n--- without\n%s--- under the profiler\n%s' % (out, pout))
        ok = False
    if not dbs:
        sys.stderr.write('the profiled run wrote no database:\n%s' % perr)
        ok = False
    for sql, want, row in got:
        value = None if row is None or row[0] is None else str(row[0])
        if value != want:
            sys.stderr.write('%s\n  gave %r, expected %r\n' % (sql, value, want))
            ok = False
    if not ok:
        sys.stderr.write('profiled stderr:\n%s' % perr)
        return 1
    sys.stdout.write(out)
    return 0


if __name__ == '__main__':
    sys.exit(main())
