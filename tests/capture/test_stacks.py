"""Stacks: one copy site reached through two callers with identical frames,
in turn, then through recursions of two depths.  Each chain gets its own
stack, every time: the per-thread stack cache (keyed by call site and stack
pointer, checked against the return addresses on the stack) must not hand
one chain's stack to the other."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('stacks')
db = os.path.join(d, 'run.db')
r = xferprof_run(args, ['-o', db], [args.prog])
if not expect_rc(r, 0, 'cap_stacks under xferprof run --sim'):
    finish()
conn = open_db(db)
ids = [row['stack_id'] for row in rows(conn, 'SELECT stack_id FROM copies ORDER BY start_ns')]
check_eq(len(ids), 26, 'copies rows')
if len(ids) == 26:
    check(all(i is not None for i in ids), 'every copy has a stack', ids)
    a, b = ids[0], ids[1]
    check(a != b, 'caller_a and caller_b have different stacks', a, b)
    check_eq(ids[0:20], [a, b] * 10, 'the two callers\' stacks, in turn')
    d1, d3 = ids[20], ids[21]
    check(len({a, b, d1, d3}) == 4, 'the recursions have stacks of their own', ids[20:])
    check_eq(ids[20:26], [d1, d3] * 3, 'the recursions\' stacks, in turn')
    depth = {row['id']: row['depth'] for row in rows(conn, 'SELECT id, depth FROM stacks')}
    check_eq(depth.get(d3, 0) - depth.get(d1, 0), 2, 'recursion 3 is two frames deeper than 1')
    check_eq(depth.get(a), depth.get(b), 'the two callers\' stacks are equally deep')
finish()
