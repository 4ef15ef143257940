"""PyTorch's caching allocator block by block (truth in torch_blocks.py):
every block the allocator hands out and takes back is in block_events, the
blocks view pairs each with its return, the blocks taken at the keep line
are the ones held to the end, the report's growing leak is at that line
(not where the pool ran short), and the program's own profiler sees the same
device memory with and without xferprof (the preload forwards each report)."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import *  # noqa: E402,F401,F403

args = parse_torch_args()
script = os.path.basename(args.prog)
keep_line = marker_line('keep', args.prog)
batch_line = marker_line('batch', args.prog)
d = tmpdir('torch-blocks')
STEPS = 24

db = os.path.join(d, 'run.db')
r = torch_run(args, db)
if not expect_rc(r, 0, 'torch_blocks.py under xferprof run --sim'):
    finish()
check_eq(r.out.strip(), 'kept %d' % STEPS, 'the script ran to its end')
rep = run([args.xferprof, 'report', '--format', 'json', db], clean_env())
if not expect_rc(rep, 0, 'xferprof report --format json'):
    finish()
findings = json.loads(rep.out)['findings']

conn = open_db(db)
check_records_lost_zero(conn)
ops = dict([(x["op"], x["n"]) for x in
                     rows(conn, 'SELECT op, count(*) AS n FROM block_events GROUP BY op')])
check(ops.get('taken', 0) >= 3 * STEPS and ops.get('taken') == ops.get('returned'),
      'every block taken was returned by the end (the interpreter returns the kept ones)', ops)
check_eq(scalar(conn, "SELECT count(DISTINCT allocator) FROM block_events"), 1, 'one allocator')
check_eq(scalar(conn, "SELECT min(allocator) FROM block_events"), 'pytorch', "PyTorch's")


def line_of(stack_id):
    """The script's innermost line in a stack (the stack_frames view)."""
    r = rows(conn, "SELECT line FROM stack_frames WHERE stack_id = ? AND kind = 'python' "
                   "AND file LIKE ? ORDER BY level LIMIT 1", (stack_id, '%' + script))
    return r[0]['line'] if r else None


by_line = {}
for b in rows(conn, 'SELECT * FROM blocks'):
    by_line.setdefault(line_of(b['stack_id']), []).append(b)
kept = by_line.get(keep_line, [])
check_eq(len(kept), STEPS, 'blocks taken at the keep line (%s:%d)' % (script, keep_line))
check(all(b['bytes'] == 256 * 256 * 4 for b in kept), 'each 256 KiB',
      sorted({b['bytes'] for b in kept}))
# Returned only after the program's last CUDA work (the final synchronize):
# by the interpreter's teardown.
last_work = scalar(conn, 'SELECT max(end_ns) FROM syncs')
check(all(b['returned_ns'] is not None and b['returned_ns'] > last_work for b in kept),
      'the kept blocks returned only after the last synchronize', len(kept))
batches = by_line.get(batch_line, [])
check_eq(len(batches), STEPS, 'blocks taken at the batch line')
check(all(b['returned_ns'] is not None and b['returned_ns'] < last_work for b in batches),
      'the batches returned during the run', len(batches))
# Each return pairs with the last taking at its address: no block is
# returned twice, and a reused address makes a new block.
check_eq(scalar(conn, 'SELECT count(*) FROM blocks WHERE returned_ns IS NOT NULL'),
         ops.get('returned'), 'one block per return')
check(scalar(conn, 'SELECT count(*) FROM (SELECT ptr FROM blocks GROUP BY device, ptr '
                   'HAVING count(*) > 1)') > 0, 'addresses handed out again')

leaks = [f for f in findings if f['rule'] == 'leak']
growing = [f for f in leaks if f['details'].get('kind') == 'growing']


def lines(f):
    return [fr.get('line') for fr in f.get('site', {}).get('frames', [])
            if (fr.get('file') or '').endswith(script)]


check(len(growing) == 1 and keep_line in lines(growing[0]) and growing[0]['count'] == STEPS,
      'one growing leak, at the keep line, of %d tensors' % STEPS,
      [(lines(f), f['count'], f['details'].get('kind')) for f in leaks])
check(all(f['details'].get('kind') == 'caching-allocator' for f in leaks if f not in growing),
      "the segments are PyTorch's cache", [f['details'].get('kind') for f in leaks])

# The program's own profiler: the same device memory seen with xferprof.
env12 = {'LD_PRELOAD': os.path.join(args.sim_dir, 'cuda12', 'libxpsim_cudart12.so')}
plain = plain_run(args, [args.python, args.prog, '--profile-memory'], env12)
prof = torch_run(args, os.path.join(d, 'prof.db'), None, ['--profile-memory'])
if expect_rc(plain, 0, 'torch_blocks.py --profile-memory without xferprof') and \
        expect_rc(prof, 0, 'torch_blocks.py --profile-memory under xferprof'):
    seen = re.search(r'profiler: (\d+) device memory events', plain.out)
    check(seen and int(seen.group(1)) > 0, 'the profiler saw device memory', plain.out)
    check_eq(prof.out, plain.out, "the program's profiler saw the same with xferprof")
finish()
