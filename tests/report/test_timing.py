"""The timing rules on a loaded machine: rep_timing.c (its first comment says
what it does) run twice under `xferprof run --sim` while two busy loops
contend for both cores; neither report may have a low-bandwidth or a
small-copies finding (first copies into fresh buffers, async call times,
preempted outliers and cheap small copies are not problems)."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rep_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('report-timing')
load = [subprocess.Popen([sys.executable, '-c', 'while True: pass']) for _ in range(2)]
try:
    dbs = []
    for i in range(2):
        db = os.path.join(d, 'run%d.db' % i)
        r = xferprof_run(args, ['-o', db], [args.prog])
        if not expect_rc(r, 0, 'rep_timing under xferprof run --sim'):
            finish()
        dbs.append(db)
finally:
    for p in load:
        p.kill()
        p.wait()

for db in dbs:
    r = report(args, [db], ['--format', 'json'])
    if not expect_rc(r, 0, 'xferprof report'):
        continue
    findings = json.loads(r.out)['findings']
    timed = [(f['rule'], f['message']) for f in findings
             if f['rule'] in ('low-bandwidth', 'small-copies')]
    check(not timed, '%s: no low-bandwidth or small-copies finding' % os.path.basename(db), timed)
finish()
