"""Real PyTorch on the simulator (torch_copies.py under `xferprof run --sim`),
checked in the database row by row: each copy torch makes (.to() from pageable
memory, pin_memory() then .to(non_blocking=True), .to(non_blocking=True)
without pinning, .cpu(), copy_ into pinned memory, copy_ to the device,
.item()) with its direction, bytes, pointers, host memory kind and blocking
class, the synchronization torch makes after each blocking one, the bytes
really moved, and the caching allocator's device memory: cudaMalloc segments
and the cudaFree of empty_cache() by default, reserved/physical/mapped VMM
allocations and their frees with expandable_segments:True."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_common import *  # noqa: E402,F401,F403

args = parse_torch_args()
BIG = 64 << 20
GRAN = 2 << 20


def run_once(tag, env_extra):
    d = tmpdir('torch-' + tag)
    db = os.path.join(d, 'run.db')
    r = torch_run(args, db, env_extra)
    if not expect_rc(r, 0, 'torch_copies.py (%s) under xferprof run --sim' % tag):
        finish()
    v = parse_values(r.out)
    for name in ('host', 'nbytes', 'x', 'pinned', 'y', 'z', 'back', 'pinned_dst', 'same', 'big',
                 'done'):
        if name not in v:
            fatal('%s: torch_copies.py did not print %s' % (tag, name), r.out)
    check_eq(v['same'], 1, '%s: the bytes went to the device and back' % tag)
    return open_db(db), v


def check_copies(tag, conn, v):
    n = v['nbytes']
    got = rows(conn, 'SELECT * FROM copies ORDER BY start_ns')
    # (what, direction, bytes, src, dst, host_mem, blocking, sync after)
    want = [
        ('.to() pageable', 'H2D', n, v['host'], v['x'], 'pageable', 'async_pageable', True),
        ('pinned .to(non_blocking)', 'H2D', n, v['pinned'], v['y'], 'pinned', 'async', False),
        ('pageable .to(non_blocking)', 'H2D', n, v['host'], v['z'], 'pageable', 'async_pageable',
         False),
        ('.cpu()', 'D2H', n, v['x'], v['back'], 'pageable', 'async_pageable', True),
        ('copy_ into pinned, non_blocking', 'D2H', n, v['y'], v['pinned_dst'], 'pinned', 'async',
         False),
        ('copy_ to the device', 'H2D', n, v['back'], v['x'], 'pageable', 'async_pageable', True),
        ('.item()', 'D2H', 4, None, None, 'pinned', 'async', True),
    ]
    if not check_eq(len(got), len(want), '%s: copies recorded' % tag):
        for g in got:
            print('  copy: %r' % g, file=sys.stderr)
        return
    for row, (what, direction, nbytes, src, dst, host_mem, blocking, synced) in zip(got, want):
        what = '%s: %s' % (tag, what)
        check_eq(row['api'], 'cudaMemcpyAsync', what + ': api')
        check_eq(row['status'], 0, what + ': status')
        check_eq(row['direction'], direction, what + ': direction')
        check_eq(row['bytes'], nbytes, what + ': bytes')
        if src is not None:
            check_eq(u64(row['src']), src, what + ': src')
            check_eq(u64(row['dst']), dst, what + ': dst')
        check_eq(row['host_mem'], host_mem, what + ': host memory')
        check_eq(row['blocking'], blocking, what + ': blocking')
        check(row['stack_id'], what + ': has a stack')
        s = next_sync_after(conn, row)
        if synced:
            # non_blocking=False: torch synchronizes the copy's stream at once.
            if check(s is not None, what + ': a synchronization follows'):
                check_eq(s['api'], 'cudaStreamSynchronize', what + ': sync api')
                check_eq(s['stream'], row['stream'], what + ': sync stream')
        elif s is not None:
            check(s['api'] != 'cudaStreamSynchronize' or s['stream'] != row['stream'],
                  what + ': no synchronization of its stream right after', s)
    # The .item() copy reads the result of a reduction kernel on the device.
    item = got[-1]
    check(rows(conn, 'SELECT 1 FROM allocations WHERE kind = ? AND ptr <= ? AND ptr + bytes > ?',
               ('pinned', item['dst'], item['dst'])), tag + ': .item() lands in pinned memory')
    check(item['kernel_seq'] >= 1, tag + ': a kernel ran before .item()', item['kernel_seq'])


def check_pinned(tag, conn, v):
    for name in ('pinned', 'pinned_dst'):
        got = rows(conn, 'SELECT * FROM allocations WHERE ptr = ?', (v[name],))
        if check_eq(len(got), 1, '%s: one allocation at %s' % (tag, name)):
            check_eq(got[0]['api'], 'cudaHostAlloc', '%s: %s api' % (tag, name))
            check_eq(got[0]['kind'], 'pinned', '%s: %s kind' % (tag, name))
            check_eq(got[0]['bytes'], v['nbytes'], '%s: %s bytes' % (tag, name))


def containing(conn, kind, addr):
    return rows(conn, 'SELECT * FROM allocations WHERE kind = ? AND ptr <= ? AND ptr + bytes > ?',
                (kind, addr, addr))


# The caching allocator's own segments: cudaMalloc, the 64 MiB one freed by
# empty_cache(), the small one (2 MiB, holding x, y, z) kept.
conn, v = run_once('classic', {'PYTORCH_CUDA_ALLOC_CONF': None})
check_copies('classic', conn, v)
check_pinned('classic', conn, v)
small = containing(conn, 'device', v['x'])
if check_eq(len(small), 1, 'classic: one device allocation holds x'):
    s = small[0]
    check_eq(s['api'], 'cudaMalloc', 'classic: segment api')
    check_eq(s['bytes'], GRAN, 'classic: small segment bytes')
    check(s['ptr'] <= v['z'] < s['ptr'] + s['bytes'], 'classic: x, y and z share the segment')
    check_eq(s['free_api'], None, 'classic: small segment live at exit')
big = containing(conn, 'device', v['big'])
if check_eq(len(big), 1, 'classic: one device allocation holds the 64 MiB tensor'):
    check_eq(big[0]['api'], 'cudaMalloc', 'classic: big segment api')
    check(big[0]['bytes'] >= BIG, 'classic: big segment bytes', big[0]['bytes'])
    check_eq(big[0]['free_api'], 'cudaFree', 'classic: empty_cache() freed the big segment')
check_eq(scalar(conn, "SELECT count(*) FROM allocations WHERE api LIKE 'cuMem%'"), 0,
         'classic: no VMM calls')

# expandable_segments: one reservation, physical 20 MiB pages mapped into it
# with read-write access, the big tensor's pages unmapped and released by
# empty_cache(); copies go to mapped memory, still "device" for xferprof.
conn, v = run_once('expandable', {'PYTORCH_CUDA_ALLOC_CONF': 'expandable_segments:True'})
check_copies('expandable', conn, v)
check_pinned('expandable', conn, v)
check_eq(scalar(conn, "SELECT count(*) FROM allocations WHERE api = 'cudaMalloc'"), 0,
         'expandable: no cudaMalloc')
for name in ('x', 'big'):
    res = containing(conn, 'reserved', v[name])
    if check_eq(len(res), 1, 'expandable: one reservation holds %s' % name):
        check_eq(res[0]['api'], 'cuMemAddressReserve', 'expandable: %s reservation api' % name)
maps = containing(conn, 'mapped', v['x'])
if check_eq(len(maps), 1, 'expandable: one mapping holds x'):
    check_eq(maps[0]['api'], 'cuMemMap', 'expandable: mapping api')
    check_eq(maps[0]['free_api'], None, "expandable: x's mapping live at exit")
big_maps = rows(conn, 'SELECT * FROM allocations WHERE kind = ? AND ptr >= ? AND ptr < ?',
                ('mapped', v['big'] - (v['big'] % GRAN), v['big'] + BIG))
check(big_maps, "expandable: the big tensor's pages were mapped")
mapped_bytes = sum(m['bytes'] for m in big_maps)
check(mapped_bytes >= BIG, 'expandable: mapped bytes cover the big tensor', mapped_bytes)
check(all(m['free_api'] == 'cuMemUnmap' for m in big_maps),
      "expandable: empty_cache() unmapped the big tensor's pages", big_maps)
phys = rows(conn, "SELECT * FROM allocations WHERE kind = 'physical'")
check(phys and all(p['api'] == 'cuMemCreate' for p in phys), 'expandable: physical pages',
      phys)
check_eq(sum(p['bytes'] for p in phys), sum(m['bytes'] for m in rows(
    conn, "SELECT bytes FROM allocations WHERE kind = 'mapped'")),
    'expandable: every physical page was mapped once')
released = [p for p in phys if p['free_api'] == 'cuMemRelease']
check_eq(sum(p['bytes'] for p in released), mapped_bytes,
         'expandable: the big pages were released')
finish()
