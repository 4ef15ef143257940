"""PyTorch's caching allocator (plain cudaMalloc segments, and expandable
segments: cuMemCreate/cuMemMap) read as a caching allocator, not a leak; a
real tensor leak still reads as growing (truth in torch_caching.py).  Two
runs of the same script compared by `xferprof diff` show no regression."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import *  # noqa: E402,F401,F403

args = parse_torch_args()
d = tmpdir('torch-caching')


def profile(tag, env=None, script_args=()):
    db = os.path.join(d, tag + '.db')
    r = torch_run(args, db, env, script_args)
    if not expect_rc(r, 0, 'torch_caching.py %s under xferprof run --sim' % tag):
        finish()
    rep = run([args.xferprof, 'report', '--format', 'json', db], clean_env())
    if not expect_rc(rep, 0, 'xferprof report %s' % tag):
        finish()
    leaks = [f for f in json.loads(rep.out)['findings'] if f['rule'] == 'leak']
    return db, leaks


def kinds(leaks):
    return [(f['details'].get('kind'), f['details'].get('allocator'), f['bytes']) for f in leaks]


EXPANDABLE = {'PYTORCH_CUDA_ALLOC_CONF': 'expandable_segments:True'}
# The two runs diff compares: a link slow enough that the modelled transfer,
# not the host's staging memcpy, is each pageable copy's time, as on a GPU.
# The memcpy's time on the simulator is the machine's: with another torch
# test beside this one on two cores, a run's 40 staged copies blocked 4.0 ms,
# the next 7.7 ms, every copy slower (the floor too): what diff must call a
# regression of time, and no property of the script.
SLOW_LINK = {'XFERPROF_SIM_BANDWIDTH': 'pageable=500M'}
for tag, env in (('segments', SLOW_LINK), ('expandable', EXPANDABLE)):
    db, leaks = profile(tag, env)
    check(not [f for f in leaks if f['details'].get('kind') == 'growing'],
          '%s: no growing leak' % tag, kinds(leaks))
    cached = [f for f in leaks if f['details'].get('kind') == 'caching-allocator']
    # Device segments are the caching allocator's; the pinned host block
    # behind .item() (what it copies the value into) is the pinned-memory cache's.
    owner = {'device': "PyTorch's caching allocator", 'physical': "PyTorch's caching allocator",
             'pinned': "PyTorch's pinned-memory cache"}
    check(any(f['details'].get('memory') in ('device', 'physical') for f in cached) and
          all(f['severity'] == 'info' and
              f['details'].get('allocator') == owner.get(f['details'].get('memory')) for f in cached),
          "%s: segments held by PyTorch's caching allocators" % tag,
          [(f['details'].get('memory'),) + k for f, k in zip(cached, kinds(cached))])
    # Reserved address ranges (many GiB of nothing) and mappings are not held memory.
    check(all(f['details'].get('memory') not in ('reserved', 'mapped') for f in leaks),
          '%s: only held memory' % tag, [f['details'].get('memory') for f in leaks])
    if tag == 'segments':
        base_db = db

for tag, env in (('leak', None), ('leak-expandable', EXPANDABLE)):
    _, leaks = profile(tag, env, ['--leak'])
    growing = [f for f in leaks if f['details'].get('kind') == 'growing']
    check(growing and all(f['severity'] == 'warning' for f in growing),
          '%s: the kept tensors grow' % tag, kinds(leaks))

again_db, _ = profile('again', SLOW_LINK)
r = run([args.xferprof, 'diff', base_db, again_db, '--format', 'json', '--fail-on', 'regression'],
        clean_env())
if expect_rc(r, 0, 'xferprof diff of two runs of one script --fail-on regression'):
    dj = json.loads(r.out)
    check_eq(dj['regressions'], 0, 'no regression',)
finish()
