"""Scenario 8: transparency.  cap_transparency prints the return codes, the
last-error state and errno around a series of calls (failing ones included)
and exits with status 3; its stdout and exit status must be byte-identical
with and without the preload.  cap_sticky (nvcc, when available) does the
same after a kernel that faults (XFERPROF_SIM_FAULT=launch:1): the sticky
error state must look the same too."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('transparency')


def compare(prog, env, what, progargs=()):
    cmd = [prog] + list(progargs)
    plain = plain_run(args, cmd, env)
    db = os.path.join(d, os.path.basename(prog) + '.db')
    pre = xferprof_run(args, ['-o', db], cmd, env)
    by_hand = manual_run(args, os.path.join(d, os.path.basename(prog) + '-manual.db'), cmd, env)
    check(plain.out_bytes != b'', what + ': the program printed something')
    for r, how in ((pre, 'xferprof run --sim'), (by_hand, 'LD_PRELOAD by hand')):
        if not check(r.out_bytes == plain.out_bytes, '%s: stdout identical under %s' % (what, how)):
            a, b = plain.out.splitlines(), r.out.splitlines()
            for i in range(max(len(a), len(b))):
                x = a[i] if i < len(a) else '<none>'
                y = b[i] if i < len(b) else '<none>'
                if x != y:
                    print('  line %d without: %s\n  line %d with:    %s' % (i + 1, x, i + 1, y),
                          file=sys.stderr)
        check_eq(r.rc, plain.rc, '%s: exit status under %s' % (what, how))
    return plain, pre, db


plain, pre, db = compare(args.prog, {}, 'cap_transparency')
check_eq(plain.rc, 3, 'cap_transparency exit status without the preload')
check('cap_transparency: exiting with 3' in pre.err, "the program's own stderr gets through",
      repr(pre.err))
# Another status, to be sure it is passed on rather than fixed.
r7 = xferprof_run(args, ['-o', os.path.join(d, 'seven.db')], [args.prog, '7'])
check_eq(r7.rc, 7, 'exit status 7 passed through xferprof run')

# The failures are all in the database, and the program still saw them.
conn = open_db(db)
errs = [(e['api'], e['status']) for e in rows(conn, 'SELECT api, status FROM errors '
                                                    'ORDER BY start_ns, id')]
for want in (('cudaMalloc', 2), ('cudaFree', 1), ('cudaMemcpy', 21), ('cudaHostRegister', 712),
             ('cudaHostUnregister', 713), ('cudaFreeHost', 1), ('cudaSetDevice', 101)):
    check(want in errs, 'errors has a row %r' % (want,), errs)
check_records_lost_zero(conn)
conn.close()

if args.prog2:
    fault = {'XFERPROF_SIM_FAULT': 'launch:1'}
    plain, pre, db = compare(args.prog2, fault, 'cap_sticky')
    check_eq(plain.rc, 3, 'cap_sticky exit status without the preload')
    check('rc=700' in plain.out, 'the kernel faulted (cudaErrorIllegalAddress)', plain.out)
    conn = open_db(db)
    errs = [(e['api'], e['status']) for e in rows(conn, 'SELECT api, status FROM errors '
                                                        'ORDER BY start_ns, id')]
    check(('cudaDeviceSynchronize', 700) in errs and ('cudaMemcpy', 700) in errs,
          'errors has the sticky failures of cudaDeviceSynchronize and cudaMemcpy', errs)
    conn.close()
else:
    print('cap_sticky not built (no nvcc): sticky error state not checked')
finish()
