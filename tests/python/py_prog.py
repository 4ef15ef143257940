"""py_prog.py: a Python program that copies to the simulated GPU through ctypes.

Run as: python py_prog.py CTHREAD_LIB.  Each kind of call copies its own
number of bytes, so the test can tell the calls apart in the database; a
comment "at: NAME" ending a line marks where each call is made from.  The program
prints, for each mark, the function's qualified name, the line, and the
instruction offsets of that line (from the interpreter's own line table), as
"mark NAME QUALNAME LINE OFFSETS,..."."""
import atexit
import ctypes
import dis
import re
import sys
import threading

rt_released = ctypes.CDLL('libcudart.so.13')   # calls release the GIL
rt_held = ctypes.PyDLL('libcudart.so.13')      # calls keep it
cthread = ctypes.CDLL(sys.argv[1])
for rt in (rt_released, rt_held):
    rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    rt.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
cthread.py_cthread_copy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
cthread.py_cthread_copy_at_exit.argtypes = [ctypes.c_void_p, ctypes.c_size_t]

H2D = 1
host = ctypes.create_string_buffer(1 << 16)
dev = ctypes.c_void_p()
check = rt_released.cudaMalloc(ctypes.byref(dev), 1 << 16)
assert check == 0, check


def released(n):
    assert rt_released.cudaMemcpy(dev, host, n, H2D) == 0  # at: released


def held(n):
    assert rt_held.cudaMemcpy(dev, host, n, H2D) == 0  # at: held


class Loader:
    def upload(self, n):
        for _ in range(3):
            assert rt_released.cudaMemcpy(dev, host, n, H2D) == 0  # at: method


def nested(k, n):
    if k == 0:
        assert rt_released.cudaMemcpy(dev, host, n, H2D) == 0  # at: deep
        return
    nested(k - 1, n)  # at: nested


def in_thread(n):
    assert rt_released.cudaMemcpy(dev, host, n, H2D) == 0  # at: thread


def from_c_thread(n):
    assert cthread.py_cthread_copy(dev, host, n) == 0  # at: cthread


def at_exit(n):
    assert rt_released.cudaMemcpy(dev, host, n, H2D) == 0  # at: atexit


def offsets_of_line(code, line):
    """Instruction offsets whose line is `line`, from the interpreter's own table."""
    starts = [(o, l) for o, l in dis.findlinestarts(code)]
    size = len(code.co_code)
    out = []
    for i, (o, l) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else size
        if l == line:
            out.extend(range(o, end, 2))
    return out


def report_marks():
    src = open(__file__).read().splitlines()
    codes = {c.co_name: c for c in (released.__code__, held.__code__, Loader.upload.__code__,
                                    nested.__code__, in_thread.__code__,
                                    from_c_thread.__code__, at_exit.__code__)}
    qual = {'released': 'released', 'held': 'held', 'upload': 'Loader.upload',
            'nested': 'nested', 'in_thread': 'in_thread', 'from_c_thread': 'from_c_thread',
            'at_exit': 'at_exit'}
    for i, text in enumerate(src, 1):
        m = re.search(r'# at: (\w+)$', text)
        if not m:
            continue
        mark = m.group(1)
        func = None
        for j in range(i, 0, -1):
            s = src[j - 1].strip()
            if s.startswith('def '):
                func = s[4:s.index('(')]
                break
        offs = offsets_of_line(codes[func], i)
        print('mark %s %s %d %s' % (mark, qual[func], i, ','.join(map(str, offs))))


report_marks()
released(101)
held(102)
Loader().upload(103)
nested(19, 104)        # 20 frames of nested() plus the module's
t = threading.Thread(target=in_thread, args=(105,))
t.start()
t.join()
from_c_thread(106)
atexit.register(at_exit, 107)
cthread.py_cthread_copy_at_exit(dev, 108)   # after the interpreter is finalized
