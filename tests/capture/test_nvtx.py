"""NVTX ranges (issue 4).  cap_nvtx pushes, pops, starts and ends NVTX ranges
on two threads around copies of distinct sizes, and writes what it did (the
ranges open around each copy, the values push and pop returned and the level
NVTX specifies, the start/end ids) to a results file.  Checked:

- the program's stdout and exit status are the same with and without xferprof
  (push and pop return NVTX_NO_PUSH_POP_TRACKING, -2, without a tool: by
  NVTX's design the values differ with one, so they are checked apart);
- under xferprof push returns the 0-based level in its domain, pop the level
  it left, an unbalanced pop a negative value, starts unique nonzero ids;
- nvtx_ranges holds every range with its name, domain, kind, thread, depth,
  parent and times; every copy's (and the memset's and sync's) nvtx_range is
  the innermost push range that the program had open around it, NULL outside;
- `xferprof run` sets NVTX_INJECTION64_PATH; the variable set by hand with
  LD_PRELOAD works the same; one set to another tool is kept, with one
  warning, and nothing is recorded."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

NAME_MAX = 512          # XP_NVTX_NAME_MAX: longer names are cut
NO_TOOL = -2            # NVTX_NO_PUSH_POP_TRACKING

args = parse_args()
d = tmpdir('nvtx')


def parse_results(path):
    res = {'copy': {}, 'ret': [], 'start': {}, 'end': {}, 'memset': [], 'sync': []}
    with open(path, encoding='utf-8') as f:
        for line in f.read().splitlines():
            kind, rest = line.split(' ', 1)
            if kind == 'copy':
                tid, nbytes, p = rest.split(' ', 2)
                res['copy'][int(nbytes)] = (int(tid), p)
            elif kind == 'ret':
                what, got, want = rest.split()
                res['ret'].append((what, int(got), int(want)))
            elif kind == 'start':
                name, rid, tid = rest.split()
                res['start'][int(rid)] = (name, int(tid))
            elif kind == 'end':
                rid, tid = rest.split()
                res['end'][int(rid)] = int(tid)
            elif kind in ('memset', 'sync'):
                res[kind].append(rest)
    return res


def path_names(p):
    """The program's path as a list of expected names (cut as xferprof cuts them)."""
    if p == '-':
        return []
    return [None if n == '~' else n[:NAME_MAX] for n in p.split('|')]


# Without xferprof: the reference for stdout and exit status.
plain_res = os.path.join(d, 'plain.txt')
plain = plain_run(args, [args.prog, plain_res])
expect_rc(plain, 0, 'cap_nvtx without the preload')
pr = parse_results(plain_res)
check(pr['ret'], 'the program noted its push/pop return values')
for what, got, _ in pr['ret']:
    check_eq(got, NO_TOOL, 'without a tool, %s returns NVTX_NO_PUSH_POP_TRACKING' % what)

db = os.path.join(d, 'run.db')
res_path = os.path.join(d, 'with.txt')
r = xferprof_run(args, ['-o', db], [args.prog, res_path])
if not expect_rc(r, 0, 'cap_nvtx under xferprof run --sim'):
    finish()
check_eq(r.out_bytes, plain.out_bytes, 'stdout identical with and without xferprof')
check('NVTX' not in r.err, 'no NVTX warning from xferprof run', r.err)
res = parse_results(res_path)

# Return values as NVTX specifies them.
for what, got, want in res['ret']:
    if want < 0:
        check(got < 0, '%s returns a negative value' % what, got)
    else:
        check_eq(got, want, '%s returns the level' % what)
starts = sorted(res['start'])
check(all(i != 0 for i in starts) and len(set(starts)) == len(starts),
      'start ids are nonzero and unique', starts)

conn = open_db(db)
check_eq(meta(conn).get('nvtx'), 'injected', 'meta nvtx')
ranges = {row['id']: row for row in rows(conn, 'SELECT * FROM nvtx_ranges')}
pushes = sum(1 for what, _, _ in res['ret'] if what == 'push')
check_eq(sum(1 for x in ranges.values() if x['kind'] == 'push'), pushes, 'push ranges')
check_eq(sum(1 for x in ranges.values() if x['kind'] == 'startend'), len(res['start']),
         'start/end ranges')
