"""Scenario 1: directions and host memory kinds.  cap_directions makes one copy
of each kind (sizes 1000, 2000, ... in program order); every copies row is
checked against the pointers it printed: api, direction, bytes, src, dst,
host_mem, blocking, stream, device, tid, status, times, and a stack that
reaches into the program's own code."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('directions')
db = os.path.join(d, 'run.db')
r = xferprof_run(args, ['-o', db], [args.prog])
if not expect_rc(r, 0, 'cap_directions under xferprof run --sim'):
    finish()
v = parse_values(r.out)
tid = parse_int_lines(r.out, 'tid')
for name in ('dev', 'dev2', 'pageable', 'pageable2', 'pinned', 'hostalloc', 'reg', 'managed',
             'stream'):
    if name not in v:
        fatal('program did not print %s' % name, r.out)
S = v['stream']

# (api, direction, bytes, src, dst, host_mem, blocking, stream), in program order.
M, A = 'cudaMemcpy', 'cudaMemcpyAsync'
expected = [
    (M, 'H2D', 1000, v['pageable'], v['dev'], 'pageable', 'sync', 0),
    (M, 'H2D', 2000, v['pinned'], v['dev'], 'pinned', 'sync', 0),
    (M, 'H2D', 3000, v['hostalloc'], v['dev'], 'pinned', 'sync', 0),
    (M, 'H2D', 4000, v['reg'] + 4096 + 100, v['dev'], 'pinned', 'sync', 0),
    (M, 'D2H', 5000, v['dev'], v['pageable'], 'pageable', 'sync', 0),
    (M, 'D2H', 6000, v['dev'], v['pinned'], 'pinned', 'sync', 0),
    (M, 'D2D', 7000, v['dev'], v['dev2'], None, 'async', 0),
    (M, 'H2H', 8000, v['pageable'], v['pageable2'], 'pageable', 'sync', 0),
    # cudaMemcpyDefault, resolved from the pointers
    (M, 'H2D', 9000, v['pageable'], v['dev'], 'pageable', 'sync', 0),
    (M, 'D2H', 10000, v['dev'], v['pinned'], 'pinned', 'sync', 0),
    (M, 'D2D', 11000, v['dev'], v['dev2'], None, 'async', 0),
    (M, 'H2H', 12000, v['pinned'], v['hostalloc'], 'pinned', 'sync', 0),
    (A, 'H2D', 13000, v['pinned'], v['dev'], 'pinned', 'async', S),
    (A, 'H2D', 14000, v['pageable'], v['dev'], 'pageable', 'async_pageable', S),
    (A, 'D2H', 15000, v['dev'], v['pinned'], 'pinned', 'async', S),
    (M, 'H2D', 16000, v['managed'], v['dev'], 'managed', 'sync', 0),
    (M, 'D2H', 17000, v['dev'], v['managed'], 'managed', 'sync', 0),
    (A, 'D2H', 18000, v['dev'], v['reg'] + 8192 + 8, 'pinned', 'async', S),
]

conn = open_db(db)
got = rows(conn, 'SELECT * FROM copies ORDER BY start_ns, id')
check_eq(len(got), len(expected), 'number of copies rows')
mods = Modules(conn)
prev_start = 0
for i, (want, row) in enumerate(zip(expected, got)):
    api, direction, nbytes, src, dst, host_mem, blocking, stream = want
    what = 'copy %d (%s %s %d bytes)' % (i + 1, api, direction, nbytes)
    check_eq(row['api'], api, what + ': api')
    check_eq(row['direction'], direction, what + ': direction')
    check_eq(row['bytes'], nbytes, what + ': bytes')
    check_eq(hex(u64(row['src'])), hex(src), what + ': src')
    check_eq(hex(u64(row['dst'])), hex(dst), what + ': dst')
    check_eq(row['host_mem'], host_mem, what + ': host_mem')
    check_eq(row['blocking'], blocking, what + ': blocking')
    check_eq(hex(u64(row['stream'] or 0)), hex(stream), what + ': stream')
    if direction == 'H2H':
        # No device takes part; the schema may say so (NULL or -1) or name the current one.
        check(row['device'] in (None, -1, 0), what + ': device', 'got %r' % row['device'])
    else:
        check_eq(row['device'], 0, what + ': device')
    check_eq(row['status'], 0, what + ': status')
    if tid:
        check_eq(row['tid'], tid[0], what + ': tid')
    check(row['start_ns'] is not None and row['end_ns'] is not None
          and row['start_ns'] <= row['end_ns'], what + ': start_ns <= end_ns',
          row['start_ns'], row['end_ns'])
    check(row['start_ns'] >= prev_start, what + ': starts after the previous copy')
    prev_start = row['start_ns'] or 0
    check_stack(conn, mods, args.prog, row['stack_id'], what)

# The program's two stream synchronizations, and no copy recorded twice
# (the runtime reaching the driver is not a second copy).
syncs = rows(conn, "SELECT * FROM syncs ORDER BY start_ns, id")
check_eq([(s['api'], u64(s['stream'])) for s in syncs], [('cudaStreamSynchronize', S)] * 2,
         'syncs rows (api, stream)')
check_eq(scalar(conn, 'SELECT count(*) FROM errors'), 0, 'errors rows')
check_no_duplicate_stacks(conn)
check_records_lost_zero(conn)
finish()
