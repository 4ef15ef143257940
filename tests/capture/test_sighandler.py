"""Issue 14 item 15: copies made from a signal handler that interrupts one of
our hooks.  cap_sighandler's main thread makes 20000 cudaMemcpy while a second
thread sends it 3000 SIGUSR1, one at a time; the handler makes two copies of
its own (0 bytes each way: see
cap_sighandler.c).  Every run, under `xferprof run --sim` and with
the preload by hand: exit status and stdout as without the profiler, every
main copy in the database, and the handler's copies either in the database
(with the main thread's tid) or counted in records_lost with a reason naming
signal handlers, exactly: rows + records_lost = copies the handler made.  At
least one handler copy must be recorded from inside a main copy (its times
within the main copy's): the case the hooks used to pass through unrecorded
and uncounted."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

RUNS = int(os.environ.get('XFERPROF_TEST_SIGHANDLER_RUNS', '1'))   # per way
MAIN_BYTES, HANDLER_BYTES = 4096, 0
args = parse_args()
d = tmpdir('sighandler')


def inside(handler, main):
    """How many handler rows lie within a main copy's time span (sweep over
    both lists sorted by start)."""
    n, j = 0, 0
    for h in handler:
        while j < len(main) and main[j]['end_ns'] < h['start_ns']:
            j += 1
        if j < len(main) and main[j]['start_ns'] < h['start_ns'] and h['end_ns'] < main[j]['end_ns']:
            n += 1
    return n


def check_run(r, base, db, what):
    if not expect_rc(r, base.rc, what + ': exit status as without the profiler'):
        return False
    ok = check_eq(r.out, base.out, what + ': stdout as without the profiler')
    counts = {k: v[0] for k, v in (('main', parse_int_lines(base.out, 'main_copies')),
                                   ('handler', parse_int_lines(base.out, 'handler_copies'))) if v}
    conn = open_db(db)
    m = meta(conn)
    lost = int(m.get('records_lost', '-1'))
    main = rows(conn, 'SELECT start_ns, end_ns, tid FROM copies WHERE bytes = ? '
                      'ORDER BY start_ns', (MAIN_BYTES,))
    handler = rows(conn, 'SELECT start_ns, end_ns, tid, direction FROM copies WHERE bytes = ? '
                         'ORDER BY start_ns', (HANDLER_BYTES,))
    conn.close()
    ok &= check_eq(len(main), counts['main'], what + ': every main copy recorded')
    ok &= check_eq(len(handler) + lost, counts['handler'],
                   what + ': handler copies recorded (%d) + records_lost (%d) = copies the '
                   'handler made' % (len(handler), lost))
    if lost:
        ok &= check('signal handler' in m.get('records_lost_reason', ''),
                    what + ': the loss is said to be calls from signal handlers',
                    repr(m.get('records_lost_reason')))
    tids = {row['tid'] for row in main + handler}
    ok &= check_eq(len(tids), 1, what + ': every copy on the main thread')
    ok &= check_eq(sorted({row['direction'] for row in handler}), ['D2H', 'H2D'],
                   what + ': the handler copies both ways')
    within = inside(handler, main)
    ok &= check(within > 0, what + ': handler copies recorded from inside a main copy',
                'none of %d' % len(handler))
    print('%s: %d handler copies recorded (%d inside a main copy), %d counted lost'
          % (what, len(handler), within, lost))
    return ok


base = plain_run(args, [args.prog])
if not expect_rc(base, 0, 'cap_sighandler without the profiler'):
    finish()
check_eq(parse_int_lines(base.out, 'main_copies'), [20000], 'the main thread made its copies')
check_eq(parse_int_lines(base.out, 'handler_copies'), [6000], 'the handler made its copies')
for i in range(RUNS):
    for way in ('launcher', 'manual'):
        db = os.path.join(d, '%s-%d.db' % (way, i))
        if way == 'launcher':
            r = xferprof_run(args, ['--quiet', '-o', db], [args.prog])
        else:
            r = manual_run(args, db, [args.prog])
        if check_run(r, base, db, '%s run %d' % (way, i)):
            remove(db)
finish()