check_eq(len(ranges), pushes + len(res['start']), 'nvtx_ranges rows (nothing else)')


def chain(rid):
    """Names from the outermost push range to rid, following parent_id."""
    out = []
    while rid is not None:
        x = ranges.get(rid)
        if not check(x is not None, 'range %r exists' % rid):
            break
        out.append(x['name'])
        rid = x['parent_id']
    return out[::-1]


def check_attributed(what, row, tid, p):
    want = path_names(p)
    rid = row['nvtx_range']
    if not want:
        check_eq(rid, None, '%s: no range' % what)
        return
    if not check(rid in ranges, '%s: nvtx_range names a range' % what, rid):
        return
    x = ranges[rid]
    check_eq(x['kind'], 'push', '%s: attributed to a push range' % what)
    check_eq(x['tid'], tid, '%s: range on the copy\'s thread' % what)
    check_eq(chain(rid), want, '%s: innermost range and its parents' % what)
    check(x['start_ns'] <= row['start_ns'] and
          (x['end_ns'] is None or row['end_ns'] <= x['end_ns']),
          '%s: inside the range in time' % what, x, row['start_ns'], row['end_ns'])


copies = {row['bytes']: row for row in rows(conn, 'SELECT * FROM copies')}
check_eq(sorted(copies), sorted(res['copy']), 'copies (by their distinct sizes)')
for nbytes, (tid, p) in sorted(res['copy'].items()):
    if nbytes in copies:
        check_eq(copies[nbytes]['tid'], tid, 'copy %d: tid' % nbytes)
        check_attributed('copy %d' % nbytes, copies[nbytes], tid, p)
main_tid = res['copy'][101][0]
for what, table, where in (('memset', 'memsets', "bytes = 1000"),
                           ('sync', 'syncs', "api = 'cudaDeviceSynchronize'")):
    got = rows(conn, 'SELECT * FROM %s WHERE %s' % (table, where))
    if check_eq(len(got), len(res[what]), what + ' rows'):
        for row, p in zip(got, res[what]):
            tid, p = p.split(' ', 1) if what == 'memset' else p.split(' ', 1)
            if what == 'memset':
                p = p.split(' ', 1)[1]
            check_attributed(what, row, int(tid), p)

# The two threads' step/forward ranges: depth, parents, times.
thread_tids = sorted({res['copy'][10001][0], res['copy'][20001][0]})
check(len(thread_tids) == 2, 'two threads', thread_tids)
for tid in thread_tids:
    mine = sorted((x for x in ranges.values() if x['tid'] == tid and
                   (x['name'] or '').startswith(('step', 'forward'))), key=lambda x: x['start_ns'])
    check_eq([x['name'] for x in mine],
             ['step 0', 'forward', 'step 1', 'forward', 'step 2', 'forward'],
             'tid %d: ranges in start order' % tid)
    for x in mine:
        parent = ranges.get(x['parent_id'])
        step = x['name'].startswith('step')
        check_eq(x['depth'], 0 if step else 1, 'tid %d %s: depth' % (tid, x['name']))
        check_eq(x['domain'], None, 'tid %d %s: default domain' % (tid, x['name']))
        check_eq(x['end_tid'], tid, 'tid %d %s: popped on its thread' % (tid, x['name']))
        check(x['end_ns'] is not None and x['start_ns'] < x['end_ns'],
              'tid %d %s: start before end' % (tid, x['name']), x)
        if step:
            check_eq(parent, None, 'tid %d %s: top level' % (tid, x['name']))
        elif check(parent is not None and parent['name'].startswith('step'),
                   'tid %d forward: inside a step' % tid, parent):
            check(parent['start_ns'] <= x['start_ns'] and x['end_ns'] <= parent['end_ns'],
                  'tid %d forward: within its step in time' % tid, parent, x)

