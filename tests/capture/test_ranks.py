"""A rank of a job that recorded nothing is named (issue 16 item 4): a
4-rank job in which rank 2 makes no CUDA call gets one line "rank 2 (pid
P): no CUDA activity recorded" from `xferprof run`, beside the 3 ranks'
summary lines; rank 1's helper process (no CUDA call, same RANK) is not
named, since rank 1 recorded.  A job in which no rank recorded says so and
names all 4.  --quiet says nothing; without the launcher nothing is said
and no file is written."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('ranks')


def pids(out):
    return {int(m.group(1)): int(m.group(2)) for m in re.finditer(r'rank (\d) pid (\d+)', out)}


def silent_lines(err):
    return re.findall(r'xferprof: rank (\d+) \(pid (\d+)\): no CUDA activity recorded', err)


r = xferprof_run(args, ['-o', os.path.join(d, 'job-%p.db')], [args.prog])
expect_rc(r, 0, 'the job')
ranks = pids(r.out)
check_eq(sorted(ranks), [0, 1, 2, 3], 'four ranks ran')
check_eq(silent_lines(r.err), [('2', str(ranks.get(2)))], 'rank 2, and only rank 2, is named')
check_eq(len([x for x in r.err.splitlines() if ' copy, ' in x]), 3, "the 3 ranks' summary lines")
check_eq(sorted(f for f in os.listdir(d) if f.endswith('.db')),
         sorted('job-%d.db' % ranks[k] for k in (0, 1, 3)), 'one database per rank that recorded')

r = xferprof_run(args, ['-o', os.path.join(d, 'none-%p.db')], [args.prog, 'none'])
expect_rc(r, 0, 'the job where no rank records')
ranks = pids(r.out)
check('no CUDA activity recorded\n' in r.err, 'says nothing was recorded', r.err)
check_eq(sorted(silent_lines(r.err)), sorted((str(k), str(v)) for k, v in ranks.items()),
         'every rank is named')

r = xferprof_run(args, ['-q', '-o', os.path.join(d, 'quiet-%p.db')], [args.prog])
expect_rc(r, 0, '--quiet')
check_eq(silent_lines(r.err), [], '--quiet names no rank')

before = sorted(os.listdir(d))
r = manual_run(args, os.path.join(d, 'hand-%p.db'), [args.prog])
expect_rc(r, 0, 'LD_PRELOAD by hand')
check_eq(silent_lines(r.err), [], 'by hand: no rank named')
check_eq(len(sorted(os.listdir(d))) - len(before), 3, 'by hand: the 3 databases and nothing else')
finish()
