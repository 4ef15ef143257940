"""Scenario 12: the summary.  `xferprof run --sim` prints to stderr one line per
process: its database, copies, bytes H2D and D2H, allocations live at exit;
each must match that database.  With --quiet nothing comes from xferprof."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cap_common import *  # noqa: E402,F401,F403

args = parse_args()
d = tmpdir('summary')
UNITS = {'B': 1, 'KiB': 1 << 10, 'MiB': 1 << 20, 'GiB': 1 << 30, 'TiB': 1 << 40,
         'KB': 1000, 'MB': 1000 ** 2, 'GB': 1000 ** 3, 'kB': 1000}


def parse_bytes(text):
    """'2.9 KiB' -> (2.9 * 1024, the unit's rounding step)."""
    m = re.match(r'^([\d.]+)\s*([KMGT]?i?B|kB)?$', text.strip())
    if not m:
        return None, None
    unit = UNITS.get(m.group(2) or 'B', 1)
    digits = m.group(1).split('.')
    step = unit / (10 ** len(digits[1])) if len(digits) > 1 else unit
    return float(m.group(1)) * unit, step


def summary_lines(err):
    return [x for x in err.splitlines() if x.startswith('xferprof:')]


def check_line(line, db, what):
    """The summary line of db agrees with the database."""
    conn = open_db(db)
    copies = scalar(conn, 'SELECT count(*) FROM copies WHERE status = 0')
    h2d = scalar(conn, "SELECT coalesce(sum(bytes), 0) FROM copies WHERE status = 0 "
                       "AND direction = 'H2D'")
    d2h = scalar(conn, "SELECT coalesce(sum(bytes), 0) FROM copies WHERE status = 0 "
                       "AND direction = 'D2H'")
    live = scalar(conn, 'SELECT count(*) FROM allocations WHERE free_ns IS NULL')
    conn.close()
    m = re.search(r'(\d+) cop(?:y|ies)', line)
    check(m and int(m.group(1)) == copies, what + ': copies', line, 'database: %d' % copies)
    for direction, total in (('H2D', h2d), ('D2H', d2h)):
        m = re.search(r'([\d.]+\s*(?:[KMGT]?i?B|kB)?)\s+' + direction, line)
        got, step = parse_bytes(m.group(1)) if m else (None, None)
        check(got is not None and abs(got - total) <= step / 2 + 1e-9,
              '%s: bytes %s' % (what, direction), line, 'database: %d' % total)
    m = re.search(r'(\d+) allocations? live', line)
    check(m and int(m.group(1)) == live, what + ': allocations live at exit', line,
          'database: %d' % live)
    return copies, h2d, d2h, live


# One process, exit status 5 passed on.
db = os.path.join(d, 'simple.db')
r = xferprof_run(args, ['-o', db], [args.prog, '5'])
expect_rc(r, 5, 'cap_simple 5 under xferprof run')
pid = parse_int_lines(r.out, 'pid')
lines = summary_lines(r.err)
if check_eq(len(lines), 1, 'summary lines for one process'):
    line = lines[0]
    check(db in line or os.path.basename(db) in line, 'the summary names the database', line)
    check(pid and str(pid[0]) in line, 'the summary names the pid', line)
    got = check_line(line, db, 'cap_simple')
    # The known workload, so that a summary and a database that agree on the
    # wrong numbers do not pass.
    check_eq(got, (6, 3000, 1000, 2), 'cap_simple: (copies, H2D, D2H, live) in the database')

# Two processes: a line each.
if args.prog2:
    r = xferprof_run(args, ['-o', os.path.join(d, 'fork-%p.db')], [args.prog2])
    expect_rc(r, 0, 'cap_fork under xferprof run')
    lines = summary_lines(r.err)
    check_eq(len(lines), 2, 'summary lines for parent and child')
    pids = parse_int_lines(r.out, 'parent') + parse_int_lines(r.out, 'child')
    for p, n in zip(pids, (20, 10)):
        path = os.path.join(d, 'fork-%d.db' % p)
        mine = [x for x in lines if os.path.basename(path) in x]
        if check_eq(len(mine), 1, 'one summary line for pid %d' % p):
            check_eq(check_line(mine[0], path, 'pid %d' % p)[0], n, 'pid %d: copies' % p)
    child_line = [x for x in lines if len(pids) == 2 and 'fork-%d.db' % pids[1] in x]
    check(child_line and 'recover' in child_line[0], "the child's line says it was recovered",
          child_line)

# --quiet: nothing from xferprof (cap_simple itself writes nothing to stderr).
r = xferprof_run(args, ['--quiet', '-o', os.path.join(d, 'quiet.db')], [args.prog])
expect_rc(r, 0, 'cap_simple under xferprof run --quiet')
check_eq(r.err, '', 'stderr with --quiet')
check(os.path.exists(os.path.join(d, 'quiet.db')), '--quiet still records')
finish()
