"""The stack_frames view (issue 16 item 7): a C program's copy (rep_frames.c:
main -> frames_outer -> frames_inner inlined -> cudaMemcpy) and a Python
script's (rep_frames.py: main() -> upload() -> ctypes cudaMemcpy), each
joined from `copies` to `stack_frames` with Python's sqlite3.  Before
`xferprof symbolize` the view gives each raw frame's module and offset and no
names; after it, the frames the report shows: each inline function and each
Python frame its own level, level 0 innermost, the user's function, file and
line where the source says.  `report` on a writable database stores the same
rows; a database made before the view gets it; bad input exits 2 with one line.
"""
import os
import shutil
import sqlite3
import sys

from rep_common import *  # noqa: F401,F403

args = parse_args()
d = tmpdir('frames')
os.chmod(d, 0o755)  # the unwritable case runs as nobody
HERE = os.path.dirname(os.path.abspath(__file__))
C_SOURCE = os.path.join(HERE, 'rep_frames.c')
PY_SOURCE = os.path.join(HERE, 'rep_frames.py')
C_BYTES, PY_BYTES = 12345, 23456
JOIN = ('SELECT f.* FROM copies c JOIN stack_frames f ON f.stack_id = c.stack_id '
        'WHERE c.bytes = ? ORDER BY f.level')


def py_marker_line(marker):
    with open(PY_SOURCE) as f:
        for n, line in enumerate(f, 1):
            if line.rstrip().endswith('# ' + marker):
                return n
    fatal('marker %s not in %s' % (marker, PY_SOURCE))


def frames_of(db, nbytes):
    conn = open_db(db)
    try:
        return rows(conn, JOIN, (nbytes,))
    finally:
        conn.close()


def symbolize(dbs, what):
    r = run([args.xferprof, 'symbolize'] + dbs, clean_env())
    expect_rc(r, 0, what)
    return r


def check_levels(frames, what):
    check_eq([f['level'] for f in frames], list(range(len(frames))), what + ': levels 0..n-1')


def check_unnamed(frames, prog, what):
    """Before symbolization: module and offset of each raw frame, no names."""
    if not check(frames, what + ': the copy has frames'):
        return
    check_levels(frames, what)
    check(all(f['function'] is None and f['file'] is None and f['line'] is None
              for f in frames), what + ': no names yet', frames)
    check(all(f['kind'] == 'native' for f in frames), what + ': native frames', frames)
    check(any(f['module'] == prog and f['offset'] > 0 for f in frames),
          what + ': a frame in %s with its offset' % prog, frames)


# --- A C program, symbolized by `xferprof symbolize`. ---
db = os.path.join(d, 'c.db')
record(args, args.prog, db)
pristine = os.path.join(d, 'pristine.db')
shutil.copy2(db, pristine)
check_unnamed(frames_of(db, C_BYTES), args.prog, 'C before symbolize')

r = symbolize([db], 'xferprof symbolize')
check(r.out.startswith(db + ': ') and 'frames' in r.out, 'symbolize says what it did', r.out)
frames = frames_of(db, C_BYTES)
check_levels(frames, 'C after symbolize')
got = [(f['function'], os.path.basename(f['file'] or ''), f['line'], f['kind'], f['module'],
        f['top_frame']) for f in frames[:3]]
want = [('frames_inner', 'rep_frames.c', marker_line('FRAMES_COPY', C_SOURCE), 'inlined',
         args.prog, 1),
        ('frames_outer', 'rep_frames.c', marker_line('FRAMES_INLINED_CALL', C_SOURCE), 'native',
         args.prog, 0),
        ('main', 'rep_frames.c', marker_line('FRAMES_OUTER_CALL', C_SOURCE), 'native',
         args.prog, 0)]
check_eq(got, want, 'C: the three innermost frames (function, file, line, kind, module, top)')
if len(frames) >= 2:
    check_eq(frames[0]['offset'], frames[1]['offset'],
             'C: an inlined function and the one it is inlined into share their return address')
check(not any((f['module'] or '').endswith(('libcudart.so.13', 'libxferprof.so'))
              for f in frames), 'C: no CUDA or xferprof frames, as in the report', frames)
check_eq(sum(f['top_frame'] for f in frames), 1, 'C: one top frame')

# `report` on a writable database stores the same rows; a read-only one is
# reported without writing them (the view then decodes the raw frames).
reported = os.path.join(d, 'reported.db')
shutil.copy2(pristine, reported)
rep = report(args, [reported], ['--format', 'json'])
expect_rc(rep, 0, 'xferprof report on a writable database')
check_eq(frames_of(reported, C_BYTES), frames, 'report stores what symbolize stores')
conn = open_db(reported)
everything = rows(conn, 'SELECT * FROM stack_frames ORDER BY stack_id, level')
conn.close()
conn = open_db(db)
check_eq(everything, rows(conn, 'SELECT * FROM stack_frames ORDER BY stack_id, level'),
         'report and symbolize: the same rows for every stack')
