"""IPC events (cap_ipc_event): an event opened from another process is an
ordinary event of the importer for the profiler: waiting for it on the host
is a `syncs` row (`cudaEventSynchronize`, stream the opened handle) in the
importer's database, and the copy its stream made after waiting on it is an
ordinary async copy on that stream; the exporter's rows are as for any
event.  Output and exit status are as without the profiler."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

N = 1 << 20

args = parse_args()
d = tmpdir('ipc_event')
plain = plain_run(args, [args.prog])
expect_rc(plain, 0, 'cap_ipc_event without the profiler')
r = xferprof_run(args, ['-o', os.path.join(d, 'run-%p.db')], [args.prog])
if not expect_rc(r, plain.rc, 'cap_ipc_event under xferprof run --sim: exit status as without'):
    finish()


def seen(out):
    return [x for x in out.splitlines() if not x.startswith('importer ') or 'read' in x]


check_eq(seen(r.out), seen(plain.out), 'stdout as without the profiler')
check_eq(seen(r.out), ['importer read 42 42', 'ipc_event: done'], 'what the programs saw')
v = parse_values(r.err)
child = parse_int_lines(r.out, 'importer')
for name in ('iev', 'istream', 'id', 'ihost'):
    if name not in v:
        fatal('importer did not print %s' % name, r.err)
if len(child) != 1:
    fatal('exporter did not print the importer pid', r.out)

conn = open_db(os.path.join(d, 'run-%d.db' % child[0]))
check_eq([(g['api'], g['kind'], u64(g['ptr']), g['bytes'], g['free_api'])
          for g in rows(conn, "SELECT * FROM allocations ORDER BY id")],
         [('cudaIpcOpenMemHandle', 'ipc', v['id'], N, 'cudaIpcCloseMemHandle'),
          ('cudaMallocHost', 'pinned', v['ihost'], N, 'cudaFreeHost')],
         'importer: allocations (api, kind, ptr, bytes, freed by)')
check_eq([(c['api'], c['direction'], c['bytes'], c['host_mem'], u64(c['src']), u64(c['dst']),
           u64(c['stream']), c['blocking'], c['status'])
          for c in rows(conn, "SELECT * FROM copies ORDER BY start_ns")],
         [('cudaMemcpyAsync', 'D2H', N, 'pinned', v['id'], v['ihost'], v['istream'], 'async', 0)],
         'importer: the copy after the wait on the opened event')
check_eq([(s['api'], u64(s['stream']), s['status'], s['copy_start_ns'])
          for s in rows(conn, "SELECT * FROM syncs ORDER BY start_ns")],
         [('cudaEventSynchronize', v['iev'], 0, None),
          ('cudaStreamSynchronize', v['istream'], 0, None),
          ('cudaEventSynchronize', v['iev'], 0, None)],
         'importer: syncs on the opened event and its stream')
check_eq(scalar(conn, 'SELECT count(*) FROM errors'), 0, 'importer: errors rows')
check_records_lost_zero(conn)
conn.close()

others = [f for f in os.listdir(d) if f.endswith('.db') and f != 'run-%d.db' % child[0]]
check_eq(len(others), 1, 'one database beside the importer\'s, the exporter\'s')
if others:
    conn = open_db(os.path.join(d, others[0]))
    check_eq([(c['api'], c['direction'], c['bytes'], c['host_mem']) for c in
              rows(conn, "SELECT * FROM copies ORDER BY start_ns")],
             [('cudaMemcpyAsync', 'H2D', N, 'pinned')], 'exporter: its upload')
    check_eq([(g['api'], g['kind'], g['free_api']) for g in
              rows(conn, "SELECT * FROM allocations ORDER BY id")],
             [('cudaMalloc', 'device', 'cudaFree'), ('cudaMallocHost', 'pinned', 'cudaFreeHost')],
             'exporter: allocations')
    check_eq(scalar(conn, 'SELECT count(*) FROM errors'), 0, 'exporter: errors rows')
    check_records_lost_zero(conn)
    conn.close()
finish()
