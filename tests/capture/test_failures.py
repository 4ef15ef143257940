"""Scenario 3: failed calls.  With a 64 MiB device, a 1 GiB cudaMalloc fails
(errors row with status 2 and the device's free/total memory in detail, no
allocations row); a bogus free and a double free are errors with status 1
and do not end the real allocation a second time; a copy with an invalid kind
is a copies row with status 21 and an errors row; a synchronize of a stream
that does not exist is an errors row."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('failures')
db = os.path.join(d, 'run.db')
r = xferprof_run(args, ['-o', db], [args.prog], {'XFERPROF_SIM_MEMORY': '64M'})
if not expect_rc(r, 0, 'cap_failures under xferprof run --sim'):
    finish()
v = parse_values(r.out)
for name in ('pre', 'real', 'dev', 'host', 'gone', 'rc_oom', 'rc_bogus', 'rc_twice', 'rc_badkind',
             'rc_badstream', 'mem_total', 'mem_free_at_oom'):
    if name not in v:
        fatal('program did not print %s' % name, r.out)

conn = open_db(db)
errs = rows(conn, 'SELECT * FROM errors ORDER BY start_ns, id')
summary = [(e['api'], e['status']) for e in errs]
check_eq(summary, [('cudaMalloc', 2), ('cudaFree', 1), ('cudaFree', 1), ('cudaMemcpy', 21),
                   ('cudaStreamSynchronize', v['rc_badstream'])],
         'errors rows (api, status) in program order')
check_eq((v['rc_oom'], v['rc_bogus'], v['rc_twice'], v['rc_badkind']), (2, 1, 1, 21),
         'return codes the program saw')
mods = Modules(conn)
for i, e in enumerate(errs):
    check(e['tid'] is not None and e['start_ns'] is not None, 'error %d: tid and start_ns' % i)
    check_stack(conn, mods, args.prog, e['stack_id'], 'error %d (%s)' % (i, e['api']))

if errs:
    detail = errs[0]['detail'] or ''
    low = detail.lower()
    # The device's free and total memory when it failed: 56 MiB of 64 MiB.
    total, free_ = v['mem_total'], v['mem_free_at_oom']
    check_eq((free_, total), (56 << 20, 64 << 20), 'cudaMemGetInfo before the failure')
    check('free' in low, 'cudaMalloc OOM detail says how much was free', repr(detail))
    nums = [int(x) for x in re.findall(r'\d+', detail)]
    check(total in nums or any(h in detail for h in ('64 MiB', '64.0 MiB', '64M')),
          'cudaMalloc OOM detail gives the total (%d bytes)' % total, repr(detail))
    check(free_ in nums or any(h in detail for h in ('56 MiB', '56.0 MiB', '56M')),
          'cudaMalloc OOM detail gives the free memory (%d bytes)' % free_, repr(detail))

allocs = rows(conn, 'SELECT * FROM allocations ORDER BY alloc_ns, id')
check_eq([(a['api'], a['bytes']) for a in allocs],
         [('cudaMalloc', 8 << 20), ('cudaMalloc', 4096), ('cudaMalloc', 4096)],
         'allocations rows: only the three that succeeded (no row for the failed 1 GiB)')
check_eq(scalar(conn, 'SELECT count(*) FROM allocations WHERE bytes = ?', (1 << 30,)), 0,
         'no allocations row for the failed cudaMalloc')
# In program order: pre, real (freed, then freed again), dev (which the
# simulator may place where real was).
if len(allocs) == 3:
    pre, real, dev = allocs
    check_eq(hex(u64(pre['ptr'])), hex(v['pre']), 'allocations row of pre: ptr')
    check_eq(hex(u64(real['ptr'])), hex(v['real']), 'allocations row of real: ptr')
    check_eq(hex(u64(dev['ptr'])), hex(v['dev']), 'allocations row of dev: ptr')
    bogus_t, twice_t = (errs[1]['start_ns'], errs[2]['start_ns']) if len(errs) >= 3 else (0, 0)
    # The real free came between the bogus free and the double free: free_ns
    # from the first free only.
    check(real['free_ns'] is not None and bogus_t < real['free_ns'] <= twice_t,
          'free_ns of real is its first free, between the bogus and the double free',
          'bogus %r, free_ns %r, double %r' % (bogus_t, real['free_ns'], twice_t))
    # The double free did not end dev, allocated since at the same address.
    check(dev['free_ns'] is not None and dev['free_ns'] > (twice_t or 0),
          'dev is freed by its own cudaFree, after the double free', dev['free_ns'], twice_t)
    check(pre['free_ns'] is not None and pre['free_ns'] >= (dev['free_ns'] or 0),
          'pre is freed last')
    check_eq(scalar(conn, 'SELECT count(*) FROM allocations WHERE free_ns IS NOT NULL'), 3,
             'frees counted (the two failed ones are not)')

cps = rows(conn, 'SELECT * FROM copies ORDER BY start_ns, id')
if check_eq(len(cps), 1, 'copies rows (the failed copy is one)'):
    c = cps[0]
    check_eq(c['api'], 'cudaMemcpy', 'failed copy: api')
    check_eq(c['status'], 21, 'failed copy: status')
    check_eq(c['bytes'], 16, 'failed copy: bytes')
    check_eq(hex(u64(c['src'])), hex(v['host']), 'failed copy: src')
    check_eq(hex(u64(c['dst'])), hex(v['dev']), 'failed copy: dst')
    ce = [e for e in errs if e['api'] == 'cudaMemcpy']
    if ce and 'copy_id' in ce[0]:
        check_eq(ce[0]['copy_id'], c['id'], "the failed copy's errors row names its copies row")
# A failed synchronize is an error; if syncs lists it too, it must say it failed
# (an analyzer summing sync time must be able to leave it out).
bad_syncs = rows(conn, 'SELECT * FROM syncs')
if bad_syncs:
    check('status' in bad_syncs[0] and all(s['status'] == v['rc_badstream'] for s in bad_syncs),
          'syncs rows of the failed synchronize carry its status', bad_syncs)
check_records_lost_zero(conn)
finish()
