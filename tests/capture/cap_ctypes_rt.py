"""cap_ctypes_rt.py: the CUDA runtime through Python's ctypes (CDLL opens it
RTLD_LOCAL and looks each function up with dlsym), run by the system's
python3 under the profiler: a device allocation, a copy each way with
cudaMemcpyAsync, a synchronization.  Prints every result."""
import ctypes

rt = ctypes.CDLL('libcudart.so.13')
N = 4096
H2D, D2H = 1, 2
host = (ctypes.c_ubyte * N)(*[(i * 7) & 0xff for i in range(N)])
back = (ctypes.c_ubyte * N)()
d = ctypes.c_void_p()
copy = rt.cudaMemcpyAsync
copy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                 ctypes.c_void_p]
print('rc_malloc', rt.cudaMalloc(ctypes.byref(d), ctypes.c_size_t(N)))
print('rc_h2d', copy(d, host, N, H2D, None))
print('rc_d2h', copy(back, d, N, D2H, None))
print('rc_sync', rt.cudaStreamSynchronize(None))
print('same', bytes(back) == bytes(host))
print('rc_free', rt.cudaFree(d))
