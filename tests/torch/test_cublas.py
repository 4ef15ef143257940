"""A torch script that reaches cuBLAS on the simulator stops with a clear
message from the simulator naming the missing function (cuGetExportTable) and
the library that asked (libcublas.so.12), and with torch's own error: no
crash, no hang. What it did before (the upload) is in the database."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import *  # noqa: E402,F401,F403

args = parse_torch_args()
d = tmpdir('torch-cublas')
db = os.path.join(d, 'run.db')
r = torch_run(args, db)
# A Python exception: exit status 1, not a signal.
check_eq(r.rc, 1, 'exit status of a script stopped by a Python exception')
check_eq(r.out.strip(), 'uploaded', 'the script got as far as the matmul')
check('libcublas.so.12 called cuGetExportTable' in r.err and
      'cannot run on the simulator' in r.err,
      "the simulator's message names the function and the library", r.err)
check_eq(r.err.count('called cuGetExportTable'), len(set(
    l.split(' called ')[0] for l in r.err.splitlines() if 'called cuGetExportTable' in l)),
    'one message per library')
check('CUBLAS_STATUS' in r.err, "torch's own error follows", r.err)
conn = open_db(db)
check_eq(scalar(conn, "SELECT count(*) FROM copies WHERE direction = 'H2D' AND bytes = ?",
                (64 * 64 * 4,)), 1, 'the upload before the matmul is recorded')
finish()
