"""Python frames in a C program that embeds CPython (libpython3.12 linked in):
a copy before Py_Initialize and one after Py_FinalizeEx have native frames
only (the interpreter is not there: nothing is read, nothing faults), the
copy made by Python code in between has its Python frame.

    test_embed.py --xferprof X --preload LIB --sim-dir DIR --prog PY_EMBED
"""
import os
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..', 'capture'))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('pyembed')
db = os.path.join(d, 'run.db')
r = xferprof_run(args, ['-o', db], [args.prog], {'PYTHONHOME': None, 'PYTHONPATH': None})
if not expect_rc(r, 0, 'py_embed under xferprof run --sim') or 'embedded ok' not in r.out:
    finish()
conn = open_db(db)
check_records_lost_zero(conn)
check(meta(conn).get('python_version', '').startswith('3.12.'), 'meta python_version',
      meta(conn).get('python_version'))
frames = {}
for row in rows(conn, 'SELECT c.bytes, s.pyframes FROM copies c JOIN stacks s ON s.id = c.stack_id'):
    blob = row['pyframes'] or b''
    frames[row['bytes']] = [struct.unpack_from('<qiI', blob, i) for i in range(0, len(blob), 16)]
check_eq(sorted(frames), [201, 202, 203], 'the three copies, each with a stack')
check_eq(frames.get(201), [], 'before Py_Initialize: no Python frame')
check_eq(frames.get(203), [], 'after Py_FinalizeEx: no Python frame')
names = [scalar(conn, 'SELECT name FROM py_code WHERE key = ?', (f[0],)) for f in frames.get(202, [])]
check_eq(names, ['embedded', '<module>'], 'the copy from Python: its Python frames')
rep = run([args.xferprof, 'report', db], clean_env())
check('at <string>:6 in embedded' in rep.out, 'the report names the site "<string>:6 in embedded"',
      rep.out)
finish()
