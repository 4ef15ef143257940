"""Chunks of the journal that the background ingest has stored are given
back to the file system during the run (a hole punched where they were), so
a long run's journal holds what is not ingested yet, not everything it ever
wrote: 200,000 copies (about 24 MiB of records) in batches the ingest keeps
up with leave at most 12 MiB of the journal on disk after any batch (24 MiB
without the punching), and every copy is in the database, nothing lost.  The
12 MiB: the populator's 16 chunks grown and populated ahead of the writers
(4 MiB) and its 2 MiB growth step, and a batch (3 MiB) the ingest, slowed
by a loaded machine, may not have stored yet 300 ms later.  The same run
killed with SIGKILL at the end: the launcher's recovery reads the journal
with its holes and stores exactly the copies the ingest had not."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('punch')
db = os.path.join(d, 'run.db')
r = xferprof_run(args, ['--quiet', '-o', db], [args.prog], {'XP_JOURNAL': db + '.xpj'})
expect_rc(r, 0, 'exit status')
peak_kib = int(r.out) if r.out.strip().isdigit() else -1
check(0 <= peak_kib <= 12 * 1024, 'journal blocks on disk after each batch at most 12 MiB',
      '%d KiB' % peak_kib)
conn = open_db(db)
check_eq(scalar(conn, 'SELECT count(*) FROM copies'), 200000, 'every copy recorded')
check_records_lost_zero(conn)
conn.close()
check(not os.path.exists(db + '.xpj'), 'no journal left behind', sorted(os.listdir(d)))

killed = os.path.join(d, 'killed.db')
r = xferprof_run(args, ['--quiet', '-o', killed], [args.prog, 'kill'], {'XP_JOURNAL': killed + '.xpj'})
expect_rc(r, 128 + 9, 'killed: exit status')
conn = open_db(killed)
check_eq(scalar(conn, 'SELECT count(*) FROM copies'), 200000, 'killed: every copy recovered once')
check_eq(scalar(conn, 'SELECT count(DISTINCT start_ns) FROM copies'), 200000, 'killed: no copy twice')
check_records_lost_zero(conn)
conn.close()
finish()
