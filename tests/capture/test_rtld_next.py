"""RTLD_NEXT lookups made by a program's own libraries (cap_next_main with
libcap_next.so, a preload-like library that wraps getppid, and the
dlopen()ed libcap_next_dl.so) find what they find without xferprof: glibc
searches after the caller's object, which xferprof's dlsym must keep (a
forwarding wrapper would search after libxferprof: the wrong cap_which, and
getppid's wrapper finding itself).  Checked under the launcher and with the
preload set up by hand, against a plain run and against the values glibc
gives."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('rtld-next')
if not args.prog2:
    fatal('--prog2 must name libcap_next_dl.so')
cmd = [args.prog, args.prog2]

plain = plain_run(args, cmd)
if not expect_rc(plain, 0, 'cap_next_main without the profiler'):
    finish()
want = [
    'main which early, early 1, later 42',
    'linked getpid ok',
    'linked strlen ok',
    'linked cap_later_only 42 (direct 42)',
    'linked missing NULL, error set',
    'linked dlvsym getpid ok',
    'linked which later',
    'linked getppid ok, wrapped 1',
    'main getppid ok',
    'dlopened getpid ok',
    'dlopened strlen ok',
    'dlopened cap_later_only 42 (direct 42)',
    'dlopened missing NULL, error set',
    'dlopened dlvsym getpid ok',
    'dlopened which later',
    'main RTLD_NEXT which early',
]
check_eq(plain.out.splitlines(), want, 'what glibc finds (no profiler)')
r = xferprof_run(args, ['-o', os.path.join(d, 'run.db')], cmd)
if expect_rc(r, 0, 'cap_next_main under xferprof run --sim'):
    check_eq(r.out.splitlines(), want, 'what it finds under xferprof run')
r = manual_run(args, os.path.join(d, 'manual.db'), cmd)
if expect_rc(r, 0, 'cap_next_main with LD_PRELOAD=libxferprof.so'):
    check_eq(r.out.splitlines(), want, 'what it finds with the preload set by hand')
finish()
