"""Scenario 4: synchronizations.  cap_syncs synchronizes a stream, an event,
the device and the legacy default stream; each syncs row must name the API
and the handle the program printed, with end_ns >= start_ns, and (with a
100 MB/s pinned link) the stream synchronize behind a 16 MiB upload must have
held the caller for most of its 168 ms (a lower bound only)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('syncs')
db = os.path.join(d, 'run.db')
r = xferprof_run(args, ['-o', db], [args.prog], {'XFERPROF_SIM_BANDWIDTH': 'pinned=100M'})
if not expect_rc(r, 0, 'cap_syncs under xferprof run --sim'):
    finish()
v = parse_values(r.out)
tid = parse_int_lines(r.out, 'tid')
if 'stream' not in v or 'event' not in v:
    fatal('program did not print stream and event', r.out)

conn = open_db(db)
mods = Modules(conn)
got = rows(conn, 'SELECT * FROM syncs ORDER BY start_ns, id')
expected = [('cudaStreamSynchronize', v['stream']), ('cudaEventSynchronize', v['event']),
            ('cudaDeviceSynchronize', 0), ('cudaStreamSynchronize', 0)]
check_eq([(s['api'], u64(s['stream'] or 0)) for s in got], expected,
         'syncs rows (api, handle) in program order; none from inside cudaFree')
for i, s in enumerate(got):
    what = 'sync %d (%s)' % (i + 1, s['api'])
    check(s['start_ns'] is not None and s['end_ns'] is not None and s['end_ns'] >= s['start_ns'],
          what + ': end_ns >= start_ns', s['start_ns'], s['end_ns'])
    if tid:
        check_eq(s['tid'], tid[0], what + ': tid')
    check_stack(conn, mods, args.prog, s['stack_id'], what)
    if 'status' in s:
        check_eq(s['status'], 0, what + ': status')
if got:
    held = got[0]['end_ns'] - got[0]['start_ns']
    check(held >= 0.9 * 160e6, 'the stream synchronize behind 16 MiB at 100 MB/s lasted >= 144 ms',
          '%.1f ms' % (held / 1e6))
# The copy before it was asynchronous: it did not hold the caller that long.
big = rows(conn, 'SELECT * FROM copies WHERE bytes = ?', (16 << 20,))
if check_eq(len(big), 1, 'the 16 MiB copy'):
    check_eq((big[0]['blocking'], big[0]['host_mem'], u64(big[0]['stream'])),
             ('async', 'pinned', v['stream']), '16 MiB copy: blocking, host_mem, stream')
check_eq(scalar(conn, 'SELECT count(*) FROM errors'), 0, 'errors rows')
check_records_lost_zero(conn)
finish()
