"""2D, peer and memset calls and cudaMallocPitch (cap_surface, on two simulated
devices): every copies and memsets row is checked against what the program
printed: api, direction, bytes, src, dst, host_mem, blocking, stream, device,
kind, fingerprint; the pitched allocation's size; the failed memset in errors.
With --ptds the program was built with CUDA_API_PER_THREAD_DEFAULT_STREAM and
the names and default stream change accordingly."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403
import cap_fp  # noqa: E402

ptds = '--ptds' in sys.argv
if ptds:
    sys.argv.remove('--ptds')
args = parse_args()
d = tmpdir('surface')
db = os.path.join(d, 'run.db')
r = xferprof_run(args, ['-o', db], [args.prog], {'XFERPROF_SIM_DEVICES': '2'})
if not expect_rc(r, 0, 'cap_surface under xferprof run --sim'):
    finish()
v = parse_values(r.out)
for name in ('dev', 'dev2', 'peer', 'pitched', 'pinned', 'managed', 'pageable', 'stream'):
    if name not in v:
        fatal('program did not print %s' % name, r.out)
pitch = parse_int_lines(r.out, 'pitch')[0]
S = v['stream']
PT = 2   # cudaStreamPerThread, as the _ptds forms record their stream


def sync_name(n):
    return n + '_ptds' if ptds else n


def async_name(n):
    return n + '_ptsz' if ptds else n


DEFAULT = PT if ptds else 0
W, H, SPITCH = 1000, 20, 1024
# The program's pageable rows: byte i of the buffer is i * 7 + 3.
pageable = bytes((i * 7 + 3) & 0xff for i in range(SPITCH * H))


def rows_of(buf, width, height, pitch_):
    return b''.join(buf[r * pitch_:r * pitch_ + width] for r in range(height))


up = rows_of(pageable, W, H, SPITCH)

# (api, direction, bytes, src, dst, host_mem, blocking, stream, device, kind, content or None)
expected = [
    (sync_name('cudaMemcpy2D'), 'H2D', W * H, v['pageable'], v['pitched'], 'pageable', 'sync',
     DEFAULT, 0, 1, up),
    # Back into contiguous pinned rows: the same bytes, so the same fingerprint.
    (sync_name('cudaMemcpy2D'), 'D2H', W * H, v['pitched'], v['pinned'], 'pinned', 'sync',
     DEFAULT, 0, 2, up),
    (sync_name('cudaMemcpy2D'), 'D2D', 5000, v['pitched'], v['dev'], None, 'async', DEFAULT, 0, 3,
     None),
    (async_name('cudaMemcpy2DAsync'), 'H2D', W * 10, v['pinned'], v['pitched'], 'pinned', 'async',
     S, 0, 1, up[:W * 10]),
    (async_name('cudaMemcpy2DAsync'), 'H2D', 500, v['pageable'], v['pitched'], 'pageable',
     'async_pageable', S, 0, 4, rows_of(pageable, 100, 5, SPITCH)),
    # Peer copies: device to device, on the destination's device, no kind.
    ('cudaMemcpyPeer', 'D2D', 5000, v['dev'], v['peer'], None, 'async', 0, 1, None, None),
    ('cudaMemcpyPeerAsync', 'D2D', 6000, v['peer'], v['dev2'], None, 'async', S, 0, None, None),
]

conn = open_db(db)
got = rows(conn, 'SELECT * FROM copies ORDER BY start_ns, id')
check_eq(len(got), len(expected), 'number of copies rows')
fps = []
for i, (want, row) in enumerate(zip(expected, got)):
    api, direction, nbytes, src, dst, host_mem, blocking, stream, device, kind, content = want
    what = 'copy %d (%s %s %d bytes)' % (i + 1, api, direction, nbytes)
    check_eq(row['api'], api, what + ': api')
    check_eq(row['direction'], direction, what + ': direction')
    check_eq(row['bytes'], nbytes, what + ': bytes')
    check_eq(hex(u64(row['src'])), hex(src), what + ': src')
    check_eq(hex(u64(row['dst'])), hex(dst), what + ': dst')
    check_eq(row['host_mem'], host_mem, what + ': host_mem')
    check_eq(row['blocking'], blocking, what + ': blocking')
    check_eq(hex(u64(row['stream'] or 0)), hex(stream), what + ': stream')
    check_eq(row['device'], device, what + ': device')
    check_eq(row['kind'], kind, what + ': kind')
    check_eq(row['status'], 0, what + ': status')
    check_eq(row['kernel_seq'], 0, what + ': kernel_seq')
    if content is None:
        check_eq((row['fingerprint'], row['fingerprint_kind']), (None, None),
                 what + ': no fingerprint (device memory only)')
    else:
        check(row['fingerprint'] is not None, what + ': fingerprint set')
        check_eq(row['fingerprint_kind'], 'full', what + ': fingerprint_kind')
        if cap_fp.have():
            check_eq(hex(u64(row['fingerprint'] or 0)), hex(cap_fp.expected(content)[0]),
                     what + ': fingerprint of the rows copied')
    fps.append(row['fingerprint'])
if len(fps) >= 4:
    check(fps[0] is not None and fps[0] == fps[1],
          'a 2D upload and the 2D download of the same bytes share a fingerprint', fps[:2])
    check(fps[3] != fps[0], 'half the rows: another fingerprint', fps[3], fps[0])

# Memsets: not copies; asynchronous on device memory, synchronous on pinned
# and managed memory (NVIDIA's API synchronization behavior).
M, MA = sync_name('cudaMemset'), async_name('cudaMemsetAsync')
expected_ms = [
    (M, v['dev'], 0x5a, 3000, None, 'async', DEFAULT, 0),
    (M, v['pinned'], 7, 3100, 'pinned', 'sync', DEFAULT, 0),
    (M, v['managed'], 0x1ff, 3200, 'managed', 'sync', DEFAULT, 0),
    (MA, v['dev2'], 1, 4000, None, 'async', S, 0),
    (M, v['pageable'], 0, 100, 'pageable', 'sync', DEFAULT, 1),
]
ms = rows(conn, 'SELECT * FROM memsets ORDER BY start_ns, id')
check_eq(len(ms), len(expected_ms), 'number of memsets rows')
for i, (want, row) in enumerate(zip(expected_ms, ms)):
    api, dst, value, nbytes, host_mem, blocking, stream, status = want
    what = 'memset %d (%s %d bytes)' % (i + 1, api, nbytes)
    check_eq(row['api'], api, what + ': api')
    check_eq(row['layer'], 'runtime', what + ': layer')
    check_eq(hex(u64(row['dst'])), hex(dst), what + ': dst')
    check_eq(row['value'], value, what + ': value')
    check_eq(row['bytes'], nbytes, what + ': bytes')
    check_eq(row['host_mem'], host_mem, what + ': host_mem')
    check_eq(row['blocking'], blocking, what + ': blocking')
    check_eq(hex(u64(row['stream'] or 0)), hex(stream), what + ': stream')
    check_eq(row['device'], 0, what + ': device')
    check_eq(row['status'], status, what + ': status')
    check_eq(row['kernel_seq'], 0, what + ': kernel_seq')
    check(row['start_ns'] <= row['end_ns'], what + ': start_ns <= end_ns')
errs = rows(conn, 'SELECT api, status, record, detail FROM errors')
check_eq([(e['api'], e['status'], e['record']) for e in errs], [(M, 1, 'memset')],
         'errors: the failed memset only')
if errs:
    check_eq(errs[0]['detail'], 'memset 100 bytes dst 0x%x value 0' % v['pageable'],
             'failed memset detail')

# cudaMallocPitch: an allocation of pitch * height bytes.
allocs = rows(conn, "SELECT * FROM allocations WHERE api = 'cudaMallocPitch'")
check_eq(len(allocs), 1, 'one cudaMallocPitch allocation')
if allocs:
    check_eq(hex(u64(allocs[0]['ptr'])), hex(v['pitched']), 'cudaMallocPitch ptr')
    check_eq(allocs[0]['bytes'], pitch * H, 'cudaMallocPitch bytes = pitch * height')
    check(pitch >= W, 'pitch is at least the width', pitch)
    check_eq(allocs[0]['kind'], 'device', 'cudaMallocPitch kind')
    check(allocs[0]['free_ns'] is not None, 'the pitched allocation was freed')
peer_alloc = rows(conn, 'SELECT device FROM allocations WHERE ptr = ?', (v['peer'],))
check_eq([a['device'] for a in peer_alloc], [1], "device 1's allocation")
check_eq([s['api'] for s in rows(conn, 'SELECT api FROM syncs ORDER BY start_ns, id')],
         ['cudaDeviceSynchronize'] + [async_name('cudaStreamSynchronize')] * 3, 'syncs rows')
check_records_lost_zero(conn)
finish()
