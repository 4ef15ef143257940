"""torch_train_pitfalls.py: a first-draft PyTorch training loop with the
usual transfer problems: each batch is built on the CPU and sent with
.to(dev, non_blocking=True) without pinning (the copy is staged and blocks),
the frozen embedding weights are sent to the device every step, the loss is
read with .item() every step, and every step's output is kept in a list of
CUDA tensors for a plot at the end, so device memory grows every step. PyTorch's
caching allocator keeps its other segments until exit: saying so is fine.

TRUTH: async-pageable @ batch
TRUTH: redundant-upload @ emb
TRUTH: sync-in-loop @ item
TRUTH: leak(growing) @ keep
ALLOW: leak(held-to-exit)
ALLOW: leak(caching-allocator)
ALLOW: fragmentation(caching-allocator)
"""
import torch

STEPS = 40
BATCH = (256, 1024)        # float32: 1 MiB
dev = torch.device('cuda')
torch.manual_seed(0)
emb_cpu = torch.randn(BATCH[1], 256)                  # 1 MiB, never changes
outputs = []
running = 0.0
for step in range(STEPS):
    batch = torch.randn(*BATCH)
    x = batch.to(dev, non_blocking=True)              # @batch
    emb = emb_cpu.to(dev)                             # @emb
    y = torch.tanh(x[:, :256] * emb[:256])
    loss = y.square().mean()
    running += loss.item()                            # @item
    outputs.append(y * 1.0)                           # @keep
    if step % 10 == 9:
        print('step %d loss %.4f' % (step + 1, running / 10))
        running = 0.0
torch.cuda.synchronize()
print('kept %d outputs' % len(outputs))
