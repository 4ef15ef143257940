"""`xferprof export --format perfetto-proto`: the workload (exp_workload.c) or, with
--example, examples/pinned_vs_pageable, run under `xferprof run --sim`, plus NVTX
ranges in a copy of its database; the protobuf trace is decoded with Perfetto's
own definitions (the `perfetto` package's perfetto_trace_pb2) and must hold what
the JSON export of the same database holds: the process, the thread and stream
tracks, every slice (name, category, track, start, duration, args, flow), the
failed calls' instants, the memory counters and the NVTX ranges.  `-f proto`
names the same format, `.gz` gzips it."""
import gzip
import json
import os
import shutil
import sqlite3
import sys
from decimal import Decimal

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'capture'))
from cap_common import *  # noqa: E402,F401,F403
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb  # noqa: E402

example = '--example' in sys.argv
args = parse_args([a for a in sys.argv[1:] if a != '--example'])
d = tmpdir('export-proto')
db = os.path.join(d, 'run.db')

r = xferprof_run(args, ['-o', db], [args.prog])
if not expect_rc(r, 0, 'the program under xferprof run --sim'):
    finish()

# NVTX ranges the capture rarely gives: nested push ranges (one never
# closed, one named by bytes that are not UTF-8), a start/end range that ends
# on another thread and one never ended.
nv = os.path.join(d, 'nvtx.db')
shutil.copyfile(db, nv)
w = sqlite3.connect(nv)
w.execute('DROP VIEW nvtx_ranges')
t0, t1 = w.execute('SELECT min(start_ns), max(end_ns) FROM copies').fetchone()
main, other = w.execute('SELECT min(tid), max(tid) FROM copies').fetchone()
w.execute('CREATE TABLE nvtx_ranges (id INTEGER PRIMARY KEY, name TEXT, domain TEXT, kind TEXT,'
          ' tid INTEGER, end_tid INTEGER, start_ns INTEGER, end_ns INTEGER, depth INTEGER,'
          ' parent_id INTEGER)')
w.executemany('INSERT INTO nvtx_ranges VALUES (?,?,?,?,?,?,?,?,?,?)', [
    (1, 'epoch', None, 'push', main, None, t0 - 10, None, 0, None),
    (2, 'step "1"', 'app', 'push', main, main, t0 - 5, t0 - 1, 1, 1),
    (3, 'load', None, 'startend', main, other, t0, t1, 0, None),
    (4, 'never ended', None, 'startend', other, None, t0 + 1, None, 0, None),
])
w.execute("INSERT INTO nvtx_ranges VALUES (5, CAST(? AS TEXT), NULL, 'push', ?, ?, ?, ?, 1, 1)",
          (b'bad \xff\xfe name \xe2\x82', main, main, t0 - 4, t0 - 3))
w.commit()
w.close()


def export(path, fmt, out):
    e = run([args.xferprof, 'export', path, '-f', fmt, '-o', out], clean_env())
    expect_rc(e, 0, 'xferprof export -f %s %s' % (fmt, os.path.basename(path)))
    check_eq(e.err, '', 'export -f %s says nothing on stderr' % fmt)
    with open(out, 'rb') as f:
        return f.read()


def ns(v):
    return int(Decimal(v) * 1000)


def from_json(data):
    """The JSON trace as sets of comparable tuples (times in ns)."""
    obj = json.loads(data, parse_float=Decimal)
    ev = obj['traceEvents']
    names = {e['tid']: e['args']['name'] for e in ev
             if e['ph'] == 'M' and e['name'] == 'thread_name'}
    out = {'process': [], 'slice': [], 'instant': [], 'counter': [], 'range': []}
    opened = {}
    for e in ev:
        ph, a = e['ph'], e.get('args', {})
        if ph == 'M' and e['name'] == 'process_name':
            out['process'].append((e['pid'], a['name']))
        elif ph == 'X':
            flow = None
            if 'bind_id' in e:
                flow = ('in' if e.get('flow_in') else 'out', e['bind_id'])
            out['slice'].append((names[e['tid']], e['name'], e['cat'], ns(e['ts']),
                                 ns(e['dur']), json.dumps(a, sort_keys=True), flow))
        elif ph == 'i':
            out['instant'].append((names[e['tid']], e['name'], e['cat'], ns(e['ts']),
                                   json.dumps(a, sort_keys=True)))
        elif ph == 'C':
            name = e['name'] + (' (device %s)' % e['id'] if 'id' in e else '')
            out['counter'].append((name, ns(e['ts']), a['bytes']))
        elif ph == 'b':
            opened[e['id']] = e
        elif ph == 'e':
            b = opened.pop(e['id'])
            out['range'].append((b['name'], b['cat'], ns(b['ts']), ns(e['ts']) - ns(b['ts']),
                                 json.dumps(b['args'], sort_keys=True),
                                 json.dumps(a, sort_keys=True)))
    check(not opened, 'JSON: every async range ends', opened)
    return out


def annotations(das, interned):
    a = {}
    for x in das:
        name = x.name if x.HasField('name') else interned['arg'][x.name_iid]
        which = x.WhichOneof('value')
        if which == 'string_value_iid':
            a[name] = interned['value'][x.string_value_iid]
        else:
            a[name] = None if which is None else getattr(x, which)
    return json.dumps(a, sort_keys=True)


def intern(interned, idata):
    """Adds a packet's InternedData (iid -> string, by kind)."""
    for kind, entries in (('cat', idata.event_categories), ('name', idata.event_names),
                          ('arg', idata.debug_annotation_names)):
        for x in entries:
            interned[kind][x.iid] = x.name
    for x in idata.debug_annotation_string_values:
        interned['value'][x.iid] = x.str.decode('utf-8')  # strict: must be UTF-8


