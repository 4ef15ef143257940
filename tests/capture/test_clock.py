"""The records' clock (issue 15): copies' start_ns and end_ns are
CLOCK_MONOTONIC, read from the TSC where the CPU has an invariant one and the
kernel keeps time with it (meta clock = tsc), else from clock_gettime (meta
clock = monotonic, and XFERPROF_CLOCK=monotonic asks for it).

cap_clock brackets each copy between two clock_gettime readings of its own:
with clock_gettime the record lies exactly inside; on the TSC within the
scale's error (the first scale is measured over about a millisecond of
start-up: some microseconds; ALLOWED_NS is far below anything a wrong scale,
a wrong anchor or a torn one would give).  Both processes of a fork: the
child's records are on the scale it inherited, in its own database."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

ALLOWED_NS = 100000


def machine_has_tsc_clock():
    """What the preload should choose here: an invariant TSC (the kernel's
    constant_tsc and nonstop_tsc flags) and the kernel's clocksource."""
    with open('/proc/cpuinfo') as f:
        flags = next((ln.split(':', 1)[1].split() for ln in f if ln.startswith('flags')), [])
    try:
        with open('/sys/devices/system/clocksource/clocksource0/current_clocksource') as f:
            source = f.read().strip()
    except OSError:
        source = ''
    return 'constant_tsc' in flags and 'nonstop_tsc' in flags and source == 'tsc'


args = parse_args()
tsc = machine_has_tsc_clock()
for setting in (None, 'monotonic'):
    d = tmpdir('clock')
    env = {'XFERPROF_CLOCK': setting} if setting else None
    r = xferprof_run(args, ['-o', os.path.join(d, 'run-%p.db')], [args.prog], env)
    what = 'XFERPROF_CLOCK=%s' % (setting or '(unset)')
    if not expect_rc(r, 0, 'cap_clock under xferprof run --sim, ' + what):
        continue
    want_clock = 'tsc' if tsc and setting is None else 'monotonic'
    allowed = ALLOWED_NS if want_clock == 'tsc' else 0
    child = parse_int_lines(r.out, 'child')
    brackets = {}
    for line in r.out.splitlines():
        f = line.split()
        if f[0] == 'copy':
            brackets.setdefault(int(f[1]), []).append((int(f[2]), int(f[3])))
    parent = [p for p in brackets if p not in child]
    check_eq([len(brackets.get(p, [])) for p in parent + child], [300, 20], what + ': copies printed')
    for pid in parent + child:
        conn = open_db(os.path.join(d, 'run-%d.db' % pid))
        who = '%s, %s' % (what, 'child' if pid in child else 'parent')
        check_eq(meta(conn).get('clock'), want_clock, who + ': meta clock')
        got = rows(conn, 'SELECT start_ns, end_ns FROM copies ORDER BY id')
        check_eq(len(got), len(brackets[pid]), who + ': copies recorded')
        worst = 0
        bad = []
        for (before, after), row in zip(brackets[pid], got):
            s, e = row['start_ns'], row['end_ns']
            off = max(before - s, e - after, 0)
            worst = max(worst, off)
            if e < s or off > allowed:
                bad.append((before, s, e, after))
        check_eq(bad[:3], [], who + ': each copy inside its clock_gettime bracket (%d ns allowed)'
                 % allowed)
        print('%s: furthest outside its bracket: %d ns' % (who, worst))
        conn.close()
finish()
