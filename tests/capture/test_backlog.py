"""The journal stays within its bound on disk while a burst of copies comes
faster than the background ingest stores them (issue 15): writers that must
grow the file wait for the ingest instead (xp_journal_set_backlog,
XFERPROF_JOURNAL_MAX_MIB), and every copy still reaches the database.
500,000 copies of 8 bytes in one burst on a runtime whose calls return at once
(bench's stub libcudart.so.13: the program as fast as it can be), the
journal's blocks on disk sampled from outside every 2 ms: at most the bound
(16 MiB here), unless a wait ran out (meta journal_backlog_overruns says so).
Without a bound (0) the same burst is printed for comparison: on this
machine's two cores it reached about twice the records' size in blocks."""
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('backlog')
stub_dir = os.path.dirname(args.prog2)
COPIES = 500000
# bench_overhead time N 1 FRAMES: N timed copies and a warm-up of N/10 + 1.
N = (COPIES - 1) * 10 // 11
MADE = N + N // 10 + 1


def burst(db, bound_mib):
    env = clean_env({'LD_LIBRARY_PATH': stub_dir, 'LD_PRELOAD': args.preload,
                     'XFERPROF_OUTPUT': db, 'XFERPROF_JOURNAL_MAX_MIB': str(bound_mib)})
    p = subprocess.Popen([args.prog, 'time', str(N), '1', '8'], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = [0]

    def sample():
        while p.poll() is None:
            try:
                peak[0] = max(peak[0], os.stat(db + '.xpj').st_blocks * 512)
            except FileNotFoundError:
                pass
            time.sleep(0.002)

    t = threading.Thread(target=sample)
    t.start()
    _, err = p.communicate(timeout=120)
    t.join()
    print('bound %d MiB: exit %d, journal peak %.1f MiB' % (bound_mib, p.returncode, peak[0] / 2**20))
    if err:
        print('  stderr: ' + err.decode(errors='replace').rstrip())
    return p.returncode, peak[0]


db = os.path.join(d, 'bounded.db')
rc, peak = burst(db, 16)
check_eq(rc, 0, 'exit status')
conn = open_db(db)
check_eq(scalar(conn, 'SELECT count(*) FROM copies'), MADE, 'every copy recorded')
check_records_lost_zero(conn)
m = meta(conn)
overruns = int(m.get('journal_backlog_overruns', '-1'))
check(overruns >= 0, 'meta journal_backlog_overruns is recorded', m.get('journal_backlog_overruns'))
check(peak <= 16 << 20 or overruns > 0,
      'the journal stayed within 16 MiB on disk (or a wait ran out and says so)',
      '%.1f MiB, %d overrun(s)' % (peak / 2**20, overruns))
conn.close()
check(not os.path.exists(db + '.xpj'), 'no journal left behind')

# For comparison only (a faster ingest may keep up without a bound).
burst(os.path.join(d, 'unbounded.db'), 0)

bad = run([args.prog, 'time', '1', '1', '1'],
          clean_env({'LD_LIBRARY_PATH': stub_dir, 'LD_PRELOAD': args.preload,
                     'XFERPROF_OUTPUT': os.path.join(d, 'bad.db'),
                     'XFERPROF_JOURNAL_MAX_MIB': '8'}))
check('XFERPROF_JOURNAL_MAX_MIB' in bad.err, 'a bound under 16 MiB is refused, by name', bad.err)
finish()
