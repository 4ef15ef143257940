"""`xferprof export --format perfetto`: the workload (exp_workload.c) or, with
--example, examples/pinned_vs_pageable, run under `xferprof run --sim`; the trace
is checked against the trace-event format by exp_trace.py (written from the
format, not from the exporter), then against the program and the database:
copies (count, bytes, pinned or not, thread, stream tracks), memset, syncs,
the failed call, the memory counters' peaks; and NVTX ranges from an
nvtx_ranges table added to a copy of the database."""
import gzip
import json
import os
import shutil
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'capture'))
from cap_common import *  # noqa: E402,F401,F403
from exp_trace import check_trace, thread_names, to_ns  # noqa: E402

example = '--example' in sys.argv
args = parse_args([a for a in sys.argv[1:] if a != '--example'])
d = tmpdir('export-perfetto')
db = os.path.join(d, 'run.db')
trace_path = os.path.join(d, 'run.json')
STREAM_TID_MIN = 1 << 30

r = xferprof_run(args, ['-o', db], [args.prog])
if not expect_rc(r, 0, 'the program under xferprof run --sim'):
    finish()
facts = {k: v[0] for k in ('copies', 'copy_bytes', 'pinned_copies', 'async_copies',
                          'peak_device', 'pinned_host', 'pid', 'main_tid', 'worker_tid')
         for v in [parse_int_lines(r.out, k)] if v}

e = run([args.xferprof, 'export', db, '--format', 'perfetto', '-o', trace_path], clean_env())
expect_rc(e, 0, 'xferprof export --format perfetto')
check_eq(e.err, '', 'export says nothing on stderr')
with open(trace_path, 'rb') as f:
    data = f.read()
obj, events = check_trace(data)
if not events:
    fatal('no events to check')

# The default format is perfetto, and standard output gets the same bytes.
e2 = run([args.xferprof, 'export', db], clean_env())
expect_rc(e2, 0, 'xferprof export DB (stdout)')
check(e2.out_bytes == data, 'export to stdout equals export to -o FILE')

conn = open_db(db)
m = meta(conn)
pid = int(m['pid'])
base = int(m['start_mono_ns'])
names = thread_names(events)
real = [e for e in events if e['ph'] != 'M' and e['tid'] < STREAM_TID_MIN]
on_streams = [e for e in events if e['ph'] != 'M' and e['tid'] >= STREAM_TID_MIN]

check(all(e['pid'] == pid for e in events), 'every event has the process id of meta pid')
pn = [e for e in events if e['ph'] == 'M' and e['name'] == 'process_name']
check(len(pn) == 1 and pn[0]['args']['name'] == m['cmdline'],
      'one process_name, the cmdline', pn)
for (p, t), name in names.items():
    if t < STREAM_TID_MIN:
        check_eq(name, 'tid %d' % t, 'thread name of tid %d' % t)
    else:
        check(name.startswith('stream 0x') or 'default stream' in name,
              'stream track %d is named after its stream' % t, name)
check_eq(obj.get('displayTimeUnit'), 'ns', 'displayTimeUnit')
check_eq(obj.get('metadata', {}).get('xferprof', {}).get('pid'), m['pid'], 'metadata has meta')

# Copies: the host view, one slice per row of the copies view.
db_copies = {c['id']: c for c in rows(conn, 'SELECT * FROM copies')}
copies = [e for e in real if e.get('cat') == 'copy']
check_eq(len(copies), len(db_copies), 'copy slices on threads = rows of copies')
for c in copies:
    a = c['args']
    row = db_copies.get(a.get('id'))
    if not check(row is not None, 'copy slice has the id of a copy', a):
        continue
    for k in ('api', 'bytes', 'direction', 'host_mem', 'blocking', 'device', 'status'):
        check_eq(a.get(k), row[k], 'copy %d: args.%s' % (row['id'], k))
    check_eq(int(a['stream'], 16), u64(row['stream']), 'copy %d: stream' % row['id'])
    if row['fingerprint'] is None:
        check('fingerprint' not in a, 'copy %d: no fingerprint' % row['id'], a)
    else:
        check_eq(int(a['fingerprint'], 16), u64(row['fingerprint']),
                 'copy %d: fingerprint' % row['id'])
    check_eq(c['tid'], row['tid'], 'copy %d: on its thread' % row['id'])
    check(abs(to_ns(c['ts']) - (row['start_ns'] - base)) <= 1,
          'copy %d: ts = start_ns - start_mono_ns' % row['id'], c['ts'], row['start_ns'] - base)
    check(abs(to_ns(c['dur']) - row['dur_ns']) <= 1, 'copy %d: dur = dur_ns' % row['id'])
    dirn = row['direction'] or 'copy'
    check(c['name'].startswith(dirn + ' '), 'copy %d: name starts with %s' % (row['id'], dirn),
          c['name'])
