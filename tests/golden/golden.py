"""golden.py: the golden test of one example program (examples/NAME.c).

    python3 golden.py --xferprof X --preload LIB --sim-dir DIR --prog P
                      [--env K=V]... [--report]

The program prints what `xferprof report` should find about it, from its own
constants, as lines

    xferprof-expect rule=R site=F count=N [bytes=B] [key=value...]
    xferprof-expect none

(F is the innermost frame's function of the finding's call site, "-" for a
finding with no site of its own).  The driver runs it under `xferprof run
--sim` and checks, in two halves:

- profile: the database holds the facts behind exactly these findings.  A
  small reference evaluation of the rules (low-bandwidth and small-copies as
  docs/findings.md has them now; the others as in
  /work/contract/report-contract.md, thresholds at their defaults) over the
  raw rows gives (rule, site) -> (count, bytes), which must equal the
  expectations: every expected finding is supported and no other rule's
  conditions hold anywhere.
- report (--report): `xferprof report --format json DB` has a finding for each
  expectation (rule, site function, count, bytes, details) and no other.
"""

import bisect
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'capture'))
import cap_common as cc  # noqa: E402

# Contract defaults (report-contract.md, "Rules").
SYNC_LOOP_MIN = 10
REDUNDANT_SITE_MIN = 3
SMALL_MIN_COUNT = 100
SMALL_MAX_BYTES = 4096
SMALL_MIN_SHARE = 0.01
SMALL_FIXED_NS = 2000
LOW_BW_MIN_BYTES = 1 << 20
LOW_BW_FRACTION = 0.25
LOW_BW_MIN_COUNT = 3
LOW_BW_MIN_SHARE = 0.02
OOM_STATUS = 2
CHURN_MIN = 20


def parse_expectations(text):
    exps = []
    none = False
    for line in text.splitlines():
        parts = line.split()
        if not parts or parts[0] != 'xferprof-expect':
            continue
        if parts[1:] == ['none']:
            none = True
            continue
        e = {}
        for kv in parts[1:]:
            k, _, v = kv.partition('=')
            e[k] = v
        exp = {'rule': e.pop('rule'), 'site': e.pop('site'), 'count': int(e.pop('count')),
               'bytes': int(e.pop('bytes')) if 'bytes' in e else None, 'details': {}}
        for k, v in e.items():
            exp['details'][k] = {'true': True, 'false': False}.get(v, int(v) if v.isdigit() else v)
        exps.append(exp)
    return exps, none


class Symbols:
    """Function names of the program's own frames, from its symbol table
    (the examples' sites are static functions: nm lists them)."""

    def __init__(self, conn, prog):
        self.mods = cc.Modules(conn)
        self.main = self.mods.by_path(prog)
        out = subprocess.run(['nm', '--defined-only', prog], stdout=subprocess.PIPE,
                             check=True).stdout.decode()
        syms = []
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in 'tTwW':
                syms.append((int(p[0], 16), p[2]))
        syms.sort()
        self.addrs = [a for a, _ in syms]
        self.names = [n for _, n in syms]
        self.cache = {}

    def innermost(self, conn, stack_id):
        """Function of the stack's first frame in the program, or None."""
        if stack_id is None:
            return None
        if stack_id not in self.cache:
            _, frames = cc.stack_frames(conn, stack_id)
            name = None
            for f in frames or []:
                m = next((m for m in self.main if self.mods.contains(m, f)), None)
                if m is None:
                    continue
                # A return address: the call is just before it (it may even be
                # the function's last byte, a call to a noreturn function).
                i = bisect.bisect_right(self.addrs, f - 1 - cc.u64(m['base'])) - 1
                name = self.names[i] if i >= 0 else None
                break
            self.cache[stack_id] = name
        return self.cache[stack_id]


def add(found, rule, site, n, b):
    c, s = found.get((rule, site), (0, 0))
    found[(rule, site)] = (c + n, s + (b or 0))


