"""torch_train_pinned.py: a PyTorch training loop done right (elementwise
model: cuBLAS cannot run on the simulator). A loader thread produces batches
into pinned tensors (what DataLoader(pin_memory=True) does) and the loop
sends them with .to(dev, non_blocking=True); the weights are uploaded once;
the loss is accumulated on the device and read with .item() every 20 steps;
an evaluation pass every 20 steps counts correct predictions on the device
and reads the count once per pass; a checkpoint is taken once, at the end.
PyTorch's caching allocator keeps its segments until exit: saying so is fine.

TRUTH: none
ALLOW: leak(held-to-exit)
ALLOW: leak(caching-allocator)
ALLOW: fragmentation(caching-allocator)
"""
import queue
import threading

import torch

STEPS = 60
BATCH = (256, 1024)        # float32: 1 MiB
dev = torch.device('cuda')
torch.manual_seed(0)


def loader(q):
    g = torch.Generator().manual_seed(1)
    for _ in range(STEPS):
        q.put(torch.randn(*BATCH, generator=g).pin_memory())
    q.put(None)


q = queue.Queue(maxsize=4)
threading.Thread(target=loader, args=(q,), daemon=True).start()
w = torch.randn(BATCH[1]).to(dev)                     # @weights
total = torch.zeros((), device=dev)
step = 0
while True:
    batch = q.get()
    if batch is None:
        break
    x = batch.to(dev, non_blocking=True)              # @batch
    y = torch.tanh(x * w)
    loss = y.square().mean()
    total += loss.detach()
    w.sub_(1e-3 * y.mean(0))
    step += 1
    if step % 20 == 0:
        print('step %d loss %.4f' % (step, total.item() / 20))   # @loss_item
        total.zero_()
        with torch.no_grad():
            correct = torch.zeros((), device=dev, dtype=torch.long)
            for e in range(10):
                xe = torch.full(BATCH, float(e), device=dev)
                correct += (torch.tanh(xe * w) > 0).sum()
            print('eval correct %d' % correct.item())   # @eval_item
state = {'w': w.cpu()}                                # @ckpt
torch.cuda.synchronize()
print('done %d steps, checkpoint of %d floats' % (step, state['w'].numel()))
