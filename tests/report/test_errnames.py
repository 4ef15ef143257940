"""Failed calls by name (issue 16, item 8): rep_errnames fails runtime and driver
calls on a 64 MiB simulated device, and every output names each status the way
the program's own header does, `cudaErrorInvalidValue (1)` for the runtime and
`CUDA_ERROR_INVALID_VALUE (1)` for the driver (the same code, another layer):
the report (text, markdown, HTML, JSON with `status` kept and `status_name`
added), the findings oom and invalid-free, the Perfetto trace's args, the CSV
(the copies view's status_name) and the database (cuda_error_names, the views'
status_name).  A code no header names reads `unknown error (N)`."""
import csv
import json
import os
import shutil
import sqlite3

from rep_common import *  # noqa: F401,F403

args = parse_args()
d = tmpdir('errnames')
db = os.path.join(d, 'run.db')
r = run([args.xferprof, 'run', '--sim', '-o', db, '--', args.prog],
        clean_env({'XFERPROF_SIM_MEMORY': '64M'}))
if r.rc != 0:
    fatal('rep_errnames under xferprof run --sim', r.describe())
v = parse_values(r.out)
check_eq([v.get(k) for k in ('rc_badkind', 'rc_bogus', 'rc_oom', 'rc_cu_oom', 'rc_cu_bogus')],
         [21, 1, 2, 2, 1], 'return codes the program saw')

# (api, status, shown as) for each failed call, as NVIDIA's headers name them.
FAILED = [
    ('cudaMemcpy', 21, 'cudaErrorInvalidMemcpyDirection'),
    ('cudaFree', 1, 'cudaErrorInvalidValue'),
    ('cudaMalloc', 2, 'cudaErrorMemoryAllocation'),
    ('cuMemAlloc_v2', 2, 'CUDA_ERROR_OUT_OF_MEMORY'),
    ('cuMemFree_v2', 1, 'CUDA_ERROR_INVALID_VALUE'),
]


def shown(name, code):
    return '%s (%d)' % (name, code)


# The database: the names beside the codes, for SQL users.
conn = open_db(db)
check_eq(sorted((e['api'], e['status'], e['status_name'])
                for e in rows(conn, 'SELECT api, status, status_name FROM errors')),
         sorted(FAILED), 'errors view: status_name of each failed call')
check_eq(rows(conn, 'SELECT status, status_name FROM copies'),
         [{'status': 21, 'status_name': 'cudaErrorInvalidMemcpyDirection'}],
         'copies view: the failed copy has its status_name')
for layer, code, name in (('runtime', 0, 'cudaSuccess'), ('driver', 0, 'CUDA_SUCCESS'),
                          ('runtime', 2, 'cudaErrorMemoryAllocation'),
                          ('driver', 2, 'CUDA_ERROR_OUT_OF_MEMORY')):
    check_eq(scalar(conn, 'SELECT name FROM cuda_error_names WHERE layer = ? AND code = ?',
                    (layer, code)), name, 'cuda_error_names %s %d' % (layer, code))
conn.close()

# The report, in each human format: every failed call's status by name.
texts = {}
for fmt in ('text', 'markdown', 'html'):
    rr = report(args, [db], ['--format', fmt])
    if rr.rc != 0:
        fatal('xferprof report --format %s' % fmt, rr.describe())
    texts[fmt] = rr.out
    for api, code, name in FAILED:
        check(shown(name, code) in rr.out, '%s report shows %s %s' % (fmt, api, shown(name, code)))
text = texts['text']
for api, code, name in FAILED:
    check(any(api in l and shown(name, code) in l for l in text.splitlines()),
          'text report: %s and %s on one line' % (api, shown(name, code)), text)
check(any('oom' in l for l in text.splitlines()), 'text report: oom findings', text)
check('(cudaErrorMemoryAllocation (2))' in text and '(CUDA_ERROR_OUT_OF_MEMORY (2))' in text,
      'oom findings name the status of each layer', text)
check('1 failed with cudaErrorInvalidValue (1)' in text and
      '1 failed with CUDA_ERROR_INVALID_VALUE (1)' in text,
      'invalid-free findings name the first failure\'s status', text)

# JSON: the numeric status kept, its name added.
doc = report_json(args, [db])
by_status = doc['totals'].get('failed_by_status')
check_eq(sorted((x['api'], x['status'], x['status_name'], x['count']) for x in by_status or []),
         sorted(f + (1,) for f in FAILED), 'json totals.failed_by_status')
check_eq(doc['processes'][0]['totals'].get('failed_by_status'), by_status,
         'json: the process has the same failed_by_status')
oom = sorted((f['details'].get('api'), f['details'].get('status'), f['details'].get('status_name'))
             for f in doc['findings'] if f['rule'] == 'oom')
check_eq(oom, [('cuMemAlloc_v2', 2, 'CUDA_ERROR_OUT_OF_MEMORY'),
               ('cudaMalloc', 2, 'cudaErrorMemoryAllocation')], 'json oom findings: status, status_name')
bad = sorted((f['details'].get('api'), f['details'].get('failed_status'),
              f['details'].get('failed_status_name'))
             for f in doc['findings'] if f['rule'] == 'invalid-free')
check_eq(bad, [('cuMemFree_v2', 1, 'CUDA_ERROR_INVALID_VALUE'), ('cudaFree', 1, 'cudaErrorInvalidValue')],
         'json invalid-free findings: failed_status, failed_status_name')

# The trace: every failed call's instant and the failed copy's slice.
trace = os.path.join(d, 'run.json')
rr = run([args.xferprof, 'export', db, '-o', trace], clean_env())
if rr.rc != 0:
    fatal('xferprof export', rr.describe())
with open(trace) as f:
    tdoc = json.load(f)
events = tdoc['traceEvents'] if isinstance(tdoc, dict) else tdoc
errs = sorted((e['args']['api'], e['args']['status'], e['args'].get('status_name'))
              for e in events if e.get('cat') == 'error')
check_eq(errs, sorted(FAILED), 'trace: error instants have status and status_name')
copies = [e['args'] for e in events if e.get('cat') == 'copy' and e.get('ph') == 'X']
check_eq([(a['status'], a.get('status_name')) for a in copies],
         [(21, 'cudaErrorInvalidMemcpyDirection')], 'trace: the failed copy\'s status_name')

# CSV: the copies view, status_name included.
out = os.path.join(d, 'copies.csv')
rr = run([args.xferprof, 'export', db, '--format', 'csv', '-o', out], clean_env())
if rr.rc != 0:
    fatal('xferprof export --format csv', rr.describe())
with open(out, newline='') as f:
    table = list(csv.DictReader(f))
check_eq([(t['status'], t.get('status_name')) for t in table],
         [('21', 'cudaErrorInvalidMemcpyDirection')], 'csv: status and status_name')

# A code neither header names (a newer CUDA's): "unknown error (N)", and
# null in JSON, not a wrong name.
odd = os.path.join(d, 'odd.db')
shutil.copyfile(db, odd)
conn = sqlite3.connect(odd)
conn.execute("UPDATE error_rows SET status = 12345 WHERE api = "
             "(SELECT id FROM apis WHERE name = 'cudaFree')")
conn.commit()
conn.close()
rr = report(args, [odd])
check('cudaFree: unknown error (12345)' in rr.out, 'text report: an unknown code', rr.out)
doc = report_json(args, [odd])
check_eq([(x['status'], x['status_name']) for x in doc['totals']['failed_by_status']
          if x['api'] == 'cudaFree'], [(12345, None)], 'json: an unknown code has status_name null')
finish()
