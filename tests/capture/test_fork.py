"""Scenario 7: fork.  cap_fork forks before any CUDA call; the child makes 10
copies and leaves with _exit(0), the parent makes 20.  Two databases named by
%p, the child's meta ppid is the parent's pid, 10 and 20 copies, and the
child's database was recovered (no exit handler ran in it).

Then `cap_fork late`: the parent is profiling (20 copies) when it forks; the
child's calls fail, as CUDA's do after fork, and must land in the child's own
database, not in the parent's journal."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('fork')
r = xferprof_run(args, ['-o', os.path.join(d, 'run-%p.db')], [args.prog])
if not expect_rc(r, 0, 'cap_fork under xferprof run --sim'):
    finish()
parent = parse_int_lines(r.out, 'parent')
child = parse_int_lines(r.out, 'child')
if len(parent) != 1 or len(child) != 1:
    fatal('program did not print parent and child pids', r.out)
parent, child = parent[0], child[0]
files = sorted(f for f in os.listdir(d) if f.endswith('.db'))
check_eq(files, sorted(['run-%d.db' % parent, 'run-%d.db' % child]), 'databases made')
check_eq(sorted(f for f in os.listdir(d) if f.endswith('.xpj')), [], 'journals left behind')

for pid, n, sizes, ppid in ((parent, 20, [i * 10 for i in range(1, 21)], None),
                            (child, 10, [i * 10 for i in range(1, 11)], parent)):
    what = 'child' if ppid else 'parent'
    conn = open_db(os.path.join(d, 'run-%d.db' % pid))
    m = meta(conn)
    check_eq(m.get('pid'), str(pid), what + ': meta pid')
    if ppid:
        check_eq(m.get('ppid'), str(ppid), 'child: meta ppid is the parent\'s pid')
        check_eq(m.get('recovered'), '1', 'child (left with _exit): meta recovered')
    else:
        check(m.get('recovered') in (None, '0'), 'parent (exited normally) is not "recovered"',
              repr(m.get('recovered')))
        check_eq(m.get('exit_status'), '0', 'parent: meta exit_status') if 'exit_status' in m \
            else None
    check_eq([row['bytes'] for row in rows(conn, 'SELECT bytes FROM copies ORDER BY start_ns, id')],
             sizes, what + ': copies (bytes, in order)')
    check_eq(scalar(conn, 'SELECT count(DISTINCT tid) FROM copies'), 1, what + ': one thread')
    check_eq(scalar(conn, 'SELECT min(tid) FROM copies'), pid, what + ': tid is the process\'s')
    check_eq(m.get('records_lost'), '0', what + ': meta records_lost')
    check_eq(scalar(conn, 'SELECT count(*) FROM allocations'), 1, what + ': allocations rows')
    conn.close()

# Forked while profiling.
late = os.path.join(d, 'late')
os.mkdir(late)
r = xferprof_run(args, ['-o', os.path.join(late, 'run-%p.db')], [args.prog, 'late'])
if not expect_rc(r, 0, 'cap_fork late under xferprof run --sim'):
    finish()
parent = parse_int_lines(r.out, 'parent')
child = parse_int_lines(r.out, 'child')
if len(parent) != 1 or len(child) != 1:
    fatal('program did not print parent and child pids', r.out)
parent, child = parent[0], child[0]
check_eq(sorted(f for f in os.listdir(late) if f.endswith('.db')),
         sorted(['run-%d.db' % parent, 'run-%d.db' % child]), 'late: databases made')
conn = open_db(os.path.join(late, 'run-%d.db' % parent))
check_eq([row['bytes'] for row in rows(conn, 'SELECT bytes FROM copies ORDER BY start_ns, id')],
         [i * 10 for i in range(1, 22)], 'late parent: its 21 copies')
check_eq(scalar(conn, 'SELECT count(*) FROM errors'), 0, "late parent: none of the child's errors")
check_eq(meta(conn).get('records_lost'), '0', 'late parent: meta records_lost')
conn.close()
path = os.path.join(late, 'run-%d.db' % child)
if os.path.exists(path):
    conn = open_db(path)
    m = meta(conn)
    check_eq((m.get('pid'), m.get('ppid')), (str(child), str(parent)), 'late child: meta pid, ppid')
    check_eq([(e['api'], e['status'], e['tid']) for e in
              rows(conn, 'SELECT api, status, tid FROM errors ORDER BY start_ns, id')],
             [('cudaMalloc', 3, child)] * 5, 'late child: its 5 failed cudaMalloc calls')
    check_eq(scalar(conn, 'SELECT count(*) FROM copies'), 0, "late child: none of the parent's copies")
    conn.close()
finish()
