"""`xferprof export` on bad input and bad usage: a text file, a truncated
database, another program's SQLite file, a newer schema, a missing file, an
unknown format or option, an unwritable -o.  Each exits 2 with one line on
stderr (usage errors may add the usage) and writes nothing: no output file,
no temporary file, an existing output left as it was."""
import os
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'capture'))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('export-bad')
good = os.path.join(d, 'good.db')
r = xferprof_run(args, ['-o', good], [args.prog])
expect_rc(r, 0, 'the workload under xferprof run --sim')
with open(good, 'rb') as f:
    good_bytes = f.read()


def make(name, data):
    p = os.path.join(d, name)
    with open(p, 'wb') as f:
        f.write(data)
    return p


text = make('notes.txt', b'this is not a database\n' * 100)
truncated = make('truncated.db', good_bytes[:len(good_bytes) // 2])
header_only = make('header.db', good_bytes[:100])
garbage = make('garbage.db', good_bytes[:4096] + bytes(range(256)) * 64)


def edited(name, *sql):
    """A copy of the good database (or, with no name, a new file) changed by sql."""
    p = make(name, good_bytes) if not name.startswith('new:') else os.path.join(d, name[4:])
    c = sqlite3.connect(p)
    for q in sql:
        c.execute(q)
    c.commit()
    c.close()
    return p


other = edited('new:other.db', 'CREATE TABLE t (x)')
newer = edited('newer.db', "UPDATE meta SET value = '99' WHERE key = 'schema_version'",
               'PRAGMA user_version = 99')
# A damaged schema: SQLite's message quotes its SQL, line break included.
schema = edited('schema.db', 'PRAGMA writable_schema = ON',
                "UPDATE sqlite_master SET sql = 'CREATE VIEW errors AS SELECT 1,' || char(10) || "
                "' \"oops' WHERE name = 'errors'")
missing = os.path.join(d, 'missing.db')


def one_line(res, what, path=None):
    lines = res.err.splitlines()
    ok = check(len(lines) == 1 and lines[0].startswith('xferprof export: '),
               what + ': one line on stderr starting "xferprof export: "', repr(res.err))
    if ok and path:
        check(lines[0].startswith('xferprof export: %s: ' % path), what + ': names the file',
              lines[0])


for path, what, reason in ((text, 'a text file', None), (truncated, 'a truncated database', None),
                           (header_only, 'a database cut after its header', None),
                           (garbage, 'garbage after the first page', None),
                           (other, 'another program\'s database', 'not an xferprof database'),
                           (newer, 'a newer schema', 'newer'),
                           (schema, 'a damaged schema', 'malformed database schema'),
                           (missing, 'a missing file', 'no such')):
    for fmt in ('perfetto', 'csv'):
        out = os.path.join(d, 'out.' + fmt)
        make('out.' + fmt, b'old contents')
        res = run([args.xferprof, 'export', path, '--format', fmt, '-o', out], clean_env())
        expect_rc(res, 2, '%s (%s)' % (what, fmt))
        one_line(res, '%s (%s)' % (what, fmt), path)
        if reason:
            check(reason in res.err, '%s: the reason says %r' % (what, reason), res.err)
        with open(out, 'rb') as f:
            check_eq(f.read(), b'old contents', '%s (%s): the existing output is kept' % (what, fmt))
        check_eq([f for f in os.listdir(d) if '.tmp' in f], [], what + ': no temporary file left')
    check(not os.path.exists(missing), 'a missing database is not created')

# Bad usage: one line that says what is wrong, as every command says it.
for argv, what in ((['--format', 'svg', good], 'an unknown format'),
                   (['--frobnicate', good], 'an unknown option'),
                   ([good, '--format'], 'a missing format value'),
                   ([], 'no database'),
                   ([good, good], 'two databases')):
    res = run([args.xferprof, 'export'] + argv, clean_env())
    expect_rc(res, 2, what)
    lines = res.err.splitlines()
    check(len(lines) == 1 and lines[0].startswith('xferprof export: ') and
          lines[0].endswith("(see 'xferprof export --help')"),
          what + ': one line saying what is wrong', repr(res.err))
    check_eq(res.out, '', what + ': nothing on stdout')
res = run([args.xferprof, 'export', '--help'], clean_env())
expect_rc(res, 0, 'export --help')
check('Usage: xferprof export' in res.out, 'export --help prints usage')

# A missing folder is made, with its parents (mkdir -p).
made = os.path.join(d, 'no', 'such', 'dir', 'x.json')
res = run([args.xferprof, 'export', good, '-o', made], clean_env())
expect_rc(res, 0, '-o into a missing folder')
check(os.path.isfile(made), '-o into a missing folder: the file is there')
shutil.rmtree(os.path.join(d, 'no'))

# Unwritable -o: a file as a folder, a read-only folder, a folder as the file.
ro_dir = os.path.join(d, 'ro')
os.mkdir(ro_dir)
os.chmod(ro_dir, 0o555)
targets = [(os.path.join(good, 'dir', 'x.json'), 'a file as its folder'),
           (d, 'a folder')]
if os.geteuid() != 0:  # root writes into a 0555 folder anyway
    targets.append((os.path.join(ro_dir, 'x.json'), 'a read-only folder'))
for out, what in targets:
    res = run([args.xferprof, 'export', good, '-o', out], clean_env())
    expect_rc(res, 2, '-o into ' + what)
    one_line(res, '-o into ' + what, out)
res = run([args.xferprof, 'export', good, '-o', os.path.join(d, '.', 'good.db')], clean_env())
expect_rc(res, 2, '-o naming the database itself')
one_line(res, '-o naming the database itself')
check_eq(os.listdir(ro_dir), [], 'nothing written in the read-only folder')
os.chmod(ro_dir, 0o755)
check_eq([f for f in os.listdir(d) if '.tmp' in f], [], 'no temporary file left')
with open(good, 'rb') as f:
    check(f.read() == good_bytes, 'the good database was not changed by the failures')
finish()
