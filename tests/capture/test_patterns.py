"""Scenario 11: output name patterns.  -o 'DIR/%h-%p-%r.db' with RANK=3 names
the database after the host, the pid and the rank; without -o the database
is xferprof-HOST-PID.db in the current directory."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('patterns')
host = hostname()

r = xferprof_run(args, ['-o', os.path.join(d, '%h-%p-%r.db')], [args.prog], {'RANK': '3'})
expect_rc(r, 0, 'cap_simple with -o DIR/%h-%p-%r.db')
pids = parse_int_lines(r.out, 'pid')
if len(pids) != 1:
    fatal('program did not print its pid', r.out)
want = '%s-%d-3.db' % (host, pids[0])
check_eq(sorted(f for f in os.listdir(d)), [want], 'files made with the %h-%p-%r pattern')
if os.path.exists(os.path.join(d, want)):
    conn = open_db(os.path.join(d, want))
    m = meta(conn)
    check_eq(m.get('rank'), '3', 'meta rank')
    check_eq(m.get('pid'), str(pids[0]), 'meta pid')
    check_eq(m.get('hostname'), host, 'meta hostname')
    check_eq(scalar(conn, 'SELECT count(*) FROM copies'), 6, 'copies rows')
    conn.close()

# %% and other rank variables.
e = os.path.join(d, 'e')
os.mkdir(e)
r = xferprof_run(args, ['-o', os.path.join(e, 'r%r-100%%.db')], [args.prog],
                 {'OMPI_COMM_WORLD_RANK': '12'})
expect_rc(r, 0, 'cap_simple with -o r%r-100%%.db')
check_eq(sorted(os.listdir(e)), ['r12-100%.db'], 'files made with OMPI_COMM_WORLD_RANK and %%')

# The default name, in the current directory.
cwd = os.path.join(d, 'cwd')
os.mkdir(cwd)
r = xferprof_run(args, [], [args.prog], cwd=cwd)
expect_rc(r, 0, 'cap_simple without -o')
pids = parse_int_lines(r.out, 'pid')
want = 'xferprof-%s-%d.db' % (host, pids[0] if pids else -1)
check_eq(sorted(os.listdir(cwd)), [want], 'default database name in the current directory')
finish()
