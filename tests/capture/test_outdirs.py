"""Output folders (issue 16 item 4): a missing folder in -o or in
XFERPROF_OUTPUT is made, with its parents (mkdir -p, mode 0777 less the
umask), by the launcher and by the preload alone; a file on the way is
refused (the launcher exits 2 without running the program; the preload says
why once and the program runs unprofiled); a symbolic link to a folder is
followed when it is the user's own, not when another user planted it."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('outdirs')
umask = os.umask(0o022)
os.umask(umask)
plain = plain_run(args, [args.prog])


def copies(path, what):
    if not check(os.path.isfile(path), what + ': the database is there', path):
        return
    conn = open_db(path)
    check_eq(scalar(conn, 'SELECT count(*) FROM copies'), 6, what + ': copies')
    conn.close()


def unprofiled(r, what, reason):
    check_eq(r.rc, plain.rc, what + ': exit status')
    # cap_simple prints its pid, and nothing else.
    check(len(parse_int_lines(r.out, 'pid')) == 1 and r.out.count('\n') == plain.out.count('\n'),
          what + ': the program ran as without the preload', r.out)
    warn = [x for x in r.err.splitlines() if x.startswith('xferprof: ')]
    check(len(warn) == 1, what + ': one line from xferprof', repr(r.err))
    check(reason in r.err and 'running unprofiled' in r.err, what + ': says why', repr(r.err))


# The launcher: a fixed folder is made before the program runs.
r = xferprof_run(args, ['-o', os.path.join(d, 'a', 'b', 'run-%p.db')], [args.prog])
expect_rc(r, 0, 'xferprof run -o a/b/run-%p.db')
pid = parse_int_lines(r.out, 'pid')
if pid:
    copies(os.path.join(d, 'a', 'b', 'run-%d.db' % pid[0]), 'xferprof run -o a/b/run-%p.db')
for sub in ('a', os.path.join('a', 'b')):
    check_eq(os.stat(os.path.join(d, sub)).st_mode & 0o777, 0o777 & ~umask,
             'mode of the folder ' + sub)
# A folder that depends on the pid is made by the preload of that process.
r = xferprof_run(args, ['-o', os.path.join(d, 'p-%p', 'run.db')], [args.prog])
expect_rc(r, 0, 'xferprof run -o p-%p/run.db')
pid = parse_int_lines(r.out, 'pid')
if pid:
    copies(os.path.join(d, 'p-%d' % pid[0], 'run.db'), 'xferprof run -o p-%p/run.db')

# The preload alone: XFERPROF_OUTPUT set by hand, relative to the program's folder.
r = manual_run(args, os.path.join('m', 'n', 'o.db'), [args.prog], cwd=d)
expect_rc(r, 0, 'LD_PRELOAD by hand, XFERPROF_OUTPUT=m/n/o.db')
check_eq(r.err, '', 'LD_PRELOAD by hand into a missing folder: nothing on stderr')
copies(os.path.join(d, 'm', 'n', 'o.db'), 'LD_PRELOAD by hand, XFERPROF_OUTPUT=m/n/o.db')

# A file where a folder should be.
blocker = os.path.join(d, 'file')
open(blocker, 'w').close()
r = xferprof_run(args, ['-o', os.path.join(blocker, 'sub', 'run.db')], [args.prog])
check_eq(r.rc, 2, 'xferprof run -o FILE/sub/run.db: exit status')
check_eq(r.out, '', 'xferprof run -o FILE/sub/run.db: the program did not run')
check(r.err.count('\n') == 1, 'xferprof run -o FILE/sub/run.db: one line', repr(r.err))
check('%s is a regular file, not a folder' % blocker in r.err,
      'xferprof run -o FILE/sub/run.db: says why', repr(r.err))
r = manual_run(args, os.path.join(blocker, 'sub', 'run.db'), [args.prog])
unprofiled(r, 'LD_PRELOAD by hand under a file', '%s is a regular file, not a folder' % blocker)

# Symbolic links: the user's own is followed; another user's is not.
target = os.path.join(d, 'target')
os.mkdir(target)
mine = os.path.join(d, 'mine')
os.symlink(target, mine)
# The folder is made through it and the database written there (SQLite,
# which refuses a path with a link in it, is given the folder's real name).
r = manual_run(args, os.path.join(mine, 'x', 'run.db'), [args.prog])
expect_rc(r, 0, "LD_PRELOAD by hand through the user's own link")
check(os.path.isdir(os.path.join(target, 'x')), "the folder made through the user's own link")
check('not followed' not in r.err and 'unprofiled' not in r.err,
      "the user's own link is followed", r.err)
check_eq(sorted(os.listdir(os.path.join(target, 'x'))), ['run.db'],
         "the database written through the user's own link")
r = xferprof_run(args, ['-o', os.path.join(mine, 'run.db')], [args.prog])
expect_rc(r, 0, "xferprof run through the user's own link")
check(os.path.isfile(os.path.join(target, 'run.db')),
      "xferprof run: the database written through the user's own link", r.err)
os.unlink(os.path.join(target, 'run.db'))
# Another user's link in a sticky world-writable folder (a /tmp), which the
# kernel's fs.protected_symlinks rule refuses to follow; it may be off here.
shared = os.path.join(d, 'shared')
os.mkdir(shared)
os.chmod(shared, 0o1777)
planted = os.path.join(shared, 'planted')
os.symlink(target, planted)
os.lchown(planted, 65534, 65534)  # nobody's link
r = manual_run(args, os.path.join(planted, 'y', 'run.db'), [args.prog])
unprofiled(r, "LD_PRELOAD by hand through another user's link", 'not followed')
r = xferprof_run(args, ['-o', os.path.join(planted, 'y', 'run.db')], [args.prog])
check_eq(r.rc, 2, "xferprof run through another user's link: exit status")
check_eq(os.listdir(target), ['x'], "nothing written through another user's link")
check_eq(sorted(os.listdir(d)), ['a', 'file', 'm', 'mine', 'p-%d' % pid[0] if pid else '?',
                                 'shared', 'target'], 'what the test made, nothing else')
finish()
