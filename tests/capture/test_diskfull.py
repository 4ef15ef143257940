"""A disk that fills while the program copies (issue 14 items 1 and 2), and
a file size limit (RLIMIT_FSIZE, item 19) that stops our files growing.
The output goes to a 3 MiB tmpfs mounted for the test; the program makes
50,000 copies.  Its exit status and output are as without the profiler;
every call is either in the database or counted in meta records_lost, with
"disk full" in the reason; the run says so once on stderr, and `xferprof
report` shows it at the top.  The same program on a roomy tmpfs loses
nothing.

Under a file size limit (128 KiB: not even the journal fits; 3 MB: it fills
mid-run) the program is never killed by SIGXFSZ, its exit status and output
are its own, and the loss is counted with the real cause, the limit."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

N = 50000
CALLS = N + 2
args = parse_args()
d = tmpdir('diskfull')
plain = plain_run(args, [args.prog, str(N)])
expect_rc(plain, 0, 'cap_diskfull without the preload')


def calls_stored(conn):
    """The program's calls in the database: copies, allocations and frees."""
    return (scalar(conn, 'SELECT count(*) FROM copies') +
            scalar(conn, 'SELECT count(*) FROM allocations') +
            scalar(conn, 'SELECT count(*) FROM allocations WHERE free_ns IS NOT NULL'))


def mounted(size):
    mnt = os.path.join(d, 'fs-' + size)
    os.mkdir(mnt)
    p = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=' + size, 'tmpfs', mnt],
                       stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        fatal('cannot mount a tmpfs (the test needs root)', p.stderr)
    return mnt


mounts = []
try:
    for size, full in (('3m', True), ('64m', False)):
        mnt = mounted(size)
        mounts.append(mnt)
        for how in ('xferprof run', 'LD_PRELOAD by hand'):
            db = os.path.join(mnt, 'run.db')
            for f in os.listdir(mnt):
                os.unlink(os.path.join(mnt, f))
            if how == 'xferprof run':
                r = xferprof_run(args, ['-o', db], [args.prog, str(N)])
            else:
                r = manual_run(args, db, [args.prog, str(N)])
            what = '%s, %s tmpfs' % (how, size)
            check_eq(r.rc, plain.rc, what + ': exit status')
            check_eq(r.out, plain.out, what + ': stdout')
            check_eq(sorted(os.listdir(mnt)), ['run.db'], what + ': only the database is left')
            conn = open_db(db)
            stored = calls_stored(conn)
            m = meta(conn)
            conn.close()
            lost = int(m.get('records_lost') or 0)
            reason = m.get('records_lost_reason') or ''
            check_eq(stored + lost, CALLS, what + ': calls stored + records_lost')
            said = [x for x in r.err.splitlines() if 'not recorded' in x.lower()]
            if full:
                check(lost > 0 and 'disk full' in reason, what + ': the loss and its reason',
                      lost, repr(reason))
                check(len(said) == 1 and str(lost) in said[0], what + ': said once on stderr',
                      r.err)
                rep = run([args.xferprof, 'report', db], clean_env())
                top = rep.out.split('Totals')[0]
                check(('%d record(s) lost' % lost) in top and 'disk full' in top,
                      what + ': the report says so at the top', top)
            else:
                check_eq(lost, 0, what + ': nothing lost')
                check_eq(said, [], what + ': no loss said')
finally:
    for mnt in mounts:
        subprocess.run(['umount', '-l', mnt])


def with_fsize(limit):
    def pre():
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return pre


for limit in (128 * 1024, 3000000):
    for how in ('xferprof run', 'LD_PRELOAD by hand'):
        sub = tmpdir('fsize')
        db = os.path.join(sub, 'run.db')
        if how == 'xferprof run':
            cmd = [args.xferprof, 'run', '--sim', '-o', db, '--', args.prog, str(N)]
            env = clean_env()
        else:
            cmd = [args.prog, str(N)]
            env = clean_env({'LD_LIBRARY_PATH': args.sim_dir, 'LD_PRELOAD': args.preload,
                             'XFERPROF_OUTPUT': db})
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, preexec_fn=with_fsize(limit),
                           timeout=RUN_TIMEOUT)
        what = '%s, RLIMIT_FSIZE %d' % (how, limit)
        print('$ %s  -> %s\n  stderr: %s' % (what, p.returncode, p.stderr.strip()))
        check_eq(p.returncode, plain.rc, what + ': exit status (no SIGXFSZ)')
        check_eq(p.stdout, plain.out, what + ': stdout')
        if limit < 1024 * 1024:
            check('File too large' in p.stderr, what + ': says why it runs unprofiled', p.stderr)
            continue
        conn = open_db(db)
        stored = calls_stored(conn)
        m = meta(conn)
        conn.close()
        lost = int(m.get('records_lost') or 0)
        check_eq(stored + lost, CALLS, what + ': calls stored + records_lost')
        check(lost > 0 and 'RLIMIT_FSIZE' in (m.get('records_lost_reason') or ''),
              what + ': the loss names the file size limit', lost, m.get('records_lost_reason'))
finish()
