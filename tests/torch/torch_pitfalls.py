"""torch_pitfalls.py: the transfer pitfalls of examples/torch_transfers.py,
each on its own marked line, with elementwise work only (matmul needs cuBLAS,
which cannot run on the simulator). Run by test_pitfalls.py under
`xferprof run --sim`; the `# MARK: name` comments name the lines a finding
must point at once reports show Python frames."""
import sys

import torch

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
BATCH = (256, 1024)      # a float32 batch: 1 MiB
WEIGHTS = (1024, 1024)   # 4 MiB of weights
TINY = 2000

dev = torch.device('cuda')
torch.manual_seed(0)
weights_cpu = torch.randn(*WEIGHTS)
model_w = weights_cpu.to(dev)          # MARK: model_upload
history = []


def to_device_non_blocking_unpinned(batch_cpu):
    return batch_cpu.to(dev, non_blocking=True)    # MARK: async_pageable


def to_device_pageable(batch_cpu):
    return batch_cpu.to(dev)                       # MARK: pageable_to


def reupload_weights():
    return weights_cpu.to(dev)                     # MARK: redundant_upload


def cpu_round_trip(t):
    back = t.cpu()                                 # MARK: round_trip_down
    return back.to(dev)                            # MARK: round_trip_up


def log_loss_every_step(loss):
    return loss.item()                             # MARK: item


def keep_history(t):
    history.append(t * 1.0)                        # MARK: leak


total = 0.0
for step in range(STEPS):
    torch.cuda.nvtx.range_push('step %d' % step)
    batch_cpu = torch.randn(*BATCH)
    x = to_device_non_blocking_unpinned(batch_cpu)
    x2 = to_device_pageable(batch_cpu)
    w = reupload_weights()
    y = torch.relu(x + x2) * w[:BATCH[0]]
    y = cpu_round_trip(y)
    loss = y.square().mean()
    total += log_loss_every_step(loss)
    keep_history(y)
    torch.cuda.nvtx.range_pop()

tiny = [torch.tensor([float(i)], device=dev) for i in range(TINY)]  # MARK: tiny
torch.cuda.synchronize()
print('steps %d tiny %d kept %d' % (STEPS, len(tiny), len(history)))
