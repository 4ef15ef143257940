"""The preload's output files, as a hostile user or a careless one would set
them (issue 14, items 3, 6, 13 and 16).

  nodes     -o naming a FIFO, a character device, a folder, a symbolic link:
            never replaced; by hand the program runs unprofiled with one
            line on stderr, under `xferprof run` it is refused before CMD runs.
            Companions (-wal, -shm, .xpj) that are links are removed, not
            followed.  A regular file is replaced by a new file renamed over
            it (a hard link to the old one keeps the old bytes).
  fork      a fixed name (no %p) without the launcher: a forked child, before
            or after the parent started recording, and a program the parent
            runs (fork + exec) each get NAME-PID.db and say so; the parent's
            database is whole.
  secure    a set-group-ID program that loads the preload: XFERPROF_OUTPUT
            and XFERPROF_MANIFEST are not read, nothing is written.
  manifest  an XFERPROF_MANIFEST that cannot be written (/dev/full, a FIFO):
            the run ends normally and says so.
  sigpipe   a warning written to a stderr nobody reads does not kill the
            program with SIGPIPE.
"""
import os
import shutil
import stat
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
prog_dir = os.path.dirname(args.prog)
cap_fork = os.path.join(prog_dir, 'cap_fork')
cap_simple = os.path.join(prog_dir, 'cap_simple')
cap_secure = os.path.join(prog_dir, 'cap_secure')


def node_state(path):
    st = os.lstat(path)
    return (stat.S_IFMT(st.st_mode), st.st_ino, st.st_rdev)


def copies_in(path):
    conn = open_db(path)
    n = scalar(conn, 'SELECT count(*) FROM copies')
    pid = meta(conn).get('pid')
    conn.close()
    return n, pid


# ---- nodes ------------------------------------------------------------------
plain = plain_run(args, [cap_simple])
check_eq(plain.rc, 0, 'cap_simple without the preload')
d = tmpdir('outfiles-nodes')
victim = os.path.join(d, 'victim')
with open(victim, 'w') as f:
    f.write('precious\n')
makers = {
    'fifo': lambda p: os.mkfifo(p),
    'chardev': lambda p: os.mknod(p, stat.S_IFCHR | 0o666, os.makedev(1, 3)),
    'folder': lambda p: os.mkdir(p),
    'symlink': lambda p: os.symlink(victim, p),
}
for kind, make in makers.items():
    node = os.path.join(d, kind + '.db')
    make(node)
    before = node_state(node)
    r = manual_run(args, node, [cap_simple])
    what = 'by hand, -o a %s' % kind
    check_eq(r.rc, plain.rc, what + ': exit status')
    check(r.out == plain.out.replace(plain.out.split()[-1], r.out.split()[-1]) if r.out else False,
          what + ': the program ran', r.out)
    warn = [x for x in r.err.splitlines() if x.startswith('xferprof: cannot write')]
    check_eq(len(warn), 1, what + ': one "xferprof: cannot write" line')
    check('not a regular file' in r.err, what + ': says why', r.err)
    check_eq(node_state(node), before, what + ': left as it was')
    r = xferprof_run(args, ['-o', node], [cap_simple])
    what = 'xferprof run -o a %s' % kind
    check_eq(r.rc, 2, what + ': refused (exit status 2)')
    check_eq(r.out, '', what + ': the program did not run')
    check('not a regular file' in r.err and node in r.err, what + ': says why', r.err)
    check_eq(node_state(node), before, what + ': left as it was')
with open(victim) as f:
    check_eq(f.read(), 'precious\n', 'the symbolic link\'s target is untouched')

# Companions: a FIFO is refused; links are removed, never followed.
comp = os.path.join(d, 'comp.db')
os.mkfifo(comp + '-wal')
r = manual_run(args, comp, [cap_simple])
check_eq(r.rc, 0, 'a FIFO at DB-wal: exit status')
check('not a regular file' in r.err, 'a FIFO at DB-wal: refused, says why', r.err)
check(stat.S_ISFIFO(os.lstat(comp + '-wal').st_mode), 'a FIFO at DB-wal: left as it was')
check(not os.path.exists(comp), 'a FIFO at DB-wal: no database made')
os.unlink(comp + '-wal')
for suffix in ('-wal', '-shm', '.xpj'):
    os.symlink(victim, comp + suffix)
