"""Scenario 2: allocations.  cap_allocations allocates with every API and frees
half of it; the allocations rows must say kind, bytes and pointer, free_ns
NULL exactly for the leaked ones, free_ns > alloc_ns and a free stack for the
freed ones."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('allocations')
db = os.path.join(d, 'run.db')
r = xferprof_run(args, ['-o', db], [args.prog])
if not expect_rc(r, 0, 'cap_allocations under xferprof run --sim'):
    finish()
v = parse_values(r.out)

# (api, kind, pointer name, bytes, freed), in program order.
expected = [
    ('cudaMalloc', 'device', 'd_freed', 1 << 20, True),
    ('cudaMalloc', 'device', 'd_leaked', 3000, False),
    ('cudaMallocHost', 'pinned', 'h_freed', 8192, True),
    ('cudaMallocHost', 'pinned', 'h_leaked', 12288, False),
    ('cudaHostAlloc', 'pinned', 'ha_freed', 20000, True),
    ('cudaHostAlloc', 'pinned', 'ha_leaked', 24576, False),
    ('cudaHostRegister', 'registered', 'r_freed', 65536, True),
    ('cudaHostRegister', 'registered', 'r_leaked', 32768, False),
    ('cudaMallocManaged', 'managed', 'm_freed', 40000, True),
    ('cudaMallocManaged', 'managed', 'm_leaked', 50000, False),
    ('cudaMallocAsync', 'device', 'a_freed', 70000, True),
    ('cudaMallocAsync', 'device', 'a_leaked', 80000, False),
    ('cudaMallocFromPoolAsync', 'device', 'p_freed', 90000, True),
]
for e in expected:
    if e[2] not in v:
        fatal('program did not print %s' % e[2], r.out)

conn = open_db(db)
mods = Modules(conn)
got = rows(conn, 'SELECT * FROM allocations ORDER BY alloc_ns, id')
check_eq(len(got), len(expected), 'number of allocations rows')
by_ptr = {}
for want, row in zip(expected, got):
    api, kind, name, nbytes, freed = want
    what = 'allocation %s (%s %s)' % (name, api, kind)
    by_ptr[name] = row
    check_eq(row['api'], api, what + ': api')
    check_eq(row['kind'], kind, what + ': kind')
    check_eq(hex(u64(row['ptr'])), hex(v[name]), what + ': ptr')
    check_eq(row['bytes'], nbytes, what + ': bytes')
    if kind in ('device', 'managed'):
        check_eq(row['device'], 0, what + ': device')
    else:
        check(row['device'] in (None, -1, 0), what + ': device of host memory',
              'got %r' % row['device'])
    check(row['alloc_ns'] is not None and row['alloc_ns'] > 0, what + ': alloc_ns set')
    check_stack(conn, mods, args.prog, row['alloc_stack_id'], what + ' alloc stack')
    if freed:
        check(row['free_ns'] is not None and row['free_ns'] > (row['alloc_ns'] or 0),
              what + ': freed, free_ns > alloc_ns', row['alloc_ns'], row['free_ns'])
        check_stack(conn, mods, args.prog, row['free_stack_id'], what + ' free stack')
    else:
        check(row['free_ns'] is None, what + ': leaked, free_ns IS NULL', 'got %r' % row['free_ns'])
        check(row['free_stack_id'] is None, what + ': leaked, free_stack_id IS NULL',
              'got %r' % row['free_stack_id'])

# The frees happened in this order.
order = ['d_freed', 'h_freed', 'ha_freed', 'r_freed', 'm_freed', 'a_freed', 'p_freed']
times = [by_ptr[n]['free_ns'] for n in order if n in by_ptr]
check(all(t is not None for t in times) and times == sorted(times),
      'frees recorded in program order', times)
check_eq(rows(conn, "SELECT free_api FROM allocations WHERE api LIKE '%Async' AND free_ns IS NOT NULL"),
         [{'free_api': 'cudaFreeAsync'}, {'free_api': 'cudaFreeAsync'}], 'stream-ordered frees')
check_eq(scalar(conn, 'SELECT count(*) FROM allocations WHERE free_ns IS NULL'), 6,
         'leaked allocations (free_ns IS NULL)')
# cudaFree(NULL) is a successful no-op: no error, no row.
check_eq(scalar(conn, 'SELECT count(*) FROM errors'), 0, 'errors rows')
check_records_lost_zero(conn)
finish()
