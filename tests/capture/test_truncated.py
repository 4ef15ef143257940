"""Scenario 9: a truncated journal.  cap_sigkill (preload set up by hand) dies
by SIGKILL leaving its journal; the journal is then cut in the middle of its
last record.  `xferprof recover` must store every record before the cut
(the copies 1..K bytes), and say in meta that a record was lost and why.
Then a file of garbage named x.db.xpj: recover fails clearly with status 2
and leaves the file alone."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

N = 500

args = parse_args()
d = tmpdir('truncated')


for attempt in range(5):
    db = os.path.join(d, 'cut%d.db' % attempt)
    r = manual_run(args, db, [args.prog, str(N)])
    expect_rc(r, -9, 'cap_sigkill dies of SIGKILL')
    jpath = db + '.xpj'
    if not check(os.path.exists(jpath), 'journal left behind', sorted(os.listdir(d))):
        finish()
    recs = journal_records(jpath)
    copies = [x for x in recs if x[2] == REC_COPY]
    if not check_eq(len(copies), N, 'committed copy records in the journal'):
        finish()
    last = max(recs, key=lambda x: x[0])
    cut = last[0] + last[1] - 13
    before = [x for x in recs if x[0] + x[1] <= cut]
    want = sorted(x[3] for x in before if x[2] == REC_COPY)
    # The background ingest may have stored records already; the cut is only
    # a test of the journal if the record cut off is not among them.
    conn = open_db(db)
    stored = scalar(conn, 'SELECT count(*) FROM copies') or 0
    conn.close()
    if stored <= len(want):
        break
    print('attempt %d: %d copies already ingested before the kill; again' % (attempt, stored))
else:
    fatal('every attempt had its journal ingested before the kill')

print('journal %s: %d records, cut at %d (last record at %d, %d bytes, type %d)'
      % (jpath, len(recs), cut, last[0], last[1], last[2]))
with open(jpath, 'r+b') as f:
    f.truncate(cut)
rec = run([args.xferprof, 'recover', db], clean_env())
expect_rc(rec, 0, 'xferprof recover of a cut journal')
conn = open_db(db)
got = sorted(row['bytes'] for row in rows(conn, 'SELECT bytes FROM copies'))
check_eq(got, want, 'copies rows: exactly the copy records before the cut')
m = meta(conn)
lost = m.get('records_lost')
check(lost is not None and lost.isdigit() and int(lost) >= 1, 'meta records_lost >= 1', repr(lost))
reasons = ' '.join(v for k, v in m.items() if k.startswith('records_lost') and k != 'records_lost')
check(reasons.strip() != '', 'meta says why records were lost', m)
check_eq(m.get('recovered'), '1', 'meta recovered')
conn.close()
check(not os.path.exists(jpath), 'the journal is removed once recovered')

# Garbage named like a journal.
g = os.path.join(d, 'x.db')
junk = bytes((i * 7919 + 13) & 0xff for i in range(10000))
with open(g + '.xpj', 'wb') as f:
    f.write(junk)
for name in (g, g + '.xpj'):
    bad = run([args.xferprof, 'recover', name], clean_env())
    expect_rc(bad, 2, 'xferprof recover %s (garbage journal)' % os.path.basename(name))
    lines = [x for x in bad.err.splitlines() if x.strip()]
    check(len(lines) >= 1 and 'x.db' in bad.err and 'journal' in bad.err.lower(),
          'a clear error naming the file and saying what is wrong with the journal', repr(bad.err))
    check('Traceback' not in bad.err and 'Segmentation' not in bad.err, 'no crash')
    with open(g + '.xpj', 'rb') as f:
        check(f.read() == junk, 'the garbage journal is left as it was')
    check(not os.path.exists(g), 'no database is made from a garbage journal')
finish()
