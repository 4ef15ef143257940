"""The driver calls of a training job besides plain copies (cap_vmm, reaching
them as PyTorch does, through cudaGetDriverEntryPointByVersion): the
virtual memory management of expandable segments as allocations of kinds
reserved, physical and mapped, paired with their frees (one cuMemUnmap ends
two mappings); copies into mapped memory classified as device memory; a
failed cuMemCreate in errors; cuMemAllocFromPoolAsync; cuMemAlloc looked up
at version 3020 recorded as the variant it got (cuMemAlloc_v2); a
cuMemcpy3D_v2 with its bytes and fingerprint; prefetches of managed memory as
H2D/D2H traffic."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403
import cap_fp  # noqa: E402

args = parse_args()
d = tmpdir('vmm')
db = os.path.join(d, 'run.db')
r = xferprof_run(args, ['-o', db], [args.prog])
if not expect_rc(r, 0, 'cap_vmm under xferprof run --sim'):
    finish()
v = parse_values(r.out)
for name in ('va', 'leaked_va', 'h1', 'h2', 'pageable', 'pinned', 'from_pool', 'd3020', 'box',
             'pitched', 'managed'):
    if name not in v:
        fatal('program did not print %s' % name, r.out)
GRAN = 2 << 20

conn = open_db(db)
mods = Modules(conn)


def alloc(api, ptr):
    got = rows(conn, 'SELECT * FROM allocations WHERE api = ? AND ptr = ?', (api, ptr))
    check_eq(len(got), 1, 'one %s allocation at %#x' % (api, ptr))
    return got[0] if got else {}


# (api, kind, ptr, bytes, device, free api or None)
expected = [
    ('cuMemAddressReserve', 'reserved', v['va'], 3 * GRAN, -1, 'cuMemAddressFree'),
    ('cuMemAddressReserve', 'reserved', v['leaked_va'], GRAN, -1, None),
    ('cuMemCreate', 'physical', v['h1'], GRAN, 0, 'cuMemRelease'),
    ('cuMemCreate', 'physical', v['h2'], 2 * GRAN, 0, 'cuMemRelease'),
    ('cuMemMap', 'mapped', v['va'], GRAN, 0, 'cuMemUnmap'),
    ('cuMemMap', 'mapped', v['va'] + GRAN, 2 * GRAN, 0, 'cuMemUnmap'),
    ('cuMemAllocFromPoolAsync', 'device', v['from_pool'], 12345, 0, 'cuMemFreeAsync'),
    ('cuMemAlloc_v2', 'device', v['d3020'], 4096, 0, 'cuMemFree_v2'),
]
for api, kind, ptr, nbytes, device, free_api in expected:
    row = alloc(api, ptr)
    if not row:
        continue
    what = '%s at %#x' % (api, ptr)
    check_eq(row['kind'], kind, what + ': kind')
    check_eq(row['bytes'], nbytes, what + ': bytes')
    check_eq(row['device'], device, what + ': device')
    check_eq(row['layer'], 'driver', what + ': layer')
    check_eq(row['free_api'], free_api, what + ': free_api')
    check_stack(conn, mods, args.prog, row['alloc_stack_id'], what + ' alloc stack')
    if free_api:
        check(row['free_ns'] is not None and row['free_ns'] > row['alloc_ns'],
              what + ': freed after it was allocated', row['alloc_ns'], row['free_ns'])
    else:
        check(row['free_ns'] is None, what + ': live at exit', row['free_ns'])
# The order of the frees: unmap (both), release, release, address free.
order = [alloc('cuMemMap', v['va']), alloc('cuMemMap', v['va'] + GRAN),
         alloc('cuMemCreate', v['h1']), alloc('cuMemCreate', v['h2']),
         alloc('cuMemAddressReserve', v['va'])]
times = [o.get('free_ns') for o in order]
check(None not in times and times == sorted(times) and times[0] == times[1],
      'one unmap ended both mappings, then the releases, then the address free', times)
check_eq(scalar(conn, 'SELECT count(*) FROM unknown_frees'), 0, 'unknown frees')

# Device memory in use as docs/schema.md defines it: device + physical.
check_eq(scalar(conn, "SELECT sum(bytes) FROM allocations WHERE kind IN ('device', 'physical') "
                      "AND api IN ('cuMemAddressReserve', 'cuMemCreate', 'cuMemMap', "
                      "'cuMemAllocFromPoolAsync', 'cuMemAlloc_v2')"), 3 * GRAN + 12345 + 4096,
         'device memory allocated (kinds device + physical; reserved and mapped are not memory)')

err = rows(conn, "SELECT * FROM errors WHERE api = 'cuMemCreate'")
check_eq([(e['status'], e['record'], e['detail']) for e in err],
         [(1, 'alloc', 'requested %d bytes' % (GRAN + 1))], 'the failed cuMemCreate in errors')
check_eq(scalar(conn, "SELECT count(*) FROM errors WHERE api <> 'cuMemCreate'"), 0,
         'no other errors')


def copy(nbytes):
    got = rows(conn, 'SELECT * FROM copies WHERE bytes = ?', (nbytes,))
    check_eq(len(got), 1, 'one copy of %d bytes' % nbytes)
    return got[0] if got else {}


# bytes: (api, layer, direction, host_mem, blocking, src, dst)
copies = {
    5001: ('cudaMemcpy', 'runtime', 'H2D', 'pageable', 'sync', v['pageable'], v['va'] + 100),
    5002: ('cuMemcpyHtoD_v2', 'driver', 'H2D', 'pinned', 'sync', v['pinned'], v['va'] + GRAN + 7),
    5003: ('cudaMemcpy', 'runtime', 'D2H', 'pageable', 'sync', v['va'] + GRAN, v['pageable']),
}
for nbytes, (api, layer, direction, host_mem, blocking, src, dst) in copies.items():
    row = copy(nbytes)
    if not row:
        continue
    what = 'copy of %d bytes into/out of mapped memory' % nbytes
    check_eq((row['api'], row['layer'], row['direction'], row['host_mem'], row['blocking']),
             (api, layer, direction, host_mem, blocking), what)
    check_eq((u64(row['src']), u64(row['dst'])), (src, dst), what + ': src, dst')
    check_eq(row['device'], 0, what + ': device')
    check_eq(row['status'], 0, what + ': status')

# The 3D copy: WIDTH * HEIGHT * DEPTH bytes, the box's rows end to end.
box = [int(x) for x in r.out.split('box3d ')[1].split('\n')[0].split()]
W, H, D, PITCH, SLICE, X, Y = box
row = copy(W * H * D)
if row:
    check_eq((row['api'], row['direction'], row['host_mem'], row['blocking'], row['kind']),
             ('cuMemcpy3D_v2', 'H2D', 'pageable', 'sync', 1), 'cuMemcpy3D_v2 from a host box')
    check_eq((u64(row['src']), u64(row['dst'])), (v['box'] + Y * PITCH + X, v['pitched']),
             'cuMemcpy3D_v2: src, dst (the boxes\' first bytes)')
    content = bytes((i * 7 + 3) & 0xff for i in range(PITCH * SLICE * D))
    moved = b''.join(content[(z * SLICE + Y + y) * PITCH + X:(z * SLICE + Y + y) * PITCH + X + W]
                     for z in range(D) for y in range(H))
    check_eq(row['fingerprint_kind'], 'full', 'cuMemcpy3D_v2: fingerprint kind')
    if cap_fp.have():
        check_eq(u64(row['fingerprint']), cap_fp.xxh3(moved), 'cuMemcpy3D_v2: fingerprint')

# Prefetches: (api, bytes, direction, device)
prefetches = [('cuMemPrefetchAsync_v2', 1 << 16, 'H2D', 0, v['managed']),
              ('cuMemPrefetchAsync_v2', 8192, 'D2H', 0, v['managed'] + 4096),
              ('cuMemPrefetchAsync', 12288, 'H2D', 0, v['managed']),
              ('cuMemPrefetchAsync', 16384, 'D2H', 0, v['managed'])]
got = rows(conn, "SELECT * FROM copies WHERE api LIKE 'cuMemPrefetchAsync%' ORDER BY start_ns")
check_eq([(g['api'], g['bytes'], g['direction'], g['device'], u64(g['src'])) for g in got],
         [p for p in prefetches], 'the prefetches: api, bytes, direction, device, address')
for g in got:
    what = '%s of %d bytes' % (g['api'], g['bytes'])
    check_eq((g['host_mem'], g['blocking'], g['fingerprint'], g['kind'], g['status']),
             ('managed', 'async', None, None, 0), what + ': host_mem, blocking, no fingerprint')
check_eq(scalar(conn, 'SELECT count(*) FROM copies'), 3 + 1 + 4, 'copies recorded')
check_records_lost_zero(conn)
finish()
