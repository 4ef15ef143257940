"""`meson install --destdir` gives a working tool (issue 16 item 2): the
installed xferprof, run from where it was installed, preloads the installed
libxferprof.so and runs the installed simulator; the man page xferprof(1)
renders without warnings and names every command and every option of every
command's --help; the bash completion completes commands, options and
option values."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument('--build', required=True)
ap.add_argument('--prog', required=True)
ap.add_argument('--help-dir', required=True)
args = ap.parse_args()
sys.path.insert(0, args.help_dir)
from help_text import choices, commands, options  # noqa: E402

failures = []


def check(cond, what, detail=''):
    if not cond:
        failures.append(what)
        print('FAIL: %s %s' % (what, detail))


def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, **kw)
    print('$ %s  -> %d' % (' '.join(cmd), p.returncode))
    return p


dest = tempfile.mkdtemp(prefix='xp-install-')
env = {k: v for k, v in os.environ.items() if not k.startswith(('XFERPROF_', 'LD_'))}
p = run(['meson', 'install', '-C', args.build, '--destdir', dest, '--no-rebuild', '--quiet'],
        env=env)
check(p.returncode == 0, 'meson install', p.stderr[-2000:])
found = {}
for root, _, files in os.walk(dest):
    for f in files:
        found.setdefault(f, os.path.join(root, f))
for name in ('xferprof', 'libxferprof.so', 'xferprof.1', 'libcuda.so.1'):
    check(name in found, 'installed: ' + name)
xferprof = next((os.path.join(r, 'xferprof') for r, _, fs in os.walk(dest)
                 if 'xferprof' in fs and r.endswith('/bin')), None)
completion = next((os.path.join(r, 'xferprof') for r, _, fs in os.walk(dest)
                   if 'xferprof' in fs and r.endswith('/completions')), None)
check(xferprof is not None, 'bin/xferprof installed')
check(completion is not None, 'share/bash-completion/completions/xferprof installed')
if failures:
    sys.exit(1)

# The installed launcher preloads the installed library (not the build tree's).
p = run([xferprof, 'run', '--sim', '--quiet', '-o', os.path.join(dest, 'env.db'), '--',
         'sh', '-c', 'echo "$LD_PRELOAD"'], env=env)
check(p.returncode == 0, 'installed run: exit status', p.stderr)
check(p.stdout.strip().split(':')[0].startswith(dest) and
      'libxferprof.so' in p.stdout.strip().split(':')[0],
      'installed run: preloads the installed libxferprof.so', p.stdout)
check(args.build not in p.stdout, 'installed run: nothing from the build tree', p.stdout)
db = os.path.join(dest, 'run.db')
p = run([xferprof, 'run', '--sim', '-o', db, '--', args.prog], env=env)
check(p.returncode == 0, 'installed run of a CUDA program', p.stderr)
import sqlite3  # noqa: E402
n = sqlite3.connect(db).execute('SELECT count(*) FROM copies').fetchone()[0] \
    if os.path.exists(db) else 0
check(n > 0, 'installed run recorded copies', n)
p = run([xferprof, 'report', db], env=env)
check(p.returncode == 0 and 'async-pageable' in p.stdout, 'installed report', p.stderr)

# The man page: renders cleanly, every command and option is in it.
man = found['xferprof.1']
p = run(['man', '--warnings', '-l', man], env=dict(env, MANWIDTH='100', MAN_KEEP_FORMATTING=''))
check(p.returncode == 0 and not p.stderr.strip(), 'man -l renders without warnings', p.stderr)
text = p.stdout.replace('\u2010', '-').replace('\u2011', '-')
flat = ' '.join(text.replace('\u2010\n', '').split())
top = run([xferprof, '--help'], env=env).stdout
cmds = [c for c, _ in commands(top)]
check(len(cmds) >= 5, 'commands listed', cmds)
for c in cmds:
    check(('xferprof ' + c) in flat, 'man page: command ' + c)
    for o in options(run([xferprof, c, '--help'], env=env).stdout):
        check(o in flat, 'man page: %s %s' % (c, o))


# The bash completion.
def complete(words):
    script = ('source %s\nCOMP_WORDS=(%s)\nCOMP_CWORD=%d\n_xferprof\nprintf "%%s\\n" '
              '"${COMPREPLY[@]}"\n' % (completion, ' '.join("'%s'" % w for w in words),
                                        len(words) - 1))
    return run(['bash', '-c', script], env=env).stdout.split()


check(complete(['xferprof', 'rep']) == ['report'], 'completes a command', complete(['xferprof', 'rep']))
check(set(complete(['xferprof', ''])) >= set(cmds), 'completes every command')
check('--format' in complete(['xferprof', 'report', '--f']), 'completes an option')
check(sorted(complete(['xferprof', 'report', '--format', ''])) ==
      ['html', 'json', 'markdown', 'text'], 'completes an option value')
export_formats = choices(run([xferprof, 'export', '--help'], env=env).stdout, '--format')
check(len(export_formats) >= 2 and
      sorted(complete(['xferprof', 'export', '-f', ''])) == sorted(export_formats),
      'completes a short option value: the formats export --help lists', export_formats)
check('--stack-depth' in complete(['xferprof', 'run', '--st']), 'completes run options')

if failures:
    print('%d check(s) failed; installed tree kept in %s' % (len(failures), dest))
    sys.exit(1)
shutil.rmtree(dest)
print('ok')
