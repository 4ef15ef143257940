"""The thread that records a copy does not populate the journal's pages in
steady state (issue 15): a populator thread of the preload populates each
chunk (MADV_POPULATE_WRITE, 85 us per 256 KiB chunk on ext4, 44 ns per
copy record when the recording thread did it) before a writer takes it.
cap_punch's 200,000 copies in 8 batches 300 ms apart take about 100
chunks; under `strace -f -e trace=madvise` the program's main thread, which
makes every copy, populates at most 2 of them (its first, taken before the
populator started), where it populated every chunk it took before; the
chunks were populated all the same (by another thread), every copy is in
the database, and meta journal_chunks_populated_by_writers agrees."""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('populate')
db = os.path.join(d, 'run.db')
trace = os.path.join(d, 'strace.txt')
# The program's environment through strace's -E: strace itself runs without
# the preload.
env = {'LD_LIBRARY_PATH': args.sim_dir, 'LD_PRELOAD': args.preload, 'XFERPROF_OUTPUT': db,
       'XP_JOURNAL': db + '.xpj'}
r = run(['strace', '-f', '-qq', '--seccomp-bpf', '-e', 'trace=madvise,exit_group', '-o', trace] +
        [a for k, v in env.items() for a in ('-E', '%s=%s' % (k, v))] + [args.prog],
        clean_env())
expect_rc(r, 0, 'exit status')

populated = collections.Counter()   # tid -> MADV_POPULATE_WRITE calls
main_tid = None
with open(trace) as f:
    for line in f:
        m = re.match(r'(\d+)\s+(\w+)\(', line)
        if not m:
            continue
        tid = int(m.group(1))
        if m.group(2) == 'exit_group':
            main_tid = tid   # the thread that returns from main()
        elif 'MADV_POPULATE_WRITE' in line or re.search(r', 0x17\b', line):
            populated[tid] += 1
check(main_tid is not None, 'the main thread found (its exit_group)')
print('populate calls per thread: %s (main thread %s)' % (dict(populated), main_tid))

conn = open_db(db)
check_eq(scalar(conn, 'SELECT count(*) FROM copies'), 200000, 'every copy recorded')
check_records_lost_zero(conn)
m = meta(conn)
chunks = int(m.get('journal_chunks', '0'))
by_writers = int(m.get('journal_chunks_populated_by_writers', '-1'))
conn.close()
print('chunks taken %d, populated by their writers %d' % (chunks, by_writers))
check(chunks >= 90, 'the copies took about 100 chunks', chunks)
check(populated[main_tid] <= 2, 'the recording thread populated at most 2 chunks itself',
      '%d of %d' % (populated[main_tid], chunks))
check(sum(populated.values()) >= chunks - 2, 'every chunk was populated (by some thread)',
      '%d calls for %d chunks' % (sum(populated.values()), chunks))
check(0 <= by_writers <= 4, 'meta journal_chunks_populated_by_writers: the first ones only',
      m.get('journal_chunks_populated_by_writers'))
finish()
