"""test_html.py --case report|sampled|diff: `xferprof report/diff --format
html` pages opened in headless Chromium; the DOM it rendered (--dump-dom) is
parsed and checked against the database (sqlite, not the report's numbers).

report   html_prog (streams, threads, syncs, NVTX, a failed allocation) with
         an NVTX name that tries to end the data element: no script error,
         one xp-copy mark per copy, every sync, the OOM and peak marked, the
         findings of the JSON report present, nothing injected; a screenshot
         kept in ARTIFACTS; then the pinned_vs_pageable example (--prog2).
sampled  a run with no copies renders "no copies"; a 200k-copy run draws at
         most the limit and says "N of M copies drawn".
diff     pinned (--prog) against pageable (--prog2): the regressed site first.
scripts/setup.sh installs Chromium: without it the test fails."""

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from html.parser import HTMLParser

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'capture'))
import cap_common  # noqa: E402
from cap_common import check, check_eq, clean_env, fatal, finish, run, tmpdir  # noqa: E402

LIMIT = 20000          # XP_HTML_MAX_COPIES in analyzer/render_html.c
BULK = 200000
CHROMIUM_TIMEOUT = 120

ap = argparse.ArgumentParser()
ap.add_argument('--case', required=True, choices=['report', 'sampled', 'diff'])
ap.add_argument('--artifacts', required=True)
mine, rest = ap.parse_known_args()
args = cap_common.parse_args(rest)


def find_chromium():
    for name in ('chromium', 'chromium-browser', 'google-chrome'):
        path = shutil.which(name)
        if path:
            return path
    fatal('no chromium on PATH (scripts/setup.sh installs it)')


CHROMIUM = find_chromium()


def chromium(page, *what):
    """Runs headless Chromium on the page (as root it needs --no-sandbox)."""
    profile = tmpdir('chromium')
    cmd = [CHROMIUM, '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
           '--no-first-run', '--user-data-dir=' + profile, '--window-size=1400,1800',
           '--hide-scrollbars'] + list(what) + ['file://' + os.path.abspath(page)]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=CHROMIUM_TIMEOUT)
    except subprocess.TimeoutExpired:
        fatal('chromium timed out', ' '.join(cmd))
    if p.returncode != 0:
        fatal('chromium failed (%d)' % p.returncode, p.stderr.decode(errors='replace')[-2000:])
    return p.stdout.decode('utf-8', errors='replace')


class Dom(HTMLParser):
    """What the checks need of a rendered page: elements per class, by id,
    the body's attributes and the text of #xp-errors and #xp-sample."""

    def __init__(self, text):
        super().__init__()
        self.classes, self.ids, self.body, self.text = {}, {}, {}, {}
        self.rows = []          # the classes of each tr.xp-dsite, in order
        self._stack = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for c in (a.get('class') or '').split():
            self.classes[c] = self.classes.get(c, 0) + 1
        if 'id' in a:
            self.ids[a['id']] = a
        if tag == 'body':
            self.body = a
        if tag == 'tr' and 'xp-dsite' in (a.get('class') or ''):
            self.rows.append(a.get('class'))
        self._stack.append((tag, a.get('id')))

    def handle_endtag(self, tag):
        while self._stack:
            t, _ = self._stack.pop()
            if t == tag:
                break

    def handle_data(self, data):
        for _, i in self._stack:
            if i:
                self.text[i] = self.text.get(i, '') + data

    def count(self, cls):
        return self.classes.get(cls, 0)


def check_rendered(dom, what):
    check_eq(dom.text.get('xp-errors', '').strip(), '', what + ': no script errors')
    check_eq(dom.body.get('data-rendered'), '1', what + ': rendering finished (body[data-rendered])')


def check_self_contained(page, what):
    with open(page, encoding='utf-8') as f:
        text = f.read()
    low = text.lower()
    for bad in ('<script src', '<link', '@import', 'url(http', 'src="http', "src='http"):
        check(bad not in low, what + ': no external resource (%s)' % bad)
    return text


def db_count(db, table):
    con = sqlite3.connect(db)
    try:
        return con.execute('SELECT count(*) FROM %s' % table).fetchone()[0]
    finally:
        con.close()


def record(prog, db, prog_args=()):
    r = run([args.xferprof, 'run', '--sim', '-o', db, '--', prog] + list(prog_args), clean_env())
    if r.rc != 0:
        fatal('%s under xferprof run --sim' % prog, r.describe())
    return r


def xferprof(*argv):
    r = run([args.xferprof] + list(argv), clean_env())
    if r.rc != 0:
        fatal('xferprof %s' % ' '.join(argv), r.describe())
    return r


