"""The pitfalls of examples/torch_transfers.py (torch_pitfalls.py: the same,
elementwise only, each on a `# MARK:` line) found by `xferprof report` in a
run of real PyTorch on the simulator, by rule id: non_blocking=True without
pinned memory (async-pageable), a pageable .to() every step (sync-in-loop),
the same weights uploaded every step (redundant-upload), .item() every step
(sync-in-loop at torch's memcpy_and_sync), the list of GPU tensors that grows
every step (leak), .cpu() then .to() of the same bytes (round-trip), and
thousands of one-element tensors (small-copies).

Where a finding can be told apart natively (a frame only that pitfall's calls
have), its site is checked too. Once sites carry the script's Python frames
(file torch_pitfalls.py), each finding must also point at its MARK line: that
check switches itself on when the report shows Python frames.

--only NAME,...: check only those pitfalls (meson runs the ones the analyzer
does not find yet as a test of their own that is expected to fail)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import *  # noqa: E402,F401,F403

# mark: (rule, a native function name only this pitfall's site has, or None)
PITFALLS = {
    'async_pageable': ('async-pageable', None),
    'pageable_to': ('sync-in-loop', None),
    'redundant_upload': ('redundant-upload', None),
    'item': ('sync-in-loop', 'memcpy_and_sync'),
    'leak': ('leak', None),
    'round_trip_up': ('round-trip', None),
    'tiny': ('small-copies', None),
}


only = None
rest = []
argv = sys.argv[1:]
while argv:
    a = argv.pop(0)
    if a == '--only':
        only = argv.pop(0).split(',')
    else:
        rest.append(a)
sys.argv[1:] = rest
args = parse_torch_args()
script = os.path.basename(args.prog)
wanted = only or list(PITFALLS)

d = tmpdir('torch-pitfalls')
db = os.path.join(d, 'run.db')
r = torch_run(args, db)
if not expect_rc(r, 0, 'torch_pitfalls.py under xferprof run --sim'):
    finish()
check_eq(r.out.strip(), 'steps 20 tiny 2000 kept 20', 'the script ran to its end')
rep = run([args.xferprof, 'report', '--format', 'json', db], clean_env())
if not expect_rc(rep, 0, 'xferprof report --format json'):
    finish()
findings = json.loads(rep.out)['findings']
print('findings: %s' % ', '.join(sorted({f['rule'] for f in findings})))


def python_lines(site):
    """Lines of the script's frames in a site, outermost last (empty while
    sites have native frames only)."""
    return [fr.get('line') for fr in site.get('frames', [])
            if (fr.get('file') or '').endswith(script)]


python_frames = any(python_lines(f.get('site', {})) for f in findings)
print('sites carry Python frames: %s' % python_frames)

for mark in wanted:
    rule, native = PITFALLS[mark]
    line = marker_line(mark, args.prog)
    cands = [f for f in findings if f['rule'] == rule]
    if native:
        cands = [f for f in cands
                 if any(native in (fr.get('function') or '') for fr in f['site'].get('frames', []))]
    what = '%s (%s:%d): a %s finding' % (mark, script, line, rule)
    if native:
        what += ' at a site in %s' % native
    if not check(cands, what, 'findings: %s' % sorted({f['rule'] for f in findings})):
        continue
    # The leak too: CUDA shows where PyTorch's pool ran short, and the
    # allocator's blocks (block_events) the line that made the kept tensors.
    if python_frames:
        check(any(line in python_lines(f['site']) for f in cands), what + ' at line %d' % line,
              [python_lines(f['site']) for f in cands])
finish()
