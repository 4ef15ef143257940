"""A process killed by SIGKILL with the preload set up by hand leaves its
journal: report ingests it first (as `xferprof recover` would) and reports
every copy it made (cap_sigkill: N copies of 1..N bytes, H2D)."""
import os

from rep_common import *  # noqa: F401,F403

N = 300
args = parse_args()
d = tmpdir('report-pending')
db = os.path.join(d, 'killed.db')
r = manual_run(args, db, [args.prog, str(N)])
check_eq(r.rc, -9, 'the program dies of SIGKILL')
if not check(os.path.exists(db + '.xpj'), 'the journal is left behind', sorted(os.listdir(d))):
    finish()
doc = report_json(args, [db])
check(not os.path.exists(db + '.xpj'), 'report ingested and removed the journal')
h2d = doc['totals']['directions']['H2D']
check_eq(h2d['count'], N, 'every copy')
check_eq(h2d['bytes'], N * (N + 1) // 2, 'their bytes (1 + 2 + ... + N)')
check_eq(doc['processes'][0]['recovered'], True, 'marked recovered')
finish()
