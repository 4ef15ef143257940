#!/usr/bin/env python3
"""torch_transfers.py: the common host<->device transfer pitfalls of PyTorch
training code, one per function, for users with a real GPU:

    xferprof run -o run.db -- python3 examples/torch_transfers.py
    xferprof report run.db

What `xferprof report` should find (sites are PyTorch's internal frames,
under these functions in the Python stack):
  async-pageable    non_blocking=True from a tensor that is not pinned
                    (to_device_non_blocking_unpinned)
  sync-in-loop      loss.item() every step (log_loss_every_step)
  redundant-upload  the same weights uploaded every step (reupload_weights)
  round-trip        .cpu() then .cuda() of the same tensor (cpu_round_trip)
  small-copies      thousands of one-element tensors (many_tiny_tensors)
  leak              a list of CUDA tensors that only grows (keep_history)
Each step is an NVTX range "step N", so timelines in Nsight line up.

It cannot run without torch and a CUDA device; then it says so and exits 0.
"""

import sys

STEPS = 20
BATCH = (256, 1024)      # a float32 batch: 1 MiB
WEIGHTS = (1024, 1024)   # 4 MiB of weights
TINY = 2000              # one-element tensors uploaded one by one


def main():
    try:
        import torch
    except ImportError:
        print('torch_transfers.py: PyTorch is not installed; nothing to show')
        return 0
    if not torch.cuda.is_available():
        print('torch_transfers.py: no CUDA device available; nothing to show')
        return 0

    dev = torch.device('cuda')
    weights_cpu = torch.randn(*WEIGHTS)
    model_w = weights_cpu.to(dev)
    history = []

    def to_device_non_blocking_unpinned(batch_cpu):
        # Pitfall: non_blocking without pin_memory(); the copy is staged and
        # holds the host anyway.  Fix: batch_cpu.pin_memory() (or a
        # DataLoader with pin_memory=True).
        return batch_cpu.to(dev, non_blocking=True)

    def log_loss_every_step(loss):
        # Pitfall: .item() waits for the device every step.  Fix: accumulate
        # on the device and read it every N steps.
        return loss.item()

    def reupload_weights():
        # Pitfall: the same weights copied to the device every step.  Fix:
        # move the model once, outside the loop.
        return weights_cpu.to(dev)

    def cpu_round_trip(t):
        # Pitfall: to the host and back unchanged.  Fix: keep it on the device.
        return t.cpu().cuda()

    def many_tiny_tensors():
        # Pitfall: one copy per scalar.  Fix: build one tensor, copy once.
        return [torch.tensor([float(i)], device=dev) for i in range(TINY)]

    def keep_history(t):
        # Pitfall: keeping every step's output (with its graph) on the device.
        # Fix: history.append(t.detach().cpu()) or t.item() sparingly.
        history.append(t * 1.0)

    total = 0.0
    for step in range(STEPS):
        torch.cuda.nvtx.range_push('step %d' % step)
        batch_cpu = torch.randn(*BATCH)
        x = to_device_non_blocking_unpinned(batch_cpu)
        w = reupload_weights()
        y = torch.relu(x @ w) @ model_w.t()
        y = cpu_round_trip(y)
        loss = y.square().mean()
        total += log_loss_every_step(loss)
        keep_history(y)
        torch.cuda.nvtx.range_pop()

    tiny = many_tiny_tensors()
    torch.cuda.synchronize()
    print('mean loss %.4f, %d tiny tensors, %d tensors kept on the device'
          % (total / STEPS, len(tiny), len(history)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
