"""exp_trace.py: a checker of Chrome trace-event JSON written from the format's
definition (the Trace Event Format document), independently of xferprof's
exporter: it knows nothing of how the file was written.

check_trace(data_bytes) returns the parsed object and the list of events, having
recorded (through cap_common.check) every rule the file breaks:

- the file is UTF-8 and strict JSON (no NaN/Infinity), an object with a
  traceEvents array;
- every event has name (string), ph, ts (finite number >= 0), pid and tid
  (integers); ts never decreases in file order;
- X events have dur >= 0, and on each (pid, tid) they nest (a slice starting
  inside another ends inside it); B/E pair up and nest per (pid, tid); b/e
  pair up per (cat, id), an e never before its b;
- C events have args whose values are all numbers;
- i events have a scope s in t/p/g;
- M events process_name / thread_name carry args.name, and every pid and
  every (pid, tid) that has an event also has its name.
"""

import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'capture'))
from cap_common import check  # noqa: E402


def _reject_constant(name):
    raise ValueError('non-standard JSON constant %s' % name)


def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def to_ns(us):
    """Trace microseconds back to integer ns (the file has ns precision)."""
    return int(round(us * 1000))


def check_trace(data):
    try:
        text = data.decode('utf-8')
    except UnicodeDecodeError as e:
        check(False, 'trace is valid UTF-8', e)
        text = data.decode('utf-8', 'replace')
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except ValueError as e:
        check(False, 'trace is strict JSON', e)
        return None, []
    if not check(isinstance(obj, dict) and isinstance(obj.get('traceEvents'), list),
                 'trace is an object with a traceEvents array'):
        return obj, []
    events = obj['traceEvents']
    check(obj.get('displayTimeUnit') in (None, 'ms', 'ns'), 'displayTimeUnit is ms or ns',
          obj.get('displayTimeUnit'))

    bad = []
    last_ts = None
    proc_names, thread_names = set(), set()
    used_pids, used_tracks = set(), set()
    x_by_track = {}
    be_stacks = {}
    async_open = {}
    for n, e in enumerate(events):
        if not isinstance(e, dict):
            bad.append('event %d is not an object' % n)
            continue
        missing = [k for k in ('name', 'ph', 'ts', 'pid', 'tid') if k not in e]
        if missing:
            bad.append('event %d lacks %s: %r' % (n, missing, e))
            continue
        ph, ts = e['ph'], e['ts']
        if not isinstance(e['name'], str) or not isinstance(ph, str):
            bad.append('event %d: name/ph not strings: %r' % (n, e))
        if not _is_num(ts) or ts < 0:
            bad.append('event %d: ts %r is not a number >= 0' % (n, ts))
            continue
        if not isinstance(e['pid'], int) or not isinstance(e['tid'], int):
            bad.append('event %d: pid/tid not integers: %r' % (n, e))
            continue
        if last_ts is not None and ts < last_ts:
            bad.append('event %d: ts %r before the previous event (%r)' % (n, ts, last_ts))
        last_ts = ts
        track = (e['pid'], e['tid'])
        if ph == 'M':
            name = (e.get('args') or {}).get('name')
            if e['name'] == 'process_name':
                if not isinstance(name, str):
                    bad.append('process_name without args.name: %r' % e)
                proc_names.add(e['pid'])
            elif e['name'] == 'thread_name':
                if not isinstance(name, str):
                    bad.append('thread_name without args.name: %r' % e)
                thread_names.add(track)
            continue
        used_pids.add(e['pid'])
        used_tracks.add(track)
        if ph == 'X':
            if not _is_num(e.get('dur')) or e['dur'] < 0:
                bad.append('event %d: X without dur >= 0: %r' % (n, e))
                continue
            x_by_track.setdefault(track, []).append((to_ns(ts), to_ns(e['dur']), n))
        elif ph == 'B':
            be_stacks.setdefault(track, []).append(e['name'])
        elif ph == 'E':
            st = be_stacks.get(track)
            if not st:
                bad.append('event %d: E without an open B on %r' % (n, track))
            else:
                st.pop()
        elif ph == 'C':
            args = e.get('args')
            if not isinstance(args, dict) or not args or not all(_is_num(v) for v in args.values()):
                bad.append('event %d: counter args not all numbers: %r' % (n, e))
        elif ph in ('i', 'I'):
            if e.get('s', 't') not in ('t', 'p', 'g'):
                bad.append('event %d: instant scope %r' % (n, e.get('s')))
        elif ph in ('b', 'e'):
            if 'id' not in e:
                bad.append('event %d: async event without id: %r' % (n, e))
                continue
            key = (e.get('cat'), str(e['id']))
            if ph == 'b':
                async_open.setdefault(key, []).append(ts)
            elif not async_open.get(key):
                bad.append('event %d: e without its b: %r' % (n, e))
            else:
                async_open[key].pop()
        else:
            bad.append('event %d: unexpected ph %r' % (n, ph))

    for track, st in be_stacks.items():
        if st:
            bad.append('B events never ended on %r: %r' % (track, st))
    for key, st in async_open.items():
        if st:
            bad.append('async b never ended: %r' % (key,))
    for track, xs in x_by_track.items():
        # Nesting: visited in start order (longer first at equal start), each
        # slice must end within the innermost slice still open.
        open_ends = []
        for start, dur, n in sorted(xs, key=lambda x: (x[0], -x[1], x[2])):
            while open_ends and open_ends[-1] <= start:
                open_ends.pop()
            if open_ends and start + dur > open_ends[-1]:
                bad.append('X event %d on %r overlaps its enclosing slice without nesting'
                           % (n, track))
            open_ends.append(start + dur)
    for pid in used_pids - proc_names:
        bad.append('no process_name for pid %r' % pid)
    for track in used_tracks - thread_names:
        bad.append('no thread_name for %r' % (track,))
    check(not bad, 'trace follows the trace-event format', '\n  '.join(bad[:20]))
    return obj, events


def thread_names(events):
    """(pid, tid) -> thread name."""
    return {(e['pid'], e['tid']): e['args']['name'] for e in events
            if e.get('ph') == 'M' and e.get('name') == 'thread_name'}
