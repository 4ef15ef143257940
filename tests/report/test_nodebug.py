"""rep_sites built with -g0 and stripped: frames of the program are
module+offset (no function, file or line), the numbers unchanged; and a
program moved away after its run: a note, and no names at all for its
frames (never wrong ones)."""
import os
import shutil

from rep_common import *  # noqa: F401,F403

args = parse_args()
d = tmpdir('report-nodebug')
db = os.path.join(d, 'stripped.db')
record(args, args.prog2, db)
doc = report_json(args, [db])
mod = os.path.basename(args.prog2)
ours = [s for s in doc['sites'] if s['frames'] and s['frames'][0]['module'] == mod]
check_eq(len(ours), 2, 'two call sites in the stripped program: %s' % json.dumps(doc['sites'])[:3000])
for s in ours:
    f = s['frames'][0]
    check_eq((f['function'], f['file'], f['line']), (None, None, None),
             'stripped: no names for %#x' % f['address'])
    check(f['offset'] > 0, 'stripped: an offset in the module', f)
check_eq(sorted(s['copies'] for s in ours), sorted([UPLOADS, DOWNLOADS]), 'copies per site')

# Moved after the run (first report after the move: no cache to answer).
prog = os.path.join(d, 'rep_sites')
shutil.copy2(args.prog, prog)
db = os.path.join(d, 'moved.db')
record(args, prog, db)
os.rename(prog, prog + '.moved')
doc = report_json(args, [db])
notes = doc['processes'][0]['notes']
check(any(prog in n and 'no longer on disk' in n for n in notes), 'a note names the missing module',
      notes)
text = json.dumps(doc['sites'])
check('rep_upload' not in text and 'rep_download' not in text, 'no names from the missing program')
ours = [s for s in doc['sites'] if s['frames'] and s['frames'][0]['module'] == 'rep_sites']
check_eq(len(ours), 2, 'its call sites show as module+offset')

# Replaced by another build (same path, different build id): a note, no names.
shutil.copy2(args.prog2, prog)
db2 = os.path.join(d, 'moved2.db')
os.rename(prog + '.moved', prog)
record(args, prog, db2)
shutil.copy2(args.prog2, prog)
doc = report_json(args, [db2])
notes = doc['processes'][0]['notes']
check(any('changed since the run' in n for n in notes), 'a note says the module changed', notes)
check('rep_upload' not in json.dumps(doc['sites']), 'no names from another build')
finish()
