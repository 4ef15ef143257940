"""rep_common.py: what the report scenario drivers share, on top of
tests/capture/cap_common.py (running programs under `xferprof run --sim`,
collecting failed checks).

Expected values come from what rep_sites.c does (its comment), and source
lines from the marker comments in it, never from a report's own output."""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'capture'))
from cap_common import *  # noqa: E402,F401,F403
from cap_common import check, check_eq, clean_env, fatal, run  # noqa: E402

SOURCE = os.path.join(HERE, 'rep_sites.c')

# What one round of rep_sites does (see its header comment).
UPLOADS, UPLOAD_BYTES = 5, 4096
DOWNLOADS, DOWNLOAD_BYTES = 3, 8192
DEVICE_BYTES, KEPT_BYTES = 8192, 1000


def marker_line(marker, path=SOURCE):
    """1-based line of the comment /* MARKER */ in the source."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if '/* %s */' % marker in line:
                return n
    fatal('marker %s not in %s' % (marker, path))


def report(args, dbs, options=(), env_extra=None):
    return run([args.xferprof, 'report'] + list(dbs) + list(options), clean_env(env_extra))


def report_json(args, dbs, options=()):
    r = report(args, dbs, ['--format', 'json'] + list(options))
    if r.rc != 0:
        fatal('xferprof report --format json failed', r.describe())
    try:
        return json.loads(r.out)
    except ValueError as e:
        fatal('the report is not JSON', e, r.out[:2000])


def record(args, prog, db, prog_args=(), cwd=None):
    r = run([args.xferprof, 'run', '--sim', '-o', db, '--', prog] + list(prog_args),
            clean_env(), cwd)
    if r.rc != 0:
        fatal('%s under xferprof run --sim' % prog, r.describe())
    return r


def site_of(doc, function, process=None):
    """Sites whose call site (first frame) is function."""
    return [s for s in doc['sites'] if s['frames'] and s['frames'][0]['function'] == function
            and (process is None or s['process'] == process)]


def check_one_error_line(r, what):
    """Exit status 2 and exactly one line on stderr, no crash or traceback."""
    check_eq(r.rc, 2, what + ': exit status')
    lines = [l for l in r.err.splitlines() if l.strip()]
    check_eq(len(lines), 1, what + ': lines on stderr (%r)' % r.err)
    check(r.err.startswith('xferprof report: '), what + ': the line says who speaks', repr(r.err))
    for bad in ('Traceback', 'AddressSanitizer', 'runtime error', 'Segmentation'):
        check(bad not in r.err, what + ': no %s' % bad, repr(r.err))
