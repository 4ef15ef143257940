"""help_text.py: reads `xferprof --help` and each `xferprof COMMAND --help`,
the one source the man page (help_man.py) and the bash completion
(help_completion.py) are generated from, so they cannot drift from the
options the program takes."""
import re
import subprocess

# An entry of an options-like list: two spaces, a term, two or more spaces and
# its description (or the term alone, its description on the next lines).
ENTRY = re.compile(r'^  (\S(?:.*?\S)?)(?:\s{2,}(\S.*))?$')
# Where an option's entry starts: "  -o, --output" or "      --stack-depth".
START = re.compile(r'^ {2,6}-')
OPTION = re.compile(r'(?<![\w-])(--?[A-Za-z][\w-]*)')


def run_help(xferprof, *args):
    p = subprocess.run([xferprof] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, check=True)
    return p.stdout


def commands(top_help):
    """(name, summary) of each command in the top-level help's Commands: list."""
    out, inside = [], False
    for line in top_help.splitlines():
        if line == 'Commands:':
            inside = True
        elif inside and not line.strip():
            break
        elif inside:
            m = ENTRY.match(line)
            if m and m.group(2):
                out.append((m.group(1), m.group(2)))
    return out


def blocks(text):
    """The help cut into ('usage', [lines]), ('para', [lines]), ('heading', title)
    and ('entry', term, [description lines], [deeper lines kept as they are])."""
    out = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif line.startswith('Usage:'):
            u = [line]
            i += 1
            while i < len(lines) and lines[i].startswith(' ') and lines[i].strip():
                u.append(lines[i])
                i += 1
            out.append(('usage', u))
        elif not line.startswith(' ') and line.endswith(':') and len(line) < 40:
            out.append(('heading', line[:-1]))
            i += 1
        elif not line.startswith(' '):
            para = []
            while i < len(lines) and lines[i].strip() and not lines[i].startswith(' '):
                para.append(lines[i])
                i += 1
            out.append(('para', para))
        else:
            m = ENTRY.match('  ' + line.lstrip())   # "      --long" as "  --long"
            term, desc = (m.group(1), m.group(2)) if m else (line.strip(), None)
            col = line.index(desc) if desc else None
            i += 1
            cont, deep = [desc] if desc else [], []
            while i < len(lines) and lines[i].startswith('   ') and not START.match(lines[i]):
                nxt = lines[i]
                indent = len(nxt) - len(nxt.lstrip())
                if col is None:
                    col = indent
                if indent > col or deep:
                    deep.append(nxt[col:] if len(nxt) > col else nxt.strip())
                else:
                    cont.append(nxt.strip())
                i += 1
            out.append(('entry', term, cont, deep))
    return out


def options(text):
    """Every option the help names, in order, once each."""
    seen = []
    for b in blocks(text):
        if b[0] in ('usage', 'entry'):
            src = ' '.join(b[1]) if b[0] == 'usage' else b[1]
            for o in OPTION.findall(src):
                if o not in seen and o != '--':
                    seen.append(o)
    return seen


def choices(text, option):
    """The values an option takes when its usage says so: --format a|b|c."""
    m = re.search(re.escape(option) + r'[ =]([a-z][\w-]*(?:\|[a-z][\w-]*)+)', text)
    return m.group(1).split('|') if m else []


def aliases(text, option):
    """The other names of option in its entry: -f for --format in "-f, --format FMT"."""
    for b in blocks(text):
        if b[0] == 'entry':
            names = OPTION.findall(b[1].split('  ')[0])
            if option in names:
                return [n for n in names if n != option]
    return []
