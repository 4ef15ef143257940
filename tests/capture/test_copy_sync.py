"""Issue 13: the copy+sync pair and NVIDIA's documented blocking classes.
An async D2H copy whose thread's next recorded call synchronizes its stream
(or the device) is marked in that sync (syncs.copy_start_ns) with the
destination's fingerprint taken once complete; a memset or a sync of
another stream in between breaks the pair.  A cudaMemcpy between two device
buffers is `async` (no host-side synchronization); an async host-to-host copy
is `sync`."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('copy_sync')
db = os.path.join(d, 'run.db')
r = xferprof_run(args, ['-o', db], [args.prog])
expect_rc(r, 0, 'cap_copy_sync')
conn = open_db(db)
downs = rows(conn, "SELECT * FROM copies WHERE direction = 'D2H' ORDER BY start_ns")
check_eq(len(downs), 4, 'D2H copies')
paired = {y['copy_start_ns']: y for y in
          rows(conn, 'SELECT * FROM syncs WHERE copy_start_ns IS NOT NULL')}
check_eq(sorted(paired), sorted([downs[0]['start_ns'], downs[3]['start_ns']]),
         'syncs that completed a copy: the first (stream) and the fourth (device)')
up = rows(conn, "SELECT * FROM copies WHERE direction = 'H2D'")[0]
for start in paired:
    y = paired[start]
    check_eq(y['fingerprint_kind'], up['fingerprint_kind'], 'a paired D2H sync fingerprints the destination')
    check_eq(y['fingerprint'], up['fingerprint'], 'the bytes downloaded are those uploaded')
for c in downs:
    check(c['fingerprint'] is None, 'an async D2H copy has no fingerprint of its own')
d2d = rows(conn, "SELECT * FROM copies WHERE direction = 'D2D'")[0]
check_eq(d2d['blocking'], 'async', 'cudaMemcpy device to device performs no host synchronization')
h2h = rows(conn, "SELECT * FROM copies WHERE direction = 'H2H'")[0]
check_eq(h2h['blocking'], 'sync', 'cudaMemcpyAsync host to host is fully synchronous')
check_records_lost_zero(conn)
finish()