r = manual_run(args, comp, [cap_simple])
check_eq(r.rc, 0, 'links at DB-wal, DB-shm, DB.xpj: exit status')
check_eq(r.err, '', 'links at the companions: nothing on stderr')
with open(victim) as f:
    check_eq(f.read(), 'precious\n', 'links at the companions: their target is untouched')
check_eq(copies_in(comp)[0], 6, 'links at the companions: the run was recorded')
check_eq(sorted(x for x in os.listdir(d) if x.startswith('comp')), ['comp.db'],
         'links at the companions: only the database is left')

# A regular file is replaced by a new one, not rewritten in place.
reg = os.path.join(d, 'regular.db')
with open(reg, 'w') as f:
    f.write('old run\n')
os.link(reg, os.path.join(d, 'regular-link'))
old_ino = os.stat(reg).st_ino
r = manual_run(args, reg, [cap_simple])
check_eq(r.rc, 0, 'a regular file at -o: exit status')
check(os.stat(reg).st_ino != old_ino, 'a regular file at -o: replaced by a new file')
with open(os.path.join(d, 'regular-link')) as f:
    check_eq(f.read(), 'old run\n', 'a regular file at -o: its other name keeps the old bytes')
check_eq(copies_in(reg)[0], 6, 'a regular file at -o: the new run is there')
check_eq(sorted(x for x in os.listdir(d) if '.new-' in x), [], 'no temporary file left')

# A manifest that cannot be written (item 12): /dev/full, a FIFO nobody
# reads.  The run ends as without us, says why once, and is recorded.
fifo_manifest = os.path.join(d, 'manifest-fifo')
os.mkfifo(fifo_manifest)
for manifest in ('/dev/full', fifo_manifest):
    db = os.path.join(d, 'm.db')
    r = manual_run(args, db, [cap_simple], {'XFERPROF_MANIFEST': manifest})
    what = 'XFERPROF_MANIFEST=%s' % manifest
    check_eq(r.rc, 0, what + ': exit status')
    said = [x for x in r.err.splitlines() if x.startswith('xferprof:')]
    check(len(said) == 1 and manifest in said[0], what + ': one line says why', r.err)
    check_eq(copies_in(db)[0], 6, what + ': the run was recorded')
check(stat.S_ISFIFO(os.lstat(fifo_manifest).st_mode), 'the FIFO manifest is left as it was')

# ---- fork -------------------------------------------------------------------
for mode, argv, parent_copies, child_copies in (
        ('before', [cap_fork], 20, 10),
        ('late', [cap_fork, 'late'], 21, 0),
        ('exec', [cap_fork, 'exec', cap_simple], 21, 6)):
    d = tmpdir('outfiles-fork-' + mode)
    db = os.path.join(d, 'run.db')
    r = manual_run(args, db, argv)
    what = 'fixed name, fork %s' % mode
    if not expect_rc(r, 0, what):
        continue
    parent = parse_int_lines(r.out, 'parent')
    child = parse_int_lines(r.out, 'child')
    if len(parent) != 1 or len(child) != 1:
        check(False, what + ': program printed parent and child pids', r.out)
        continue
    parent, child = parent[0], child[0]
    # A child that left with _exit ran no exit handler: its journal waits
    # for `xferprof recover`, as the README says.
    child_db = os.path.join(d, 'run-%d.db' % child)
    if os.path.exists(child_db + '.xpj'):
        run([args.xferprof, 'recover', child_db], clean_env())
    check_eq(sorted(x for x in os.listdir(d)),
             sorted(['run.db', 'run-%d.db' % child]), what + ': databases made')
    check_eq(copies_in(db), (parent_copies, str(parent)), what + ': run.db is the parent\'s, whole')
    if os.path.exists(child_db):
        n, pid = copies_in(child_db)
        check_eq((n, pid), (child_copies, str(child)), what + ': the child\'s database')
    said = [x for x in r.err.splitlines() if x.startswith('xferprof:')]
    check_eq(len(said), 1, what + ': one line says where the child went')
    check(said and ('run-%d.db' % child) in said[0] and str(child) in said[0],
          what + ': it names the child and its database', said)
    # A second run replaces run.db: the previous run's process is gone and
    # was not this one's parent.
    r2 = manual_run(args, db, [cap_simple])
    check_eq(copies_in(db)[0], 6, what + ': a later run takes run.db again')

