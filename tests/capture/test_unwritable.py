"""Scenario 10: an output path that cannot be written.  The program runs
unprofiled with the same stdout and exit status as without the preload, and
the preload says so once on stderr ("xferprof: cannot write ...").

  test_unwritable.py ... preload    the preload's own handling: set up by hand,
                                    and under `xferprof run` with a folder
                                    pattern (%p) the launcher cannot check
  test_unwritable.py ... launcher   `xferprof run -o` a plain unwritable path
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

mode = sys.argv.pop() if sys.argv[-1] in ('preload', 'launcher') else 'preload'
args = parse_args()
d = tmpdir('unwritable')
plain = plain_run(args, [args.prog])
check_eq(plain.rc, 3, 'cap_transparency exit status without the preload')
PROGRAM_ERR = 'cap_transparency: exiting with 3'

# A file where a folder should be, and a folder under /proc that cannot exist.
blocker = os.path.join(d, 'file')
open(blocker, 'w').close()
if mode == 'preload':
    cases = [('LD_PRELOAD by hand', '/proc/nonexistent/x.db'),
             ('LD_PRELOAD by hand', os.path.join(blocker, 'x.db')),
             ('xferprof run', '/proc/nonexistent-%p/x.db'),
             ('xferprof run', os.path.join(blocker, '%p', 'x.db'))]
else:
    # A file on the way of a folder shared by every process is refused by
    # the launcher itself (capture_outdirs).
    cases = [('xferprof run', '/proc/nonexistent/x.db')]
for how, target in cases:
    if how == 'xferprof run':
        r = xferprof_run(args, ['-o', target], [args.prog])
    else:
        r = manual_run(args, target, [args.prog])
    what = '%s -o %s' % (how, target)
    check(r.out_bytes == plain.out_bytes, what + ': the program ran, stdout as without the preload')
    check_eq(r.rc, plain.rc, what + ': exit status')
    warn = [x for x in r.err.splitlines() if x.startswith('xferprof: cannot write')]
    check_eq(len(warn), 1, what + ': one "xferprof: cannot write" line on stderr')
    check(PROGRAM_ERR in r.err, what + ": the program's own stderr", repr(r.err))
    if how == 'LD_PRELOAD by hand':
        # Without the launcher, stderr is the program's plus that one line.
        others = [x for x in r.err.splitlines() if x not in warn and x != PROGRAM_ERR]
        check_eq(others, [], what + ': nothing else on stderr')
    check('Segmentation' not in r.err and r.rc >= 0, what + ': no crash')
check_eq(sorted(os.listdir(d)), ['file'], 'nothing was created next to the blocking file')
finish()
