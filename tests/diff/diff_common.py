"""diff_common.py: what the `xferprof diff` scenario drivers share.

They reuse the capture drivers' helpers (tests/capture/cap_common.py) to run
programs under `xferprof run --sim`, then run `xferprof diff`.
"""

import json
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'capture'))
from cap_common import *  # noqa: E402,F401,F403
import cap_common  # noqa: E402

# Blocked time moves between two runs of the same program on this shared
# machine; xferprof diff judges it against the runs' own noise band
# (docs/diff.md, Noise), so no reason is filtered out here.
NOISE_REASONS = ()


def pop_arg(name, default=None):
    """Takes --NAME VALUE out of sys.argv (cap_common's parser does not know it)."""
    if name in sys.argv:
        i = sys.argv.index(name)
        value = sys.argv[i + 1]
        del sys.argv[i:i + 2]
        return value
    return default


def profile(args, prog, tag, env_extra=None):
    """Runs a copy of prog named diff_prog (variants must share a module
    name, as one program rebuilt does) and returns its database."""
    d = cap_common.tmpdir('diff-' + tag)
    exe = os.path.join(d, 'diff_prog')
    shutil.copy2(prog, exe)
    db = os.path.join(d, 'run.db')
    # A slow simulated link (1 MiB: 4 ms) makes the modelled copy time
    # dominate this shared machine's scheduling noise, so a copy's bandwidth
    # (and the low-bandwidth finding) is the same in two runs of one program.
    env = {'XFERPROF_SIM_BANDWIDTH': '250M'}
    env.update(env_extra or {})
    r = xferprof_run(args, ['-o', db], [exe], env)
    if not expect_rc(r, 0, '%s under xferprof run --sim' % tag):
        finish()
    return db


# Every rule at its defaults: a timing rule's finding that comes and goes with
# the machine's load does not make a site regressed (docs/diff.md, Noise).
RULES = []


def diff(args, base, new, options=(), want_rc=None):
    r = run([args.xferprof, 'diff', base, new, '--format', 'json'] + RULES + list(options),
            clean_env())
    if want_rc is not None:
        expect_rc(r, want_rc, 'xferprof diff %s' % ' '.join(options))
    if r.rc not in (0, 1):
        print(r.describe(), file=sys.stderr)
        fatal('xferprof diff failed')
    try:
        return json.loads(r.out)
    except ValueError as e:
        print(r.describe(), file=sys.stderr)
        fatal('diff output is not JSON', e)


def real_reasons(site):
    return [x for x in site['reasons'] if not (NOISE_REASONS and x.startswith(NOISE_REASONS))]


def effective_class(site):
    """The class without timing noise: a matched site whose only reasons are
    blocked-time ones is unchanged for these checks."""
    if site['match'] != 'none' and not real_reasons(site):
        return 'unchanged'
    return site['class']


TIME_SUFFIXES = ('_ns', '_gbps')


def check_totals(d, want, what='totals', tol=None):
    """Every metric that does not measure time changes by exactly want[name]
    (0 when not named); tol gives a tolerance for shares."""
    tol = tol or {}
    for name, m in d['totals'].items():
        if name.endswith(TIME_SUFFIXES):
            continue
        change = m['change']
        expected = want.get(name, 0)
        if change is None:
            check(m['base'] is None and m['new'] is None, '%s %s: change only null with no values'
                  % (what, name), m)
            continue
        if name in tol:
            check(abs(change - expected) <= tol[name], '%s %s change' % (what, name),
                  'got %r, expected %r +- %r' % (change, expected, tol[name]))
        else:
            check_eq(change, expected, '%s %s change' % (what, name))


def check_shape(d):
    check_eq(d.get('format'), 'xferprof-diff', 'format')
    check_eq(d.get('version'), 1, 'version')
    for k in ('base', 'new', 'threshold_pct', 'by', 'matching', 'totals', 'pairs', 'sites',
              'findings', 'regressions', 'exit_status'):
        check(k in d, 'member %s present' % k)
    m = d.get('matching', {})
    n_sites = len(d.get('sites', []))
    check_eq(m.get('exact', 0) + m.get('approximate', 0) + m.get('gone', 0) + m.get('new', 0),
             n_sites, 'matching counts add up to the sites listed')
    order = ['regressed', 'new', 'gone', 'improved', 'unchanged']
    ranks = [order.index(s['class']) for s in d.get('sites', [])]
    check_eq(ranks, sorted(ranks), 'sites in class order (regressions first)')
    for s in d.get('sites', []):
        for f in s['frames']:
            check(set(f) >= {'function', 'file', 'line', 'module', 'offset', 'address'},
                  'frame members', f)
            check(f['module'] is None or '/' not in f['module'], 'module is a basename', f)
