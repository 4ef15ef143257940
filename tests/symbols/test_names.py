"""sym_names (C++ and C at -O2 -g) under `xferprof run --sim`: every report
format names a call site after the function the source shows it in,
demangled, with the functions inlined at -O2 expanded into their inline
chain (own file:line, then "inlined into" the caller at the call's line);
names and chains come back the same from the symbols cache; `xferprof diff`
of two runs matches every site exactly.  The same program without symbols
and stripped (--prog2) shows module+offset only: never a neighbour's name,
never a line.  Lines come from the marker comments in the sources."""
import os
import sqlite3
import subprocess
import sys

SYM_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(SYM_DIR, '..', 'report'))
from rep_common import *  # noqa: E402,F401,F403

CPP = os.path.join(SYM_DIR, 'sym_names.cpp')
CSRC = os.path.join(SYM_DIR, 'sym_inline_c.c')
UPLOAD = 'dl::Loader::upload(float*, unsigned long)'
# Static functions have no linkage name in GCC's DWARF: their plain name.
CHUNK = 'copy_chunk'
WEIGHTS = 'upload_weights'


def line(marker, path=CPP):
    return marker_line(marker, path)


def frame_view(f):
    return (f.get('demangled'), os.path.basename(f['file'] or ''), f['line'], f.get('inlined'))


def frames_of(doc, mod):
    """Every frame of the report (sites and findings) in module mod."""
    out = [f for s in doc['sites'] for f in s['frames']]
    out += [f for x in doc['findings'] if x.get('site') for f in x['site']['frames']]
    return [f for f in out if f['module'] == mod]


def sites_at(doc, demangled):
    return [s for s in doc['sites'] if s['frames'] and s['frames'][0].get('demangled') == demangled]


args = parse_args()
prog = args.prog
mod = os.path.basename(prog)

# The test means something only if the compiler inlined what the source asks
# it to: an inlined static function has no symbol of its own.
nm = subprocess.run(['nm', '-C', prog], capture_output=True, text=True, check=True).stdout
for fn in ('copy_chunk', 'upload_weights', 'c_upload'):
    check(not any(l.split()[-1].startswith(fn) for l in nm.splitlines() if l.split()),
          '%s is inlined (no symbol of its own in %s)' % (fn, prog))

d = tmpdir('symbols-names')
db = os.path.join(d, 'run.db')
record(args, prog, db)
doc = report_json(args, [db])


def check_names(doc, what):
    # The namespaced method: demangled for people, mangled kept for matching.
    up = sites_at(doc, UPLOAD)
    check_eq(sum(s['copies'] for s in up), 2, what + ': copies of %s' % UPLOAD)
    for s in up:
        f = s['frames']
        check_eq(f[0]['function'], '_ZN2dl6Loader6uploadEPfm', what + ': the raw name is kept')
        check_eq(frame_view(f[0]), (UPLOAD, 'sym_names.cpp', line('SYM_UPLOAD'), False),
                 what + ': the method frame')
        check_eq(frame_view(f[1]), ('main', 'sym_names.cpp', line('SYM_UPLOAD_CALL'), False),
                 what + ': its caller')
    # Two levels of inlining into main: each function at its own line.
    ch = sites_at(doc, CHUNK)
    check_eq([s['copies'] for s in ch], [3], what + ': one site for the inlined copy_chunk')
    for s in ch:
        f = s['frames']
        check_eq([frame_view(x) for x in f[:3]],
                 [(CHUNK, 'sym_names.cpp', line('SYM_CHUNK'), True),
                  (WEIGHTS, 'sym_names.cpp', line('SYM_CHUNK_CALL'), True),
                  ('main', 'sym_names.cpp', line('SYM_WEIGHTS_CALL'), False)],
                 what + ': copy_chunk inlined into upload_weights inlined into main')
        check_eq(len({x['address'] for x in f[:3]}), 1, what + ': one return address for the chain')
    # A C function inlined into its caller.
    cs = sites_at(doc, 'c_upload')
    check_eq([s['copies'] for s in cs], [1], what + ': one site for the inlined c_upload')
    for s in cs:
        f = s['frames']
        check_eq(f[0]['function'], 'c_upload', what + ': a C name is its own demangled name')
        check_eq([frame_view(x) for x in f[:3]],
                 [('c_upload', 'sym_inline_c.c', line('SYM_C_UPLOAD', CSRC), True),
                  ('c_step', 'sym_inline_c.c', line('SYM_C_CALL', CSRC), False),
                  ('main', 'sym_names.cpp', line('SYM_C_STEP_CALL'), False)],
                 what + ': c_upload inlined into c_step')
    # Never guessed: no line without a function, no name left mangled.
    for f in frames_of(doc, mod):
        if f['function'] is None:
            check_eq((f['file'], f['line'], f.get('demangled'), f.get('inlined')), (None, None, None, False),
                     what + ': no line without a function at %#x' % f['offset'])
        else:
            check(f.get('demangled') and not f['demangled'].startswith('_Z'),
                  what + ': demangled', f)


