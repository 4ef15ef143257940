"""The analyzer on a run that is still going (issue 14 item 8).  cap_sigkill
makes N copies and waits, alive, with its journal pending.  `xferprof
report`, `export` and `diff` read it (every copy so far is in their
output) without consuming the journal: the journal is still there and the
database untouched.  Then the program is killed with SIGKILL, and `xferprof
recover` finds every copy in the journal; only then is the run recovered."""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

N = 3000
args = parse_args()
d = tmpdir('live')
snaps = tmpdir('live-tmp')          # TMPDIR of the analyzer: where snapshots go
aenv = clean_env({'TMPDIR': snaps})
db = os.path.join(d, 'run.db')
env = clean_env({'LD_LIBRARY_PATH': args.sim_dir, 'LD_PRELOAD': args.preload,
                 'XFERPROF_OUTPUT': db})
p = subprocess.Popen([args.prog, str(N), 'wait'], env=env, stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, universal_newlines=True)
try:
    line = ''
    while line.strip() != 'ready':
        line = p.stdout.readline()
        if not line:
            fatal('the program ended before it was ready')
    time.sleep(0.3)   # a background ingest pass or two
    before = os.stat(db + '.xpj')
    rep = run([args.xferprof, 'report', '--format', 'json', db], aenv)
    if expect_rc(rep, 0, 'report on a live run'):
        doc = json.loads(rep.out)
        check_eq(doc['totals']['copies'], N, 'report on a live run: every copy so far')
    exp = run([args.xferprof, 'export', '--format', 'csv', '-o', os.path.join(d, 'c.csv'), db],
              aenv)
    if expect_rc(exp, 0, 'export on a live run'):
        with open(os.path.join(d, 'c.csv')) as f:
            check_eq(len(f.read().splitlines()) - 1, N, 'export on a live run: every copy so far')
    dif = run([args.xferprof, 'diff', '--format', 'json', db, db], aenv)
    check_eq(dif.rc, 0, 'diff of a live run against itself')
    check(os.path.exists(db + '.xpj'), 'the journal is still there')
    check_eq(os.stat(db + '.xpj').st_ino, before.st_ino, 'the same journal')
    conn = open_db(db)
    check_eq(meta(conn).get('recovered'), None, 'the live database is not marked recovered')
    conn.close()
    check_eq(p.poll(), None, 'the program is still running')
finally:
    p.kill()
    p.wait()
check_eq(p.returncode, -signal.SIGKILL, 'the program was killed')
r = run([args.xferprof, 'recover', db], clean_env())
expect_rc(r, 0, 'recover after SIGKILL')
conn = open_db(db)
check_eq(scalar(conn, "SELECT count(*) FROM copies WHERE api = 'cudaMemcpy'"), N,
         'every copy recovered after the kill')
check_eq(meta(conn).get('recovered'), '1', 'recovered only now')
check_records_lost_zero(conn)
conn.close()
check_eq(os.listdir(snaps), [], 'the snapshots were removed')
finish()
