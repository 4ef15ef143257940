"""torch_copies.py: one of each copy PyTorch makes, and the caching
allocator's device memory, for test_copies.py. Prints `name 0x...` lines
(addresses, sizes) that the test matches database rows against. Kernels do not
run on the simulator, so only what copies wrote is checked for content."""
import torch

N = 1 << 16                       # float32: 256 KiB
BIG = 64 << 20                    # bytes: one segment of its own

dev = torch.device('cuda')


def show(name, value):
    print('%s %#x' % (name, value))


a = torch.arange(N, dtype=torch.float32)
show('host', a.data_ptr())
show('nbytes', a.numel() * a.element_size())

x = a.to(dev)                                         # pageable, blocking
show('x', x.data_ptr())
p = a.pin_memory()                                    # cudaHostAlloc
show('pinned', p.data_ptr())
y = p.to(dev, non_blocking=True)                      # pinned, async
show('y', y.data_ptr())
z = a.to(dev, non_blocking=True)                      # pageable, async_pageable
show('z', z.data_ptr())
b = x.cpu()                                           # D2H pageable, blocking
show('back', b.data_ptr())
c = torch.empty(N).pin_memory()
show('pinned_dst', c.data_ptr())
c.copy_(y, non_blocking=True)                         # D2H into pinned, async
torch.cuda.synchronize()
x.copy_(b)                                            # copy_ H2D
s = x.sum().item()                                    # a kernel, then a 4-byte D2H
show('same', int(torch.equal(b, a) and torch.equal(c, a)))

big = torch.empty(BIG, dtype=torch.uint8, device=dev)
show('big', big.data_ptr())
del big
torch.cuda.empty_cache()                              # gives the segment back
show('done', 1)
