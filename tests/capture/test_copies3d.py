"""The runtime's other ways of moving bytes (cap_copies3d): cudaMalloc3D as a
device allocation of pitch * height * depth bytes; cudaMemcpy3D up from a
pageable host box and down into pinned memory (width * height * depth bytes,
the box's rows end to end fingerprinted, equal both ways), cudaMemcpy3DAsync,
a cudaMemcpy3DPeer (D2D); cudaMemcpyBatchAsync as one row per copy with its
own bytes, direction, host memory and fingerprint; cudaMemPrefetchAsync as
H2D / D2H traffic of managed memory."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403
import cap_fp  # noqa: E402

args = parse_args()
d = tmpdir('copies3d')
db = os.path.join(d, 'run.db')
r = xferprof_run(args, ['-o', db], [args.prog])
if not expect_rc(r, 0, 'cap_copies3d under xferprof run --sim'):
    finish()
v = parse_values(r.out)
for name in ('dev', 'box', 'back', 'd1', 'd2', 'pageable', 'managed'):
    if name not in v:
        fatal('program did not print %s' % name, r.out)
malloc3d_bytes = parse_int_lines(r.out, 'malloc3d_bytes')
W, H, D, PITCH, SLICE, X, Y = [int(x) for x in r.out.split('box3d ')[1].split('\n')[0].split()]

conn = open_db(db)
mods = Modules(conn)

a = rows(conn, "SELECT * FROM allocations WHERE api = 'cudaMalloc3D'")
check_eq([(x['kind'], u64(x['ptr']), x['bytes'], x['device'], x['free_api']) for x in a],
         [('device', v['dev'], malloc3d_bytes[0] if malloc3d_bytes else None, 0, 'cudaFree')],
         'cudaMalloc3D: kind, ptr, pitch * height * depth bytes, device, freed')
check(bool(malloc3d_bytes) and malloc3d_bytes[0] >= W * H * D, 'the pitch is at least the width',
      malloc3d_bytes)

content = bytes((i * 13 + 1) & 0xff for i in range(PITCH * SLICE * D))
box = b''.join(content[(z * SLICE + Y + y) * PITCH + X:(z * SLICE + Y + y) * PITCH + X + W]
               for z in range(D) for y in range(H))
got = rows(conn, "SELECT * FROM copies WHERE api NOT IN ('cudaMemcpyBatchAsync', "
                 "'cudaMemPrefetchAsync') ORDER BY start_ns")
# (api, bytes, direction, host_mem, blocking, src, dst, fingerprinted bytes or None)
pitch = malloc3d_bytes[0] // (H * D) if malloc3d_bytes else 0
want = [
    ('cudaMemcpy3D', W * H * D, 'H2D', 'pageable', 'sync', v['box'] + Y * PITCH + X, v['dev'], box),
    ('cudaMemcpy3D', W * H * D, 'D2H', 'pinned', 'sync', v['dev'], v['back'], box),
    ('cudaMemcpy3DAsync', W * H * 2, 'H2D', 'pinned', 'async', v['back'], v['dev'],
     box[:W * H * 2]),
    ('cudaMemcpy3DPeer', W * H, 'D2D', None, 'async', v['dev'], v['dev'] + pitch * H * 2, None),
]
check_eq([(g['api'], g['bytes'], g['direction'], g['host_mem'], g['blocking'], u64(g['src']),
           u64(g['dst'])) for g in got], [w[:7] for w in want],
         '3D copies: api, bytes, direction, host_mem, blocking, src, dst')
for g, w in zip(got, want):
    what = '%s %s' % (g['api'], g['direction'])
    check_eq(g['status'], 0, what + ': status')
    check_eq(g['device'], 0, what + ': device')
    check_stack(conn, mods, args.prog, g['stack_id'], what)
    if w[7] is None:
        check_eq(g['fingerprint'], None, what + ': no fingerprint')
    else:
        check_eq(g['fingerprint_kind'], 'full', what + ': fingerprint kind')
        if cap_fp.have():
            check_eq(u64(g['fingerprint']), cap_fp.xxh3(w[7]), what + ': fingerprint of the box')
if len(got) >= 2:
    check(got[0]['fingerprint'] is not None and got[0]['fingerprint'] == got[1]['fingerprint'],
          'the same box up and down: equal fingerprints', got[0]['fingerprint'],
          got[1]['fingerprint'])

batch = rows(conn, "SELECT * FROM copies WHERE api = 'cudaMemcpyBatchAsync' ORDER BY id")
check_eq([(b['bytes'], b['direction'], b['host_mem'], b['blocking'], u64(b['src']), u64(b['dst']))
          for b in batch],
         [(1111, 'H2D', 'pinned', 'async', v['back'], v['d1']),
          (2222, 'D2H', 'pageable', 'async_pageable', v['d1'], v['pageable']),
          (3333, 'D2D', None, 'async', v['d1'], v['d2'])],
         'cudaMemcpyBatchAsync: one row per copy (bytes, direction, host_mem, blocking, src, dst)')
if batch:
    check_eq(len({(b['start_ns'], b['stack_id'], b['stream']) for b in batch}), 1,
             'the batch rows share the call (start, stack, stream)')
    check_eq(batch[0]['fingerprint_kind'], 'full', 'batch H2D: fingerprinted')
    if cap_fp.have():
        check_eq(u64(batch[0]['fingerprint']), cap_fp.xxh3(b'\x09' * 1111),
                 'batch H2D: fingerprint of its own bytes')
    check_eq([b['fingerprint'] for b in batch[1:]], [None, None],
             'batch async D2H and D2D: no fingerprint')

pre = rows(conn, "SELECT * FROM copies WHERE api = 'cudaMemPrefetchAsync' ORDER BY start_ns")
check_eq([(p['bytes'], p['direction'], p['host_mem'], p['blocking'], p['device'], u64(p['src']),
           p['fingerprint'], p['status']) for p in pre],
         [(1 << 16, 'H2D', 'managed', 'async', 0, v['managed'], None, 0),
          (20000, 'D2H', 'managed', 'async', 0, v['managed'] + 4096, None, 0)],
         'cudaMemPrefetchAsync: managed-memory traffic to the device and to the host')
check_eq(scalar(conn, 'SELECT count(*) FROM errors'), 0, 'errors rows')
check_records_lost_zero(conn)
finish()
