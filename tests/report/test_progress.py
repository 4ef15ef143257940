"""test_progress.py: the progress line of `recover`, `report` and `export`
(analyzer/xp_progress.c).

On a terminal (stderr a pseudo-terminal here, stdout elsewhere), work that
takes more than about a second shows "\\rxferprof CMD: ...\\033[K" lines and
ends with the line cleared ("\\r\\033[K"); the same work with stderr a pipe
writes no byte of it, nor does short work on a terminal, nor a terminal whose
TERM is "dumb".  How long work takes depends on the machine (the report of
a million copies took 0.47 s on one of ours, 1.15 s on another), so the work that must show the line runs with XFERPROF_PROGRESS_AFTER_MS=0
(the line at once): a synthetic run of COPIES copies (bench/make_db, through
the real writer and ingest), long enough for a few updates.  Short work is one
of 1000 copies, with the default delay, an unreadable delay, and no delay.
How long anything took is never asserted.

    python3 test_progress.py --xferprof X --make-db MAKE_DB
"""

import argparse
import os
import pty
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'capture'))
from cap_common import check, check_eq, clean_env, fatal, finish, tmpdir  # noqa: E402

COPIES = 200000


def on_tty(cmd, env):
    """Runs cmd with stderr a pseudo-terminal (stdout discarded); returns
    (exit status, every byte written to the terminal)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=slave)
    os.close(slave)
    got = b''
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every holder of the terminal's other end is gone
            break
        if not chunk:
            break
        got += chunk
    os.close(master)
    rc = p.wait()
    print('$ %s  (stderr a terminal) -> %s, %d bytes' % (' '.join(cmd), rc, len(got)))
    return rc, got


def on_pipe(cmd, env):
    p = subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    print('$ %s  (stderr a pipe) -> %s, %d bytes' % (' '.join(cmd), p.returncode, len(p.stderr)))
    return p.returncode, p.stderr


def make(args, path, copies, journal_only=False):
    cmd = [args.make_db, '-n', str(copies)] + (['--journal-only'] if journal_only else []) + [path]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        fatal('make_db failed', p.stdout.decode(errors='replace'))


def expect_progress(rc, got, cmd, what):
    check_eq(rc, 0, what + ': exit status')
    lines = re.findall(rb'\r(xferprof ' + cmd.encode() + rb': [^\r\n\x1b]+)\x1b\[K', got)
    check(lines, what + ': no progress line', got[:300])
    if lines:
        print('  first: %r, last: %r (%d lines)' % (lines[0], lines[-1], len(lines)))
    check(got.endswith(b'\r\x1b[K'), what + ': the line is not cleared at the end', got[-120:])
    check(b'\n' not in got, what + ': the progress line wrote a newline', got[:300])


def expect_nothing(rc, got, what):
    check_eq(rc, 0, what + ': exit status')
    check_eq(got, b'', what + ': bytes on stderr')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--xferprof', required=True)
    ap.add_argument('--make-db', required=True)
    args = ap.parse_args()
    d = tmpdir('progress')
    now = {'TERM': 'xterm', 'XFERPROF_PROGRESS_AFTER_MS': '0'}
    tty_env = clean_env(now)
    x = args.xferprof

    # recover: "journal records" as the journal is ingested.
    big = os.path.join(d, 'big.db')
    make(args, big, COPIES, journal_only=True)
    expect_progress(*on_tty([x, 'recover', big], tty_env), 'recover', 'recover on a terminal')
    piped = os.path.join(d, 'piped.db')
    make(args, piped, COPIES, journal_only=True)
    expect_nothing(*on_pipe([x, 'recover', piped], tty_env), 'recover with stderr a pipe')

    # report: rows read, then the rules; export: rows written.
    expect_progress(*on_tty([x, 'report', big], tty_env), 'report', 'report on a terminal')
    expect_nothing(*on_pipe([x, 'report', big], tty_env), 'report with stderr a pipe')
    expect_nothing(*on_tty([x, 'report', big], clean_env(dict(now, TERM='dumb'))),
                   'report on a terminal with TERM=dumb')
    csv = os.path.join(d, 'big.csv')
    expect_progress(*on_tty([x, 'export', '-f', 'csv', big, '-o', csv], tty_env), 'export',
                    'export on a terminal')
    expect_nothing(*on_pipe([x, 'export', '-f', 'csv', big, '-o', csv], tty_env),
                   'export with stderr a pipe')

    # Short work on a terminal: nothing at all after the default delay, or
    # after a delay the variable does not give as milliseconds (ignored);
    # with no delay, the line (so the variable is what showed it above).
    small = os.path.join(d, 'small.db')
    make(args, small, 1000, journal_only=True)
    default = clean_env({'TERM': 'xterm'})
    expect_nothing(*on_tty([x, 'recover', small], default), 'recover of a small journal')
    expect_nothing(*on_tty([x, 'report', small], default), 'report of a small run')
    expect_nothing(*on_tty([x, 'export', '-f', 'csv', small, '-o', csv], default),
                   'export of a small run')
    for bad in ('-1', 'soon', '5s', '3600001', '99999999999999999999'):
        expect_nothing(*on_tty([x, 'report', small],
                               clean_env({'TERM': 'xterm', 'XFERPROF_PROGRESS_AFTER_MS': bad})),
                       'report of a small run, XFERPROF_PROGRESS_AFTER_MS=%s' % bad)
    expect_progress(*on_tty([x, 'report', small], tty_env), 'report',
                    'report of a small run with XFERPROF_PROGRESS_AFTER_MS=0')
    finish()


if __name__ == '__main__':
    main()
