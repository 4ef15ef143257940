"""Two databases reported together: both processes listed, each with its
own totals, and the overall totals their sums."""
import os

from rep_common import *  # noqa: F401,F403

args = parse_args()
d = tmpdir('report-multi')
a, b = os.path.join(d, 'a.db'), os.path.join(d, 'b.db')
record(args, args.prog, a, ['1'])
record(args, args.prog, b, ['3'])
doc = report_json(args, [a, b])
procs = doc['processes']
check_eq([p['database'] for p in procs], [a, b], 'both processes, in order')
check_eq([p['id'] for p in procs], [0, 1], 'process ids')
check(procs[0]['pid'] != procs[1]['pid'], 'two pids')
for p, rounds in zip(procs, (1, 3)):
    check_eq(p['totals']['directions']['H2D']['count'], rounds * UPLOADS, '%s: H2D' % p['label'])
t = doc['totals']
check_eq(t['directions']['H2D']['count'], 4 * UPLOADS, 'all: H2D count')
check_eq(t['directions']['D2H']['bytes'], 4 * DOWNLOADS * DOWNLOAD_BYTES, 'all: D2H bytes')
check_eq(t['copies'], sum(p['totals']['copies'] for p in procs), 'all: copies sum')
check_eq(t['syncs'], 4 * DOWNLOADS, 'all: syncs')
check_eq(t['memory']['live_at_exit_bytes'], 2 * KEPT_BYTES, 'all: live at exit')
check_eq(sorted({s['process'] for s in doc['sites']}), [0, 1], 'sites of both processes')
check_eq(len(site_of(doc, 'rep_upload', 1)), 1, 'process 1 has its upload site')
r = report(args, [a, b])
check('all 2 processes' in r.out, 'text has the combined totals', r.out[-2000:])
finish()
