"""Issue 15, the hook's fourth round: a plain 1D copy's facts (direction,
host memory, blocking, kind, device, its device's launch count, whether its
device's UUID is in meta) are remembered with the thread's memory of its
last copy's sides and read back by the next copy between the same sides.
cap_factsmemo copies between the same two buffers while changing what that
memory is keyed by: each row must say what its own call was (its kind, sync
or async, the current device where the copy's sides name none), and a device
whose first copy between two buffers failed still gets its UUID in meta.
At defaults and with stacks and fingerprints off (the memory is the same)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

ENV = {'XFERPROF_SIM_DEVICES': '2'}
ROUNDS = 4

args = parse_args()
d = tmpdir('factsmemo')
plain = plain_run(args, [args.prog], ENV)
expect_rc(plain, 0, 'cap_factsmemo without the profiler')
rcs = [int(line.split()[1]) for line in plain.out.splitlines() if line.startswith('rc ')]
n = 3 * ROUNDS + ROUNDS + 1 + ROUNDS
if len(rcs) != n:
    fatal('program did not print %d return codes' % n, plain.out)
check_eq([rc == 0 for rc in rcs[:3 * ROUNDS]], [True] * (3 * ROUNDS), 'the first loop succeeds')
check(rcs[4 * ROUNDS] != 0, 'the first copy to device 1 fails', rcs[4 * ROUNDS])
check_eq(rcs[4 * ROUNDS + 1:], [0] * ROUNDS, 'the next copies to device 1 succeed')

# What each call was: (bytes, kind, blocking, device, status).
want = []
for i in range(ROUNDS):
    want += [(100 + i, 1, 'sync', 0, 0), (200 + i, 4, 'sync', 0, 0),
             (300 + i, 1, 'async', 0, 0)]
for i in range(ROUNDS):
    want.append((400 + i, 1, 'sync', i % 2, rcs[3 * ROUNDS + i]))
want.append((1 << 20, 1, 'sync', 1, rcs[4 * ROUNDS]))
want += [(500 + i, 1, 'sync', 1, 0) for i in range(ROUNDS)]

for setting, env in (('defaults', {}),
                     ('stacks and fingerprints off',
                      {'XFERPROF_STACK_DEPTH': '0', 'XFERPROF_FINGERPRINT': 'off'})):
    db = os.path.join(d, 'run-%d.db' % len(env))
    r = xferprof_run(args, ['-o', db], [args.prog], dict(ENV, **env))
    if not expect_rc(r, 0, setting + ': exit status'):
        continue
    check_eq(r.out, plain.out, setting + ': stdout (return codes) as without the profiler')
    conn = open_db(db)
    got = rows(conn, 'SELECT bytes, kind, blocking, device, status, direction FROM copies '
                     'ORDER BY id')
    check_eq([(g['bytes'], g['kind'], g['blocking'], g['device'], g['status']) for g in got],
             want, setting + ': each copy as its own call was')
    check_eq({g['direction'] for g in got}, {'H2D'}, setting + ': directions')
    m = meta(conn)
    check(m.get('device_uuid.0') and m.get('device_uuid.1'),
          setting + ': both devices\' UUIDs in meta',
          {k: v for k, v in m.items() if k.startswith('device_uuid')})
    check_records_lost_zero(conn)
    conn.close()
finish()