async_rows = [c for c in db_copies.values() if (c['blocking'] or '').startswith('async')]
stream_copies = [e for e in on_streams if e.get('cat') == 'copy']
check_eq(sorted(e['args']['id'] for e in stream_copies), sorted(c['id'] for c in async_rows),
         'async copies (and only they) are also on a stream track')
streams_db = {(c['device'], u64(c['stream'])) for c in async_rows if c['stream'] not in (0, 1, 2)}
check_eq(len({e['tid'] for e in stream_copies
              if not names[(pid, e['tid'])].startswith(('default', 'per-thread'))}),
         len(streams_db), 'one stream track per stream')

syncs_db = rows(conn, 'SELECT api, tid, start_ns FROM syncs')
syncs = [e for e in real if e.get('cat') == 'sync']
check_eq(sorted((s['name'], s['tid']) for s in syncs), sorted((s['api'], s['tid']) for s in syncs_db),
         'sync slices (name = api, thread) = rows of syncs')
errors_db = rows(conn, 'SELECT api, status, detail, tid FROM errors')
errs = [e for e in real if e.get('cat') == 'error']
check_eq(sorted((x['args']['api'], x['args']['status'], x['args']['detail'], x['tid']) for x in errs),
         sorted((x['api'], x['status'], x['detail'], x['tid']) for x in errors_db),
         'error instants = rows of errors')
check(all(x['ph'] == 'i' and x.get('s') == 't' for x in errs), 'errors are thread instants')
memsets_db = rows(conn, 'SELECT bytes FROM memsets')
ms = [e for e in real if e.get('cat') == 'memset']
check_eq(sorted(x['args']['bytes'] for x in ms), sorted(x['bytes'] for x in memsets_db),
         'memset slices = rows of memsets')


def counter(name):
    return [e for e in events if e['ph'] == 'C' and e['name'] == name]


def replay(kinds):
    """Peak and final live bytes from the allocations view."""
    ev = []
    for a in rows(conn, 'SELECT * FROM allocations WHERE kind IN (%s)'
                  % ','.join("'%s'" % k for k in kinds)):
        ev.append((a['alloc_ns'], 0, a['bytes']))
        if a['free_ns'] is not None:
            ev.append((a['free_ns'], 1, -a['bytes']))
    live = peak = 0
    for _, _, delta in sorted(ev):
        live += delta
        peak = max(peak, live)
    return peak, live


dev = counter('device memory')
pin = counter('pinned host memory')
peak_db, final_db = replay(('device', 'physical'))
check(dev and max(e['args']['bytes'] for e in dev) == peak_db,
      'device memory counter peaks at the allocations view\'s peak', peak_db)
check(dev and dev[-1]['args']['bytes'] == final_db, 'device memory counter ends at live bytes')
pin_peak, pin_final = replay(('pinned', 'registered'))
check(pin and max(e['args']['bytes'] for e in pin) == pin_peak, 'pinned host memory counter peak')

if not example:
    # What the program itself says it did.
    check_eq(len(copies), facts['copies'], 'copy slices = copies the program made')
    check_eq(sum(c['args']['bytes'] for c in copies), facts['copy_bytes'], 'bytes of the copies')
    check_eq(sum(1 for c in copies if c['args']['host_mem'] == 'pinned'), facts['pinned_copies'],
             'copies from/to pinned memory')
    check_eq(len(stream_copies), facts['async_copies'], 'copies on stream tracks')
    check_eq(len(streams_db), 2, 'the program used two streams')
    check_eq({c['tid'] for c in copies}, {facts['main_tid'], facts['worker_tid']},
             'copies on both threads')
    check_eq(max(e['args']['bytes'] for e in dev), facts['peak_device'], 'peak device bytes')
    check_eq(dev[-1]['args']['bytes'], 0, 'all device memory freed at the end')
    check_eq(max(e['args']['bytes'] for e in pin), facts['pinned_host'], 'peak pinned bytes')
    check_eq(sorted(s['name'] for s in syncs),
             ['cudaDeviceSynchronize', 'cudaStreamSynchronize', 'cudaStreamSynchronize'],
             'the syncs the program made')
    check(len(errs) == 1 and errs[0]['args']['api'] == 'cudaMemcpy' and errs[0]['args']['status'] != 0,
          'the failing copy is an error instant', errs)
    check_eq(len(ms), 1, 'one memset')
else:
    # pinned_vs_pageable: 8 uploads of 64 MiB from pageable memory, then 8 from pinned.
    check_eq(len(copies), 16, 'example: 16 copies')
    check_eq(sorted(c['args']['host_mem'] for c in copies), ['pageable'] * 8 + ['pinned'] * 8,
             'example: 8 pageable and 8 pinned')
    check(all(c['args']['bytes'] == 64 << 20 for c in copies), 'example: 64 MiB each')
    check_eq(max(e['args']['bytes'] for e in dev), 64 << 20, 'example: device peak 64 MiB')
    check_eq(max(e['args']['bytes'] for e in pin), 64 << 20, 'example: pinned peak 64 MiB')
    check_eq(len(stream_copies), 16, 'example: all 16 on the stream track')

