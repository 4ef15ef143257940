"""Driver-API calls reached every way (cap_driver: linked symbols, dlopen +
dlsym, cuGetProcAddress_v2 and cuGetProcAddress): each copy recorded exactly
once, with the variant's own name, layer 'driver', its direction, host
memory and blocking nature, and a stack in the program; the memsets, syncs,
allocations and failures too; meta says the process has no dynamic runtime;
and the program's output (every result code, every byte read back) is the
same with and without the profiler.  With --ptds the program was built with
CUDA_API_PER_THREAD_DEFAULT_STREAM: its linked calls are the _ptds/_ptsz
variants."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

ptds = '--ptds' in sys.argv
if ptds:
    sys.argv.remove('--ptds')
args = parse_args()
d = tmpdir('driver')
db = os.path.join(d, 'run.db')

plain = plain_run(args, [args.prog])
expect_rc(plain, 0, 'cap_driver without the profiler')
r = xferprof_run(args, ['-o', db], [args.prog])
if not expect_rc(r, 0, 'cap_driver under xferprof run --sim'):
    finish()
check_eq(r.out, plain.out, 'output (result codes, bytes read back) with and without xferprof')

PT = 2   # CU_STREAM_PER_THREAD: how the synchronous _ptds variants record their stream
S = 'S'  # the program's stream (a handle: any non-zero value, the same each time)


def linked_sync(name):
    return name + '_ptds' if ptds else name


def linked_async(name):
    return name + '_ptsz' if ptds else name


LS = PT if ptds else 0
# bytes: (api, direction, host_mem, blocking, stream, status)
expected = {
    # (a) linked symbols
    1001: (linked_sync('cuMemcpyHtoD_v2'), 'H2D', 'pageable', 'sync', LS, 0),
    1002: (linked_sync('cuMemcpyHtoD_v2'), 'H2D', 'pinned', 'sync', LS, 0),
    1003: (linked_sync('cuMemcpyDtoH_v2'), 'D2H', 'pageable', 'sync', LS, 0),
    1004: (linked_sync('cuMemcpyDtoD_v2'), 'D2D', None, 'async', LS, 0),
    1005: (linked_async('cuMemcpyHtoDAsync_v2'), 'H2D', 'pinned', 'async', S, 0),
    1006: (linked_async('cuMemcpyDtoHAsync_v2'), 'D2H', 'pinned', 'async', S, 0),
    1007: (linked_sync('cuMemcpy'), 'H2D', 'pageable', 'sync', LS, 0),
    1008: (linked_async('cuMemcpyAsync'), 'D2H', 'pinned', 'async', S, 0),
    1090: (linked_sync('cuMemcpy2D_v2'), 'H2D', 'pageable', 'sync', LS, 0),
    1013: (linked_sync('cuMemcpyHtoD_v2'), 'H2D', 'pageable', 'sync', LS, 1),
    # (b) dlopen + dlsym, by exported name
    2001: ('cuMemcpyHtoD_v2', 'H2D', 'pageable', 'sync', 0, 0),
    2002: ('cuMemcpyDtoH_v2', 'D2H', 'pageable', 'sync', 0, 0),
    2003: ('cuMemcpyHtoD_v2_ptds', 'H2D', 'pageable', 'sync', PT, 0),
    2004: ('cuMemcpyDtoH_v2', 'D2H', 'pageable', 'sync', 0, 0),
    2005: ('cuMemcpyHtoD_v2', 'H2D', 'pageable', 'sync', 0, 0),
    # (c) cuGetProcAddress_v2 / cuGetProcAddress, by base name + flags
    3001: ('cuMemcpyHtoD_v2', 'H2D', 'pinned', 'sync', 0, 0),
    3002: ('cuMemcpyHtoD_v2_ptds', 'H2D', 'pinned', 'sync', PT, 0),
    3003: ('cuMemcpyDtoHAsync_v2_ptsz', 'D2H', 'pinned', 'async', S, 0),
    3004: ('cuMemcpy', 'D2D', None, 'async', 0, 0),
    3005: ('cuMemcpyDtoD_v2', 'D2D', None, 'async', 0, 0),
}

conn = open_db(db)
mods = Modules(conn)
got = rows(conn, 'SELECT * FROM copies ORDER BY start_ns, id')
by_bytes = {}
for row in got:
    by_bytes.setdefault(row['bytes'], []).append(row)
check_eq(sorted(by_bytes), sorted(expected), 'the copies recorded (by size)')
streams = set()
for nbytes, (api, direction, host_mem, blocking, stream, status) in sorted(expected.items()):
    found = by_bytes.get(nbytes, [])
    what = 'copy of %d bytes (%s)' % (nbytes, api)
    if not check_eq(len(found), 1, what + ': rows'):
        continue
    row = found[0]
    check_eq(row['api'], api, what + ': api')
    check_eq(row['layer'], 'driver', what + ': layer')
    check_eq(row['direction'], direction, what + ': direction')
    check_eq(row['host_mem'], host_mem, what + ': host_mem')
    check_eq(row['blocking'], blocking, what + ': blocking')
    check_eq(row['status'], status, what + ': status')
    check_eq(row['device'], 0, what + ': device')
    if stream == S:
        check(row['stream'] not in (None, 0, 1, 2), what + ': stream is the program\'s',
              row['stream'])
        streams.add(row['stream'])
    else:
        check_eq(u64(row['stream'] or 0), stream, what + ': stream')
    check_stack(conn, mods, args.prog, row['stack_id'], what)
check_eq(len(streams), 1, 'the async copies name one stream')

memsets = rows(conn, 'SELECT * FROM memsets ORDER BY start_ns, id')
check_eq([(m['api'], m['layer'], m['bytes'], m['status']) for m in memsets],
         [(linked_sync('cuMemsetD8_v2'), 'driver', 1011, 0),
          (linked_async('cuMemsetD32Async'), 'driver', 1012, 0)], 'memsets rows')

syncs = rows(conn, 'SELECT * FROM syncs ORDER BY start_ns, id')
CTX, SS = ('cuCtxSynchronize', 'driver'), (linked_async('cuStreamSynchronize'), 'driver')
check_eq([(s['api'], s['layer']) for s in syncs],
         [CTX, SS, CTX, SS, CTX, SS, CTX, CTX, ('cuStreamSynchronize_ptsz', 'driver')],
         'syncs rows')

allocs = rows(conn, 'SELECT * FROM allocations ORDER BY alloc_ns, id')
check_eq([(a['api'], a['layer'], a['kind'], a['bytes'], a['free_api']) for a in allocs],
         [('cuMemAlloc_v2', 'driver', 'device', 1 << 16, 'cuMemFree_v2'),
          ('cuMemAlloc_v2', 'driver', 'device', 1 << 16, 'cuMemFree_v2'),
          ('cuMemAllocHost_v2', 'driver', 'pinned', 1 << 16, 'cuMemFreeHost'),
          (linked_async('cuMemAllocAsync'), 'driver', 'device', 1 << 16,
           linked_async('cuMemFreeAsync'))],
         'allocations rows')

errors = rows(conn, 'SELECT * FROM errors ORDER BY start_ns, id')
check_eq([(e['api'], e['layer'], e['status'], e['record']) for e in errors],
         [(linked_sync('cuMemcpyHtoD_v2'), 'driver', 1, 'copy'),
          ('cuMemFree_v2', 'driver', 1, 'free')], 'errors rows')

m = meta(conn)
check_eq(m.get('runtime'), 'static', 'meta runtime (no libcudart loaded)')
check('driver layer' in (m.get('runtime_note') or ''), 'meta runtime_note says why',
      m.get('runtime_note'))
check_records_lost_zero(conn)
finish()
