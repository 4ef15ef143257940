"""Symbol copies and kernel context (cap_kernels, built by nvcc, on two
simulated devices): each symbol copy recorded with the variable's device
address as its device side, the right direction, blocking class and
fingerprint; kernel_seq counting the successful launches on each device
between copies (copy, launch, launch, copy: 2 apart); failed launches in
errors and not counted; and the program's return codes and last-error state
the same with and without the profiler.  With --ptds the program was built
with --default-stream per-thread."""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403
import cap_fp  # noqa: E402

ptds = '--ptds' in sys.argv
if ptds:
    sys.argv.remove('--ptds')
args = parse_args()
d = tmpdir('kernels')
db = os.path.join(d, 'run.db')
env = {'XFERPROF_SIM_DEVICES': '2'}
plain = plain_run(args, [args.prog], env)
r = xferprof_run(args, ['-o', db], [args.prog], env)
if not expect_rc(plain, 0, 'cap_kernels without the profiler') or \
        not expect_rc(r, 0, 'cap_kernels under xferprof run --sim'):
    finish()


def rc_lines(text):
    return [line for line in text.splitlines() if line.startswith('rc ')]


check_eq(rc_lines(r.out), rc_lines(plain.out),
         'return codes and last errors identical with and without the profiler')
check('rc to_beyond 1 last 1' in r.out, 'the failed symbol copy failed with its own error',
      rc_lines(r.out))
v = parse_values(r.out)
for name in ('var', 'var_shadow', 'cst', 'host', 'back', 'dev', 'dev1', 'stream'):
    if name not in v:
        fatal('program did not print %s' % name, r.out)
S = v['stream']
DEFAULT = 2 if ptds else 0   # cudaStreamPerThread for the _ptds forms


def sync_name(n):
    return n + '_ptds' if ptds else n


def async_name(n):
    return n + '_ptsz' if ptds else n


HOST = struct.pack('<1024i', *[i * 7 + 1 for i in range(1024)])
TO, FROM = sync_name('cudaMemcpyToSymbol'), sync_name('cudaMemcpyFromSymbol')
TOA, FROMA = async_name('cudaMemcpyToSymbolAsync'), async_name('cudaMemcpyFromSymbolAsync')
M = sync_name('cudaMemcpy')
# (api, direction, bytes, src, dst, host_mem, blocking, stream, device, kind, status,
#  kernel_seq, content or None)
expected = [
    (TO, 'H2D', 4096, v['host'], v['var'], 'pageable', 'sync', DEFAULT, 0, 1, 0, 0, HOST),
    (FROM, 'D2H', 4096, v['var'], v['back'], 'pageable', 'sync', DEFAULT, 0, 2, 0, 0, HOST),
    (TO, 'H2D', 64, v['host'] + 64, v['var'] + 128, 'pageable', 'sync', DEFAULT, 0, 1, 0, 0,
     HOST[64:128]),
    (TOA, 'H2D', 4096, v['host'], v['var'], 'pageable', 'async_pageable', S, 0, 1, 0, 0, HOST),
    (FROMA, 'D2H', 4096, v['var'], v['back'], 'pageable', 'async_pageable', S, 0, 2, 0, 0, None),
    (TO, 'D2D', 256, v['dev'], v['var'], None, 'async', DEFAULT, 0, 3, 0, 0, None),
    (TO, 'H2D', 4096, v['host'], v['var'], 'pageable', 'sync', DEFAULT, 0, 4, 0, 0, HOST),
    (TO, 'H2D', 64, v['host'], v['cst'], 'pageable', 'sync', DEFAULT, 0, 1, 0, 0, HOST[:64]),
    # Refused: the symbol's own (host shadow) address as passed, plus the offset.
    (TO, 'H2D', 8, v['host'], v['var_shadow'] + 4096, 'pageable', 'sync', DEFAULT, 0, 1, 1, 0,
     None),
    (M, 'H2D', 4096, v['host'], v['dev'], 'pageable', 'sync', DEFAULT, 0, 1, 0, 0, HOST),
    # After two <<<>>> launches (which the simulator does not run: the same bytes).
    (M, 'D2H', 4096, v['dev'], v['back'], 'pageable', 'sync', DEFAULT, 0, 2, 0, 2, HOST),
    # After cudaLaunchKernel; the two failed launches do not count.
    (M, 'H2D', 4, v['host'], v['dev'], 'pageable', 'sync', DEFAULT, 0, 1, 0, 3, HOST[:4]),
    (M, 'H2D', 4, v['host'], v['dev1'], 'pageable', 'sync', DEFAULT, 1, 1, 0, 1, HOST[:4]),
    (M, 'H2D', 4, v['host'], v['dev'], 'pageable', 'sync', DEFAULT, 0, 1, 0, 3, HOST[:4]),
]

conn = open_db(db)
got = rows(conn, 'SELECT * FROM copies ORDER BY start_ns, id')
check_eq(len(got), len(expected), 'number of copies rows')
fps = []
for i, (want, row) in enumerate(zip(expected, got)):
    (api, direction, nbytes, src, dst, host_mem, blocking, stream, device, kind, status, kseq,
     content) = want
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
    check_eq(row['status'], status, what + ': status')
    check_eq(row['kernel_seq'], kseq, what + ': kernel_seq')
    if content is None:
        check_eq((row['fingerprint'], row['fingerprint_kind']), (None, None),
                 what + ': no fingerprint')
    else:
        check_eq(row['fingerprint_kind'], 'full', what + ': fingerprint_kind')
        if cap_fp.have():
            check_eq(hex(u64(row['fingerprint'] or 0)), hex(cap_fp.expected(content)[0]),
                     what + ': fingerprint value')
    fps.append(row['fingerprint'])
if len(fps) == len(expected):
    check(fps[0] is not None and fps[0] == fps[1] == fps[3] == fps[6] == fps[9] == fps[10],
          'the same 4 KiB to and from a symbol and a cudaMalloc buffer: one fingerprint', fps)
    check_eq(got[10]['kernel_seq'] - got[9]['kernel_seq'], 2,
             'copy, launch, launch, copy: kernel_seq 2 apart')

# Launches are not rows of their own; the failed ones are errors.
LAUNCH = async_name('__cudaLaunchKernel')
errs = [(e['api'], e['status'], e['record'])
        for e in rows(conn, 'SELECT api, status, record FROM errors ORDER BY start_ns, id')]
check_eq(errs, [(TO, 1, 'copy'), (LAUNCH, 9, 'call'),
                (async_name('cudaLaunchKernel'), 9, 'call')], 'errors rows')
ms = rows(conn, 'SELECT api, kernel_seq, device FROM memsets')
check_eq([(m['api'], m['kernel_seq'], m['device']) for m in ms],
         [(sync_name('cudaMemset'), 3, 0)], 'memsets rows carry kernel_seq too')
check_records_lost_zero(conn)
finish()
