"""Copies inside CUDA graphs (issue 17): a copy or memset issued on a capturing
stream, or added to a graph, is a graph node (graph_nodes), not a copy that
ran; each launch records one copies (memsets) row per node it ran, linked by
graph_node, named after the capture or add call (stack_id) and the launch
(launch_stack_id); the upload's fingerprint is the same for unchanged bytes
and differs for changed ones; an exec parameter update changes what later
launches record; output and exit status are the same with and without the
profiler.  The program is cap_graph_driver (driver API) or cap_graph_rt
(runtime API): both print the same facts, and run the same graph."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

layer = 'runtime' if '--runtime' in sys.argv else 'driver'
if layer == 'runtime':
    sys.argv.remove('--runtime')
args = parse_args()
d = tmpdir('graphs_' + layer)
db = os.path.join(d, 'run.db')

plain = plain_run(args, [args.prog])
expect_rc(plain, 0, 'the program without the profiler')
r = xferprof_run(args, ['-o', db], [args.prog])
if not expect_rc(r, 0, 'the program under xferprof run --sim'):
    finish()


def facts(out):
    """The output less the handles it prints (addresses: they may differ)."""
    return [line for line in out.splitlines() if line.split(' ')[0] not in ('stream', 'node')]


check_eq(facts(r.out), facts(plain.out),
         'output (result codes, bytes read back) with and without xferprof')
printed = parse_values(r.out)
stream = printed['stream']
sym = run([args.xferprof, 'symbolize', db], clean_env())
expect_rc(sym, 0, 'xferprof symbolize')

conn = open_db(db)
check_records_lost_zero(conn)


def innermost(stack_id):
    """The function of a stack's innermost frame (the hooked call's caller)."""
    got = rows(conn, 'SELECT function FROM stack_frames WHERE stack_id = ? ORDER BY level '
               'LIMIT 1', (stack_id,))
    return got[0]['function'] if got else None


LAUNCH = 'cuGraphLaunch' if layer == 'driver' else 'cudaGraphLaunch'
nodes = rows(conn, 'SELECT * FROM graph_nodes ORDER BY id')
captured = [n for n in nodes if n['via'] == 'capture']
added = [n for n in nodes if n['via'] == 'add']
check_eq([(n['op'], n['direction'], n['bytes'], n['host_mem']) for n in captured],
         [('copy', 'H2D', 4096, 'pinned'), ('copy', 'D2D', 3000, None),
          ('memset', None, 1500, None), ('copy', 'D2H', 2000, 'pinned')],
         'the captured nodes: op, direction, bytes, host memory')
check_eq([(n['op'], n['direction'], n['bytes'], n['host_mem'], n['updated']) for n in added],
         [('copy', 'H2D', 5000, 'pageable', 0)],
         'the added node (its exec update leaves the graph alone)')
check_eq(len(nodes), 5, 'graph nodes, none other')
for n in captured:
    check_eq(u64(n['stream']), stream, 'node %d: the capturing stream' % n['id'])
    check(n['handle'] is not None, 'node %d: its handle is known' % n['id'])
    check_eq(innermost(n['stack_id']), 'capture_graph', 'node %d: stack names the capture' % n['id'])
check_eq(len({n['graph'] for n in captured}), 1, 'the captured nodes are of one graph')
if added:
    check_eq(u64(added[0]['handle']), printed.get('node'), 'the added node: its handle')
    check_eq(innermost(added[0]['stack_id']), 'add_graph', 'the added node: stack names the add')

# Nothing captured ran as an ordinary copy.
check_eq(scalar(conn, 'SELECT count(*) FROM copies WHERE graph_node IS NULL '
                'AND bytes IN (4096, 3000, 2000, 5000, 6000)'), 0,
         'no ordinary copy rows for captured or added copies')
check_eq(scalar(conn, 'SELECT count(*) FROM memsets WHERE graph_node IS NULL'), 0,
         'no ordinary memset rows for the captured memset')

runs = rows(conn, 'SELECT * FROM copies WHERE graph_node IS NOT NULL ORDER BY start_ns, id')
by_node = {}
for c in runs:
    by_node.setdefault(c['graph_node'], []).append(c)
node_by_id = {n['id']: n for n in nodes}
check_eq(sorted((node_by_id[k]['bytes'], len(v)) for k, v in by_node.items() if k in node_by_id),
         [(2000, 3), (3000, 3), (4096, 3), (5000, 2)],
         'copy rows per node: each captured one per launch (3), the added one twice')
for c in runs:
    n = node_by_id.get(c['graph_node'])
    if n is None:
        check(False, 'copy %d names a node in graph_nodes' % c['id'])
        continue
    what = 'run of node %d (copy %d)' % (n['id'], c['id'])
    # The launch stages a pageable host side, holding its caller, as the
    # simulator does and cudaMemcpyAsync would.
    blocking = 'async_pageable' if n['host_mem'] == 'pageable' else 'async'
    check_eq((c['api'], c['layer'], u64(c['stream']), c['blocking'], c['status']),
             (LAUNCH, layer, stream, blocking, 0), what + ': api, layer, stream, blocking, status')
    check_eq((c['direction'], c['host_mem']), (n['direction'], n['host_mem']),
             what + ': direction and host memory as the node')
    check_eq(c['stack_id'], n['stack_id'], what + ": stack_id is the node's")
    check_eq(innermost(c['launch_stack_id']), 'launch_step', what + ': launch stack names the launch')
explicit = [c['bytes'] for c in runs if c['graph_node'] == (added[0]['id'] if added else None)]
check_eq(explicit, [5000, 6000], 'the added node as launched: as added, then as the exec update set it')

ups = [c for c in runs if c['bytes'] == 4096]
fps = [(c['fingerprint_kind'], c['fingerprint']) for c in ups]
check(len(fps) == 3 and all(k == 'full' for k, _ in fps), 'the upload is fingerprinted each launch', fps)
if len(fps) == 3:
    check_eq(fps[0][1], fps[1][1], 'unchanged input: the same fingerprint')
    check(fps[1][1] != fps[2][1], 'changed input: another fingerprint', fps)
check(all(c['fingerprint'] is None for c in runs if c['direction'] == 'D2H'),
      'a download is not fingerprinted when its launch returns')

ms = rows(conn, 'SELECT * FROM memsets ORDER BY start_ns, id')
check_eq([(m['bytes'], m['value'], m['api'], u64(m['stream'])) for m in ms],
         [(1500, 7, LAUNCH, stream)] * 3, 'the memset node, once per launch')
memset_node = [n for n in captured if n['op'] == 'memset']
if memset_node:
    check(all(m['graph_node'] == memset_node[0]['id'] and m['stack_id'] == memset_node[0]['stack_id']
              for m in ms), "each memset row names the memset node and has its stack")

# The report says how many copies graph launches ran, in how many launches.
txt = run([args.xferprof, 'report', db], clean_env())
expect_rc(txt, 0, 'report (text)')
want_runs, want_launches = len(runs), len({(c['start_ns'], c['tid']) for c in runs})
check('CUDA graphs: %d copies ran in %d launch(es)' % (want_runs, want_launches) in txt.out,
      "the text report's totals say how many copies graph launches ran", want_runs, want_launches)

# The report's call sites count the copies the launches ran, named after the capture.
rep = run([args.xferprof, 'report', '--format', 'json', db], clean_env())
expect_rc(rep, 0, 'report')
import json  # noqa: E402
report = json.loads(rep.out)
sites = report.get('sites', [])
totals = report.get('totals', {})
check_eq((totals.get('graph_copies'), totals.get('graph_launches')), (want_runs, want_launches),
         "the JSON report's totals: graph_copies, graph_launches")
site_stacks = {s.get('stack_id') for s in sites}
check(all(n['stack_id'] in site_stacks for n in captured if n['op'] == 'copy'),
      "the report's call sites include the captured copies' stacks")
conn.close()
finish()