# ---- secure -----------------------------------------------------------------
d = tmpdir('outfiles-secure')
os.chmod(d, 0o755)
exe = os.path.join(d, 'cap_secure')
shutil.copy(cap_secure, exe)
victim = os.path.join(d, 'victim.db')
manifest = os.path.join(d, 'manifest')
env = {'XFERPROF_OUTPUT': victim, 'XFERPROF_MANIFEST': manifest,
       'LD_LIBRARY_PATH': None}
for setgid in (True, False):
    with open(victim, 'w') as f:
        f.write('root only\n')
    os.chmod(victim, 0o600)
    with open(manifest, 'w') as f:
        f.write('keep\n')
    os.chown(exe, 0, 65534)
    os.chmod(exe, 0o2755 if setgid else 0o755)
    r = run([exe], clean_env(env))
    what = 'set-group-ID program' if setgid else 'the same program, not set-group-ID'
    if not expect_rc(r, 0, what):
        continue
    check_eq(parse_int_lines(r.out, 'secure'), [1 if setgid else 0],
             what + ': AT_SECURE (a file system mounted nosuid would make this 0)')
    check_eq(parse_int_lines(r.out, 'copies'), [5], what + ': its copies worked')
    listing = sorted(os.listdir(d))
    if setgid:
        with open(victim) as f:
            check_eq(f.read(), 'root only\n', what + ': XFERPROF_OUTPUT not written')
        check_eq(stat.S_IMODE(os.stat(victim).st_mode), 0o600, what + ': its mode kept')
        with open(manifest) as f:
            check_eq(f.read(), 'keep\n', what + ': XFERPROF_MANIFEST not written')
        check_eq(listing, ['cap_secure', 'manifest', 'victim.db'], what + ': nothing created')
        check_eq(r.err, '', what + ': nothing said')
    else:
        # The control: the same loading records, so the check above is not
        # passing only because the preload never ran.
        check_eq(copies_in(victim)[0], 5, what + ': recorded into XFERPROF_OUTPUT')
        with open(manifest) as f:
            check(f.read().startswith('keep\n') and victim in open(manifest).read(),
                  what + ': listed in the manifest')

# ---- sigpipe ----------------------------------------------------------------


def closed_stderr_run(cmd, env):
    rfd, wfd = os.pipe()
    os.close(rfd)
    try:
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=wfd,
                           timeout=RUN_TIMEOUT)
    finally:
        os.close(wfd)
    print('$ %s (stderr: a pipe nobody reads) -> %s' % (' '.join(cmd), p.returncode))
    return p.returncode


d = tmpdir('outfiles-sigpipe')
bad = {'XFERPROF_STACK_DEPTH': 'many'}   # a setting the preload warns about
want = closed_stderr_run([cap_simple], clean_env({'LD_LIBRARY_PATH': args.sim_dir}))
check_eq(want, 0, 'cap_simple with a closed stderr, without the preload')
got = closed_stderr_run([cap_simple], clean_env({
    'LD_LIBRARY_PATH': args.sim_dir, 'LD_PRELOAD': args.preload,
    'XFERPROF_OUTPUT': os.path.join(d, 'a.db'), **bad}))
check_eq(got, want, 'by hand, a warning to a closed stderr: exit status')
# Under the launcher: a folder the preload finds missing (one per pid, so
# the launcher cannot check it), then the launcher's own summary.
got = closed_stderr_run([args.xferprof, 'run', '--sim', '-o', '/proc/none-%p/b.db', '--',
                         cap_simple], clean_env())
check_eq(got, want, 'xferprof run, warning and summary to a closed stderr: exit status')
# And a usage error written to a closed stderr is still exit status 2.
got = closed_stderr_run([args.xferprof, 'run', '--sim', '--stack-depth', 'many', '--',
                         cap_simple], clean_env())
check_eq(got, 2, 'xferprof run, a usage error to a closed stderr: exit status')
finish()
