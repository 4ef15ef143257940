"""Scenario 6: SIGKILL.  cap_sigkill makes 500 copies (1..500 bytes) and
kills itself.  Under `xferprof run`: exit status 137 and a recovered database
with exactly those 500 copies.  With the preload set up by hand: the database
and its journal stay behind, `xferprof recover` finishes the database, and a
second recover finds nothing to do."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

N = 500
args = parse_args()
d = tmpdir('sigkill')


def check_copies(db, what):
    conn = open_db(db)
    check_eq(scalar(conn, 'SELECT count(*) FROM copies'), N, what + ': copies rows')
    sizes = [row['bytes'] for row in rows(conn, 'SELECT bytes FROM copies ORDER BY start_ns, id')]
    check_eq(sizes, list(range(1, N + 1)), what + ': the copies, in order (1..%d bytes)' % N)
    check_eq(scalar(conn, "SELECT count(*) FROM copies WHERE direction = 'H2D' AND status = 0 "
                          "AND host_mem = 'pageable' AND blocking = 'sync'"), N,
             what + ': every copy H2D pageable sync with status 0')
    m = meta(conn)
    check_eq(m.get('recovered'), '1', what + ': meta recovered')
    check_eq(m.get('records_lost'), '0', what + ': meta records_lost')
    pids = parse_int_lines(r.out, 'pid')
    if pids:
        check_eq(m.get('pid'), str(pids[0]), what + ': meta pid')
    check('exit_status' not in m or m['exit_status'] in ('137', 'SIGKILL', '-9', 'signal 9'),
          what + ': meta exit_status, if given, says SIGKILL', repr(m.get('exit_status')))
    conn.close()


# Under the launcher.
db = os.path.join(d, 'launcher.db')
r = xferprof_run(args, ['-o', db], [args.prog, str(N)])
expect_rc(r, 137, 'xferprof run passes on death by SIGKILL as 128+9')
check('recover' in r.err.lower(), 'the summary says the database was recovered', repr(r.err))
check(not os.path.exists(db + '.xpj'), 'the launcher removed the journal after recovering it')
check_copies(db, 'launcher')

# By hand, without the launcher.
db = os.path.join(d, 'manual.db')
r = manual_run(args, db, [args.prog, str(N)])
expect_rc(r, -9, 'the program dies of SIGKILL')
check(os.path.exists(db), 'the database exists after SIGKILL', sorted(os.listdir(d)))
if not check(os.path.exists(db + '.xpj'), 'the journal exists after SIGKILL', sorted(os.listdir(d))):
    finish()
rec = run([args.xferprof, 'recover', db], clean_env())
expect_rc(rec, 0, 'xferprof recover')
check('recovered' in rec.out, 'recover says what it did', repr(rec.out))
check(not os.path.exists(db + '.xpj'), 'recover removed the journal')
check_copies(db, 'recovered by hand')
again = run([args.xferprof, 'recover', db], clean_env())
expect_rc(again, 0, 'xferprof recover, again')
check('nothing to recover' in again.out, 'a second recover has nothing to recover', repr(again.out))
check_copies(db, 'after a second recover')
finish()
