"""`xferprof diff` of a job against a second run of it, on a loaded machine:
no regression (exit 0 with --fail-on regression), while a real regression
is still caught.

A job here is four ranks of diff_prog (RANK=0..3, run at once, as a
data-parallel job's processes are), each writing run<rank>.db into one
folder; two busy loops keep both of this machine's cores contended while
the runs are made, so copy times vary from run to run as they do on a
shared machine.  The program is deterministic: every byte, call site,
memory kind and blocking class is the same in both runs, only time moves.
Expectations, from what the variants change (meson.build):
  same      base against base, both ways round: exit 0, regressions 0,
            whatever the rules find (all of them, at their defaults);
  pageable  the batch in pageable memory: exit 1, "lost pinned memory";
  uploads   the batch uploaded twice per step: exit 1, "bytes +100%";
  moved     the upload made from another function: exit 1, "new blocking
            site" (the old site is gone).
"""
import concurrent.futures
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diff_common import *  # noqa: E402,F401,F403
import cap_common  # noqa: E402

RANKS = 4
variant_args = {}
for name in ('pageable', 'uploads', 'moved'):
    variant_args[name] = pop_arg('--' + name)
args = parse_args()


def job(prog, tag):
    """Runs RANKS ranks of prog at once; returns the folder of their databases."""
    d = cap_common.tmpdir('noise-' + tag)
    exe = os.path.join(d, 'diff_prog')
    shutil.copy2(prog, exe)
    out = os.path.join(d, 'dbs')
    os.mkdir(out)

    def one(rank):
        return xferprof_run(args, ['-o', os.path.join(out, 'run%r.db')], [exe],
                            {'RANK': str(rank), 'XFERPROF_SIM_BANDWIDTH': '250M'})
    with concurrent.futures.ThreadPoolExecutor(RANKS) as pool:
        for rank, r in enumerate(pool.map(one, range(RANKS))):
            if not expect_rc(r, 0, '%s rank %d under xferprof run --sim' % (tag, rank)):
                finish()
    return out


def diff_jobs(base, new, want_rc):
    r = run([args.xferprof, 'diff', base, new, '--format', 'json', '--fail-on', 'regression'],
            clean_env())
    expect_rc(r, want_rc, 'xferprof diff --fail-on regression')
    return json.loads(r.out) if r.rc in (0, 1) else None


def reasons(d):
    return [x for s in d['sites'] for x in s['reasons']]


# Busy loops, one per core, for the whole of the runs.
load = [subprocess.Popen([sys.executable, '-c', 'while True: pass']) for _ in range(2)]
try:
    base = job(args.prog, 'base')
    again = job(args.prog, 'again')
    variants = {name: job(prog, name) for name, prog in variant_args.items()}
finally:
    for p in load:
        p.kill()
        p.wait()

for b, n in ((base, again), (again, base)):
    d = diff_jobs(b, n, 0)
    if d:
        check_eq(len(d['pairs']), RANKS, 'ranks paired')
        check(d['regressions'] == 0, 'no regression between two runs of one program',
              d['regressions'], reasons(d),
              [(m, v['base'], v['new']) for m, v in d['totals'].items() if v['change']],
              [(p['base_process'], m, v['base'], v['new']) for p in d['pairs']
               for m, v in p['totals'].items() if v['change']])
        check_eq(d['matching']['gone'] + d['matching']['new'], 0, 'every site matched')

want = {'pageable': 'lost pinned memory', 'uploads': 'bytes +100%', 'moved': 'new blocking site'}
for name, folder in variants.items():
    d = diff_jobs(base, folder, 1)
    if d:
        check(want[name] in reasons(d), '%s: reason %r' % (name, want[name]), reasons(d))
finish()
