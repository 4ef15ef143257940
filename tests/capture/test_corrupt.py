"""Scenario: a damaged journal (issue 14 item 10).  cap_sigkill (preload set
up by hand) dies by SIGKILL leaving its journal; two of its copy records are
then damaged after their commit: a byte of one's byte count flipped, the
other's size field made impossible.  `xferprof recover` must store every
other record (the copies after the damaged ones included), not store the
damaged ones, count them in meta records_lost with the reason "2 corrupt
journal record(s)", and `xferprof report` must say so at the top."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

N = 500

args = parse_args()
d = tmpdir('corrupt')

for attempt in range(5):
    db = os.path.join(d, 'damaged%d.db' % attempt)
    r = manual_run(args, db, [args.prog, str(N)])
    expect_rc(r, -9, 'cap_sigkill dies of SIGKILL')
    jpath = db + '.xpj'
    if not check(os.path.exists(jpath), 'journal left behind', sorted(os.listdir(d))):
        finish()
    copies = [x for x in journal_records(jpath) if x[2] == REC_COPY]
    if not check_eq(len(copies), N, 'committed copy records in the journal'):
        finish()
    # The background ingest may have stored records already (copies go in
    # order, 1..N bytes); damage is only a test of recover in those it left.
    conn = open_db(db)
    stored = scalar(conn, 'SELECT count(*) FROM copies') or 0
    conn.close()
    if stored + 40 <= N:
        break
    print('attempt %d: %d copies already ingested before the kill; again' % (attempt, stored))
else:
    fatal('every attempt had its journal ingested before the kill')

# Two copies well past what was stored, apart, neither the last record.
flipped = copies[stored + 10]
resized = copies[stored + 20]
with open(jpath, 'r+b') as f:
    # xp_rec_copy: xp_call (48 bytes), src, dst, then bytes at 64.
    f.seek(flipped[0] + 64)
    b = f.read(1)
    f.seek(flipped[0] + 64)
    f.write(bytes([b[0] ^ 0x40]))
    # xp_rec_header: commit, type, api, then size at 8.
    f.seek(resized[0] + 8)
    f.write(struct.pack('<I', 0xfffffff8))
print('journal %s: damaged the copies of %d and %d bytes (%d already stored)'
      % (jpath, flipped[3], resized[3], stored))

rec = run([args.xferprof, 'recover', db], clean_env())
expect_rc(rec, 0, 'xferprof recover of a damaged journal')
conn = open_db(db)
got = sorted(row['bytes'] for row in rows(conn, 'SELECT bytes FROM copies'))
want = sorted(x[3] for x in copies if x not in (flipped, resized))
check_eq(got, want, 'copies rows: every copy but the two damaged ones, with their true sizes')
m = meta(conn)
check_eq(m.get('records_lost'), '2', 'meta records_lost: the two damaged records')
check_eq(m.get('records_corrupt'), '2', 'meta records_corrupt')
check('2 corrupt journal record(s)' in (m.get('records_lost_reason') or ''),
      'meta records_lost_reason names the corrupt records', repr(m.get('records_lost_reason')))
check_eq(m.get('recovered'), '1', 'meta recovered')
conn.close()
check(not os.path.exists(jpath), 'the journal is removed once recovered')

rep = run([args.xferprof, 'report', db], clean_env())
expect_rc(rep, 0, 'xferprof report of the recovered database')
head = rep.out.split('Totals')[0]
check('2 record(s) lost: ' in head and '2 corrupt journal record(s)' in head,
      'the report says at the top that 2 corrupt records were lost', repr(rep.out[:600]))
finish()
