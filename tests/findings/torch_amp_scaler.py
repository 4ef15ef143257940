"""torch_amp_scaler.py: a PyTorch training loop with automatic mixed
precision's GradScaler (elementwise model: cuBLAS cannot run on the
simulator). Batches are pinned and sent with non_blocking=True, the loss is
accumulated on the device and read every 25 steps. What the user does not
see: GradScaler.step() reads the found-inf flags with .item() to decide
whether to apply the optimizer step, so the host waits for the GPU every
step, at the user's scaler.step(opt) line.

TRUTH: sync-in-loop @ scaler_step
ALLOW: leak(held-to-exit)
ALLOW: leak(caching-allocator)
ALLOW: fragmentation(caching-allocator)
"""
import torch

STEPS = 50
dev = torch.device('cuda')
torch.manual_seed(0)
w = torch.nn.Parameter(torch.randn(1024, device=dev))
opt = torch.optim.SGD([w], lr=1e-3)
scaler = torch.amp.GradScaler('cuda')
total = torch.zeros((), device=dev)
host = [torch.empty(256, 1024).pin_memory() for _ in range(2)]
for step in range(STEPS):
    batch = host[step % 2]
    batch.normal_()
    x = batch.to(dev, non_blocking=True)              # @batch
    loss = torch.tanh(x * w).square().mean()
    scaler.scale(loss).backward()
    scaler.step(opt)                                  # @scaler_step
    scaler.update()
    opt.zero_grad(set_to_none=True)
    total += loss.detach()
    if step % 25 == 24:
        print('step %d loss %.4f' % (step + 1, total.item() / 25))   # @loss_item
        total.zero_()
torch.cuda.synchronize()
print('done')
