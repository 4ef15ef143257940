"""64 call sites in turn (cap_sites.c), all at the same depth and stack
pointer: the per-thread stack cache (src/xp_stack.c) answers most calls,
and must answer each with its own site's stack.  Each site's copies (told
apart by size) share one stack, the 64 sites have 64 different stacks, and
each stack's innermost frame is in that site's function."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('sites')
db = os.path.join(d, 'run.db')
r = xferprof_run(args, ['-o', db], [args.prog])
expect_rc(r, 0, 'cap_sites')
conn = open_db(db)
rows = conn.execute('SELECT bytes, stack_id FROM copies ORDER BY id').fetchall()
check_eq(len(rows), 640, 'every copy recorded')
by_site = {}
for nbytes, stack in rows:
    by_site.setdefault(nbytes - 64, set()).add(stack)
check_eq(sorted(by_site), list(range(64)), 'copies from the 64 sites')
check_eq([k for k, s in sorted(by_site.items()) if len(s) != 1], [],
         "each site's copies have one stack")
stacks = {k: next(iter(s)) for k, s in by_site.items() if len(s) == 1}
check_eq(len(set(stacks.values())), 64, '64 different stacks')
rep = run([args.xferprof, 'report', '--format', 'json', '--top', '100', db], clean_env())
expect_rc(rep, 0, 'report')
import json  # noqa: E402
named = {}
for s in json.loads(rep.out)['sites']:
    frames = s.get('frames') or []
    if frames:
        named[s['stack_id']] = frames[0].get('function')
wrong = [k for k, sid in stacks.items() if sid in named and named[sid] != 'site_%d%d' % (k // 8, k % 8)]
check(len(named) >= 60 and not wrong, "each stack starts in its own site's function",
      (len(named), wrong[:5]))
conn.close()
finish()