def case_report():
    d = tmpdir('html-report')
    db, page = os.path.join(d, 'run.db'), os.path.join(d, 'report.html')
    record(args.prog, db)
    # A name that tries to end the data element and inject markup.
    con = sqlite3.connect(db)
    n = con.execute("""UPDATE nvtx_names SET name = '</script><b id="xp-pwn">x</b><!--'
                       WHERE name = 'step 0'""").rowcount
    con.commit()
    con.close()
    check_eq(n, 1, 'the NVTX name to make hostile')
    xferprof('report', db, '--format', 'html', '-o', page)
    doc = json.loads(xferprof('report', db, '--format', 'json').out)
    check_self_contained(page, 'report')
    os.makedirs(mine.artifacts, exist_ok=True)
    shot = os.path.join(mine.artifacts, 'report.png')
    dom = Dom(chromium(page, '--dump-dom'))
    check_rendered(dom, 'report')
    copies, syncs = db_count(db, 'copies'), db_count(db, 'syncs')
    check(copies >= 13, 'the run made its copies', copies)
    check_eq(dom.count('xp-copy'), copies, 'one timeline mark per copy')
    check_eq(dom.count('xp-sync'), syncs + 1, 'every sync marked (and the legend)')
    # html_prog's copies that hold the host: 4 synchronous ones and one async
    # from pageable memory (its device-to-device cudaMemcpy does not block:
    # NVIDIA's API synchronization behavior).
    check(dom.count('xp-block') >= 5, 'blocked host time drawn', dom.count('xp-block'))
    check_eq(dom.count('xp-nvtx'), 1, 'the NVTX range drawn')
    check('xp-pwn' not in dom.ids, 'a hostile name injects nothing')
    check(dom.count('xp-oom') >= 1, 'the failed allocation marked')
    check_eq(dom.count('xp-peak'), 1, 'the peak marked')
    check(dom.count('xp-bw-pt') >= 4, 'bandwidth points', dom.count('xp-bw-pt'))
    check_eq(dom.count('xp-finding'), len(doc['findings']), 'every finding present')
    check_eq(dom.count('xp-site'), len(doc['sites']), 'every call site in the table')
    check('All %d copies drawn' % copies in dom.text.get('xp-sample', ''), 'says all copies drawn',
          dom.text.get('xp-sample'))
    check(float(dom.text.get('xp-render-ms', 'x')) >= 0, 'render time written')
    chromium(page, '--screenshot=' + shot)
    check(os.path.getsize(shot) > 10000, 'a screenshot', shot)
    print('screenshot: %s' % shot)

    ex_db, ex_page = os.path.join(d, 'example.db'), os.path.join(d, 'example.html')
    record(args.prog2, ex_db)
    xferprof('report', ex_db, '--format', 'html', '-o', ex_page)
    dom = Dom(chromium(ex_page, '--dump-dom'))
    check_rendered(dom, 'pinned_vs_pageable')
    check_eq(dom.count('xp-copy'), db_count(ex_db, 'copies'), 'example: one mark per copy')


def case_sampled():
    d = tmpdir('html-sampled')
    empty_db, empty_page = os.path.join(d, 'empty.db'), os.path.join(d, 'empty.html')
    record(args.prog, empty_db, ['bulk', '0'])
    check_eq(db_count(empty_db, 'copies'), 0, 'no copies in the empty run')
    xferprof('report', empty_db, '--format', 'html', '-o', empty_page)
    dom = Dom(chromium(empty_page, '--dump-dom'))
    check_rendered(dom, 'no copies')
    check_eq(dom.count('xp-copy'), 0, 'no copies: no marks')
    check('All 0 copies drawn' in dom.text.get('xp-sample', ''), 'no copies: says so')
    check(dom.count('xp-empty') >= 1, 'no copies: an empty chart says so')

    db, page = os.path.join(d, 'bulk.db'), os.path.join(d, 'bulk.html')
    record(args.prog, db, ['bulk', str(BULK)])
    total = db_count(db, 'copies')
    check_eq(total, BULK, 'the bulk run made its copies')
    xferprof('report', db, '--format', 'html', '-o', page)
    size = os.path.getsize(page)
    check(size < 4 << 20, 'the page stays small', size)
    dom = Dom(chromium(page, '--dump-dom'))
    check_rendered(dom, 'bulk')
    drawn = dom.count('xp-copy')
    check(0 < drawn <= LIMIT, 'at most the limit drawn', drawn)
    note = dom.text.get('xp-sample', '')
    check('%d of %d copies drawn' % (drawn, total) in note, 'says how many drawn', note)
    print('bulk: %d bytes, %d of %d copies drawn, rendered in %s ms' %
          (size, drawn, total, dom.text.get('xp-render-ms')))


def case_diff():
    d = tmpdir('html-diff')
    base, new, page = (os.path.join(d, n) for n in ('pinned.db', 'pageable.db', 'diff.html'))
    # The variants run as one program rebuilt (same module name), as the diff tests do.
    for prog, db in ((args.prog, base), (args.prog2, new)):
        side = os.path.join(d, os.path.basename(db)[:-3])
        os.mkdir(side)
        shutil.copy2(prog, os.path.join(side, 'diff_prog'))
        record(os.path.join(side, 'diff_prog'), db)
    run([args.xferprof, 'diff', base, new, '--format', 'html', '-o', page], clean_env())
    check(os.path.exists(page), 'the diff page written')
    js = json.loads(run([args.xferprof, 'diff', base, new, '--format', 'json'], clean_env()).out)
    check_self_contained(page, 'diff')
    dom = Dom(chromium(page, '--dump-dom'))
    check_rendered(dom, 'diff')
    check_eq(len(dom.rows), len(js['sites']), 'every site listed')
    check(js['sites'] and js['sites'][0]['class'] == 'regressed', 'the JSON has a regressed site')
    check(dom.rows and 'regressed' in dom.rows[0], 'the regressed site first', dom.rows[:2])
    check_eq(dom.text.get('xp-regressions', '').strip(), str(js['regressions']), 'regressions counted')


{'report': case_report, 'sampled': case_sampled, 'diff': case_diff}[mine.case]()
finish()
