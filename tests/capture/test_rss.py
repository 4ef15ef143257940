"""The journal's pages do not stay in the profiled program: 150,000 copies
write about 18 MiB of records, which the preload once kept resident twice
(the writer's mapping and the ingest's, 250 MiB for a million copies).  The
program's own peak RSS (VmHWM) under the preload may exceed its peak without
it by at most 24 MiB (SQLite's page cache of the ingest is up to 16 MiB of
it), and every copy is in the database."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

COPIES = 150000
args = parse_args()
d = tmpdir('rss')
bare = plain_run(args, [args.prog, str(COPIES)])
if bare.rc != 0:
    fatal('cap_rss without the preload', bare.describe())
db = os.path.join(d, 'run.db')
r = xferprof_run(args, ['--quiet', '-o', db], [args.prog, str(COPIES)])
expect_rc(r, 0, 'exit status under the preload')
base_kib, with_kib = int(bare.out), int(r.out)
check(with_kib - base_kib <= 24 * 1024,
      'peak RSS added by the preload for %d copies at most 24 MiB' % COPIES,
      '%d KiB without, %d KiB with: %.1f MiB added' % (base_kib, with_kib,
                                                       (with_kib - base_kib) / 1024.0))
conn = open_db(db)
check_eq(scalar(conn, 'SELECT count(*) FROM copies'), COPIES, 'every copy recorded')
check_records_lost_zero(conn)
conn.close()
finish()
