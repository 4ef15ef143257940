"""CUDA arrays (cap_arrays): each allocation an `array` row whose ptr is the
handle and whose bytes are what it holds, freed by cudaFreeArray /
cuArrayDestroy (no leak); every copy into or out of one a copy row with its
direction, bytes, host memory kind, blocking class and the array handle as
its device side (src or dst), on the array's device; the pageable 2D upload
fingerprinted over its rows."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403
import cap_fp  # noqa: E402

W, H, ROW, SPITCH = 64, 16, 64 * 8, 600

args = parse_args()
d = tmpdir('arrays')
db = os.path.join(d, 'run.db')
r = xferprof_run(args, ['-o', db], [args.prog])
if not expect_rc(r, 0, 'cap_arrays under xferprof run --sim'):
    finish()
v = parse_values(r.out)
for name in ('a', 'b', 'c', 'host', 'pin'):
    if name not in v:
        fatal('program did not print %s' % name, r.out)
check('arrays: done' in r.out, 'the program ran to its end', r.out)

conn = open_db(db)
mods = Modules(conn)

a = rows(conn, "SELECT * FROM allocations WHERE kind = 'array' ORDER BY id")
check_eq([(x['api'], u64(x['ptr']), x['bytes'], x['device'], x['free_api']) for x in a],
         [('cudaMallocArray', v['a'], ROW * H, 0, 'cudaFreeArray'),
          ('cudaMalloc3DArray', v['b'], 4 * 16 * 8 * 4, 0, 'cudaFreeArray'),
          ('cuArrayCreate_v2', v['c'], 2 * 128 * 4, 0, 'cuArrayDestroy')],
         'array allocations: api, handle, bytes held, device, freed by')
check_eq(scalar(conn, "SELECT count(*) FROM allocations WHERE free_ns IS NULL"), 0,
         'nothing left live')
check_eq(scalar(conn, "SELECT count(*) FROM unknown_frees"), 0, 'no unknown frees')

got = rows(conn, "SELECT * FROM copies ORDER BY start_ns")
# (api, layer, bytes, direction, host_mem, blocking, src, dst, kind)
want = [
    ('cudaMemcpy2DToArray', 'runtime', ROW * H, 'H2D', 'pageable', 'sync', v['host'], v['a'], 1),
    ('cudaMemcpy2DFromArrayAsync', 'runtime', ROW * H, 'D2H', 'pinned', 'async', v['a'],
     v['pin'], 2),
    ('cudaMemcpyToArray', 'runtime', 1000, 'H2D', 'pageable', 'sync', v['host'], v['a'], 4),
    ('cudaMemcpy2DArrayToArray', 'runtime', 64 * 8, 'D2D', None, 'async', v['a'], v['b'], 3),
    ('cudaMemcpy3D', 'runtime', 64 * 8 * 4, 'H2D', 'pinned', 'sync', v['pin'], v['b'], 1),
    ('cuMemcpyHtoA_v2', 'driver', 1024, 'H2D', 'pageable', 'sync', v['host'], v['c'], 1),
    ('cuMemcpyAtoH_v2', 'driver', 1000, 'D2H', 'pinned', 'sync', v['c'], v['pin'], 2),
]
check_eq([(g['api'], g['layer'], g['bytes'], g['direction'], g['host_mem'], g['blocking'],
           u64(g['src']), u64(g['dst']), g['kind']) for g in got], want,
         'array copies: api, layer, bytes, direction, host_mem, blocking, src, dst, kind')
for g in got:
    what = g['api']
    check_eq((g['status'], g['device']), (0, 0), what + ': status, device')
    check_stack(conn, mods, args.prog, g['stack_id'], what)
if got:
    content = bytes((i * 7 + 3) & 0xff for i in range(SPITCH * H))
    box = b''.join(content[y * SPITCH:y * SPITCH + ROW] for y in range(H))
    check_eq(got[0]['fingerprint_kind'], 'full', 'the 2D upload: fingerprinted')
    if cap_fp.have():
        check_eq(u64(got[0]['fingerprint']), cap_fp.xxh3(box),
                 'the 2D upload: fingerprint of its rows')
    check_eq([g['fingerprint'] for g in got[1:2] + got[3:4]], [None, None],
             'async download and array to array: no fingerprint')
check_eq(scalar(conn, 'SELECT count(*) FROM errors'), 0, 'errors rows')
check_records_lost_zero(conn)
finish()
