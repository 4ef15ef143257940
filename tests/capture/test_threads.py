"""Scenario 5: threads.  8 threads x 2000 copies (`--copies N` for fewer, as
under a sanitizer), sizes distinct per thread: exactly 8 x 2000 copies, 2000
per thread id with the bytes each thread counted, the exact total, nothing
lost."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

copies = 2000
if '--copies' in sys.argv:
    at = sys.argv.index('--copies')
    copies = int(sys.argv[at + 1])
    del sys.argv[at:at + 2]
args = parse_args()
d = tmpdir('threads')
db = os.path.join(d, 'run.db')
r = xferprof_run(args, ['-o', db], [args.prog, str(copies)])
if not expect_rc(r, 0, 'cap_threads under xferprof run --sim'):
    finish()
threads = {}
for line in r.out.splitlines():
    p = line.split()
    if len(p) == 8 and p[0] == 'thread':
        threads[int(p[3])] = (int(p[5]), int(p[7]))
if len(threads) != 8:
    fatal('program did not print 8 distinct thread ids', r.out)

conn = open_db(db)
check_eq(scalar(conn, 'SELECT count(*) FROM copies'), 8 * copies, 'copies rows')
check_eq(scalar(conn, 'SELECT sum(bytes) FROM copies'), sum(b for _, b in threads.values()),
         'sum(bytes) of all copies')
per_tid = {row['tid']: (row['n'], row['b']) for row in
           rows(conn, 'SELECT tid, count(*) AS n, sum(bytes) AS b FROM copies GROUP BY tid')}
check_eq(sorted(per_tid), sorted(threads), 'thread ids in copies')
for t, (n, b) in sorted(threads.items()):
    check_eq(per_tid.get(t), (n, b), 'tid %d: (copies, bytes)' % t)
    # Every copy of a thread has that thread's sizes.
    lo, hi = rows(conn, 'SELECT min(bytes) AS lo, max(bytes) AS hi FROM copies WHERE tid = ?',
                  (t,))[0].values()
    check(lo is not None and (lo - 1) // 4096 == (hi - 1) // 4096,
          'tid %d: every size in one thread\'s range' % t, lo, hi)
check_eq(scalar(conn, 'SELECT count(*) FROM copies WHERE status != 0'), 0, 'failed copies')
check_eq(rows(conn, 'SELECT direction, blocking, count(*) AS n FROM copies '
                    'GROUP BY direction, blocking ORDER BY direction'),
         [{'direction': 'D2H', 'blocking': 'async', 'n': 4 * copies},
          {'direction': 'H2D', 'blocking': 'sync', 'n': 4 * copies}], 'directions and blocking')
check_eq(scalar(conn, 'SELECT count(*) FROM copies WHERE stack_id IS NULL'), 0,
         'copies without a stack')
check_no_duplicate_stacks(conn)
check_records_lost_zero(conn)
finish()