def p90(values):
    """Nearest-rank 90th percentile."""
    v = sorted(values)
    return v[max(0, -(-len(v) * 9 // 10) - 1)]


def run_ns(conn, copies):
    """The process's start to its last event (docs/findings.md, "the run")."""
    start = int(cc.meta(conn)['start_mono_ns'])
    ends = [c['start_ns'] + max(c['dur_ns'], 0) for c in copies]
    for a in cc.rows(conn, 'SELECT alloc_ns, free_ns FROM allocations'):
        ends += [a['alloc_ns'], a['free_ns'] or 0]
    return max(ends + [start]) - start


def median(values):
    """Nearest-rank median."""
    v = sorted(values)
    return v[(len(v) + 1) // 2 - 1]


def db_findings(conn, sym):
    """The reference evaluation: (rule, site) -> (count, bytes)."""
    found = {}
    copies = cc.rows(conn, 'SELECT * FROM copies ORDER BY start_ns, id')
    # A copy completed at once by a sync on its thread is blocking in effect,
    # and a D2H one takes the fingerprint the sync took.
    paired = {(y['tid'], y['copy_start_ns']): y for y in
              cc.rows(conn, 'SELECT * FROM syncs WHERE copy_start_ns IS NOT NULL')}
    run = run_ns(conn, copies)
    for c in copies:
        c['fn'] = sym.innermost(conn, c['stack_id'])
        y = paired.get((c['tid'], c['start_ns']))
        c['paired'] = y is not None and c['status'] == 0
        if c['paired'] and c['fingerprint'] is None and y['fingerprint'] is not None:
            c['fingerprint'], c['fingerprint_kind'] = y['fingerprint'], y['fingerprint_kind']
    by_site = {}
    for c in copies:
        by_site.setdefault(c['fn'], []).append(c)

    for fn, cs in by_site.items():
        ok = [c for c in cs if c['status'] == 0]
        ap = [c for c in ok if c['blocking'] == 'async_pageable' and not c['paired']]
        if ap:
            add(found, 'async-pageable', fn, len(ap), sum(c['bytes'] for c in ap))
        blocking = [c for c in ok if c['blocking'] == 'sync' or c['paired']]
        if len(blocking) >= SYNC_LOOP_MIN:
            add(found, 'sync-in-loop', fn, len(blocking), sum(c['bytes'] for c in blocking))
        # Small copies not told by a rule before (one finding per copy), each
        # costing the site's median call time and at least SMALL_FIXED_NS.
        small = [c for c in ok if c['bytes'] <= SMALL_MAX_BYTES and
                 not (c in ap or ('sync-in-loop', fn) in found and c in blocking)]
        if small:
            each = max(SMALL_FIXED_NS, median([max(c['dur_ns'], 0) for c in small]))
            if len(small) >= SMALL_MIN_COUNT and each * len(small) >= SMALL_MIN_SHARE * run:
                add(found, 'small-copies', fn, len(small), sum(c['bytes'] for c in small))
        # Redundant: same content to the same dst with no kernel between, or
        # content this site uploaded often enough.
        seen_dst = set()
        seen_site = {}
        # A sampled fingerprint counts once confirmed by its full hash.
        ups = [c for c in ok if c['direction'] == 'H2D' and c['fingerprint'] is not None and
               (c['fingerprint_kind'] == 'full' or c['full_fingerprint'] is not None)]
        def content(c):
            return (c['full_fingerprint'] if c['fingerprint_kind'] == 'sampled' else c['fingerprint'],
                    c['fingerprint_kind'], c['bytes'])
        for c in ups:
            key = content(c)
            seen_site[key] = seen_site.get(key, 0) + 1
        for c in ups:
            key = content(c)
            dkey = key + (c['dst'], c['device'], c['kernel_seq'])
            if dkey in seen_dst or (seen_site[key] >= REDUNDANT_SITE_MIN and
                                    any(k[:3] == key for k in seen_dst)):
                add(found, 'redundant-upload', fn, 1, c['bytes'])
            seen_dst.add(dkey)

    downloaded = set()
    for c in copies:
        if c['status'] != 0 or c['fingerprint'] is None:
            continue
        if c['direction'] == 'D2H':
            downloaded.add((c['fingerprint'], c['bytes']))
        elif c['direction'] == 'H2D' and (c['fingerprint'], c['bytes']) in downloaded:
            add(found, 'round-trip', c['fn'], 1, c['bytes'])

    # Low bandwidth: blocking copies, not the first into their destination,
    # a site's median against the p90 of its class's copies made by the other
    # sites (at least LOW_BW_MIN_COUNT), enough of them and of the run, and not
    # on a site another copy rule reported.
    big, touched, sites = {}, set(), {}
    for c in copies:
        if c['status'] != 0:
            continue
        key = (c['dst'], c['device'], c['direction'])
        first = key not in touched
        touched.add(key)
        if (not first and c['blocking'] == 'sync' and c['bytes'] >= LOW_BW_MIN_BYTES and
                c['dur_ns'] > 0):
            c['gbps'] = c['bytes'] / c['dur_ns']
            big.setdefault((c['direction'], c['host_mem']), []).append(c)
            sites.setdefault(c['fn'], []).append(c)
    for fn, cs in sites.items():
        cls = (cs[0]['direction'], cs[0]['host_mem'])
        others = [c['gbps'] for c in big[cls] if c['fn'] != fn]
        if (len(cs) >= LOW_BW_MIN_COUNT and len(others) >= LOW_BW_MIN_COUNT and
                median([c['gbps'] for c in cs]) < LOW_BW_FRACTION * p90(others) and
                sum(c['dur_ns'] for c in cs) >= LOW_BW_MIN_SHARE * run and
                ('sync-in-loop', fn) not in found and ('async-pageable', fn) not in found):
            add(found, 'low-bandwidth', fn, len(cs), sum(c['bytes'] for c in cs))

    for a in cc.rows(conn, 'SELECT * FROM allocations WHERE free_ns IS NULL'):
        add(found, 'leak', sym.innermost(conn, a['alloc_stack_id']), 1, a['bytes'])

    # alloc-churn (docs/findings.md): a site's freed allocations, at least
    # CHURN_MIN, in at least half of 8 equal parts of the allocations' span,
    # at most a quarter of them live at once, not stream-ordered.
    allocs = cc.rows(conn, 'SELECT * FROM allocations')
    if allocs:
        lo = min(a['alloc_ns'] for a in allocs)
        hi = max(max(a['alloc_ns'], a['free_ns'] or 0) for a in allocs)
        by_site = {}
        for a in allocs:
            if (a['free_ns'] is not None and 'Async' not in a['api'] and
                    a['kind'] in ('device', 'pinned', 'registered', 'managed', 'physical')):
                by_site.setdefault(a['alloc_stack_id'], []).append(a)
        for stack, al in by_site.items():
            parts = {min(7, int((a['alloc_ns'] - lo) * 8 / (hi - lo))) for a in al} if hi > lo else set()
            ev = sorted([(a['alloc_ns'] * 2 + 1, 1) for a in al] + [(a['free_ns'] * 2, -1) for a in al])
            live = peak = 0
            for _, d in ev:
                live += d
                peak = max(peak, live)
            if len(al) >= CHURN_MIN and len(parts) * 2 >= 8 and peak * 4 <= len(al):
                add(found, 'alloc-churn', sym.innermost(conn, stack), len(al),
                    sum(a['bytes'] for a in al))
    for e in cc.rows(conn, "SELECT * FROM errors WHERE record = 'free'"):
        add(found, 'invalid-free', sym.innermost(conn, e['stack_id']), 1, None)
    for u in cc.rows(conn, 'SELECT * FROM unknown_frees'):
        add(found, 'invalid-free', sym.innermost(conn, u['stack_id']), 1, None)
    for e in cc.rows(conn, "SELECT * FROM errors WHERE record = 'alloc' AND status = ?",
                     (OOM_STATUS,)):
        # "requested N bytes; device free F of T"
        words = (e['detail'] or '').replace(';', ' ').split()
        req = int(words[1]) if len(words) > 1 and words[1].isdigit() else None
        add(found, 'oom', sym.innermost(conn, e['stack_id']), 1, req)
        if 'free' in words and req is not None:
            free = int(words[words.index('free') + 1])
            if req <= free:
                # What the report explains as fragmentation, per device.
                add(found, 'fragmentation', '-', 1, None)
    return found


def check_profile(conn, sym, exps):
    found = db_findings(conn, sym)
    want = {}
    for e in exps:
        add(want, e['rule'], e['site'], e['count'], e['bytes'])
    for key in sorted(set(found) | set(want), key=str):
        got, exp = found.get(key), want.get(key)
        what = 'database: %s at %s' % key
        if exp is None:
            cc.check(False, what + ' is not expected', 'facts %r' % (got,))
        elif got is None:
            cc.check(False, what + ' is not supported by the rows')
        else:
            cc.check_eq(got[0], exp[0], what + ': count')
            if any(e['bytes'] is not None for e in exps if (e['rule'], e['site']) == key):
                cc.check_eq(got[1], exp[1], what + ': bytes')


def finding_site(f):
    frames = (f.get('site') or {}).get('frames') or []
    return frames[0].get('function') if frames else None


def check_report(args, db, exps):
    r = cc.run([args.xferprof, 'report', '--format', 'json', db], cc.clean_env())
    if not cc.expect_rc(r, 0, 'xferprof report exits 0'):
        return
    try:
        doc = json.loads(r.out)
    except ValueError as e:
        cc.fatal('report is not JSON', e, r.out[:400])
    cc.check_eq(doc.get('format'), 'xferprof-report', 'report format')
    findings = list(doc.get('findings', []))
    for e in exps:
        what = 'report: %s at %s' % (e['rule'], e['site'])
        match = [f for f in findings if f.get('rule') == e['rule'] and
                 (e['site'] == '-' or finding_site(f) == e['site'])]
        if not cc.check(len(match) >= 1, what + ' is found',
                        'findings: %r' % [(f.get('rule'), finding_site(f)) for f in findings]):
            continue
        f = match[0]
        findings.remove(f)
        if e['site'] != '-':
            cc.check_eq(f.get('count'), e['count'], what + ': count')
        if e['bytes'] is not None:
            cc.check_eq(f.get('bytes'), e['bytes'], what + ': bytes')
        for k, v in e['details'].items():
            cc.check_eq((f.get('details') or {}).get(k), v, what + ': details.' + k)
    for f in findings:
        cc.check(False, 'report: unexpected finding %s at %s' % (f.get('rule'), finding_site(f)),
                 f.get('message'))


def main():
    extra = []
    argv = sys.argv[1:]
    env = {}
    report = False
    while argv:
        a = argv.pop(0)
        if a == '--env':
            k, _, v = argv.pop(0).partition('=')
            env[k] = v
        elif a == '--report':
            report = True
        else:
            extra.append(a)
    args = cc.parse_args(extra)
    d = cc.tmpdir('golden')
    db = os.path.join(d, 'run.db')
    r = cc.xferprof_run(args, ['-o', db], [args.prog], env)
    if not cc.expect_rc(r, 0, 'the example exits 0'):
        cc.finish()
    exps, none = parse_expectations(r.out)
    cc.check(bool(exps) != none, 'the example prints its expectations (or "none")', r.out)
    conn = cc.open_db(db)
    cc.check_records_lost_zero(conn)
    sym = Symbols(conn, args.prog)
    check_profile(conn, sym, exps)
    conn.close()
    if report:
        check_report(args, db, exps)
    cc.finish()


if __name__ == '__main__':
    main()
