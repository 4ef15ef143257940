"""`xferprof export --format csv`: the copies view of the workload (exp_workload.c)
as RFC 4180 CSV, parsed with Python's csv module: the header is the view's
columns (PRAGMA table_info), one row per copy the program made, every field
as the database holds it.  Also: a database whose process died (SIGKILL) is
exported with what its journal held, and a read-only database is exported
without being written."""
import csv
import io
import os
import stat
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'capture'))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('export-csv')


def field(v):
    return '' if v is None else str(v)


def check_csv(db, data, what, want_copies, want_bytes):
    check(data.endswith(b'\r\n'), what + ': rows end with CRLF (RFC 4180)')
    table = list(csv.reader(io.StringIO(data.decode('utf-8'), newline='')))
    conn = open_db(db)
    cols = columns(conn, 'copies')
    check_eq(table[0] if table else None, cols, what + ': header = columns of the copies view')
    body = table[1:]
    check_eq(len(body), want_copies, what + ': one row per copy the program made')
    bi = cols.index('bytes')
    check_eq(sum(int(r[bi]) for r in body), want_bytes, what + ': sum of bytes')
    want = [[field(v) for v in r.values()] for r in rows(conn, 'SELECT * FROM copies ORDER BY id')]
    check_eq(body, want, what + ': every field as in the database')
    conn.close()


r = xferprof_run(args, ['-o', os.path.join(d, 'run.db')], [args.prog])
expect_rc(r, 0, 'the workload under xferprof run --sim')
ncopies = parse_int_lines(r.out, 'copies')[0]
nbytes = parse_int_lines(r.out, 'copy_bytes')[0]
db = os.path.join(d, 'run.db')

out = os.path.join(d, 'copies.csv')
e = run([args.xferprof, 'export', db, '--format', 'csv', '-o', out], clean_env())
expect_rc(e, 0, 'export --format csv -o FILE')
check_eq(e.out, '', 'nothing on stdout with -o')
with open(out, 'rb') as f:
    data = f.read()
check_csv(db, data, 'csv', ncopies, nbytes)
umask = os.umask(0)
os.umask(umask)
check_eq(stat.S_IMODE(os.stat(out).st_mode), 0o666 & ~umask,
         'the file gets ordinary permissions (not mkstemp\'s 0600)')
check_eq([f for f in os.listdir(d) if '.tmp' in f], [], 'no temporary file left')
for argv in (['--format=csv', '-o', '-'], ['-f', 'csv']):
    e = run([args.xferprof, 'export'] + argv + [db], clean_env())
    expect_rc(e, 0, 'export %s to stdout' % ' '.join(argv))
    check(e.out_bytes == data, 'stdout (%s) equals the file' % ' '.join(argv))

# A process killed before its last ingest: its journal is recovered first.
killed = os.path.join(d, 'killed.db')
r = manual_run(args, killed, [args.prog, 'kill'])
check(r.rc in (-9, 137), 'the workload killed itself', r.rc)
check(os.path.exists(killed + '.xpj'), 'the killed run left its journal')
e = run([args.xferprof, 'export', killed, '--format', 'csv'], clean_env())
expect_rc(e, 0, 'export of a database with a pending journal')
check_csv(killed, e.out_bytes, 'csv after recovery', ncopies, nbytes)
check(not os.path.exists(killed + '.xpj'), 'the journal was ingested and removed')
conn = open_db(killed)
check_eq(meta(conn).get('recovered'), '1', 'meta recovered')
conn.close()

# Read-only, no journal: read without being written (mtime and bytes kept).
ro = os.path.join(d, 'ro.db')
with open(db, 'rb') as f, open(ro, 'wb') as g:
    g.write(f.read())
os.chmod(ro, 0o444)
before = (os.stat(ro).st_mtime_ns, open(ro, 'rb').read())
e = run([args.xferprof, 'export', ro, '--format', 'csv'], clean_env())
expect_rc(e, 0, 'export of a read-only database')
check(e.out_bytes == data, 'read-only database exports the same')
check((os.stat(ro).st_mtime_ns, open(ro, 'rb').read()) == before, 'read-only database untouched')
check_eq(sorted(os.listdir(d)).count('ro.db-journal'), 0, 'no rollback journal created')
finish()
