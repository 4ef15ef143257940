"""Small stacks: cap_smallstack copies on a PTHREAD_STACK_MIN thread (some of
them with only 3 KiB of that stack left) and in a SIGSEGV handler on an
8 KiB alternate stack.  It runs on the simulator without the preload; under
`xferprof run --sim` its output and exit status must be the same, every copy
must be in the database, those with room for a stack walk with their stack,
the deep ones without one, and every stack left out counted in
meta.stacks_skipped_small_stack."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403


def facts(out):
    m = re.search(r'^small thread tid (\d+) copies (\d+) deep (\d+)$', out, re.M)
    h = re.search(r'^handler copies (\d+) on_altstack (\d+)$', out, re.M)
    t = re.search(r'^copies (\d+)$', out, re.M)
    if not (m and h and t):
        fatal('program did not print its facts', out)
    return [int(x) for x in m.groups()], [int(x) for x in h.groups()], int(t.group(1))


def without_tid(out):
    return re.sub(r'tid \d+', 'tid N', out)


first = sys.argv.pop() == 'first' if sys.argv[-1] in ('first', 'main') else False
args = parse_args()
d = tmpdir('smallstack')
# "first": the small thread's call is the process's first CUDA call, where
# the profiler starts its session (database, journal, SQLite: far more
# stack than a recorded call).
prog = [args.prog] + (['first'] if first else [])
plain = plain_run(args, prog)
if not expect_rc(plain, 0, 'cap_smallstack on the simulator without the preload'):
    finish()
(_, small_copies, deep), (handler_copies, on_alt), total = facts(plain.out)
check_eq(on_alt, 1, 'the handler ran on the alternate stack')

db = os.path.join(d, 'run.db')
r = xferprof_run(args, ['-o', db], prog)
expect_rc(r, plain.rc, 'cap_smallstack under xferprof run --sim: the same exit status')
check_eq(without_tid(r.out), without_tid(plain.out), 'the same output (thread id aside)')
if r.rc != 0:
    finish()
(tid, _, _), _, _ = facts(r.out)

conn = open_db(db)
pid = int(meta(conn).get('pid', '0'))
check_eq(scalar(conn, 'SELECT count(*) FROM copies'), total, 'copies rows')
check_eq(scalar(conn, 'SELECT count(*) FROM copies WHERE tid = ?', (tid,)), small_copies,
         'copies of the small thread')
check_eq(scalar(conn, 'SELECT count(*) FROM copies WHERE tid = ?', (pid,)), handler_copies,
         'copies of the main thread (its SIGSEGV handler)')
check_eq(scalar(conn, 'SELECT count(*) FROM copies WHERE status != 0'), 0, 'failed copies')
# The small thread's copies in order: the shallow ones had room for a stack
# walk, the last `deep` ones did not.
small = rows(conn, 'SELECT stack_id FROM copies WHERE tid = ? ORDER BY start_ns, id', (tid,))
mods = Modules(conn)
for i, row in enumerate(small[:small_copies - deep]):
    check_stack(conn, mods, args.prog, row['stack_id'], 'small thread, shallow copy %d' % i)
check_eq([row['stack_id'] for row in small[small_copies - deep:]], [None] * deep,
         'stack_id of the copies made with 3 KiB of stack left')
for row in rows(conn, 'SELECT alloc_stack_id, free_stack_id FROM allocations'):
    check(row['alloc_stack_id'] is not None and row['free_stack_id'] is not None,
          'allocations and frees have their stacks', row)
m = meta(conn)
without = scalar(conn, 'SELECT count(*) FROM copies WHERE stack_id IS NULL')
check_eq(m.get('stacks_skipped_small_stack'), str(without),
         'meta stacks_skipped_small_stack: every copy without a stack')
check_records_lost_zero(conn)
finish()
