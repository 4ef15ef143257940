"""A program built against CUDA 12's headers and linked against
libcudart.so.12 (cap_cuda12, on the simulator's libcudart.so.12): its calls
reach the hooks of CUDA 12's signatures (hooks/xp_runtime_hooks.def).
cudaMemPrefetchAsync(ptr, count, int device, stream) is recorded with that
device and that stream, cudaMemPrefetchAsync_v2 with its location, 12.8's
cudaMemcpyBatchAsync (with a failIdx) one row per copy on its stream; and
return codes, failIdx, output and exit status are the same with and without
the profiler."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('cuda12')
db = os.path.join(d, 'run.db')
# Two devices: a prefetch goes to the one that is not current.
env = {'XFERPROF_SIM_DEVICES': '2'}
cudart12 = os.path.join(args.sim_dir, 'cuda12', 'libxpsim_cudart12.so')
# What xferprof run --sim does for libcudart.so.12 (analyzer/cmd_run.c).
plain = plain_run(args, [args.prog], dict(env, LD_PRELOAD=cudart12))
if not expect_rc(plain, 0, 'cap_cuda12 without the profiler'):
    finish()
r = xferprof_run(args, ['-o', db], [args.prog], env)
if not expect_rc(r, 0, 'cap_cuda12 under xferprof run --sim'):
    finish()
# Addresses (streams, allocations) differ from run to run.
ADDRESSES = ('stream ', 'managed ', 'dev ')


def results(out):
    return [line for line in out.splitlines() if not line.startswith(ADDRESSES)]


check_eq(results(r.out), results(plain.out),
         'output (every return code, failIdx) with and without xferprof')
plain_v, v = parse_values(plain.out), parse_values(r.out)
check_eq((plain_v['rc_prefetch_dev'], plain_v['rc_prefetch_bad'], plain_v['rc_batch'],
          plain_v['failidx_ok'], plain_v['rc_batch_bad'], plain_v['failidx_bad'], plain_v['same']),
         (0, 101, 0, 12345, 1, 2**64 - 1, 1),
         'the program\'s view: prefetch ok, bad device refused (cudaErrorInvalidDevice), '
         'batch ok with failIdx untouched, refused batch with failIdx SIZE_MAX, bytes arrived')

conn = open_db(db)
stream = v['stream']
got = rows(conn, "SELECT api, layer, bytes, direction, host_mem, device, stream, status "
                 "FROM copies WHERE api LIKE 'cudaMemPrefetch%' OR api LIKE 'cudaMemcpyBatch%' "
                 "ORDER BY start_ns")
check_eq([(g['api'], g['layer'], g['bytes'], g['direction'], g['host_mem'], g['device'],
           u64(g['stream']), g['status']) for g in got],
         [('cudaMemPrefetchAsync', 'runtime', 65536, 'H2D', 'managed', 1, stream, 0),
          ('cudaMemPrefetchAsync', 'runtime', 32768, 'D2H', 'managed', 0, stream, 0),
          ('cudaMemPrefetchAsync_v2', 'runtime', 16384, 'H2D', 'managed', 1, stream, 0),
          ('cudaMemPrefetchAsync', 'runtime', 65536, 'H2D', 'managed', 7, stream, 101),
          ('cudaMemcpyBatchAsync', 'runtime', 1000, 'H2D', 'pageable', 0, stream, 0),
          ('cudaMemcpyBatchAsync', 'runtime', 3000, 'H2D', 'pageable', 0, stream, 0),
          ('cudaMemcpyBatchAsync', 'runtime', 1000, 'H2D', 'pageable', 0, stream, 1),
          ('cudaMemcpyBatchAsync', 'runtime', 3000, 'H2D', 'pageable', 0, stream, 1)],
         'prefetches (device, stream as passed) and batch copies, once each '
         '(api, layer, bytes, direction, host_mem, device, stream, status)')
check_eq(scalar(conn, "SELECT count(*) FROM copies WHERE layer = 'driver'"), 0,
         'no driver rows (the runtime\'s own driver calls are not the program\'s)')
check_records_lost_zero(conn)
finish()
