"""Contexts of their own (cap_contexts): what a program allocates in a context
it created is recorded on that context's device, by the driver and by the
runtime working in it; what cuCtxDestroy frees with the context is recorded
as freed by cuCtxDestroy_v2 (no leak left live), what was freed by hand
before keeps its own free; copies made in the context are on its device.
Output and exit status are as without the profiler."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

ENV = {'XFERPROF_SIM_DEVICES': '2'}

args = parse_args()
d = tmpdir('contexts')
db = os.path.join(d, 'run.db')
plain = plain_run(args, [args.prog], ENV)
expect_rc(plain, 0, 'cap_contexts without the profiler')
r = xferprof_run(args, ['-o', db], [args.prog], ENV)
if not expect_rc(r, plain.rc, 'cap_contexts under xferprof run --sim: exit status as without'):
    finish()
check_eq(r.out, plain.out, 'stdout as without the profiler')
check_eq(r.out.splitlines(), ['device in the context 1', 'device after the pop 0',
                              'device after the destroy 0', 'contexts: done'],
         'what the program saw')
v = parse_values(r.err)
for name in ('a0', 'd1', 'd1b', 'm1', 'arr', 'r1', 'host'):
    if name not in v:
        fatal('program did not print %s' % name, r.err)

conn = open_db(db)
got = rows(conn, "SELECT * FROM allocations ORDER BY id")
check_eq([(g['api'], g['kind'], u64(g['ptr']), g['bytes'], g['device'], g['free_api'])
          for g in got],
         [('cudaMalloc', 'device', v['a0'], 4096, 0, 'cudaFree'),
          ('cuMemAlloc_v2', 'device', v['d1'], 8192, 1, 'cuCtxDestroy_v2'),
          ('cuMemAlloc_v2', 'device', v['d1b'], 512, 1, 'cuMemFree_v2'),
          ('cuMemAllocManaged', 'managed', v['m1'], 1024, 1, 'cuCtxDestroy_v2'),
          ('cuArrayCreate_v2', 'array', v['arr'], 64 * 4 * 4, 1, 'cuCtxDestroy_v2'),
          ('cudaMalloc', 'device', v['r1'], 2048, 1, 'cuCtxDestroy_v2')],
         'allocations: api, kind, ptr, bytes, device, freed by')
check_eq(scalar(conn, "SELECT count(*) FROM allocations WHERE free_ns IS NULL"), 0,
         'nothing left live')
check_eq(scalar(conn, "SELECT count(*) FROM unknown_frees"), 0, 'no unknown frees')
copies = rows(conn, "SELECT * FROM copies ORDER BY start_ns")
check_eq([(c['api'], c['direction'], c['bytes'], u64(c['dst']), c['device']) for c in copies],
         [('cudaMemcpy', 'H2D', 2048, v['r1'], 1), ('cudaMemcpy', 'H2D', 2048, v['a0'], 0)],
         'copies: api, direction, bytes, dst, device')
check_eq(scalar(conn, 'SELECT count(*) FROM errors'), 0, 'errors rows')
check_records_lost_zero(conn)
finish()
