"""torch_ranks.py: one rank of a data-parallel job as a first draft writes it
(torchrun sets RANK and LOCAL_RANK): the model and each batch go to
torch.device('cuda'), which is cuda:0 on every rank unless the script calls
torch.cuda.set_device(local_rank) first (with --set-device it does).  A few
steps of an elementwise model (cuBLAS cannot run on the simulator)."""
import os
import sys

import torch

local_rank = int(os.environ['LOCAL_RANK'])
if '--set-device' in sys.argv:
    torch.cuda.set_device(local_rank)
dev = torch.device('cuda')
w = torch.randn(1 << 18).to(dev)                       # MARK: weights
for step in range(5):
    x = torch.randn(1 << 18).pin_memory().to(dev, non_blocking=True)   # MARK: batch
    w.sub_(1e-3 * torch.tanh(x * w))
torch.cuda.synchronize()
print('rank %s on cuda:%d' % (os.environ['RANK'], torch.cuda.current_device()))
