"""Short-lived threads (issue 14 item 5): 4,000 threads that each make one
copy and end, alone and eight at a time.  Every copy reaches the database,
each with its own thread id, nothing is lost, and the journal does not grow
by a chunk (256 KiB) per thread: the rest of an ended thread's chunk is
written by the next thread (src/xp_journal_writer.c, "Threads that end").
A journal of one chunk per thread would be about 1 GiB here."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

N = 4000
args = parse_args()
d = tmpdir('shortthreads')
db = os.path.join(d, 'run.db')
for how in ('xferprof run', 'LD_PRELOAD by hand'):
    remove(db)
    if how == 'xferprof run':
        r = xferprof_run(args, ['-o', db], [args.prog, str(N), db + '.xpj'])
    else:
        r = manual_run(args, db, [args.prog, str(N), db + '.xpj'])
    if not expect_rc(r, 0, how + ': cap_shortthreads'):
        continue
    check_eq(parse_int_lines(r.out, 'copies'), [N], how + ': the program made its copies')
    journal = parse_int_lines(r.out, 'journal_bytes')
    # Chunks the threads could take at most at once (8 alive, the main one),
    # the populator's 16 grown ahead of them and its growth step of 8 (2 MiB):
    # 33 chunks of 256 KiB and the file's 4 KiB header.
    check(len(journal) == 1 and journal[0] <= 33 * 256 * 1024 + 4096,
          how + ': the journal did not grow by a chunk per thread', journal)
    conn = open_db(db)
    check_eq(scalar(conn, "SELECT count(*) FROM copies WHERE api = 'cudaMemcpy'"), N,
             how + ': copies in the database')
    check_eq(scalar(conn, "SELECT count(DISTINCT tid) FROM copies WHERE api = 'cudaMemcpy'"), N,
             how + ': each with its own thread')
    check_records_lost_zero(conn)
    conn.close()
finish()
