"""pylines_cases.py: line-table cases for test_pylines, from the running interpreter.

For every code object of a few standard modules, one line:
    FORMAT FIRST_LINE TABLE_HEX OFFSET:LINE,...
with every instruction offset and the line the interpreter itself gives it
(0 where it gives none), FORMAT as py_code.line_format."""
import argparse
import dis
import json.decoder
import sys
import threading
import types

fmt = 0 if sys.version_info < (3, 10) else 1 if sys.version_info < (3, 11) else 2


def codes(co):
    yield co
    for c in co.co_consts:
        if isinstance(c, types.CodeType):
            yield from codes(c)


def lines(co):
    size = len(co.co_code)
    out = {}
    if fmt == 0:
        starts = list(dis.findlinestarts(co))
        for off in range(0, size, 2):
            line = co.co_firstlineno
            for o, l in starts:
                if o <= off:
                    line = l
            out[off] = line
    else:
        for start, end, line in co.co_lines():
            for off in range(start, end, 2):
                out[off] = line or 0
    return out


n = 0
for mod in (argparse, dis, json.decoder, threading):
    for fn in vars(mod).values():
        for f in ([fn] if isinstance(fn, types.FunctionType) else
                  [v for v in vars(fn).values() if isinstance(v, types.FunctionType)]
                  if isinstance(fn, type) else []):
            for co in codes(f.__code__):
                table = co.co_lnotab if fmt == 0 else co.co_linetable
                pairs = ','.join('%d:%d' % kv for kv in sorted(lines(co).items()))
                print(fmt, co.co_firstlineno, table.hex() or '-', pairs)
                n += 1
print('cases', n, file=sys.stderr)