check_names(doc, 'first report')

# What the cache answers is the same, chains included: with the program
# gone, only the cache knows the names.
con = sqlite3.connect(db)
check(con.execute('SELECT count(*) FROM symbol_inlines').fetchone()[0] >= 3,
      'the inline chains are cached')
con.close()
os.rename(prog, os.path.join(d, 'moved-away'))
try:
    check_names(report_json(args, [db]), 'from the cache')
finally:
    os.rename(os.path.join(d, 'moved-away'), prog)

# A cache written by an older analyzer (no inline chains, the caller's name
# for an inlined line) is not trusted: it is resolved again.
db_old = os.path.join(d, 'old-cache.db')
record(args, prog, db_old)
con = sqlite3.connect(db_old)
con.execute('CREATE TABLE symbols(module_path TEXT NOT NULL, build_id TEXT NOT NULL, '
            'offset INTEGER NOT NULL, function TEXT, file TEXT, line INTEGER, '
            'PRIMARY KEY (module_path, build_id, offset)) WITHOUT ROWID')
for f in frames_of(doc, mod):
    path, bid = con.execute('SELECT path, build_id FROM modules WHERE path = ?', (prog,)).fetchone()
    con.execute('INSERT OR REPLACE INTO symbols VALUES (?, ?, ?, ?, ?, ?)',
                (path, bid, f['offset'], 'main', 'sym_names.cpp', 1))
con.commit()
con.close()
check_names(report_json(args, [db_old]), 'over an old cache')

# Text, Markdown and HTML show the demangled names and the chain.
weights_at = '%s (sym_names.cpp:%d)' % (WEIGHTS, line('SYM_CHUNK_CALL'))
chunk_at = '%s (sym_names.cpp:%d)' % (CHUNK, line('SYM_CHUNK'))
for fmt, want in (('text', ['at ' + chunk_at + '\n', 'inlined into ' + weights_at + '\n',
                            'inlined into main (sym_names.cpp:%d)\n' % line('SYM_WEIGHTS_CALL'),
                            'at %s (sym_names.cpp:%d)\n' % (UPLOAD, line('SYM_UPLOAD'))]),
                  ('markdown', ['`%s inlined into %s`' % (chunk_at, weights_at),
                                '`%s (sym_names.cpp:%d)`' % (UPLOAD, line('SYM_UPLOAD'))]),
                  ('html', [chunk_at, UPLOAD])):
    r = report(args, [db], ['--format', fmt])
    check_eq(r.rc, 0, fmt + ': exit status')
    for w in want:
        check(w in r.out, '%s shows %r' % (fmt, w), r.out[:3000])
    check('_ZN2dl' not in r.out and '_ZL' not in r.out, fmt + ': no mangled name shown')

# Two runs of the same program: every site matches exactly, by site and by
# function, and the diff shows names as the report does.
db2 = os.path.join(d, 'run2.db')
record(args, prog, db2)
for by in ('site', 'function'):
    r = run([args.xferprof, 'diff', db, db2, '--by', by, '--format', 'json'], clean_env())
    check(r.rc in (0, 1), 'diff --by %s runs' % by, r.describe())
    dd = json.loads(r.out)
    m = dd['matching']
    check_eq((m['approximate'], m['gone'], m['new']), (0, 0, 0), 'diff --by %s: all exact' % by)
    check(m['exact'] >= 3, 'diff --by %s: the sites matched' % by, m)
    firsts = [s['frames'][0] for s in dd['sites'] if s['frames']]
    check(any(f.get('demangled') == CHUNK and f.get('inlined') for f in firsts),
          'diff --by %s: the inlined site keeps its name' % by, json.dumps(firsts)[:2000])
r = run([args.xferprof, 'diff', db, db2], clean_env())
check(UPLOAD in r.out and '_ZN2dl' not in r.out, 'diff text: demangled', r.out[:2000])

# Stripped, no debug information: module+offset for every frame of it.
db_s = os.path.join(d, 'stripped.db')
record(args, args.prog2, db_s)
doc = report_json(args, [db_s])
smod = os.path.basename(args.prog2)
ours = frames_of(doc, smod)
check(len(ours) >= 6, 'stripped: frames in the program', len(ours))
for f in ours:
    check_eq((f['function'], f.get('demangled'), f['file'], f['line'], f.get('inlined')),
             (None, None, None, None, False), 'stripped: no name or line for +%#x' % f['offset'])
    check(f['offset'] > 0, 'stripped: an offset in the module', f)
r = report(args, [db_s], ['--format', 'text'])
check('%s+0x' % smod in r.out, 'stripped text: module+offset', r.out[:2000])
finish()