# Flows: each async copy's and memset's slice on its thread starts an arrow
# (flow_out, Perfetto's flow events v2) that ends at its slice on the stream
# track (flow_in, the same bind_id): one pair per async operation, nothing
# else bound.
def flow_key(x):
    return (x.get('cat'), x['args'].get('id'))


flows = {}
for x in events:
    if 'bind_id' in x:
        flows.setdefault(x['bind_id'], []).append(x)
async_ops = [x for x in real if x.get('cat') in ('copy', 'memset')
             and (x['args'].get('blocking') or '').startswith('async')]
check(async_ops, 'the run has async copies')
check_eq(len(flows), len(async_ops), 'one flow per async copy or memset')
for x in async_ops:
    pair = flows.get(x.get('bind_id'), [])
    outs = [y for y in pair if y.get('flow_out') is True and 'flow_in' not in y]
    ins = [y for y in pair if y.get('flow_in') is True and 'flow_out' not in y]
    if not check(len(pair) == 2 and outs == [x] and len(ins) == 1,
                 '%s %d: its thread slice starts a flow that one slice ends' % flow_key(x), pair):
        continue
    y = ins[0]
    check(y['tid'] >= STREAM_TID_MIN and flow_key(y) == flow_key(x) and y['ts'] == x['ts'],
          '%s %d: the flow ends at its slice on the stream track' % flow_key(x), y)
    check_eq(y['args'].get('issued_by_tid'), x['tid'], '%s %d: issued by the flow\'s thread'
             % flow_key(x))

# Call sites and findings: each slice names its site as the report does and
# the rules the report finds there (xferprof report --format json).
rep = run([args.xferprof, 'report', db, '--format', 'json'], clean_env())
expect_rc(rep, 0, 'xferprof report --format json')
rules_at = {}
for f in json.loads(rep.out)['findings']:
    sid = (f.get('site') or {}).get('stack_id')
    if sid is not None:
        rules_at.setdefault(sid, set()).add(f['rule'])
check(rules_at, 'the report has findings at call sites')
stack_of = {('copy', c['id']): c['stack_id'] for c in db_copies.values()}
stack_of.update({('memset', m['id']): m['stack_id']
                 for m in rows(conn, 'SELECT id, stack_id FROM memsets')})
for x in real:
    if x.get('cat') not in ('copy', 'memset'):
        continue
    sid = stack_of.get(flow_key(x))
    got = x['args'].get('findings')
    check_eq(set(got.split(', ')) if got else set(), rules_at.get(sid, set()),
             '%s %d: findings of its site (stack %s)' % (flow_key(x) + (sid,)))
conn.close()

if not example:
    # The workload's source (built with -g) says where each copy was made.
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'exp_workload.c')
    with open(src) as f:
        lines = f.read().splitlines()

    def line_of(text):
        return [i + 1 for i, ln in enumerate(lines) if text in ln][0]

    pageable_async = [x for x in copies if x['args']['blocking'] == 'async_pageable']
    check_eq([(x['args'].get('site'), x['args'].get('findings')) for x in pageable_async],
             [('main (exp_workload.c:%d)' % line_of('cudaMemcpyAsync(dev_a, pageable, MIB'),
               'async-pageable')],
             'the pageable async copy: its line in main and its finding')
    check_eq({x['args'].get('site') for x in copies if x['tid'] == facts['worker_tid']},
             {'worker (exp_workload.c:%d)' % line_of('CHECK_OK(cudaMemcpyAsync((char *)pinned')},
             'the worker\'s copies: their line in worker')

# gzip: -o NAME.gz writes the same trace, compressed.
gz_path = os.path.join(d, 'run.json.gz')
e = run([args.xferprof, 'export', db, '-o', gz_path], clean_env())
expect_rc(e, 0, 'xferprof export -o run.json.gz')
with open(gz_path, 'rb') as f:
    packed = f.read()
check(packed[:2] == b'\x1f\x8b', 'a .gz output is gzip', packed[:4])
check(gzip.decompress(packed) == data, 'it decompresses to the uncompressed export')

