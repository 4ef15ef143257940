"""Issue 14 items 7 and 18: a program that closes every descriptor >= 3 in
the middle of its run and opens files of its own in their place
(cap_closefds), and one that keeps only 6 descriptors spare below
RLIMIT_NOFILE (cap_closefds DIR rlimit).

Under the preload, with the launcher and without it: the program's files hold
exactly what it wrote (it checks them itself), its stdout and exit status are
those of a run without the preload, nothing crashes; and in the database
every copy the program made is there, or counted in meta records_lost with a
reason that names the descriptors.

  test_closefds.py ... [closefds|rlimit]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

mode = sys.argv.pop() if sys.argv[-1] in ('closefds', 'rlimit') else 'closefds'
args = parse_args()
d = tmpdir(mode)
extra = ['rlimit'] if mode == 'rlimit' else []


def prog_dir(tag):
    p = os.path.join(d, tag)
    os.mkdir(p)
    return p


plain = plain_run(args, [args.prog, prog_dir('plain')] + extra)
expect_rc(plain, 0, 'cap_closefds %s without the preload' % mode)
made = parse_int_lines(plain.out, 'copies')
if len(made) != 1:
    fatal('the program did not say how many copies it made', plain.out)
made = made[0]

for how in ('xferprof run', 'LD_PRELOAD by hand'):
    tag = 'launcher' if how == 'xferprof run' else 'manual'
    db = os.path.join(d, tag + '.db')
    cmd = [args.prog, prog_dir(tag)] + extra
    if how == 'xferprof run':
        r = xferprof_run(args, ['-o', db], cmd)
    else:
        r = manual_run(args, db, cmd)
    what = '%s (%s)' % (how, mode)
    if not expect_rc(r, plain.rc, what + ': exit status as without the preload'):
        continue
    check(r.out_bytes == plain.out_bytes, what + ': stdout as without the preload',
          repr(r.out), repr(plain.out))
    check('cap_closefds:' not in r.err, what + ": the program's own checks", repr(r.err))
    if how == 'LD_PRELOAD by hand':
        # Nothing but the one line that says calls were lost, if they were.
        check_eq([x for x in r.err.splitlines() if 'call(s) not recorded' not in x], [],
                 what + ': nothing else on stderr')
    check_eq(sorted(f for f in os.listdir(d) if f.endswith('.xpj')), [],
             what + ': no journal left behind')
    # libunwind's own pipe (the preload's only lasting descriptors) lives
    # where a program with fewer than ~1000 files open never reaches, so
    # that after close_range libunwind cannot read or write the program's
    # files in its place (src/xp_unwind_fds.c).
    # (before: the pipe made at start-up; after: one libunwind may have
    # made again once close_range had closed the first.)
    for when in ('before', 'after'):
        with open(os.path.join(d, tag, 'pipes-' + when)) as f:
            pipes = [int(x) for x in f.read().split()]
        if mode == 'closefds':
            check((pipes or when == 'after') and all(1000 <= p < 1024 for p in pipes),
                  what + ": libunwind's pipe at the top of the first 1024 descriptors, "
                  + when + ' close_range', pipes)
    conn = open_db(db)
    m = meta(conn)
    stored = scalar(conn, "SELECT count(*) FROM copies WHERE api = 'cudaMemcpy'")
    lost = int(m.get('records_lost') or 0)
    reason = m.get('records_lost_reason') or ''
    if stored != made:
        check(stored + lost >= made and 'descriptor' in reason,
              what + ': every copy stored, or counted as lost for its descriptors',
              'stored %d of %d, records_lost %d (%r)' % (stored, made, lost, reason))
    else:
        check_eq(lost, 0, what + ': meta records_lost')
    conn.close()
finish()
