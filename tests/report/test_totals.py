"""Totals and call sites of rep_sites (built with -g): counts and bytes per
direction, pinned and blocking shares, device memory, the two functions
with their file and line; the symbols cache; text without ANSI escapes when
not a TTY; Markdown tables; a read-only database."""
import os
import shutil
import sqlite3
import stat

from rep_common import *  # noqa: F401,F403

args = parse_args()
d = tmpdir('report-totals')
prog = os.path.join(d, 'rep_sites')
shutil.copy2(args.prog, prog)  # a copy of our own, deleted below
db = os.path.join(d, 'run.db')
record(args, prog, db, ['2'])
R = 2
doc = report_json(args, [db])

check_eq(doc['format'], 'xferprof-report', 'format')
check_eq(len(doc['processes']), 1, 'one process')
t = doc['totals']
check_eq(t, doc['processes'][0]['totals'], 'one process: its totals are the totals')
h2d, d2h = t['directions']['H2D'], t['directions']['D2H']
check_eq(h2d['count'], R * UPLOADS, 'H2D count')
check_eq(h2d['bytes'], R * UPLOADS * UPLOAD_BYTES, 'H2D bytes')
check_eq(h2d['pageable_bytes'], R * UPLOADS * UPLOAD_BYTES, 'H2D pageable bytes')
check_eq(h2d['sync'], R * UPLOADS, 'H2D sync copies')
check_eq(d2h['count'], R * DOWNLOADS, 'D2H count')
check_eq(d2h['bytes'], R * DOWNLOADS * DOWNLOAD_BYTES, 'D2H bytes')
check_eq(d2h['pinned_bytes'], R * DOWNLOADS * DOWNLOAD_BYTES, 'D2H pinned bytes')
check_eq(d2h['async'], R * DOWNLOADS, 'D2H async copies')
check_eq(t['directions']['D2D']['count'] + t['directions']['H2H']['count'], 0, 'no D2D/H2H')
check_eq(t['copies'], R * (UPLOADS + DOWNLOADS), 'copies')
check_eq(t['bytes'], R * (UPLOADS * UPLOAD_BYTES + DOWNLOADS * DOWNLOAD_BYTES), 'bytes')
pinned = DOWNLOADS * DOWNLOAD_BYTES
check(abs(t['pinned_share'] - pinned / (pinned + UPLOADS * UPLOAD_BYTES)) < 1e-5, 'pinned_share',
      t['pinned_share'])
check(abs(t['blocking_share'] - UPLOADS / (UPLOADS + DOWNLOADS)) < 1e-5, 'blocking_share',
      t['blocking_share'])
check_eq(t['blocked_ns'], h2d['blocked_ns'], 'blocked time is the sync uploads\' only')
check_eq(t['syncs'], R * DOWNLOADS, 'syncs')
check_eq([b['direction'] + '/' + b['host_mem'] for b in t['bandwidth']], ['H2D/pageable'],
         'bandwidth over blocking copies only')
m = t['memory']
check_eq(m['peak_bytes'], DEVICE_BYTES + KEPT_BYTES, 'device memory peak (pinned not counted)')
check_eq(m['live_at_exit_bytes'], KEPT_BYTES, 'device memory live at exit')
check_eq(m['live_at_exit_count'], 1, 'allocations live at exit')
check_eq((m['allocations'], m['frees']), (2, 1), 'device allocations and frees')
check(m['timeline'] and m['timeline'][-1][1] == KEPT_BYTES, 'timeline ends at what was live',
      m['timeline'])
check(max(p[1] for p in m['timeline']) == m['peak_bytes'], 'timeline shows the peak')

