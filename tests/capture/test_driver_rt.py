"""Driver functions handed out by the runtime (cap_driver_rt:
cudaGetDriverEntryPointByVersion and cudaGetDriverEntryPoint) recorded once
each with their variant's name and layer 'driver'; runtime copies, which
reach the driver inside the runtime, recorded once, as the runtime calls
(layer 'runtime', no driver row for them), and so the runtime's allocation;
no 'static runtime' note (libcudart is loaded); the output the same with and
without the profiler.  With --ptds the program was built with
CUDA_API_PER_THREAD_DEFAULT_STREAM: it calls the _ptds/_ptsz runtime entry
points, and cudaGetDriverEntryPointByVersion_ptsz hands out per-thread
variants by default."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

ptds = '--ptds' in sys.argv
if ptds:
    sys.argv.remove('--ptds')
args = parse_args()
d = tmpdir('driver-rt')
db = os.path.join(d, 'run.db')

plain = plain_run(args, [args.prog])
expect_rc(plain, 0, 'cap_driver_rt without the profiler')
r = xferprof_run(args, ['-o', db], [args.prog])
if not expect_rc(r, 0, 'cap_driver_rt under xferprof run --sim'):
    finish()
check_eq(r.out, plain.out, 'output with and without xferprof')

PT = 2
expected = [
    # bytes, api, layer, direction, stream
    (4001, 'cuMemcpyHtoD_v2_ptds' if ptds else 'cuMemcpyHtoD_v2', 'driver', 'H2D',
     PT if ptds else 0),
    (4002, 'cuMemcpyDtoH_v2_ptds', 'driver', 'D2H', PT),
    (4003, 'cuMemcpyHtoD_v2', 'driver', 'H2D', 0),
    (5001, 'cudaMemcpy_ptds' if ptds else 'cudaMemcpy', 'runtime', 'H2D', PT if ptds else 0),
    (5002, 'cudaMemcpy_ptds' if ptds else 'cudaMemcpy', 'runtime', 'D2H', PT if ptds else 0),
]
conn = open_db(db)
mods = Modules(conn)
got = rows(conn, 'SELECT * FROM copies ORDER BY start_ns, id')
check_eq([(c['bytes'], c['api'], c['layer'], c['direction'], u64(c['stream'] or 0))
          for c in got], expected, 'copies rows (bytes, api, layer, direction, stream)')
for c in got:
    check_eq(c['status'], 0, 'copy of %d bytes: status' % c['bytes'])
    check_stack(conn, mods, args.prog, c['stack_id'], 'copy of %d bytes' % c['bytes'])
allocs = rows(conn, 'SELECT * FROM allocations ORDER BY alloc_ns, id')
check_eq([(a['api'], a['layer'], a['free_api']) for a in allocs],
         [('cudaMalloc', 'runtime', 'cudaFree')], 'allocations rows (the runtime call only)')
check_eq(scalar(conn, 'SELECT count(*) FROM errors'), 0, 'errors rows')
check_eq(meta(conn).get('runtime'), None, 'meta runtime (libcudart is loaded)')
check_records_lost_zero(conn)
finish()
