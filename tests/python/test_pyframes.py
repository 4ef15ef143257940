"""Python frames in recorded stacks (issue 12): a Python program (py_prog.py)
copies through ctypes with the GIL released (CDLL) and held (PyDLL), from a
method, 20 calls deep, from a threading.Thread, from a C thread with no
Python state, from an atexit handler and from a C exit handler after the
interpreter is gone.  The database must carry each call's Python frames
(innermost code object, file, qualified name, an instruction offset on the
marked line as the interpreter's own line table says), the code objects they
name, and no Python frame where there is no Python state.

    test_pyframes.py --xferprof X --preload LIB --sim-dir DIR --prog PYTHON
                     --prog2 CTHREAD_LIB [--version 3.X] [--unsupported]
"""
import os
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, '..', 'capture'))
from cap_common import *  # noqa: E402,F401,F403

extra = [a for a in sys.argv[1:] if a in ('--unsupported',) or a.startswith('--version=')]
args = parse_args([a for a in sys.argv[1:] if a not in extra])
version = next((a.split('=', 1)[1] for a in extra if a.startswith('--version=')), None)
unsupported = '--unsupported' in extra
script = os.path.join(here, 'py_prog.py')

d = tmpdir('pyframes')
db = os.path.join(d, 'run.db')
r = xferprof_run(args, ['-o', db], [args.prog, script, args.prog2],
                 {'PYTHONDONTWRITEBYTECODE': '1', 'PYTHONPATH': None, 'PYTHONHOME': None})
if not expect_rc(r, 0, 'py_prog.py under xferprof run --sim'):
    finish()
marks = {}
for line in r.out.splitlines():
    p = line.split()
    if len(p) == 5 and p[0] == 'mark':
        marks[p[1]] = (p[2], int(p[3]), {int(x) for x in p[4].split(',') if x})
if len(marks) != 8:
    fatal('program did not print its 8 marks', r.out)

conn = open_db(db)
m = meta(conn)
check_records_lost_zero(conn)
sizes = {101: 'released', 102: 'held', 103: 'method', 104: 'deep', 105: 'thread',
         106: 'cthread', 107: 'atexit', 108: 'c_exit'}
copies = {row['bytes']: row for row in rows(conn, 'SELECT bytes, stack_id FROM copies')}
check_eq(sorted(b for b in copies if b in sizes), sorted(sizes), 'copies of every kind')
code = {row['key']: row for row in rows(conn, 'SELECT * FROM py_code')}


def pyframes(stack_id):
    blob = scalar(conn, 'SELECT pyframes FROM stacks WHERE id = ?', (stack_id,))
    if blob is None:
        return []
    return [struct.unpack_from('<qiI', blob, i) for i in range(0, len(blob), 16)]


if unsupported:
    check('python_note' in m and 'not supported' in m.get('python_note', ''),
          'meta python_note says the version is not supported', m.get('python_note'))
    check_eq(scalar(conn, 'SELECT count(*) FROM stacks WHERE pyframes IS NOT NULL'), 0,
             'stacks with Python frames')
    check_eq(scalar(conn, 'SELECT count(*) FROM py_code'), 0, 'code objects')
    check_eq(scalar(conn, 'SELECT count(*) FROM copies WHERE stack_id IS NULL'), 0,
             'copies without a (native) stack')
    finish()

check(m.get('python_version', '').startswith(version + '.'), 'meta python_version',
      m.get('python_version'), 'expected', version)
check('python_module' in m, 'meta python_module')
check('python_note' not in m, 'no python_note', m.get('python_note'))
qualnames = tuple(int(x) for x in version.split('.')) >= (3, 11)


def expect_name(qual):
    return qual if qualnames else qual.rsplit('.', 1)[-1]


def check_frame(f, mark, what):
    qual, line, offsets = marks[mark]
    c = code.get(f[0])
    if not check(c is not None, '%s: code object %d in py_code' % (what, f[0])):
        return
    check_eq(c['file'], script, what + ': file')
    check_eq(c['name'], expect_name(qual), what + ': name')
    check_eq(c['py_version'], version, what + ': py_version')
    check(c['line_table'] is not None and c['line_format'] is not None,
          what + ': line table kept')
    check(f[1] in offsets, what + ': instruction offset %d is on line %d' % (f[1], line),
          sorted(offsets))