# NVTX: ranges the exporter must show.  The nvtx_ranges view is replaced by
# a table of hand-made rows with the edge cases a capture rarely gives (a
# range never closed, one ended on another thread, a name that is not
# UTF-8): push ranges as nested
# slices (one never closed), start/end ranges as async pairs (one ending on
# another thread, one never closed), and a name that is not UTF-8.
nv = os.path.join(d, 'nvtx.db')
shutil.copyfile(db, nv)
w = sqlite3.connect(nv)
w.execute('DROP VIEW nvtx_ranges')
rowsc = w.execute('SELECT min(start_ns), max(end_ns) FROM copies').fetchone()
t0, t1 = rowsc
main = facts.get('main_tid', pid)
other = facts.get('worker_tid', main)
w.execute('CREATE TABLE nvtx_ranges (id INTEGER PRIMARY KEY, name TEXT, domain TEXT, kind TEXT,'
          ' tid INTEGER, end_tid INTEGER, start_ns INTEGER, end_ns INTEGER, depth INTEGER,'
          ' parent_id INTEGER)')
w.executemany('INSERT INTO nvtx_ranges VALUES (?,?,?,?,?,?,?,?,?,?)', [
    (1, 'epoch', None, 'push', main, None, t0 - 10, None, 0, None),
    (2, 'step "1"', 'app', 'push', main, main, t0 - 5, t0 - 1, 1, 1),
    (3, 'open', None, 'push', main, None, t1, None, 1, 1),
    (4, 'load', None, 'startend', main, other, t0, t1, 0, None),
    (5, 'never ended', None, 'startend', other, None, t0 + 1, None, 0, None),
])
w.execute('INSERT INTO nvtx_ranges VALUES (6, CAST(? AS TEXT), NULL, \'push\', ?, ?, ?, ?, 1, 1)',
          (b'bad \xff\xfe name', main, main, t0 - 4, t0 - 3))
# A command line of arbitrary bytes: escapes, multi-byte UTF-8 kept, every
# ill-formed byte (overlong, surrogate, truncated) one U+FFFD.
w.execute("UPDATE meta SET value = CAST(? AS TEXT) WHERE key = 'cmdline'",
          (b'prog "a\\b"\t\x01\x1f \xc3\xa9 \xf0\x9f\x98\x80 \xc0\xaf \xed\xa0\x80 \xe2\x82',))
w.commit()
w.close()
e = run([args.xferprof, 'export', nv], clean_env())
expect_rc(e, 0, 'export with nvtx_ranges')
_, nev = check_trace(e.out_bytes)
push = [x for x in nev if x.get('cat') == 'nvtx' and x['ph'] == 'X']
check_eq(sorted(x['args']['id'] for x in push), [1, 2, 3, 6], 'push ranges are slices')
check('bad \ufffd\ufffd name' in [x['name'] for x in push], 'invalid UTF-8 replaced by U+FFFD',
      [x['name'] for x in push])
check('step "1"' in [x['name'] for x in push], 'quotes survive in names')
b = [x for x in nev if x['ph'] == 'b']
en = [x for x in nev if x['ph'] == 'e']
check_eq(sorted(x['name'] for x in b), ['load', 'never ended'], 'start/end ranges begin')
check_eq(sorted(x['name'] for x in en), ['load', 'never ended'], 'start/end ranges end')
check(all(x.get('cat') == 'nvtx' for x in b + en), 'async ranges have cat nvtx')
pname = [x['args']['name'] for x in nev if x['ph'] == 'M' and x['name'] == 'process_name']
check_eq(pname, ['prog "a\\b"\t\x01\x1f \u00e9 \U0001f600 \ufffd\ufffd \ufffd\ufffd\ufffd \ufffd\ufffd'],
         'cmdline bytes escaped and ill-formed UTF-8 replaced')
opened = [x for x in push if x['args']['id'] == 3]
check(opened and opened[0]['args'].get('never_closed') == 1, 'an unclosed range says so', opened)
check(not any(x['args'].get('clamped') for x in nev if 'args' in x), 'nothing had to be clamped')

# An nvtx_ranges of another shape: left out with one line, the rest written.
odd = os.path.join(d, 'odd.db')
shutil.copyfile(db, odd)
w = sqlite3.connect(odd)
w.execute('DROP VIEW nvtx_ranges')
w.execute('CREATE TABLE nvtx_ranges (id INTEGER PRIMARY KEY, label TEXT)')
w.commit()
w.close()
e = run([args.xferprof, 'export', odd], clean_env())
expect_rc(e, 0, 'export with an nvtx_ranges of another shape')
check(len(e.err.splitlines()) == 1 and 'NVTX ranges left out' in e.err,
      'one line says the NVTX ranges were left out', e.err)
# The report's loader cannot read that table either: the same line says the
# findings were left out, and the trace is the same less its findings.


def without_findings(trace):
    for x in trace['traceEvents']:
        x.get('args', {}).pop('findings', None)
    return trace


check('findings left out' in e.err, 'the line says the findings were left out', e.err)
check(without_findings(json.loads(e.out_bytes)) == without_findings(json.loads(data)),
      'the rest of the trace is as without the table')
finish()
