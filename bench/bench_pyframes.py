"""bench_pyframes.py: ns per cudaMemcpyAsync made from Python with DEPTH Python frames on the stack.

    python bench_pyframes.py DEPTH CALLS REPS

8 bytes, pinned host memory to device, on a stream, as bench_overhead.c
does from C.  The runtime is the libcudart.so.13 LD_LIBRARY_PATH finds
(bench/'s stub, whose calls return at once), loaded into the global scope so
that the copy resolves like a program's call: to the preload's hook when it
is there, to the runtime otherwise.  Prints "ns_per_call N", the best of
REPS repetitions."""
import ctypes
import sys
import time

depth, calls, reps = (int(a) for a in sys.argv[1:4])
ctypes.CDLL('libcudart.so.13', mode=ctypes.RTLD_GLOBAL)
rt = ctypes.CDLL(None)   # the global scope: the preload first, when loaded
rt.cudaMemcpyAsync.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                               ctypes.c_void_p]
host, dev, stream = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
assert rt.cudaMallocHost(ctypes.byref(host), ctypes.c_size_t(8)) == 0
assert rt.cudaMalloc(ctypes.byref(dev), ctypes.c_size_t(8)) == 0
assert rt.cudaStreamCreate(ctypes.byref(stream)) == 0
copy = rt.cudaMemcpyAsync


def loop(n):
    for _ in range(n):
        copy(dev, host, 8, 1, stream)


def nest(k, n):
    """k - 2 frames of nest(), then the loop's: with the module's, k frames."""
    if k <= 3:
        return loop(n)
    return nest(k - 1, n)


best = None
for _ in range(reps):
    t0 = time.perf_counter_ns()
    nest(depth, calls) if depth > 2 else loop(calls)
    ns = (time.perf_counter_ns() - t0) / calls
    best = ns if best is None or ns < best else best
print('ns_per_call %.1f' % best)
