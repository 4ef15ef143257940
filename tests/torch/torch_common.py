"""torch_common.py: what the torch scenario drivers share, on top of
tests/capture/cap_common.py. Every driver is run by meson as

    python3 test_NAME.py --python VENV_PYTHON --xferprof X --preload LIB --sim-dir DIR --prog SCRIPT

and runs SCRIPT (a torch program in this folder) with the interpreter of the
repository's .venv, which scripts/setup.sh fills with torch: without it the
test fails and says so (it never skips)."""

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', 'capture'))
import cap_common  # noqa: E402
from cap_common import *  # noqa: E402,F401,F403
from cap_common import check, fatal  # noqa: E402

# Importing torch reads a few GB of libraries: allow for a cold cache on a
# busy machine (a hang still fails the test rather than waiting for meson).
cap_common.RUN_TIMEOUT = 240


def parse_torch_args():
    """The common options, and --python: the venv's interpreter, kept as given
    (resolving its symbolic link would leave the venv)."""
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument('--python', required=True)
    mine, rest = ap.parse_known_args()
    args = cap_common.parse_args(rest)
    args.python = os.path.abspath(mine.python)
    probe = None
    if os.path.exists(args.python):
        probe = subprocess.run([args.python, '-c', 'import torch; print(torch.__version__)'],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if probe is None or probe.returncode != 0:
        fatal('torch is not installed in %s: run scripts/setup.sh' % args.python,
              probe.stderr.decode('utf-8', 'replace') if probe else '')
    cudart12 = os.path.join(args.sim_dir, 'cuda12', 'libxpsim_cudart12.so')
    if not os.path.exists(cudart12):
        fatal('%s was not built: NVIDIA\'s CUDA 12 headers come with torch (scripts/setup.sh), '
              'then reconfigure the build' % cudart12)
    return args


def torch_run(args, db, env_extra=None, script_args=()):
    """The torch script args.prog under `xferprof run --sim -o DB`."""
    return xferprof_run(args, ['-o', db], [args.python, args.prog] + list(script_args),
                        env_extra)


def marker_line(mark, path):
    """1-based line of the `# MARK: mark` comment in a script."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if line.rstrip().endswith('# MARK: %s' % mark):
                return n
    fatal('marker %s not in %s' % (mark, path))


def next_sync_after(conn, copy):
    """The first synchronization the copy's thread made after the copy
    returned, if no other copy of that thread came in between."""
    nxt = rows(conn, 'SELECT start_ns FROM copies WHERE tid = ? AND start_ns > ? '
                     'ORDER BY start_ns LIMIT 1', (copy['tid'], copy['start_ns']))
    limit = nxt[0]['start_ns'] if nxt else 1 << 62
    s = rows(conn, 'SELECT * FROM syncs WHERE tid = ? AND start_ns >= ? AND start_ns < ? '
                   'ORDER BY start_ns LIMIT 1', (copy['tid'], copy['end_ns'], limit))
    return s[0] if s else None
