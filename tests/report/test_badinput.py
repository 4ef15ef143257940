"""Bad input and bad usage: each exits 2 with one line on stderr, nothing
half-written, no crash."""
import os
import shutil
import sqlite3

from rep_common import *  # noqa: F401,F403

args = parse_args()
d = tmpdir('report-bad')
good = os.path.join(d, 'good.db')
record(args, args.prog, good, ['50'])


def bad(dbs, options, reason, what):
    r = report(args, dbs, options)
    check_one_error_line(r, what)
    check(reason in r.err, '%s: says %r' % (what, reason), repr(r.err))
    check_eq(r.out, '', what + ': nothing on stdout')


text = os.path.join(d, 'notes.txt')
with open(text, 'w') as f:
    f.write('just some text\n' * 100)
bad([text], [], 'not an xferprof database', 'a text file')
empty = os.path.join(d, 'empty.db')
open(empty, 'w').close()
bad([empty], [], 'not an xferprof database', 'an empty file')
bad([os.path.join(d, 'missing.db')], [], 'no such database', 'a missing file')
# A FIFO, as the database or as its journal: refused at once, never waited
# on (issue 14 item 9); and `recover` says the same.
fifo = os.path.join(d, 'fifo.db')
os.mkfifo(fifo)
bad([fifo], [], 'not a regular file', 'a FIFO')
fifo_journal = os.path.join(d, 'fj.db')
shutil.copy2(good, fifo_journal)
os.mkfifo(fifo_journal + '.xpj')
bad([fifo_journal], [], 'not a regular file', 'a FIFO as the pending journal')
for target in (fifo, fifo_journal):
    r = run([args.xferprof, 'recover', target], clean_env())
    check_eq(r.rc, 2, 'recover %s: exit status' % os.path.basename(target))
    check('not a regular file' in r.err, 'recover %s: says why' % os.path.basename(target),
          repr(r.err))
for f in (fifo, fifo_journal, fifo_journal + '.xpj'):
    os.unlink(f)
cut = os.path.join(d, 'cut.db')
with open(good, 'rb') as f:
    data = f.read()
with open(cut, 'wb') as f:
    f.write(data[:len(data) // 2])
bad([cut], [], 'truncated or corrupt', 'a database cut in half')
other = os.path.join(d, 'other.db')
conn = sqlite3.connect(other)
conn.execute('CREATE TABLE t(x)')
conn.commit()
conn.close()
bad([other], [], 'not an xferprof database', 'another SQLite database')
newer = os.path.join(d, 'newer.db')
shutil.copy2(good, newer)
conn = sqlite3.connect(newer)
conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
conn.commit()
conn.close()
bad([newer], [], 'schema 99 is newer than this xferprof', 'schema_version 99')
# A damaged page in the middle: the error comes while reading, not opening.
mangled = os.path.join(d, 'mangled.db')
with open(mangled, 'wb') as f:
    page = int.from_bytes(data[16:18], 'big')
    mid = (len(data) // page // 2) * page
    f.write(data[:mid] + b'\xff' * page + data[mid + page:])
r = report(args, [mangled], ['--format', 'json'])
if r.rc != 0:
    check_one_error_line(r, 'a damaged page')
    check('truncated or corrupt' in r.err, 'a damaged page: corrupt', repr(r.err))

# A full disk can stop the closing checkpoint half-way: page 1 in the file
# already counts pages that are still only in the -wal, where SQLite reads
# them.  That database is whole and reported; the same file without its -wal
# is cut short.
wd = tmpdir('report-wal')
src = os.path.join(wd, 'src.db')
shutil.copy2(good, src)
conn = sqlite3.connect(src, isolation_level=None)
conn.execute('PRAGMA journal_mode = WAL')
conn.execute('PRAGMA wal_autocheckpoint = 0')
conn.execute('CREATE TABLE padding(x)')
conn.execute('INSERT INTO padding VALUES (?)', (b'x' * 300000,))
pages = conn.execute('PRAGMA page_count').fetchone()[0]
halfway = os.path.join(wd, 'run.db')
shutil.copyfile(src, halfway)          # copied while open: the -wal is kept
shutil.copyfile(src + '-wal', halfway + '-wal')
conn.close()
with open(halfway, 'r+b') as f:
    head = bytearray(f.read(100))
    head[28:32] = pages.to_bytes(4, 'big')
    f.seek(0)
    f.write(head)
check(os.path.getsize(halfway) < pages * int.from_bytes(head[16:18], 'big'),
      'checkpoint cut short: the file is shorter than its header says')
alone = os.path.join(wd, 'alone.db')
shutil.copyfile(halfway, alone)
r = report(args, [halfway], [])
check_eq(r.rc, 0, 'checkpoint cut short: reported from the -wal')
check('Totals' in r.out, 'checkpoint cut short: the report', r.err)
bad([alone], [], 'truncated or corrupt', 'checkpoint cut short, the -wal gone')

bad([good], ['--frobnicate'], 'unknown option', 'an unknown option')
bad([good], ['--format'], "option '--format' needs a value", '--format without a value')
bad([good], ['--format', 'xml'], 'not text, json, markdown or html', '--format xml')
bad([good], ['--top', 'x'], '--top', '--top x')
bad([good], ['--min-severity', 'fatal'], '--min-severity', '--min-severity fatal')
bad([good], ['--set', 'nonsense'], '--set', '--set without =')
bad([good], ['-o'], "option '-o' needs a value", '-o without a value')
bad([], [], 'no database given', 'no database')
# A missing folder is made (test_totals); a file where a folder should be is refused.
bad([good], ['-o', os.path.join(text, 'dir', 'x')], 'cannot write %s' % os.path.join(text, 'dir', 'x'),
    '-o under a file')
# A failed load leaves no -o file behind, and an existing one untouched.
out = os.path.join(d, 'keep.json')
with open(out, 'w') as f:
    f.write('old')
bad([good, text], ['-o', out], 'not an xferprof database', 'a bad second database with -o')
with open(out) as f:
    check_eq(f.read(), 'old', 'the old -o file is untouched')
check_eq(sorted(os.listdir(d)), sorted(['good.db', 'notes.txt', 'empty.db', 'cut.db', 'other.db',
                                        'newer.db', 'mangled.db', 'keep.json']),
         'no temporary files left')
r = report(args, [good], ['--help'])
check_eq(r.rc, 0, '--help')
check('Usage: xferprof report' in r.out, '--help prints the usage')
finish()