def from_proto(data):
    """The protobuf trace as the same sets; checks its packets on the way."""
    trace = pb.Trace.FromString(data)
    out = {'process': [], 'slice': [], 'instant': [], 'counter': [], 'range': []}
    tracks, stacks, bad = {}, {}, []
    interned = {'cat': {}, 'name': {}, 'arg': {}, 'value': {}}
    last = 0
    for i, p in enumerate(trace.packet):
        if p.trusted_packet_sequence_id != 1:
            bad.append('packet %d: sequence %d' % (i, p.trusted_packet_sequence_id))
        if i == 0 and not p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            bad.append('the first packet does not clear the incremental state')
        if p.HasField('interned_data'):
            intern(interned, p.interned_data)
        if p.HasField('track_descriptor'):
            td = p.track_descriptor
            if td.uuid in tracks:
                bad.append('packet %d: track %d described twice' % (i, td.uuid))
            if td.HasField('process'):
                out['process'].append((td.process.pid, td.process.process_name))
                tracks[td.uuid] = ('process', td.process.process_name)
            elif td.HasField('thread'):
                tracks[td.uuid] = ('thread', td.thread.thread_name)
            elif td.HasField('counter'):
                tracks[td.uuid] = ('counter', td.name)
            else:
                tracks[td.uuid] = ('track', td.name)
            if td.HasField('parent_uuid') and td.parent_uuid not in tracks:
                bad.append('packet %d: parent %d not described' % (i, td.parent_uuid))
            continue
        if not p.HasField('track_event'):
            bad.append('packet %d: neither a track nor an event' % i)
            continue
        te, ts = p.track_event, p.timestamp
        if ts < last:
            bad.append('packet %d: ts %d before the previous %d' % (i, ts, last))
        last = ts
        if te.track_uuid not in tracks:
            bad.append('packet %d: track %d not described before' % (i, te.track_uuid))
            continue
        if not p.sequence_flags & pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE:
            bad.append('packet %d: an event without SEQ_NEEDS_INCREMENTAL_STATE' % i)
        kind, tname = tracks[te.track_uuid]
        a = annotations(te.debug_annotations, interned)
        cats = list(te.categories) + [interned['cat'][c] for c in te.category_iids]
        cat = cats[0] if cats else None
        name = te.name if te.HasField('name') else interned['name'].get(te.name_iid, '')
        if te.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            flow = None
            if te.flow_ids:
                flow = ('out', te.flow_ids[0])
            elif te.terminating_flow_ids:
                flow = ('in', te.terminating_flow_ids[0])
            stacks.setdefault(te.track_uuid, []).append((name, cat, ts, a, flow))
        elif te.type == pb.TrackEvent.TYPE_SLICE_END:
            st = stacks.get(te.track_uuid)
            if not st:
                bad.append('packet %d: SLICE_END without a begin' % i)
                continue
            name, bcat, bts, ba, flow = st.pop()  # an end names nothing
            if kind == 'track' and tname == name and flow is None and not tname.startswith(
                    ('stream ', 'default stream', 'per-thread default stream')):
                out['range'].append((name, bcat, bts, ts - bts, ba, a))
            else:
                out['slice'].append((tname, name, bcat, bts, ts - bts, ba, flow))
        elif te.type == pb.TrackEvent.TYPE_INSTANT:
            out['instant'].append((tname, name, cat, ts, a))
        elif te.type == pb.TrackEvent.TYPE_COUNTER:
            out['counter'].append((tname, ts, te.counter_value))
        else:
            bad.append('packet %d: event type %d' % (i, te.type))
    for uuid, st in stacks.items():
        if st:
            bad.append('slices never ended on track %d: %r' % (uuid, st))
    check(not bad, 'the protobuf trace is well formed', '\n  '.join(bad[:20]))
    return out


def compare(path, tag, kinds):
    """kinds: the kinds of event the trace must have."""
    jd = export(path, 'perfetto', os.path.join(d, tag + '.json'))
    pd = export(path, 'perfetto-proto', os.path.join(d, tag + '.pftrace'))
    j, p = from_json(jd), from_proto(pd)
    for k in j:
        js, ps = sorted(j[k], key=repr), sorted(p[k], key=repr)
        if not check(js == ps, '%s: %s events of the proto trace = of the JSON trace' % (tag, k),
                     'only in JSON: %r\n  only in proto: %r' % (
                         [x for x in js if x not in ps][:5], [x for x in ps if x not in js][:5])):
            continue
        if k in kinds:
            check(len(js) > 0, '%s: the trace has %s events' % (tag, k))
    check(len(pd) < len(jd), '%s: the proto trace (%d bytes) is smaller than the JSON (%d)'
          % (tag, len(pd), len(jd)))
    return pd


pd = compare(db, 'run', ('process', 'slice') + (() if example else ('instant', 'counter')))
compare(nv, 'nvtx', ('range',))

# -f proto names the same format; standard output and a .gz file get it too.
e = run([args.xferprof, 'export', db, '-f', 'proto'], clean_env())
expect_rc(e, 0, 'xferprof export -f proto (stdout)')
check(e.out_bytes == pd, '-f proto to stdout equals -f perfetto-proto -o FILE')
gz = os.path.join(d, 'run.pftrace.gz')
e = run([args.xferprof, 'export', db, '--format=perfetto-proto', '-o', gz], clean_env())
expect_rc(e, 0, 'xferprof export --format=perfetto-proto -o run.pftrace.gz')
with open(gz, 'rb') as f:
    check(gzip.decompress(f.read()) == pd, 'the .gz decompresses to the proto trace')

finish()