src = os.path.basename(SOURCE)
for fn, marker, count, nbytes in (('rep_upload', 'REP_UPLOAD', R * UPLOADS, UPLOAD_BYTES),
                                  ('rep_download', 'REP_DOWNLOAD', R * DOWNLOADS, DOWNLOAD_BYTES)):
    sites = site_of(doc, fn)
    if not check_eq(len(sites), 1, 'one call site in %s' % fn):
        print(json.dumps(doc['sites'], indent=1), file=sys.stderr)
        continue
    s, f = sites[0], sites[0]['frames'][0]
    check_eq((s['copies'], s['bytes']), (count, count * nbytes), '%s: copies and bytes' % fn)
    check_eq(os.path.basename(f['file'] or ''), src, '%s: file' % fn)
    check_eq(f['line'], marker_line(marker), '%s: line of the call' % fn)
    check_eq(f['module'], 'rep_sites', '%s: module' % fn)
    check(any(x['function'] == 'main' for x in s['frames']), '%s: called from main' % fn)
    check(not any((x['module'] or '').startswith(('libcuda', 'libxferprof'))
                  for x in s['frames']), '%s: no CUDA or xferprof frames' % fn)
check_eq(site_of(doc, 'rep_upload')[0]['apis'] if site_of(doc, 'rep_upload') else None,
         ['cudaMemcpy'], 'upload site api')

# The cache: written by the first report, and it answers once the file is gone.
conn = sqlite3.connect(db)
n = conn.execute("SELECT count(*) FROM symbols WHERE function = 'rep_upload'").fetchone()[0]
conn.close()
check(n >= 1, 'the symbols cache holds rep_upload', n)
os.unlink(prog)
doc2 = report_json(args, [db])
check_eq(len(site_of(doc2, 'rep_upload')), 1, 'names come from the cache once the program is gone')
check_eq(doc2['processes'][0]['notes'], [], 'no note: the cache answered')

# Text: no escapes when not a TTY, even with colors allowed; the sections.
r = report(args, [db], env_extra={'NO_COLOR': None, 'TERM': 'xterm'})
check_eq(r.rc, 0, 'text report')
check('\x1b' not in r.out, 'no ANSI escapes in text written to a pipe')
for part in ('Totals', 'Top call sites by bytes', 'rep_upload (%s:%d)' % (src, marker_line('REP_UPLOAD')),
             'Findings', 'MiB' if False else 'KiB'):
    check(part in r.out, 'text has %r' % part, r.out[:3000])

# Markdown: tables.
r = report(args, [db], ['--format', 'markdown'])
check_eq(r.rc, 0, 'markdown report')
check('| direction |' in r.out and '|---|' in r.out, 'markdown has a table', r.out[:2000])
check('`rep_upload (%s:%d)`' % (src, marker_line('REP_UPLOAD')) in r.out, 'markdown names the site')

# -o: the file holds the same report; nothing else left in the folder,
# which is made if missing, with its parents (mkdir -p).
out = os.path.join(d, 'out', 'sub', 'report.json')
r = report(args, [db], ['--format', 'json', '-o', out])
check_eq((r.rc, r.out), (0, ''), '-o: status and nothing on stdout')
with open(out) as f:
    check_eq(json.load(f)['totals'], doc['totals'], '-o FILE holds the report')
check_eq(os.listdir(os.path.dirname(out)), ['report.json'], 'no temporary file left')

# A read-only database in a read-only folder is reported (cache in memory).
ro = os.path.join(d, 'ro')
os.mkdir(ro)
shutil.copy2(db, os.path.join(ro, 'run.db'))
conn = sqlite3.connect(os.path.join(ro, 'run.db'))
conn.execute('DROP TABLE symbols')
conn.commit()
conn.close()
os.chmod(os.path.join(ro, 'run.db'), stat.S_IRUSR)
os.chmod(ro, stat.S_IRUSR | stat.S_IXUSR)
try:
    doc3 = report_json(args, [os.path.join(ro, 'run.db')])
    check_eq(doc3['totals'], doc['totals'], 'read-only database: same totals')
finally:
    os.chmod(ro, stat.S_IRWXU)
    os.chmod(os.path.join(ro, 'run.db'), stat.S_IRUSR | stat.S_IWUSR)
finish()
