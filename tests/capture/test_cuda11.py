"""A program linked against CUDA 11's runtime (cap_cuda11, on the simulator's
runtime built as libcudart.so.11.0, NVIDIA's file name, SONAME and symbol
version for CUDA 11): its calls bind to our name@libcudart.so.11.0 exports
and are recorded as the runtime's, once each, with the same output as
without the profiler."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('cuda11')
db = os.path.join(d, 'run.db')
plain = plain_run(args, [args.prog])
if not expect_rc(plain, 0, 'cap_cuda11 without the profiler'):
    finish()
r = xferprof_run(args, ['-o', db], [args.prog])
if not expect_rc(r, 0, 'cap_cuda11 under xferprof run --sim'):
    finish()
check_eq(r.out, plain.out, 'output with and without xferprof')

conn = open_db(db)
got = rows(conn, 'SELECT api, layer, bytes, direction, status FROM copies ORDER BY start_ns')
check_eq([(g['api'], g['layer'], g['bytes'], g['direction'], g['status']) for g in got],
         [('cudaMemcpy', 'runtime', 5000, 'H2D', 0),
          ('cudaMemcpy', 'runtime', 5000, 'D2H', 0),
          ('cudaMemcpy', 'runtime', 16, 'H2D', 21)],
         'each copy once, as the runtime\'s (api, layer, bytes, direction, status)')
allocs = rows(conn, 'SELECT api, layer, kind, free_api FROM allocations ORDER BY alloc_ns')
check_eq([(a['api'], a['layer'], a['kind'], a['free_api']) for a in allocs],
         [('cudaMalloc', 'runtime', 'device', 'cudaFree')], 'the allocation, as the runtime\'s')
check_records_lost_zero(conn)
finish()
