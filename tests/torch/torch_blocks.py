"""torch_blocks.py: PyTorch's caching allocator, block by block.

Truth: each of 24 steps uploads a batch (MARK: batch), computes activations
that are dropped at the step's end, and keeps one 256 KiB output tensor in a
list for a plot at the end (MARK: keep): 24 blocks taken at the keep line
that the program never lets go of (the interpreter returns them as it exits,
after the script's last line).  The activations' blocks are taken and
returned every step, mostly at addresses returned the step before.

With --profile-memory the loop runs under torch.profiler with
profile_memory=True and the script prints the device memory the profiler
saw: the same with and without xferprof, since the preload passes every
report of the allocator on to PyTorch's own."""
import sys

import torch

STEPS = 24
dev = torch.device('cuda')
torch.manual_seed(0)


def loop():
    kept = []
    for step in range(STEPS):
        x = torch.randn(256, 1024).to(dev)                      # MARK: batch
        h = torch.tanh(x) * 0.5
        y = h[:, :256] + 1.0
        kept.append(y * 1.0)                                     # MARK: keep
        del x, h, y
    torch.cuda.synchronize()
    return kept


if '--profile-memory' in sys.argv:
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        kept = loop()
    # The device's events only: the host's (the interpreter's and torch's
    # own allocations) vary from run to run by a few, with or without
    # xferprof (262-264 of them here).
    ev = [e for e in prof.events() if e.name == '[memory]' and e.device_memory_usage != 0]
    print('profiler: %d device memory events, device bytes %d' %
          (len(ev), sum(e.device_memory_usage for e in ev)))
else:
    kept = loop()
print('kept %d' % len(kept))
