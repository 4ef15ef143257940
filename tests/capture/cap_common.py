"""cap_common.py: what the capture scenario drivers share.

Every driver is run by meson as

    python3 test_NAME.py --xferprof X --preload LIB --sim-dir DIR --prog P [--prog2 P2]

It runs a small CUDA program under `xferprof run --sim` (or with the preload
set up by hand), then checks the database row by row.  Failed checks are
collected and all printed, with the values seen, and the driver exits 1;
otherwise it prints "ok" lines and exits 0.

The environment is built from scratch for every run: meson prepends the
folders of the shared libraries a test depends on (the simulator's among
them) to LD_LIBRARY_PATH, and `xferprof run --sim` must be the one that puts
the simulator there, so LD_LIBRARY_PATH and LD_PRELOAD are removed.
"""

import argparse
import os
import re
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile

# One run of a program is allowed this long: a hang fails the test instead of
# waiting for meson's timeout (no test relies on it to pass).
RUN_TIMEOUT = 60

_failures = []
_tmpdirs = []


def parse_args(extra=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--xferprof', required=True)
    ap.add_argument('--preload', required=True)
    ap.add_argument('--sim-dir', required=True)
    ap.add_argument('--prog', required=True)
    ap.add_argument('--prog2', default=None)
    args = ap.parse_args(extra)
    for name in ('xferprof', 'preload', 'sim_dir', 'prog'):
        setattr(args, name, os.path.realpath(getattr(args, name)))
    if args.prog2:
        args.prog2 = os.path.realpath(args.prog2)
    return args


def check(cond, what, *detail):
    """Records a failure (does not stop): the log then shows every mismatch."""
    if not cond:
        msg = what
        if detail:
            msg += ': ' + ' '.join(str(d) for d in detail)
        _failures.append(msg)
        print('FAIL: ' + msg, file=sys.stderr)
    return cond


def check_eq(got, want, what):
    return check(got == want, what, 'got %r, expected %r' % (got, want))


def fatal(what, *detail):
    """A failure after which nothing else can be checked."""
    check(False, what, *detail)
    finish()


def finish():
    """Exits: 1 if any check failed (the temporary folders are kept for a
    look), else 0 (and they are removed)."""
    if _failures:
        print('%d check(s) failed; files kept in %s' % (len(_failures), ' '.join(_tmpdirs)),
              file=sys.stderr)
        sys.exit(1)
    for d in _tmpdirs:
        shutil.rmtree(d, ignore_errors=True)
    print('ok')
    sys.exit(0)


def tmpdir(tag):
    d = tempfile.mkdtemp(prefix='xpcap-%s-' % tag)
    _tmpdirs.append(d)
    return d


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items()
           if k not in ('LD_LIBRARY_PATH', 'LD_PRELOAD', 'NVTX_INJECTION64_PATH')
           and not k.startswith('XFERPROF_')
           and k not in ('RANK', 'LOCAL_RANK', 'OMPI_COMM_WORLD_RANK', 'SLURM_PROCID')}
    # Latency 0 keeps thousands of copies fast; scenarios that need time set
    # the bandwidth themselves.
    env['XFERPROF_SIM_LATENCY'] = '0'
    if extra:
        for k, v in extra.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
    return env


class Result:
    def __init__(self, cmd, p):
        self.cmd = cmd
        self.rc = p.returncode
        self.out_bytes = p.stdout
        self.err_bytes = p.stderr
        self.out = p.stdout.decode('utf-8', 'replace')
        self.err = p.stderr.decode('utf-8', 'replace')

    def describe(self):
        return ('command: %s\nexit status: %s\n--- stdout ---\n%s--- stderr ---\n%s'
                % (' '.join(self.cmd), self.rc, self.out, self.err))


def run(cmd, env, cwd=None):
    try:
        p = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        fatal('timed out after %d s' % RUN_TIMEOUT, ' '.join(cmd))
    r = Result(cmd, p)
    print('$ %s  -> %s' % (' '.join(cmd), r.rc))
    if r.err:
        print('  stderr: ' + r.err.rstrip().replace('\n', '\n          '))
    return r


def xferprof_run(args, options, cmd, env_extra=None, cwd=None):
    """`xferprof run --sim OPTIONS -- CMD`."""
    return run([args.xferprof, 'run', '--sim'] + options + ['--'] + cmd,
               clean_env(env_extra), cwd)


def plain_run(args, cmd, env_extra=None, cwd=None):
    """CMD on the simulator without the preload."""
    e = {'LD_LIBRARY_PATH': args.sim_dir}
    e.update(env_extra or {})
    return run(cmd, clean_env(e), cwd)


def manual_run(args, db, cmd, env_extra=None, cwd=None):
    """CMD with the preload set up by hand, as a user would without the launcher."""
    e = {'LD_LIBRARY_PATH': args.sim_dir, 'LD_PRELOAD': args.preload, 'XFERPROF_OUTPUT': db}
    e.update(env_extra or {})
    return run(cmd, clean_env(e), cwd)


def expect_rc(r, want, what):
    if not check(r.rc == want, what, 'exit status %r, expected %r' % (r.rc, want)):
        print(r.describe(), file=sys.stderr)
        return False
    return True


_NAME_HEX = re.compile(r'^(\w+) 0x([0-9a-fA-F]+)$')


def parse_values(text):
    """The "name 0x..." lines a program printed, as a dict of ints."""
    vals = {}
    for line in text.splitlines():
        m = _NAME_HEX.match(line.strip())
        if m:
            vals[m.group(1)] = int(m.group(2), 16)
    return vals


