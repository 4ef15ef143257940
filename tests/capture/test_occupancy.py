"""The occupancy calculator under the profiler (the simulator's test program
test_sim_occupancy, runtime and driver forms, cuda_runtime.h's templates, its
deliberate errors): output and exit status as without the profiler, and
nothing recorded, since occupancy queries move no memory and are not hooked."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('occupancy')
db = os.path.join(d, 'run.db')
plain = plain_run(args, [args.prog])
expect_rc(plain, 0, 'test_sim_occupancy without the profiler')
r = xferprof_run(args, ['-o', db], [args.prog])
if not expect_rc(r, plain.rc, 'under xferprof run --sim: exit status as without'):
    finish()
check_eq(r.out, plain.out, 'stdout as without the profiler')
check_eq(r.out.splitlines(), ['occupancy: ok'], 'the program ran its checks')
conn = open_db(db)
for table in ('copies', 'allocations', 'errors'):
    check_eq(scalar(conn, 'SELECT count(*) FROM %s' % table), 0, table + ' rows')
check_records_lost_zero(conn)
finish()
