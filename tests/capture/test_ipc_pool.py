"""Pool IPC (cap_ipc_pool): an allocation of another process's pool,
imported here (`cudaMemPoolImportPointer`), is an allocation of kind `ipc`
in the importer's database (ptr the pointer it got, bytes the exported
allocation's size, the importer's device), freed by the `cudaFree` or
`cudaFreeAsync` that freed it; copies into and out of it are device copies;
one still imported at exit is live, but no leak finding of the importer (its
own buffer left allocated is).  The exporter's rows are as for any pool
allocation.  Output and exit status are as without the profiler."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

N, BIG, SMALL = 20000, 1 << 20, 4096

args = parse_args()
d = tmpdir('ipc_pool')
plain = plain_run(args, [args.prog])
expect_rc(plain, 0, 'cap_ipc_pool without the profiler')
r = xferprof_run(args, ['-o', os.path.join(d, 'run-%p.db')], [args.prog])
if not expect_rc(r, plain.rc, 'cap_ipc_pool under xferprof run --sim: exit status as without'):
    finish()


def seen(out):
    return [x for x in out.splitlines() if not x.startswith('importer ') or 'read' in x]


check_eq(seen(r.out), seen(plain.out), 'stdout as without the profiler')
check_eq(seen(r.out), ['importer read 51', 'exporter read 102', 'ipc_pool: done'],
         'what the programs saw')
v = parse_values(r.err)
child = parse_int_lines(r.out, 'importer')
for name in ('ia', 'ib', 'ic', 'iown', 'ihost'):
    if name not in v:
        fatal('importer did not print %s' % name, r.err)
if len(child) != 1:
    fatal('exporter did not print the importer pid', r.out)

conn = open_db(os.path.join(d, 'run-%d.db' % child[0]))
check_eq([(g['api'], g['kind'], u64(g['ptr']), g['bytes'], g['device'], g['free_api'])
          for g in rows(conn, "SELECT * FROM allocations ORDER BY id")],
         [('cudaMemPoolImportPointer', 'ipc', v['ia'], N, 0, 'cudaFree'),
          ('cudaMemPoolImportPointer', 'ipc', v['ib'], BIG, 0, None),
          ('cudaMemPoolImportPointer', 'ipc', v['ic'], SMALL, 0, 'cudaFreeAsync'),
          ('cudaMalloc', 'device', v['iown'], BIG, 0, None)],
         'importer: allocations (api, kind, ptr, bytes, device, freed by)')
check_eq([(c['api'], c['direction'], c['bytes'], c['host_mem'], u64(c['src']), u64(c['dst']))
          for c in rows(conn, "SELECT * FROM copies ORDER BY start_ns")],
         [('cudaMemcpy', 'D2H', N, 'pageable', v['ia'], v['ihost']),
          ('cudaMemcpy', 'H2D', N, 'pageable', v['ihost'], v['ia'])],
         'importer: copies out of and into the imported memory')
check_eq(scalar(conn, 'SELECT count(*) FROM errors'), 0, 'importer: errors rows')
check_eq(scalar(conn, 'SELECT count(*) FROM unknown_frees'), 0, 'importer: unknown frees')
check_records_lost_zero(conn)
conn.close()

rep = run([args.xferprof, 'report', '--format', 'json',
           os.path.join(d, 'run-%d.db' % child[0])], clean_env())
if expect_rc(rep, 0, 'xferprof report --format json on the importer'):
    doc = json.loads(rep.out)
    leaks = [f for f in doc.get('findings', []) if f.get('rule') == 'leak']
    check_eq([f.get('bytes') for f in leaks], [BIG],
             'importer: one leak finding, its own buffer; the imported memory is none')

others = [f for f in os.listdir(d) if f.endswith('.db') and f != 'run-%d.db' % child[0]]
check_eq(len(others), 1, 'one database beside the importer\'s, the exporter\'s')
if others:
    conn = open_db(os.path.join(d, others[0]))
    check_eq([(g['api'], g['kind'], g['bytes'], g['free_api'])
              for g in rows(conn, "SELECT * FROM allocations ORDER BY id")],
             [('cudaMallocFromPoolAsync', 'device', N, 'cudaFreeAsync'),
              ('cudaMallocFromPoolAsync', 'device', BIG, 'cudaFreeAsync'),
              ('cudaMallocFromPoolAsync', 'device', SMALL, 'cudaFreeAsync')],
             'exporter: its pool allocations')
    check_eq(scalar(conn, 'SELECT count(*) FROM errors'), 0, 'exporter: errors rows')
    check_records_lost_zero(conn)
    conn.close()
finish()
