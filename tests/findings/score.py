"""score.py: precision and recall of `xferprof report`'s findings on the
measured programs of this folder, each of which states its truth in its first
comment:

    TRUTH: RULE[(KIND)] @ LABEL   a finding of RULE (and details.kind KIND, when
                                  given) is expected at the line marked LABEL
    TRUTH: none                   no finding is expected
    ALLOW: RULE[(KIND)] [@ LABEL] such a finding is acceptable but not required
                                  (counted neither way); without a label, at any site
    ENV: NAME=VALUE               set for the run (the simulator's settings)

A line is marked by a comment `/* @LABEL */` (C) or `# @LABEL` (Python) at its
end. A finding matches a truth when its rule (and kind) agree and one of its
site's frames is that file and line (report --format json, site.frames). Every
finding that matches no truth is a false positive (a second finding for one
truth too: one finding per problem); every truth no finding matched is a false
negative.

    python3 score.py --xferprof X --bin-dir D --src-dir S [--python PY]
                     [--runs N] [--load idle|loaded|both]
                     [--min-precision P] [--min-recall R] PROGRAM...

PROGRAM is fp_NAME.c (the executable D/fp_NAME) or NAME.py (run with PY).
Each program runs N times (default 3) per load: `idle`, and `loaded` with one
busy process per CPU during the run. Prints per-rule and overall precision and
recall and every false positive and negative; exits 1 when a run failed or the
overall figures are below --min-precision/--min-recall."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

TRUTH_RE = re.compile(r'^\s*(?:\*|#)?\s*(TRUTH|ALLOW):\s*(.*?)\s*$')
ENV_RE = re.compile(r'^\s*(?:\*|#)?\s*ENV:\s*([A-Za-z_][A-Za-z0-9_]*)=(\S*)\s*$')
SPEC_RE = re.compile(r'^([a-z][a-z0-9-]*)(?:\(([a-z0-9-]+)\))?(?:\s*@\s*(\w+))?$')
LABEL_RE = re.compile(r'(?:/\*\s*@(\w+)\s*\*/|#\s*@(\w+))\s*$')
RUN_TIMEOUT = 600   # a hung program fails the run rather than meson's whole test


class Program:
    """A measured program: its source, how to run it, and its truth."""

    def __init__(self, name, src, cmd):
        self.name, self.src, self.cmd = name, src, cmd
        self.truths, self.allowed, self.env = [], [], {}
        self.file = os.path.basename(src)
        with open(src) as f:
            lines = f.read().split('\n')
        labels = {}
        for n, line in enumerate(lines, 1):
            m = LABEL_RE.search(line)
            if m:
                label = m.group(1) or m.group(2)
                if label in labels:
                    sys.exit('%s:%d: label @%s used twice' % (src, n, label))
                labels[label] = n
        saw_none = False
        for line in first_comment(lines, src):
            m = ENV_RE.match(line)
            if m:
                self.env[m.group(1)] = m.group(2)
                continue
            m = TRUTH_RE.match(line)
            if not m:
                continue
            if m.group(1) == 'TRUTH' and m.group(2) == 'none':
                saw_none = True
                continue
            spec = SPEC_RE.match(m.group(2))
            if not spec:
                sys.exit('%s: bad %s line: %s' % (src, m.group(1), line.strip()))
            rule, kind, label = spec.groups()
            if label is None and m.group(1) == 'ALLOW':
                self.allowed.append((rule, kind, None, None))   # at any site
                continue
            if label not in labels:
                sys.exit('%s: %s names @%s, which no line carries' % (src, m.group(1), label))
            (self.truths if m.group(1) == 'TRUTH' else self.allowed).append(
                (rule, kind, label, labels[label]))
        if saw_none == bool(self.truths):
            sys.exit('%s: the first comment must say TRUTH: none or list TRUTH lines' % src)


def first_comment(lines, src):
    """The lines of a C file's first /* */ comment or a Python file's
    docstring (or leading # lines)."""
    text = '\n'.join(lines)
    if src.endswith('.py'):
        m = re.match(r'\s*(?:#![^\n]*\n)?\s*("""|\'\'\')(.*?)\1', text, re.S)
        if m:
            return m.group(2).split('\n')
        return [l for l in lines if l.startswith('#')]
    m = re.match(r'\s*/\*(.*?)\*/', text, re.S)
    if not m:
        sys.exit('%s: no first comment' % src)
    return m.group(1).split('\n')


def clean_env(extra):
    """The caller's environment without what the launcher must set itself."""
    env = {k: v for k, v in os.environ.items()
           if k not in ('LD_PRELOAD', 'LD_LIBRARY_PATH') and not k.startswith('XFERPROF_')}
    env.update(extra)
    return env


def frames_of(finding):
    return {(os.path.basename(fr.get('file') or ''), fr.get('line'))
            for fr in finding.get('site', {}).get('frames', [])}


def kind_of(finding):
    k = finding.get('details', {}).get('kind')
    return k if isinstance(k, str) else None


def site_text(prog, finding):
    """Where a finding points: the program's own line when a frame has it,
    else its innermost frame."""
    frames = finding.get('site', {}).get('frames', [])
    for fr in frames:
        if os.path.basename(fr.get('file') or '') == prog.file:
            return '%s:%s (%s)' % (prog.file, fr.get('line'), fr.get('function'))
    if frames:
        fr = frames[0]
        return '%s (%s:%s)' % (fr.get('function'), fr.get('file'), fr.get('line'))
    return '(no site)'


def run_once(args, prog, tmp):
    """Runs prog under `xferprof run --sim` and returns the report's findings,
    or an error string."""
    db = os.path.join(tmp, prog.name + '.db')
    for p in (db, db + '.xpj'):
        if os.path.exists(p):
            os.unlink(p)
    cmd = [args.xferprof, 'run', '--sim', '--quiet', '-o', db, '--'] + prog.cmd
    try:
        r = subprocess.run(cmd, env=clean_env(prog.env), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return 'timed out: %s' % ' '.join(cmd)
    if r.returncode != 0:
        return 'exit %d: %s\n%s' % (r.returncode, ' '.join(cmd),
                                    r.stderr.decode('utf-8', 'replace')[-2000:])
    rep = subprocess.run([args.xferprof, 'report', '--format', 'json', db], env=clean_env({}),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if rep.returncode != 0:
        return 'report exit %d: %s' % (rep.returncode, rep.stderr.decode('utf-8', 'replace'))
    return json.loads(rep.stdout)['findings']


def score_run(prog, findings, tally, fps, fns, tag):
    """Matches one run's findings with the truth and adds to tally
    (rule -> [tp, fp, fn]), fps and fns (rows for the tables)."""
    def matches(f, spec):
        rule, kind, _, line = spec
        return (f['rule'] == rule and (kind is None or kind_of(f) == kind)
                and (line is None or (prog.file, line) in frames_of(f)))

    matched = set()
    for f in findings:
        hit = [i for i, spec in enumerate(prog.truths) if matches(f, spec) and i not in matched]
        if not hit and any(matches(f, spec) for spec in prog.allowed):
            continue
        t = tally.setdefault(f['rule'], [0, 0, 0])
        if hit:
            matched.add(hit[0])
            t[0] += 1
        else:
            t[1] += 1
            kind = kind_of(f)
            fps.append((prog.name, tag, f['rule'] + ('(%s)' % kind if kind else ''),
                        site_text(prog, f), f.get('message', '')))
    for i, (rule, kind, label, line) in enumerate(prog.truths):
        if i not in matched:
            tally.setdefault(rule, [0, 0, 0])[2] += 1
            fns.append((prog.name, tag, rule + ('(%s)' % kind if kind else ''),
                        '%s:%d (@%s)' % (prog.file, line, label), ''))


def ratio(a, b):
    return a / b if b else None


def fmt(x):
    return '   -' if x is None else '%.2f' % x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--xferprof', required=True)
    ap.add_argument('--bin-dir', required=True)
    ap.add_argument('--src-dir', required=True)
    ap.add_argument('--python', default=None, help='interpreter for the .py programs (torch)')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--load', choices=('idle', 'loaded', 'both'), default='both')
    ap.add_argument('--min-precision', type=float, default=0.0)
    ap.add_argument('--min-recall', type=float, default=0.0)
    ap.add_argument('--json', help='also write the figures to this file')
    ap.add_argument('programs', nargs='+')
    args = ap.parse_args()
    args.xferprof = os.path.abspath(args.xferprof)

    progs = []
    for p in args.programs:
        src = os.path.join(args.src_dir, p)
        name = os.path.splitext(p)[0]
        if p.endswith('.py'):
            if not args.python:
                sys.exit('%s needs --python (the interpreter with torch)' % p)
            cmd = [args.python, src]
        else:
            cmd = [os.path.join(args.bin_dir, name)]
        progs.append(Program(name, src, cmd))

    loads = ['idle', 'loaded'] if args.load == 'both' else [args.load]
    per_run, fps, fns, errors = {}, [], [], []
    truths = sum(len(p.truths) for p in progs)
    with tempfile.TemporaryDirectory(prefix='xp-findings-') as tmp:
        for load in loads:
            busy = []
            if load == 'loaded':
                # One busy process per CPU for the whole loaded pass: the
                # programs then compete for every core, as on a shared node.
                busy = [subprocess.Popen([sys.executable, '-c', 'while True: pass'])
                        for _ in range(os.cpu_count() or 1)]
            try:
                for run in range(1, args.runs + 1):
                    for prog in progs:
                        tag = '%s#%d' % (load, run)
                        res = run_once(args, prog, tmp)
                        if isinstance(res, str):
                            errors.append('%s %s: %s' % (prog.name, tag, res))
                            continue
                        run_tally = per_run.setdefault(tag, {})
                        score_run(prog, res, run_tally, fps, fns, tag)
                        print('%-28s %-9s %d findings' % (prog.name, tag, len(res)), flush=True)
            finally:
                for b in busy:
                    b.kill()
                    b.wait()

    tally = {}
    for tag in per_run:
        for rule, (tp, fp, fn) in per_run[tag].items():
            t = tally.setdefault(rule, [0, 0, 0])
            t[0], t[1], t[2] = t[0] + tp, t[1] + fp, t[2] + fn
    print('\n%d programs, %d truths each run, %d run(s) x %s\n'
          % (len(progs), truths, args.runs, '+'.join(loads)))
    runs = {}
    for tag in per_run:   # the spread between runs: what a floor must allow for
        tp, fp, fn = (sum(v[i] for v in per_run[tag].values()) for i in range(3))
        runs[tag] = {'precision': ratio(tp, tp + fp), 'recall': ratio(tp, tp + fn)}
        print('run %-9s precision %s recall %s' % (tag, fmt(runs[tag]['precision']),
                                                   fmt(runs[tag]['recall'])))
    print()
    print('%-18s %5s %5s %5s %9s %7s' % ('rule', 'TP', 'FP', 'FN', 'precision', 'recall'))
    tot = [0, 0, 0]
    per_rule = {}
    for rule in sorted(tally):
        tp, fp, fn = tally[rule]
        tot = [tot[0] + tp, tot[1] + fp, tot[2] + fn]
        p, r = ratio(tp, tp + fp), ratio(tp, tp + fn)
        per_rule[rule] = {'tp': tp, 'fp': fp, 'fn': fn, 'precision': p, 'recall': r}
        print('%-18s %5d %5d %5d %9s %7s' % (rule, tp, fp, fn, fmt(p), fmt(r)))
    precision, recall = ratio(tot[0], tot[0] + tot[1]), ratio(tot[0], tot[0] + tot[2])
    print('%-18s %5d %5d %5d %9s %7s' % ('overall', tot[0], tot[1], tot[2],
                                        fmt(precision), fmt(recall)))
    for title, rows in (('False positives', fps), ('False negatives', fns)):
        print('\n%s (%d):' % (title, len(rows)))
        for prog, tag, rule, site, msg in rows:
            print('  %-26s %-9s %-28s %s%s' % (prog, tag, rule, site,
                                             ('  ' + msg[:90]) if msg else ''))
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'programs': len(progs), 'runs': args.runs, 'loads': loads, 'per_run': runs,
                       'rules': per_rule, 'precision': precision, 'recall': recall,
                       'false_positives': fps, 'false_negatives': fns, 'errors': errors},
                      f, indent=1)
    failed = False
    for e in errors:
        print('\nFAILED RUN: %s' % e)
        failed = True
    if (precision or 0) < args.min_precision:
        print('\noverall precision %s is below %.2f' % (fmt(precision), args.min_precision))
        failed = True
    if (recall or 0) < args.min_recall:
        print('\noverall recall %s is below %.2f' % (fmt(recall), args.min_recall))
        failed = True
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
