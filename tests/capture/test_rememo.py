"""A host buffer registered, unregistered and registered again between
uploads from one thread: each upload's host_mem is what the buffer was at
that moment (pinned, pageable, pinned), although the preload remembers its
recent answers per thread (xp_classify): a change of the registry makes them
stale."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('rememo')
db = os.path.join(d, 'run.db')
r = xferprof_run(args, ['--quiet', '-o', db], [args.prog])
expect_rc(r, 0, 'exit status')
check_eq(r.out, 'done\n', 'stdout')
conn = open_db(db)
kinds = [row['host_mem'] for row in rows(conn, "SELECT host_mem FROM copies WHERE direction = 'H2D' "
                                               "ORDER BY start_ns, id")]
check_eq(kinds, ['pinned'] * 3 + ['pageable'] * 3 + ['pinned'] * 3, 'host memory of each upload')
check_records_lost_zero(conn)
conn.close()
finish()
