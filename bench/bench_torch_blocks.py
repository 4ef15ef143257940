"""bench_torch_blocks.py N: ns per CUDA tensor made and dropped in a Python
loop (one block handed out and taken back by PyTorch's caching allocator:
two reports to profilers, no CUDA call once the pool holds a segment).
Prints `ns_per_tensor X` (the best of 5 repetitions)."""
import sys
import time

import torch

N = int(sys.argv[1])
dev = torch.device('cuda')
torch.empty(256, device=dev)   # the pool's first segment
best = None
for _ in range(5):
    t0 = time.perf_counter()
    for _ in range(N):
        t = torch.empty(256, device=dev)
        del t
    ns = (time.perf_counter() - t0) * 1e9 / N
    best = ns if best is None or ns < best else best
print('ns_per_tensor %.0f' % best)
