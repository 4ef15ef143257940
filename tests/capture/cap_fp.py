"""cap_fp.py: the content fingerprints docs/schema.md describes, computed here
from the bytes a test program copied, to check copies.fingerprint value for
value.  XXH3 comes from the system's libxxhash (the library the preload uses)
through ctypes; without it, have() is False and drivers check only equality
and difference of fingerprints."""

import ctypes

THRESHOLD = 64 * 1024     # XP_FP_THRESHOLD
BLOCKS = 16               # XP_FP_BLOCKS
BLOCK = 256               # XP_FP_BLOCK

_lib = None
try:
    _lib = ctypes.CDLL('libxxhash.so.0')
    _lib.XXH3_64bits.restype = ctypes.c_uint64
    _lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    _lib.XXH3_64bits_withSeed.restype = ctypes.c_uint64
    _lib.XXH3_64bits_withSeed.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
except OSError:
    _lib = None


def have():
    return _lib is not None


def xxh3(data, seed=None):
    if seed is None:
        return _lib.XXH3_64bits(bytes(data), len(data))
    return _lib.XXH3_64bits_withSeed(bytes(data), len(data), seed)


def sample_offsets(n):
    """Where the sampled blocks of an n-byte copy start."""
    return [(n - BLOCK) * i // (BLOCKS - 1) for i in range(BLOCKS)]


def expected(data, full=False):
    """(fingerprint, kind) of a copy of `data` (the bytes as copied, rows laid
    end to end) at the default setting, or with --fingerprint=full."""
    n = len(data)
    if full or n <= THRESHOLD:
        return xxh3(data), 'full'
    blocks = b''.join(bytes(data[o:o + BLOCK]) for o in sample_offsets(n))
    return xxh3(blocks, n), 'sampled'
