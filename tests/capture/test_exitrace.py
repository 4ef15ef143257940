"""Issue 14 item 4: threads inside CUDA calls while the process exits.
cap_exitrace's workers loop on cudaMemcpy, cudaMemcpyAsync +
cudaStreamSynchronize and cudaMalloc + cudaFree on a slow simulated link
while the process ends (main calls exit, main returns, a worker calls exit;
and one worker inside a copy far longer than the profiler waits at exit).
Every run, under `xferprof run --sim` and with the preload by hand: the exit
status and stdout are those of the run without the profiler, `xferprof
report` reads the database, and the rows plus records_lost equal the calls
the program issued (it counts them, exactly, from an atexit handler that
runs before any destructor), the lost ones said to be in flight at exit."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

RUNS = int(os.environ.get('XFERPROF_TEST_EXITRACE_RUNS', '5'))   # per mode and way
args = parse_args()
d = tmpdir('exitrace')
counts = os.path.join(d, 'counts')
# 4 KiB to 1 MiB at 100 MB/s: a pageable copy holds its caller 40 us to 10 ms,
# so that exit meets calls that end at every stage of the profiler's exit.
SIM = {'XFERPROF_SIM_BANDWIDTH': '100M', 'XFERPROF_SIM_LATENCY': '20us'}
# The long mode's 64 MiB copy at 10 MB/s: ~6.7 s, far past the profiler's wait.
SIM_LONG = {'XFERPROF_SIM_BANDWIDTH': '10M', 'XFERPROF_SIM_LATENCY': '20us'}
TABLES = ('copy_rows', 'sync_rows', 'alloc_rows', 'free_rows', 'unknown_free_rows', 'error_rows')


def read_counts():
    vals = {}
    with open(counts) as f:
        for line in f:
            k, v = line.split()
            vals[k] = int(v)
    return vals


def check_run(r, base, db, what, exact):
    if not expect_rc(r, base.rc, what + ': exit status as without the profiler'):
        return False
    check_eq(r.out, base.out, what + ': stdout as without the profiler')
    rep = run([args.xferprof, 'report', db], clean_env())
    if not expect_rc(rep, 0, what + ': xferprof report reads the database'):
        return False
    issued = read_counts()
    conn = open_db(db)
    got = {t: scalar(conn, 'SELECT count(*) FROM %s' % t) for t in TABLES}
    m = meta(conn)
    conn.close()
    lost = int(m.get('records_lost', '-1'))
    kinds = ('copy', 'sync', 'alloc', 'free')
    recorded = sum(got.values())
    if exact:
        ok = check_eq(recorded + lost, sum(issued['issued_' + k] for k in kinds),
                      what + ': rows + records_lost = calls issued (rows %r, lost %d, counts %r)'
                      % (got, lost, issued))
    else:
        ok = check(recorded + lost >= sum(issued['done_' + k] for k in kinds),
                   what + ': rows + records_lost cover every call done before exit',
                   'rows %r, lost %d, counts %r' % (got, lost, issued))
    if lost:
        ok &= check('in flight at exit' in m.get('records_lost_reason', ''),
                    what + ': the loss is said to be calls in flight at exit',
                    repr(m.get('records_lost_reason')))
    return ok, lost, got


def runs(mode, sim, n):
    base = plain_run(args, [args.prog, mode, counts], sim)
    check(base.rc in (3, 5, 7, 9), mode + ': the run without the profiler ends as designed',
          base.describe())
    lost_runs = 0
    for i in range(n):
        for way in ('launcher', 'manual'):
            db = os.path.join(d, '%s-%s-%d.db' % (mode, way, i))
            if way == 'launcher':
                r = xferprof_run(args, ['--quiet', '-o', db], [args.prog, mode, counts], sim)
            else:
                r = manual_run(args, db, [args.prog, mode, counts], sim)
            res = check_run(r, base, db, '%s %s run %d' % (mode, way, i), mode == 'long')
            if res and res[0]:
                remove(db)
                lost_runs += res[1] > 0
            if res and mode == 'long':
                check(res[1] == 1 and res[2]['copy_rows'] == 0,
                      '%s %s run %d: the one copy in flight is lost, not recorded' % (mode, way, i),
                      res[1], res[2])
    print('%s: %d runs each way; %d with calls in flight at exit' % (mode, n, lost_runs))
    return lost_runs


for mode in ('exit', 'return', 'thread'):
    runs(mode, SIM, RUNS)
# One call in flight for certain: cut off, and counted.
runs('long', SIM_LONG, 2)
finish()
