"""Peer access (cap_peer): with access enabled between two devices, a copy
between their memory by address (cudaMemcpy with cudaMemcpyDefault or
DeviceToDevice, cuMemcpy) is a D2D row on the source's device, a peer copy
(cudaMemcpyPeer) a D2D row on the destination device; enabling and
disabling access are not hooked: nothing is recorded of them.
Output and exit status are as without the profiler."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

ENV = {'XFERPROF_SIM_DEVICES': '2'}
N = 1 << 16

args = parse_args()
d = tmpdir('peer')
db = os.path.join(d, 'run.db')
plain = plain_run(args, [args.prog], ENV)
expect_rc(plain, 0, 'cap_peer without the profiler')
r = xferprof_run(args, ['-o', db], [args.prog], ENV)
if not expect_rc(r, plain.rc, 'cap_peer under xferprof run --sim: exit status as without'):
    finish()
check_eq(r.out, plain.out, 'stdout as without the profiler')
check_eq(r.out.splitlines(), ['can access 1', 'again 704', 'last error 704', 'byte 92',
                              'peer: done'], 'what the program saw')
v = parse_values(r.err)
for name in ('a', 'b', 'host', 'back'):
    if name not in v:
        fatal('program did not print %s' % name, r.err)
a, b = v['a'], v['b']

conn = open_db(db)
got = rows(conn, "SELECT * FROM copies ORDER BY start_ns")
# (api, layer, bytes, direction, host_mem, src, dst, device, status)
check_eq([(g['api'], g['layer'], g['bytes'], g['direction'], g['host_mem'], u64(g['src']),
           u64(g['dst']), g['device'], g['status']) for g in got],
         [('cudaMemcpy', 'runtime', N, 'H2D', 'pageable', v['host'], a, 0, 0),
          ('cudaMemcpy', 'runtime', N, 'D2D', None, a, b, 0, 0),
          ('cudaMemcpyAsync', 'runtime', N // 2, 'D2D', None, b, a, 1, 0),
          ('cudaMemcpyPeer', 'runtime', N // 4, 'D2D', None, a, b, 1, 0),
          ('cuMemcpy', 'driver', N // 8, 'D2D', None, b, a, 1, 0),
          ('cudaMemcpy', 'runtime', 16, 'D2H', 'pageable', b, v['back'], 1, 0)],
         'copies: api, layer, bytes, direction, host_mem, src, dst, device, status')
errs = rows(conn, "SELECT api, status FROM errors")
check_eq([(e['api'], e['status']) for e in errs], [], 'errors rows (unhooked calls)')
check_eq(scalar(conn, "SELECT count(*) FROM allocations WHERE free_ns IS NULL"), 0,
         'nothing left live')
check_records_lost_zero(conn)
finish()
