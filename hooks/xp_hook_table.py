"""Reads the hook tables (X-macro .def files) for the build scripts of hooks/:
each entry's name, the runtime versions it is defined at, and its parameter
list, as xp_runtime_hooks.c expands them.

An entry is a line starting with XP_FORM(name, ...), or
XP_ONLY(VERSIONS, XP_FORM, name, ...) for an entry defined at some versions
only.  VERSIONS are the names hooks/xp_runtime_export.h defines (keep the two
in step): each maps a version node to the first CUDART_VERSION whose headers
declare the symbol with that signature (0: every release of that major).
"""
import re
import sys

NODES = {13: 'libcudart.so.13', 12: 'libcudart.so.12', 11: 'libcudart.so.11.0'}
VERSION_SETS = {
    'XP_ALL_VERSIONS': {13: 0, 12: 0, 11: 0},
    'XP_V13': {13: 0},
    'XP_V12_V11': {12: 0, 11: 0},
    'XP_V12': {12: 0},
    'XP_V11': {11: 0},
    'XP_V13_V12': {13: 0, 12: 0},
    'XP_V12_8': {12: 12080},
    'XP_V13_V12_5': {13: 0, 12: 12050},
    'XP_V13_V12_3': {13: 0, 12: 12030},
}
START = re.compile(r'^(XP_[A-Z0-9_]+)\(', re.M)


class Entry:
    def __init__(self, path, line, form, name, versions, args):
        self.path, self.line, self.form, self.name = path, line, form, name
        self.versions = versions      # {major: first CUDART_VERSION}
        self.args = args              # the macro's arguments after the name, as text

    def params(self):
        """The parameter list, '(...)': the first argument in parentheses."""
        for a in self.args:
            if a.startswith('('):
                return a
        sys.exit('%s:%d: %s has no parameter list' % (self.path, self.line, self.name))


def split_args(text, start):
    """The comma-separated arguments of the call whose '(' is at text[start],
    and the index after its ')'."""
    depth, args, cur, i = 0, [], [], start
    while i < len(text):
        c = text[i]
        if c == '(':
            depth += 1
            if depth == 1:
                i += 1
                continue
        elif c == ')':
            depth -= 1
            if depth == 0:
                args.append(''.join(cur).strip())
                return args, i + 1
        elif c == ',' and depth == 1:
            args.append(''.join(cur).strip())
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    sys.exit('unbalanced parentheses in a hook table at offset %d' % start)


def entries(path):
    text = open(path).read()
    found = []
    for m in START.finditer(text):
        line = text.count('\n', 0, m.start()) + 1
        args, _ = split_args(text, m.end() - 1)
        form = m.group(1)
        versions = dict(VERSION_SETS['XP_ALL_VERSIONS'])
        if form == 'XP_ONLY':
            if args[0] not in VERSION_SETS:
                sys.exit('%s:%d: unknown version set %s' % (path, line, args[0]))
            versions = dict(VERSION_SETS[args[0]])
            form, args = args[1], args[2:]
        if not re.fullmatch(r'\w+', args[0]):
            sys.exit('%s:%d: %s(...) does not start with a name' % (path, line, form))
        found.append(Entry(path, line, form, args[0], versions, args[1:]))
    if not found:
        sys.exit('no hooks found in %s' % path)
    return found


def names(path):
    """The names of the entries, each once, in table order."""
    seen = []
    for e in entries(path):
        if e.name not in seen:
            seen.append(e.name)
    return seen


def duplicates(all_entries):
    """Names defined twice at one version."""
    seen, dup = set(), set()
    for e in all_entries:
        for v in e.versions:
            if (e.name, v) in seen:
                dup.add('%s@%s' % (e.name, NODES[v]))
            seen.add((e.name, v))
    return sorted(dup)
