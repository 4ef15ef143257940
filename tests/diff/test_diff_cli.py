"""`xferprof diff`'s command line: usage errors and bad input (exit 2, one
line on stderr), -o written whole, each side as a directory or a comma
list, the three formats, --fail-on."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diff_common import *  # noqa: E402,F401,F403

args = parse_args()
X = args.xferprof
base = profile(args, args.prog, 'base')
base2 = profile(args, args.prog, 'base2')
new = profile(args, args.prog2, 'uploads')
new2 = profile(args, args.prog2, 'uploads2')
d = tmpdir('diff-cli')


def xdiff(*a):
    return run([X, 'diff'] + list(a), clean_env())


def expect_usage(r, what, needle):
    if expect_rc(r, 2, what):
        lines = r.err.strip().splitlines()
        check_eq(len(lines), 1, '%s: one line on stderr' % what)
        check(needle in r.err, '%s: stderr names the problem' % what, r.err)
    check_eq(r.out, '', '%s: nothing on stdout' % what)


expect_usage(xdiff(base), 'one run only', 'two runs')
expect_usage(xdiff(base, new, base), 'three runs', 'unexpected argument')
expect_usage(xdiff(base, new, '--bogus'), 'unknown option', "unknown option '--bogus'")
expect_usage(xdiff(base, new, '--format', 'xml'), 'bad format', 'xml')
expect_usage(xdiff(base, new, '--threshold', 'ten'), 'bad threshold', 'ten')
expect_usage(xdiff(base, new, '--threshold', '-5'), 'negative threshold', '-5')
expect_usage(xdiff(base, new, '--fail-on', 'sometimes'), 'bad fail-on', 'sometimes')
expect_usage(xdiff(base, new, '--by', 'thread'), 'bad by', 'thread')
expect_usage(xdiff(base, new, '--threshold'), 'missing value', 'needs a value')

missing = os.path.join(d, 'nope.db')
expect_usage(xdiff(base, missing), 'missing database', missing + ': no such database')
junk = os.path.join(d, 'junk.db')
with open(junk, 'w') as f:
    f.write('not sqlite at all, just text that is long enough to not be empty\n' * 20)
expect_usage(xdiff(junk, new), 'not a database', junk + ':')
trunc = os.path.join(d, 'trunc.db')
with open(base, 'rb') as f, open(trunc, 'wb') as g:
    g.write(f.read()[:os.path.getsize(base) // 2])
expect_usage(xdiff(base, trunc), 'truncated database', trunc + ': database is truncated or corrupt')
empty_dir = os.path.join(d, 'empty')
os.mkdir(empty_dir)
expect_usage(xdiff(empty_dir, new), 'directory without databases', 'no databases')

r = xdiff('--help')
expect_rc(r, 0, '--help')
check('Usage: xferprof diff BASE NEW' in r.out, '--help prints usage', r.out)
r = run([X, '--help'], clean_env())
check(' diff ' in r.out, "xferprof --help lists diff", r.out)

# -o: the whole document, no temporary file left behind.
out = os.path.join(d, 'out.json')
r = xdiff(base, new, '--format', 'json', '-o', out)
expect_rc(r, 0, 'diff -o')
check_eq(r.out, '', '-o: nothing on stdout')
with open(out) as f:
    doc = json.load(f)
check_eq(doc['format'], 'xferprof-diff', '-o file holds the JSON')
check_eq(sorted(os.listdir(d)), ['empty', 'junk.db', 'out.json', 'trunc.db'], 'no temporary file left')
# (A missing folder is made; a file where the folder should be is not.)
bad_out = os.path.join(d, 'junk.db', 'out.json')
expect_usage(xdiff(base, new, '-o', bad_out), 'unwritable -o', 'cannot write ' + bad_out)

# Sides as a directory and as a comma list: two processes each, in pairs.
side = os.path.join(d, 'side')
os.mkdir(side)
for i, src in enumerate((base, base2)):
    os.symlink(src, os.path.join(side, 'r%d.db' % i))
doc = diff(args, side, new + ',' + new2)
check_eq(doc['base']['processes'], 2, 'directory side: two processes')
check_eq(doc['new']['processes'], 2, 'comma side: two processes')
check_eq(len(doc['base']['databases']), 2, 'directory side lists its databases')
check_eq(len(doc['pairs']), 2, 'two pairs')
check_totals(doc, {'bytes': 2 * 4 << 20, 'copies': 8, 'H2D.bytes': 2 * 4 << 20, 'H2D.copies': 8},
             tol={'pinned_share': 1e-4})
for p in doc['pairs']:
    check_totals(p, {'bytes': 4 << 20, 'copies': 4, 'H2D.bytes': 4 << 20, 'H2D.copies': 4},
                 'pair totals', tol={'pinned_share': 1e-4})

# The other formats, and --fail-on.
r = xdiff(base, new, '--format', 'markdown')
expect_rc(r, 0, 'markdown')
check('| **regressed** |' in r.out, 'markdown: a regressed site row', r.out)
r = xdiff(base, new)
expect_rc(r, 0, 'text')
check('regressed' in r.out and '\033' not in r.out, 'text: classes, no color off a TTY', r.out)
expect_rc(xdiff(base, new, '--fail-on', 'regression'), 1, '--fail-on regression')
expect_rc(xdiff(base, base, '--fail-on', 'regression', '--format', 'json'), 0,
          'a run against itself never fails')
r = xdiff(base, base, '--fail-on', 'any', '--format', 'json')
expect_rc(r, 0, 'a run against itself: no change at all')
finish()