for size, mark in sizes.items():
    if size not in copies:
        continue
    frames = pyframes(copies[size]['stack_id'])
    what = 'copy of %d bytes (%s)' % (size, mark)
    if mark in ('cthread', 'c_exit'):
        check_eq(frames, [], what + ': Python frames (the thread has no Python state)')
        continue
    if not check(frames, what + ': has Python frames'):
        continue
    check_frame(frames[0], mark, what + ' innermost')
    check(frames[-1][2] & 1, what + ': outermost frame is an entry frame')
    for f in frames:
        check(f[0] in code, what + ': every frame names a stored code object', f)
    if mark == 'deep':
        check_eq(len(frames), 21, what + ': 20 frames of nested() and the module\'s')
        for k in range(1, 20):
            check_frame(frames[k], 'nested', what + ' frame %d' % k)
        check_eq(code[frames[20][0]]['name'], '<module>', what + ': outermost')
    if mark in ('released', 'held', 'method'):
        check_eq(len(frames), 2, what + ': the function\'s frame and the module\'s')
        check_eq(code[frames[-1][0]]['name'], '<module>', what + ': outermost')
    if mark == 'thread':
        names = [code[f[0]]['name'] for f in frames[1:]]
        check(all(code[f[0]]['file'].endswith('threading.py') for f in frames[1:]) and names,
              what + ': outer frames are threading.py\'s', names)
    # 3.9/3.10 run every Python frame in its own C call of the eval loop.
    if not qualnames:
        check(all(f[2] & 1 for f in frames), what + ': every frame is an entry frame')
# The report names each site by its Python line (lines decoded offline from
# the stored line tables), the Python frames in place of the interpreter's.
rep = run([args.xferprof, 'report', '--format', 'json', '--top', '50', db], clean_env())
if expect_rc(rep, 0, 'xferprof report --format json'):
    import json
    sites = {s['bytes']: s for s in json.loads(rep.out)['sites']}
    for size, mark in sizes.items():
        total = size * 3 if mark == 'method' else size
        site = sites.get(total)
        what = 'report site of %d bytes (%s)' % (total, mark)
        if not check(site is not None and site['frames'], what + ': present with frames'):
            continue
        frames = site['frames'][site['top_frame']:]
        top = frames[0]
        if mark in ('cthread', 'c_exit'):
            check(not any(f['python'] for f in frames), what + ': no Python frame', frames)
            continue
        qual, line, _ = marks[mark]
        check_eq((top['module'], top['line'], top['function'], top['python']),
                 ('py_prog.py', line, expect_name(qual), True), what + ': top user frame')
        check(not any(f['function'] in ('_PyEval_EvalFrameDefault', 'ffi_call') for f in frames),
              what + ': no interpreter frame left', [f['function'] for f in frames])
        if mark == 'deep':
            got = [(f['function'], f['line']) for f in frames[:21]]
            want = ([(expect_name('nested'), marks['deep'][1])] +
                    [(expect_name('nested'), marks['nested'][1])] * 19 + [('<module>', None)])
            check_eq([(fn, ln if fn != '<module>' else None) for fn, ln in got], want,
                     what + ': the 21 Python frames in order')
    text = run([args.xferprof, 'report', '--top', '50', db], clean_env())
    qual, line, _ = marks['released']
    check('at py_prog.py:%d in %s' % (line, expect_name(qual)) in text.out,
          'text report names the site "py_prog.py:%d in %s"' % (line, expect_name(qual)))

# The trace export names each copy's site as the report does.
exp = run([args.xferprof, 'export', db], clean_env())
if expect_rc(exp, 0, 'xferprof export'):
    import json
    events = json.loads(exp.out)['traceEvents']
    site_of = {e['args']['bytes']: e['args'].get('site') for e in events
               if e.get('cat') == 'copy' and e.get('ph') == 'X'}
    for size, mark in sizes.items():
        if mark in ('cthread', 'c_exit'):
            continue
        qual, line, _ = marks[mark]
        check_eq(site_of.get(size), 'py_prog.py:%d in %s' % (line, expect_name(qual)),
                 'export: site of the %d-byte copy (%s)' % (size, mark))

# Each code object once; each (native, Python) stack once.
check_eq(scalar(conn, 'SELECT count(*) FROM (SELECT file, name, first_line, count(*) AS n '
                      'FROM py_code GROUP BY 1, 2, 3 HAVING n > 1)'), 0, 'duplicated code objects')
check_eq(scalar(conn, 'SELECT count(*) FROM (SELECT frames, pyframes, count(*) AS n FROM stacks '
                      'GROUP BY 1, 2 HAVING n > 1)'), 0, 'duplicated stacks')
finish()
