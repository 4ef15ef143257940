"""torch_caching.py: a training loop as PyTorch's caching allocator sees it.

Truth: every step allocates activations of a size that cycles over four
steps (1, 2, 3, 4 MiB of scratch beside a 512 KiB batch) and frees them; the
caching allocator takes its segments from cudaMalloc (cuMemCreate with
expandable segments) in the first steps and then reuses them, and an
evaluation pass at the end takes one larger buffer.  Nothing leaks: every
segment is held until exit because the allocator keeps it, which the report
must call a caching allocator, not a leak.  With --leak every step also keeps
a 1 MiB tensor in a list (the classic "append the loss tensor" mistake): that
leak grows through the run.  No cuBLAS (the simulator has none): elementwise
work only."""
import sys

import torch

STEPS = 40
leak = '--leak' in sys.argv
dev = torch.device('cuda')
torch.manual_seed(0)
kept = []
for step in range(STEPS):
    x = torch.randn(128, 1024).to(dev)
    scratch = torch.empty((step % 4 + 1) << 18, device=dev)   # 1..4 MiB of float32
    y = torch.relu(x + 1.0) * 2.0
    if leak:
        kept.append(torch.empty(1 << 18, device=dev))
    loss = float(y.sum().item())
    del scratch, y, x
evaluation = torch.empty(8 << 20, device=dev)                 # 32 MiB for the evaluation pass
del evaluation
torch.cuda.synchronize()
print('steps %d kept %d' % (STEPS, len(kept)))
