"""The CUDA runtime reached only through dlopen() and dlsym()/dlvsym(), as
ctypes, TensorFlow's stream executor and CuPy reach it: xferprof's dlsym
hands out its runtime hooks for the version of the runtime the handle's
library is, forwarding to that library's own functions.  Each copy is then
recorded once, as the runtime's cudaMemcpyAsync (layer runtime), not as the
driver calls the runtime makes; the prefetch with that version's signature;
and the output is the same with and without the profiler.

Modes: 13 (cap_dlopen_rt opens libcudart.so.13), 12 (it opens the
simulator's libcudart.so.12 by its path), ctypes (the system's python3 runs
cap_ctypes_rt.py, which opens libcudart.so.13 with ctypes.CDLL)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

mode = sys.argv.pop()
args = parse_args()
d = tmpdir('dlopen-rt-' + mode)
db = os.path.join(d, 'run.db')
if mode == 'ctypes':
    here = os.path.dirname(os.path.abspath(__file__))
    cmd = ['/usr/bin/python3', os.path.join(here, 'cap_ctypes_rt.py')]
elif mode == '12':
    cmd = [args.prog, os.path.join(args.sim_dir, 'cuda12', 'libxpsim_cudart12.so'), '12']
else:
    cmd = [args.prog, 'libcudart.so.13', '13']
env = {'PYTHONDONTWRITEBYTECODE': '1'}
plain = plain_run(args, cmd, env)
if not expect_rc(plain, 0, 'without the profiler'):
    finish()
r = xferprof_run(args, ['-o', db], cmd, env)
if not expect_rc(r, 0, 'under xferprof run --sim'):
    finish()
check_eq(r.out, plain.out, 'output (every return code) with and without xferprof')
# "name value" lines: C prints hex, Python decimal or True/False.
said = dict(line.split(' ', 1) for line in plain.out.splitlines() if ' ' in line)
check(said.get('rc_h2d') in ('0', '0x0') and said.get('same') in ('True', '0x1'),
      'the copies worked', plain.out)

conn = open_db(db)
got = rows(conn, 'SELECT api, layer, bytes, direction, status FROM copies ORDER BY start_ns')
want = [('cudaMemcpyAsync', 'runtime', 4096, 'H2D', 0),
        ('cudaMemcpyAsync', 'runtime', 4096 if mode == 'ctypes' else 2048, 'D2H', 0)]
if mode != 'ctypes':
    want.append(('cudaMemPrefetchAsync', 'runtime', 4096, 'H2D', 0))
check_eq([(g['api'], g['layer'], g['bytes'], g['direction'], g['status']) for g in got], want,
         'each call once, as the runtime\'s (api, layer, bytes, direction, status)')
allocs = rows(conn, 'SELECT api, layer, kind, free_api FROM allocations ORDER BY alloc_ns')
check_eq([(a['api'], a['layer'], a['kind'], a['free_api']) for a in allocs],
         [('cudaMalloc', 'runtime', 'device', 'cudaFree')] +
         ([] if mode == 'ctypes' else
          [('cudaMallocManaged', 'runtime', 'managed', 'cudaFree')]),
         'allocations through the looked-up functions, as the runtime\'s')
check_records_lost_zero(conn)
finish()