def parse_int_lines(text, key):
    """Values of "KEY N" lines."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key:
            out.append(int(parts[1]))
    return out


def open_db(path):
    if not os.path.exists(path):
        fatal('no database at %s' % path,
              'folder holds: %r' % (sorted(os.listdir(os.path.dirname(path) or '.'))))
    conn = sqlite3.connect('file:%s?mode=ro' % path, uri=True)
    conn.row_factory = sqlite3.Row
    return conn


def rows(conn, sql, params=()):
    try:
        return [dict(r) for r in conn.execute(sql, params)]
    except sqlite3.Error as e:
        fatal('query failed: %s' % sql, e)


def scalar(conn, sql, params=()):
    r = rows(conn, sql, params)
    if not r:
        return None
    return list(r[0].values())[0]


def meta(conn):
    return {r['key']: r['value'] for r in rows(conn, 'SELECT key, value FROM meta')}


def columns(conn, table):
    return [r['name'] for r in rows(conn, 'PRAGMA table_info(%s)' % table)]


def u64(v):
    """SQLite integers are signed 64-bit: addresses above 2^63 come back negative."""
    return v & 0xffffffffffffffff if isinstance(v, int) else v


def stack_frames(conn, stack_id):
    r = rows(conn, 'SELECT depth, frames FROM stacks WHERE id = ?', (stack_id,))
    if not r:
        return None, None
    depth, blob = r[0]['depth'], r[0]['frames']
    if blob is None:
        return depth, []
    n = len(blob) // 8
    return depth, list(struct.unpack('<%dQ' % n, blob[:n * 8]))


class Modules:
    """The modules table; finds which module an address lies in."""

    def __init__(self, conn):
        cols = columns(conn, 'modules')
        self.has_low = 'low' in cols
        self.mods = rows(conn, 'SELECT * FROM modules')

    def extent(self, m):
        # `base` is the load bias; the lowest mapped address is base plus the
        # first PT_LOAD's vaddr (zero for PIE and shared objects, not for a
        # non-PIE executable), which the schema may give as `low`.
        lo = u64(m['low']) if self.has_low and m.get('low') is not None else u64(m['base'])
        return lo, lo + u64(m['size'])

    def by_path(self, path):
        real = os.path.realpath(path)
        return [m for m in self.mods if m['path'] and os.path.realpath(m['path']) == real]

    def contains(self, m, addr):
        lo, hi = self.extent(m)
        return lo <= addr < hi


def check_stack(conn, mods, prog, stack_id, what):
    """stack_id set, the stack non-empty, and one of its frames in the
    program's own main module."""
    if not check(stack_id is not None and stack_id != 0, '%s: stack_id is set' % what,
                 'got %r' % (stack_id,)):
        return
    depth, frames = stack_frames(conn, stack_id)
    if not check(depth is not None, '%s: stack %r exists in stacks' % (what, stack_id)):
        return
    check(depth > 0 and len(frames) == depth,
          '%s: stack %r has depth > 0 and depth frames' % (what, stack_id),
          'depth %r, %d frames' % (depth, len(frames)))
    main = mods.by_path(prog)
    if not main:
        # Said once per database, not once per row.
        if not getattr(mods, 'reported_missing', False):
            mods.reported_missing = True
            check(False, 'modules has a row for the program %s (needed to place its frames)'
                  % prog, 'paths: %r' % [m['path'] for m in mods.mods])
        return
    check(any(mods.contains(m, f) for m in main for f in frames),
          "%s: a frame of stack %r lies in the program's own module" % (what, stack_id),
          'frames %s; module extents %s' % ([hex(f) for f in frames],
                                            [tuple(map(hex, mods.extent(m))) for m in main]))


def check_no_duplicate_stacks(conn):
    dup = rows(conn, 'SELECT frames, count(*) AS n FROM stacks GROUP BY frames HAVING n > 1')
    check(not dup, 'each distinct stack is stored once', '%d duplicated' % len(dup))


def check_records_lost_zero(conn):
    m = meta(conn)
    check_eq(m.get('records_lost'), '0', "meta records_lost")


def hostname():
    import socket
    return socket.gethostname()


def remove(path):
    if os.path.isdir(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.exists(path):
        os.unlink(path)


# The journal's layout (src/xp_format.h), for tests that damage one.
JOURNAL_HEADER_SIZE = 4096
JOURNAL_CHUNK_SIZE = 256 * 1024
JOURNAL_CHUNK_MAGIC = 0x4b4e4843
REC_COPY = 4


def journal_records(path):
    """(offset, size, type, bytes-if-copy) of every committed record, in file
    order: a nonzero commit word (version 5: the checksum, which Python does
    not recompute here; the writer's records are whole)."""
    out = []
    with open(path, 'rb') as f:
        data = f.read()
    off = JOURNAL_HEADER_SIZE
    while off + 16 <= len(data):
        magic, _tid, _index = struct.unpack_from('<IIQ', data, off)
        if magic == JOURNAL_CHUNK_MAGIC:
            p = off + 16
            while p + 16 <= off + JOURNAL_CHUNK_SIZE and p + 16 <= len(data):
                commit, rtype, _api, size, _rtid = struct.unpack_from('<IHHII', data, p)
                if commit == 0 or size < 16 or size % 8 or p + size > off + JOURNAL_CHUNK_SIZE:
                    break
                nbytes = None
                if rtype == REC_COPY and p + 88 <= len(data):
                    # xp_rec_copy: xp_call (48) then src, dst, bytes
                    nbytes = struct.unpack_from('<Q', data, p + 48 + 16)[0]
                out.append((p, size, rtype, nbytes))
                p += size
        off += JOURNAL_CHUNK_SIZE
    return out
