"""Every subcommand parses its options the same way (getopt_long, issue 16
item 2) and says the same about the same mistakes: an unknown option, a
missing value, a value given to an option that takes none, each exit 2 with
exactly one line "xferprof CMD: ... (see 'xferprof CMD --help')" and nothing
on stdout; a long option may be abbreviated or given as --name=value; an
option may come after the databases; "--" ends the options; a --set
message is never cut short."""
import os
import shutil

from rep_common import *  # noqa: F401,F403

args = parse_args()
d = tmpdir('cli-style')
good = os.path.join(d, 'good.db')
record(args, args.prog, good, ['50'])
COMMANDS = ['run', 'recover', 'report', 'diff', 'export', 'symbolize']


def one_line(r, cmd, what, needle):
    lines = r.err.splitlines()
    check_eq(r.rc, 2, '%s %s: exit status' % (cmd, what))
    check(len(lines) == 1 and lines[0].startswith('xferprof %s: ' % cmd) and
          lines[0].endswith("(see 'xferprof %s --help')" % cmd) and needle in lines[0],
          '%s %s: one line in the common style naming %r' % (cmd, what, needle), repr(r.err))
    check_eq(r.out, '', '%s %s: nothing on stdout' % (cmd, what))


for cmd in COMMANDS:
    operands = ['--', 'true'] if cmd == 'run' else [good, good] if cmd == 'diff' else [good]
    one_line(run([args.xferprof, cmd, '--bogus'] + operands, clean_env()), cmd, 'unknown long option',
             "unknown option '--bogus'")
    one_line(run([args.xferprof, cmd, '-Z'] + operands, clean_env()), cmd, 'unknown short option',
             "unknown option '-Z'")
    one_line(run([args.xferprof, cmd, '--help=yes'] + operands, clean_env()), cmd,
             'a value to --help', "option '--help' takes no value")
    r = run([args.xferprof, cmd, '--help'], clean_env())
    check(r.rc == 0 and r.out.startswith('Usage: xferprof ' + cmd), cmd + ' --help', r.err)

# Options that take a value, each without it (as the last word).
for cmd, opt in (('run', '--output'), ('run', '-o'), ('report', '--format'), ('report', '-o'),
                 ('report', '--top'), ('diff', '--threshold'), ('diff', '--by'),
                 ('export', '--format'), ('export', '-f'), ('export', '--output')):
    pre = [good, good] if cmd == 'diff' else [good] if cmd != 'run' else []
    one_line(run([args.xferprof, cmd] + pre + [opt], clean_env()), cmd, opt + ' without a value',
             "option '%s' needs a value" % opt)

# The same options in the forms getopt_long takes: abbreviated, with '=',
# after the database, and a database named like an option after "--".
out = os.path.join(d, 'r.json')
for argv in (['--form', 'json', good], ['--format=json', good], [good, '--format', 'json'],
             ['-o' + out, '--format', 'json', good]):
    r = run([args.xferprof, 'report'] + argv, clean_env())
    check_eq(r.rc, 0, 'report %s: exit status' % ' '.join(argv))
    text = r.out if '-o' + out not in argv else open(out).read()
    check(text.lstrip().startswith('{'), 'report %s: JSON' % ' '.join(argv), r.err)
dashed = os.path.join(d, '-dashed.db')
shutil.copy(good, dashed)
r = run([args.xferprof, 'report', '--', '-dashed.db'], clean_env(), cwd=d)
check_eq(r.rc, 0, 'report -- -dashed.db: a database named like an option, after "--"')

# A --set mistake is said whole, however long the name given.
long_key = 'k' * 400
r = run([args.xferprof, 'report', good, '--set', 'small-copies.%s=1' % long_key], clean_env())
one_line(r, 'report', '--set with a long unknown key', long_key)
check('fixed_ns)' in r.err, '--set: the list of settings is not cut', r.err)
finish()
