"""IPC (cap_ipc): memory opened from another process is an allocation of kind
`ipc` in the importer's database (ptr the pointer it got, bytes the
exported allocation's size, the importer's device), freed by
cudaIpcCloseMemHandle; copies into and out of it are device copies; one
left open at exit is live, but no leak finding of the importer (its own
buffer left allocated is).  The exporter's rows are as for any allocation.
Output and exit status are as without the profiler."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

N, BIG = 20000, 1 << 20

args = parse_args()
d = tmpdir('ipc')
plain = plain_run(args, [args.prog])
expect_rc(plain, 0, 'cap_ipc without the profiler')
r = xferprof_run(args, ['-o', os.path.join(d, 'run-%p.db')], [args.prog])
if not expect_rc(r, plain.rc, 'cap_ipc under xferprof run --sim: exit status as without'):
    finish()
out = [x for x in r.out.splitlines() if not x.startswith('importer ') or 'read' in x]
check_eq(out, [x for x in plain.out.splitlines() if not x.startswith('importer ') or 'read' in x],
         'stdout as without the profiler')
check_eq(out, ['importer read 51', 'exporter read 119', 'ipc: done'], 'what the programs saw')
v = parse_values(r.err)
child = parse_int_lines(r.out, 'importer')
for name in ('ia', 'ib', 'iown', 'ihost'):
    if name not in v:
        fatal('importer did not print %s' % name, r.err)
if len(child) != 1:
    fatal('exporter did not print the importer pid', r.out)

conn = open_db(os.path.join(d, 'run-%d.db' % child[0]))
got = rows(conn, "SELECT * FROM allocations ORDER BY id")
check_eq([(g['api'], g['kind'], u64(g['ptr']), g['bytes'], g['device'], g['free_api'])
          for g in got],
         [('cudaIpcOpenMemHandle', 'ipc', v['ia'], N, 0, 'cudaIpcCloseMemHandle'),
          ('cudaIpcOpenMemHandle', 'ipc', v['ib'], BIG, 0, None),
          ('cudaMalloc', 'device', v['iown'], BIG, 0, None)],
         'importer: allocations (api, kind, ptr, bytes, device, freed by)')
copies = rows(conn, "SELECT * FROM copies ORDER BY start_ns")
check_eq([(c['api'], c['direction'], c['bytes'], c['host_mem'], u64(c['src']), u64(c['dst']),
           c['device']) for c in copies],
         [('cudaMemcpy', 'D2H', N, 'pageable', v['ia'], v['ihost'], 0),
          ('cudaMemcpy', 'H2D', N, 'pageable', v['ihost'], v['ia'], 0)],
         'importer: copies out of and into the opened memory')
check_eq(scalar(conn, 'SELECT count(*) FROM errors'), 0, 'importer: errors rows')
check_records_lost_zero(conn)
conn.close()

rep = run([args.xferprof, 'report', '--format', 'json',
           os.path.join(d, 'run-%d.db' % child[0])], clean_env())
if expect_rc(rep, 0, 'xferprof report --format json on the importer'):
    doc = json.loads(rep.out)
    leaks = [f for f in doc.get('findings', []) if f.get('rule') == 'leak']
    check_eq([f.get('bytes') for f in leaks], [BIG],
             'importer: one leak finding, its own buffer; the open IPC memory is none')
finish()