# Start/end ranges: ids as returned, names, domains, both threads.
want_names = {'load': ('load', None), 'dom_startend': ('dom startend', 'xpdomain'),
              'epoch': ('epoch', None)}
for rid, (name, tid) in res['start'].items():
    x = ranges.get(rid)
    if not check(x is not None, 'start/end range %s has the id start returned (%d)' % (name, rid)):
        continue
    check_eq((x['kind'], x['name'], x['domain'], x['tid'], x['depth'], x['parent_id']),
             ('startend',) + want_names[name] + (tid, None, None), 'range %s' % name)
    check_eq(x['end_tid'], res['end'].get(rid), 'range %s: ended by' % name)
    check(x['end_ns'] is not None and x['start_ns'] <= x['end_ns'], 'range %s: times' % name, x)
load = [i for i, (n, _) in res['start'].items() if n == 'load']
if load and load[0] in ranges:
    check(ranges[load[0]]['tid'] != ranges[load[0]]['end_tid'],
          'load: started and ended on different threads', ranges[load[0]])


def by_name(name):
    got = [x for x in ranges.values() if x['name'] == name]
    check_eq(len(got), 1, 'one range named %r' % name)
    return got[0] if got else {}


dom = by_name('dom push')
reg = by_name('registered name')
plain_in = by_name('plain in dom')
check_eq((dom.get('domain'), dom.get('depth'), dom.get('parent_id')), ('xpdomain', 0, None),
         'domain range: domain, depth, parent')
check_eq((reg.get('domain'), reg.get('depth'), reg.get('parent_id')),
         ('xpdomain', 1, dom.get('id')), 'registered-string range: domain, depth, parent')
check_eq((plain_in.get('domain'), plain_in.get('depth'), plain_in.get('parent_id')),
         (None, 0, reg.get('id')), 'default-domain range inside a domain range')
check_eq(by_name('x' * NAME_MAX).get('depth'), 1, 'a long name is cut to %d bytes' % NAME_MAX)
by_name('wide \u00e9t\u00e9 \u20ac')
check_eq(sorted(x['depth'] for x in ranges.values() if x['name'] is None), [2, 3],
         'NULL and unknown-type messages: ranges without a name')
check_eq(by_name('unclosed').get('end_ns'), None, 'a range open at exit has no end')
check_records_lost_zero(conn)

# The variable set by hand, with LD_PRELOAD, as docs/interposition.md says.
db2 = os.path.join(d, 'manual.db')
m = manual_run(args, db2, [args.prog], {'NVTX_INJECTION64_PATH': args.preload})
expect_rc(m, 0, 'cap_nvtx with the preload and NVTX_INJECTION64_PATH set by hand')
conn2 = open_db(db2)
check_eq(scalar(conn2, 'SELECT count(*) FROM nvtx_ranges'), len(ranges), 'ranges, set by hand')
check_eq(scalar(conn2, 'SELECT count(*) FROM copies WHERE nvtx_range IS NOT NULL'),
         sum(1 for _, p in res['copy'].values() if p != '-'), 'attributed copies, set by hand')

# Another tool's injection is kept: one warning, no ranges.
db3 = os.path.join(d, 'other.db')
other = os.path.join(d, 'libothertool.so')
o = xferprof_run(args, ['-o', db3], [args.prog], {'NVTX_INJECTION64_PATH': other})
expect_rc(o, 0, 'cap_nvtx with another NVTX tool set')
check_eq(o.out_bytes, plain.out_bytes, 'stdout identical with another NVTX tool set')
check_eq(sum(1 for line in o.err.splitlines() if 'NVTX_INJECTION64_PATH' in line), 1,
         'one warning about NVTX_INJECTION64_PATH')
conn3 = open_db(db3)
check_eq(scalar(conn3, 'SELECT count(*) FROM nvtx_ranges'), 0, 'no ranges with another tool')
check_eq(meta(conn3).get('nvtx'), None, 'meta nvtx absent with another tool')
check_eq(scalar(conn3, 'SELECT count(*) FROM copies'), len(res['copy']),
         'copies still recorded with another tool')
finish()