upto = meta(conn).get('stack_frames_upto')
check_eq(upto, str(scalar(conn, 'SELECT max(id) FROM stacks')), 'meta stack_frames_upto')
conn.close()
before = os.stat(db).st_mtime_ns, open(db, 'rb').read()
symbolize([db], 'xferprof symbolize again')
check((os.stat(db).st_mtime_ns, open(db, 'rb').read()) == before,
      'symbolize again: nothing rewritten when nothing changed')

# A database made before the view: symbolize adds table, view and rows.
old = os.path.join(d, 'old.db')
shutil.copy2(pristine, old)
conn = sqlite3.connect(old)
conn.executescript('DROP VIEW stack_frames; DROP TABLE stack_frame_rows; '
                   'DROP TABLE stack_frame_names; DROP TABLE stack_levels; '
                   'DROP INDEX modules_low;')
conn.close()
symbolize([old], 'xferprof symbolize on a database made before stack_frames')
check_eq(frames_of(old, C_BYTES), frames, 'old database: the same frames')

# --- A Python script run by this interpreter, through ctypes. ---
pdb = os.path.join(d, 'py.db')
r = run([args.xferprof, 'run', '--sim', '-o', pdb, '--', sys.executable, PY_SOURCE],
        clean_env({'PYTHONDONTWRITEBYTECODE': '1', 'PYTHONPATH': None, 'PYTHONHOME': None}))
if not expect_rc(r, 0, 'rep_frames.py under xferprof run --sim'):
    finish()
before_py = frames_of(pdb, PY_BYTES)
check(before_py and all(f['function'] is None for f in before_py),
      'Python before symbolize: raw native frames, no names', before_py)
check(not any(f['kind'] == 'python' for f in before_py), 'Python before symbolize: no Python rows')
symbolize([pdb], 'xferprof symbolize a Python run')
pframes = frames_of(pdb, PY_BYTES)
check_levels(pframes, 'Python after symbolize')
py = [f for f in pframes if f['kind'] == 'python']
got = [(f['level'], f['function'], f['file'], f['line'], f['module'], f['top_frame']) for f in py]
want = [(0, 'upload', PY_SOURCE, py_marker_line('FRAMES_PY_COPY'), PY_SOURCE, 1),
        (1, 'main', PY_SOURCE, py_marker_line('FRAMES_PY_CALL'), PY_SOURCE, 0),
        (2, '<module>', PY_SOURCE, py_marker_line('FRAMES_PY_MAIN'), PY_SOURCE, 0)]
check_eq(got, want, 'Python: level, function, file, line, module and top frame of each '
                    'Python frame (innermost first; ctypes and libffi frames left out)')
# Nothing the report hides: the interpreter's eval loop and call machinery.
check(not any(f['function'] in ('_PyEval_EvalFrameDefault', 'ffi_call', '_PyObject_MakeTpCall')
              for f in pframes), 'Python: no interpreter frame left',
      [f['function'] for f in pframes])

# --- Bad input: exit 2, one line, nothing on stdout. ---


def bad(argv, reason, what, env_runner=None):
    cmd = [args.xferprof, 'symbolize'] + argv
    r = run(env_runner + cmd if env_runner else cmd, clean_env())
    check_eq(r.rc, 2, what + ': exit status')
    lines = [l for l in r.err.splitlines() if l.strip()]
    check_eq(len(lines), 1, what + ': one line on stderr (%r)' % r.err)
    check(r.err.startswith('xferprof symbolize: '), what + ': says who speaks', repr(r.err))
    check(reason in r.err, '%s: says %r' % (what, reason), repr(r.err))
    check_eq(r.out, '', what + ': nothing on stdout')


bad([os.path.join(d, 'missing.db')], 'no such database', 'a missing database')
text = os.path.join(d, 'notes.txt')
with open(text, 'w') as f:
    f.write('just some text\n' * 100)
bad([text], 'not an xferprof database', 'a text file')
cut = os.path.join(d, 'cut.db')
with open(pristine, 'rb') as f:
    data = f.read()
with open(cut, 'wb') as f:
    f.write(data[:len(data) // 2])
bad([cut], 'truncated or corrupt', 'a database cut in half')
ro = os.path.join(d, 'ro.db')
shutil.copy2(pristine, ro)
os.chmod(ro, 0o644)
bad([ro], 'cannot write', 'a database its user cannot write',
    ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'])
bad([], 'no database given', 'no database')
bad(['--frobnicate', db], 'unknown option', 'an unknown option')
r = run([args.xferprof, 'symbolize', '--help'], clean_env())
check_eq(r.rc, 0, 'symbolize --help')
check('Usage: xferprof symbolize' in r.out, 'symbolize --help prints the usage')
r = run([args.xferprof, '--help'], clean_env())
check('symbolize' in r.out, 'xferprof --help lists symbolize')
finish()
