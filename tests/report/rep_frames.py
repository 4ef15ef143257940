"""rep_frames.py: one copy from known Python functions through ctypes, for the
stack_frames view (test_frames.py): main() calls upload(), which copies 23456
bytes host to device with cudaMemcpy.  The driver finds each line by the
marker comment on it."""
import ctypes

rt = ctypes.CDLL('libcudart.so.13')
rt.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
rt.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
host = ctypes.create_string_buffer(23456)
dev = ctypes.c_void_p()
assert rt.cudaMalloc(ctypes.byref(dev), 23456) == 0


def upload(n):
    assert rt.cudaMemcpy(dev, host, n, 1) == 0  # FRAMES_PY_COPY


def main():
    upload(23456)  # FRAMES_PY_CALL


main()  # FRAMES_PY_MAIN
