"""Two CUDA runtimes in one process (cap_two_runtimes: the program's
libcudart.so.13, and a plugin it dlopen()s linked against libcudart.so.12, a copy of the
simulator's runtime built with CUDA 12's symbol versions): a copy through
each is recorded once, as cudaMemcpy of layer runtime, with its own bytes;
the CUDA 12 library's calls reach its own runtime (a copy that runtime
refuses leaves the error in that runtime's state, not in the program's),
and the output is the same with and without the profiler."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('two-runtimes')
db = os.path.join(d, 'run.db')
cmd = [args.prog, args.prog2]
plain = plain_run(args, cmd)
expect_rc(plain, 0, 'cap_two_runtimes without the profiler')
r = xferprof_run(args, ['-o', db], cmd)
if not expect_rc(r, 0, 'cap_two_runtimes under xferprof run --sim'):
    finish()
check_eq(r.out, plain.out, 'output with and without xferprof')

conn = open_db(db)
got = rows(conn, 'SELECT api, layer, bytes, direction, host_mem, status FROM copies '
                 'ORDER BY start_ns')
check_eq([(g['api'], g['layer'], g['bytes'], g['direction'], g['host_mem'], g['status'])
          for g in got],
         [('cudaMemcpy', 'runtime', 6001, 'H2D', 'pageable', 0),
          ('cudaMemcpy', 'runtime', 6002, 'H2D', 'pageable', 0),
          ('cudaMemcpy', 'runtime', 16, 'H2D', 'pageable', 21)],
         'each runtime\'s copies, once each (api, layer, bytes, direction, host_mem, status)')
check_eq([(e['api'], e['status']) for e in rows(conn, 'SELECT api, status FROM errors')],
         [('cudaMemcpy', 21)], 'the refused copy in errors (cudaErrorInvalidMemcpyDirection)')
check_records_lost_zero(conn)
finish()
