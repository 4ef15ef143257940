"""`xferprof diff --by nvtx` on runs of different lengths: diff_nvtx.c with 4
steps (--prog) and with 8 (--prog2).  Per "step" range instance the traffic
is the same (one STEP_BYTES upload, one 4-byte download), and "init" runs
once in both: with --by nvtx nothing changes, although the run's totals
moved 4 more steps' worth.  The same pair compared by site shows the upload
site regressed (its bytes grew by 4 * STEP_BYTES), so the normalization is
what makes --by nvtx fair."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diff_common import *  # noqa: E402,F401,F403

MiB = 1 << 20
STEP_BYTES = 1 * MiB      # diff_nvtx.c
INIT_BYTES = 2 * MiB
STEPS_BASE, STEPS_NEW = 4, 8

args = parse_args()
base_db = profile(args, args.prog, 'nvtx4')
new_db = profile(args, args.prog2, 'nvtx8')

# Bytes and copies per instance are exact; times are this shared machine's: a
# 50% threshold keeps its scheduling noise out of the classes, while an
# unnormalized step (bytes +100%) would still be a regression.
NVTX = ['--by', 'nvtx', '--threshold', '50']
d = diff(args, base_db, new_db, NVTX)
check_shape(d)
check_eq(d['by'], 'nvtx', 'keyed by range')
ranges = {s.get('range'): s for s in d['sites']}
check_eq(sorted(k for k in ranges if k is not None), ['init', 'step'], 'the two ranges')
step = ranges.get('step')
if step:
    check(effective_class(step) == 'unchanged', 'step per instance unchanged', step['reasons'])
    for side, n in (('base', STEPS_BASE), ('new', STEPS_NEW)):
        st = step[side]
        check_eq(st['instances'], n, '%s step instances' % side)
        check_eq(st['bytes'], STEP_BYTES + 4, '%s bytes per step instance' % side)
        check_eq(st['copies'], 2, '%s copies per step instance' % side)
init = ranges.get('init')
if init:
    check(effective_class(init) == 'unchanged', 'init unchanged', init['reasons'])
    check_eq(init['new']['bytes'], INIT_BYTES, 'init bytes')
check_eq(d['regressions'], 0, 'no regression per range')
# The totals are the run's, not per range: 4 more steps moved.
check_eq(d['totals']['H2D.bytes']['change'], (STEPS_NEW - STEPS_BASE) * STEP_BYTES,
         'H2D bytes of the run')
diff(args, base_db, new_db, NVTX + ['--fail-on', 'regression'], 0)

# By site the same pair is a regression: the step upload site moved twice the bytes.
d = diff(args, base_db, new_db)
reg = [s for s in d['sites'] if effective_class(s) == 'regressed']
check(len(reg) == 1, 'by site: one regressed site (the step upload)', [s['reasons'] for s in d['sites']])
if reg:
    check_eq(reg[0]['new']['bytes'] - reg[0]['base']['bytes'], (STEPS_NEW - STEPS_BASE) * STEP_BYTES,
             'its bytes grew by the extra steps')
finish()
