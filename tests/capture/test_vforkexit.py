"""Issue 14 item 14: a vfork child that calls exit() after a failed execve
runs the exit path in its parent's memory (glibc's _dl_fini there marks
every library's destructors as run and the exit handlers as used).  The
parent's profiling must go on: all 200 copies in its database, records_lost
0, no journal left behind, under `xferprof run --sim` and with the preload
by hand (no launcher to recover the journal: the parent finishes its own
database through the exit handler the preload registers again once the
child is gone)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('vforkexit')
for way in ('launcher', 'manual'):
    db = os.path.join(d, way + '.db')
    if way == 'launcher':
        r = xferprof_run(args, ['--quiet', '-o', db], [args.prog])
    else:
        r = manual_run(args, db, [args.prog])
    expect_rc(r, 0, way + ': exit status')
    check_eq(r.out, 'done\n', way + ': stdout')
    conn = open_db(db)
    check_eq(scalar(conn, 'SELECT count(*) FROM copies'), 200, way + ': copies of the parent')
    check_records_lost_zero(conn)
    conn.close()
    check(not os.path.exists(db + '.xpj'), way + ': no journal left behind', sorted(os.listdir(d)))
finish()
