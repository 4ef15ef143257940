"""The capture window (issue 16 item 5).  cap_window makes copies of distinct
sizes before, inside and after windows opened by cudaProfilerStart/Stop, by
NVTX ranges, or by time.  Checked:

- only the copies (and memsets, syncs) inside a window are rows; those
  outside are counted in meta window_skipped_*; allocations and frees are
  always rows: a pinned buffer allocated before the window classes a copy
  inside it as pinned, a buffer allocated before and freed inside is no
  unknown free, and the report finds the one buffer never freed (leak) and no
  invalid free;
- meta says the window used and each window (capture_window.N), and the
  report's header says "captured: ...";
- a second cudaProfilerStart does not nest, a Stop with none open is no
  error; two Start/Stop pairs are two windows;
- nvtx: NAME matches push/pop and start/end ranges of the default domain,
  NAME@DOMAIN that domain's, NAME@* any;
- --delay/--duration: the copy 2.5 s into the run, between two 2.5 s pauses, is
  the only one recorded;
- bad values of each option, and of the variables, are refused by
  `xferprof run` with exit status 2 and one line naming the setting; the
  program's output is the same with and without a window."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('window')


def run_window(tag, mode, options):
    db = os.path.join(d, tag + '.db')
    r = xferprof_run(args, ['-o', db] + options, [args.prog, mode])
    if not expect_rc(r, 0, '%s: cap_window %s under xferprof run' % (tag, mode)):
        finish()
    plain = plain_run(args, [args.prog, mode])
    check_eq(len(r.out.splitlines()), len(plain.out.splitlines()),
             tag + ': stdout as without xferprof')
    return open_db(db), parse_values(r.out), db


def values(conn, sql):
    return [tuple(r.values()) for r in rows(conn, sql)]


def copy_sizes(conn):
    return sorted(n for (n,) in values(conn, 'SELECT bytes FROM copies'))


def report_json(db):
    p = subprocess.run([args.xferprof, 'report', '--format', 'json', db],
                       capture_output=True, text=True)
    check_eq(p.returncode, 0, 'report exit status')
    return json.loads(p.stdout) if p.returncode == 0 else {}


def report_text(db):
    p = subprocess.run([args.xferprof, 'report', db], capture_output=True, text=True)
    check_eq(p.returncode, 0, 'report exit status')
    return p.stdout


# ---- cudaProfilerApi ----------------------------------------------------------
conn, vals, db = run_window('profiler', 'profiler', ['--capture-range', 'cudaProfilerApi'])
check_eq(copy_sizes(conn), [2002, 4004], 'profiler: only the copies inside the two windows')
pinned = vals['pinned']
for (src, host_mem) in values(conn, 'SELECT src, host_mem FROM copies WHERE bytes = 2002'):
    check_eq(u64(src), pinned, 'profiler: the copy inside reads the pinned buffer')
    check_eq(host_mem, 'pinned', 'profiler: pinned memory allocated before the window is pinned')
check_eq(sorted(n for (n,) in values(conn, 'SELECT bytes FROM memsets')), [77],
         'profiler: only the memset inside')
check_eq(scalar(conn, 'SELECT count(*) FROM syncs'), 1, 'profiler: only the sync inside')
# By size: the simulator may hand the buffer freed inside out again as the one kept.
allocs = {b: (u64(p), f) for (p, b, f) in
          values(conn, 'SELECT ptr, bytes, free_ns IS NOT NULL FROM allocations')}
check_eq(allocs.get(1 << 20), (vals['freed_inside'], 1),
         'profiler: the buffer allocated before the window and freed inside is known and freed')
check_eq(allocs.get(3 << 20), (vals['kept'], 0), 'profiler: the buffer kept is not freed')
check_eq(allocs.get(1 << 16), (pinned, 1), 'profiler: the pinned buffer, freed after the window')
check_eq(scalar(conn, 'SELECT count(*) FROM unknown_frees'), 0, 'profiler: no unknown free')
m = meta(conn)
check_eq(m.get('capture_range'), 'cudaProfilerApi', 'profiler: meta capture_range')
check_eq(m.get('capture_windows'), '2', 'profiler: two windows (Start twice is one)')
w = [m.get('capture_window.%d' % i, '').split() for i in (1, 2)]
check(all(len(x) == 2 and int(x[0]) < int(x[1]) for x in w), 'profiler: windows start and end', w)
check(len(w[0]) == 2 and len(w[1]) == 2 and int(w[0][1]) <= int(w[1][0]),
      'profiler: the second window after the first', w)
check_eq((m.get('window_skipped_copies'), m.get('window_skipped_memsets'),
          m.get('window_skipped_syncs'), m.get('window_skipped_calls')),
         ('3', '1', '1', '5'), 'profiler: calls outside the windows counted by kind')
check_records_lost_zero(conn)
rep = report_json(db)
rules = [f.get('rule') for f in rep.get('findings', [])]
check('invalid-free' not in rules, 'profiler: no invalid-free finding', rules)
leaks = [f for f in rep.get('findings', []) if f.get('rule') == 'leak']
check_eq(sum(f.get('bytes', 0) for f in leaks), 3 << 20, 'profiler: the leak is the buffer kept')
text = report_text(db)
check('captured: cudaProfilerApi, 2 windows' in text, 'profiler: the report says the window',
      text[:600])
check('5 calls outside the capture window' in text, 'profiler: the report counts calls outside')

# ---- nvtx ---------------------------------------------------------------------
for spec, want in (('capture', [2002, 4004]), ('capture@dom', [3003]),
                   ('capture@*', [2002, 3003, 4004])):
    tag = 'nvtx_' + spec.replace('@', '_at_').replace('*', 'any')
    conn, _, _ = run_window(tag, 'nvtx', ['--capture-range=nvtx', '--nvtx-capture', spec])
    check_eq(copy_sizes(conn), want, 'nvtx %s: the copies inside its ranges' % spec)
    m = meta(conn)
    check_eq((m.get('capture_range'), m.get('capture_nvtx'), m.get('capture_windows')),
             ('nvtx', spec, str(len(want))), 'nvtx %s: meta' % spec)
    # NVTX ranges are recorded whatever the window.
    check_eq(scalar(conn, "SELECT count(*) FROM nvtx_ranges WHERE name = 'other'"), 1,
             'nvtx %s: ranges outside the window are rows' % spec)

# ---- delay and duration ----------------------------------------------------------
conn, _, _ = run_window('time', 'time', ['--delay', '1.5', '--duration', '2'])
check_eq(copy_sizes(conn), [2002], 'time: the copy between the pauses only')
m = meta(conn)
check_eq((m.get('capture_range'), m.get('capture_delay_ns'), m.get('capture_duration_ns'),
          m.get('capture_windows')), ('none', '1500000000', '2000000000', '1'), 'time: meta')
w = m.get('capture_window.1', '').split()
check(len(w) == 2 and int(w[1]) - int(w[0]) == 2000000000,
      'time: the window lasted its duration', w)
check_eq(int(w[0]) if w else None, int(m.get('capture_load_ns', 0)) + 1500000000,
         'time: the window opened 1.5 s after the preload was loaded')

# ---- bad values ------------------------------------------------------------------
bad = [(['--capture-range', 'cudaprofilerapi'], 'XFERPROF_CAPTURE_RANGE'),
       (['--capture-range', 'nvtx'], 'XFERPROF_NVTX_CAPTURE'),
       (['--nvtx-capture', 'step'], 'XFERPROF_CAPTURE_RANGE=nvtx'),
       (['--capture-range', 'nvtx', '--nvtx-capture', '@dom'], 'XFERPROF_NVTX_CAPTURE'),
       (['--capture-range', 'nvtx', '--nvtx-capture', 'step@'], 'XFERPROF_NVTX_CAPTURE'),
       (['--delay', '-1'], '--delay'), (['--delay', '1e3'], '--delay'),
       (['--delay', '.'], '--delay'), (['--duration', '0'], '--duration'),
       (['--duration', 'x'], '--duration')]
for opts, says in bad:
    out = os.path.join(d, 'bad.db')
    remove(out)
    r = xferprof_run(args, ['-o', out] + opts, [args.prog, 'time'])
    what = 'xferprof run %s' % ' '.join(repr(o) for o in opts)
    check_eq(r.rc, 2, what + ': exit status 2')
    check(says in r.err and len(r.err.strip().splitlines()) == 1, what + ': one line naming it',
          r.err)
    check(not os.path.exists(out), what + ': nothing ran')
# A variable set by hand is checked the same.
r = xferprof_run(args, ['-o', os.path.join(d, 'bad.db')], [args.prog, 'time'],
                 {'XFERPROF_DURATION': '-2'})
check_eq(r.rc, 2, 'XFERPROF_DURATION=-2: exit status 2')
check('XFERPROF_DURATION' in r.err, 'XFERPROF_DURATION=-2: named', r.err)

finish()
