"""Device placement across the ranks of a PyTorch job (finding
device-placement): torch_ranks.py run as 2 ranks (RANK, LOCAL_RANK 0 and 1,
two simulated GPUs), each writing DIR/rank%r.db, then `xferprof report DIR`.
Without torch.cuda.set_device(local_rank) both ranks work on cuda:0 and the
finding names them, their GPU's UUID and PyTorch's fix; with it they use a
GPU each and the report is quiet about placement."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import *  # noqa: E402,F401,F403

RANKS = 2
args = parse_torch_args()


def job(tag, script_args):
    d = tmpdir('torch-ranks-' + tag)
    for k in range(RANKS):
        env = {'RANK': str(k), 'LOCAL_RANK': str(k), 'WORLD_SIZE': str(RANKS),
               'XFERPROF_SIM_DEVICES': str(RANKS)}
        r = torch_run(args, os.path.join(d, 'rank%r.db'), env, script_args)
        if not expect_rc(r, 0, '%s: rank %d of torch_ranks.py under xferprof run --sim' % (tag, k)):
            finish()
        want = 'rank %d on cuda:%d' % (k, k if script_args else 0)
        check(want in r.out, '%s rank %d: the script says where it ran' % (tag, k), r.out[-500:])
    rep = run([args.xferprof, 'report', '--format', 'json', d], clean_env())
    if not expect_rc(rep, 0, 'xferprof report %s' % d):
        finish()
    doc = json.loads(rep.out)
    check_eq(len(doc['processes']), RANKS, '%s: the folder holds every rank' % tag)
    return [f for f in doc['findings'] if f['rule'] == 'device-placement']


found = job('forget', [])
if check_eq(len(found), 1, 'forget: one device-placement finding'):
    f = found[0]
    check_eq(f['details'].get('ranks'), '0,1', 'forget: both ranks named')
    check(str(f['details'].get('uuid', '')).startswith('GPU-'), 'forget: the GPU by its UUID', f)
    check('set_device(local_rank)' in (f['fix_pytorch'] or ''), 'forget: PyTorch fix', f)
    lines = [fr.get('line') for fr in f['site']['frames'] if (fr.get('file') or '').endswith('torch_ranks.py')]
    marks = {marker_line('weights', args.prog), marker_line('batch', args.prog)}
    check(marks & set(lines), 'forget: the site is a line of the script that used the GPU',
          (lines, marks))
check_eq(job('set-device', ['--set-device']), [], 'set_device(local_rank): no finding')
finish()
