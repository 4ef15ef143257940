"""torch_loss_history.py: a tutorial-style training loop that keeps its
losses for a plot at the end: history.append(loss), the loss tensor itself
rather than loss.item() or loss.detach(). The PyTorch FAQ's "don't
accumulate history across your training loop": each kept loss holds its
autograd graph and a block of device memory, so device memory held by the
loss line grows every step for the whole run. The rest is sound: pinned
DataLoader, non_blocking uploads, a running loss on the device read every
50 steps, and one torch.stack(history).cpu() at the end for the plot.
PyTorch's caching allocator keeps its other segments until exit: saying so
is fine.

TRUTH: leak(growing) @ loss
ALLOW: leak(held-to-exit)
ALLOW: leak(caching-allocator)
ALLOW: fragmentation(caching-allocator)
(the leak is made at the line that makes the kept tensors, the loss line;
the list is the reason they stay)
"""
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

STEPS = 300
BATCH, FEATURES, CLASSES = 32, 256, 8
dev = torch.device('cuda')
torch.manual_seed(0)

scale = torch.ones(FEATURES, device=dev, requires_grad=True)
proto = (torch.randn(CLASSES, FEATURES, device=dev) * 0.02).requires_grad_()
opt = torch.optim.Adam([scale, proto], lr=1e-3)
data = TensorDataset(torch.randn(BATCH * 60, FEATURES),
                     torch.randint(0, CLASSES, (BATCH * 60,)))
loader = DataLoader(data, batch_size=BATCH, shuffle=True, pin_memory=True, drop_last=True)

history = []
running = torch.zeros((), device=dev)
step = 0
while step < STEPS:
    for x, y in loader:
        x = x.to(dev, non_blocking=True)
        y = y.to(dev, non_blocking=True)
        logits = (torch.tanh(x * scale).unsqueeze(1) * proto).sum(-1)
        loss = F.cross_entropy(logits, y)                 # @loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append(loss)
        running += loss.detach()
        step += 1
        if step % 50 == 0:
            print('step %d loss %.4f' % (step, running.item() / 50))
            running.zero_()
        if step == STEPS:
            break
curve = torch.stack(history).detach().cpu()
print('plotted %d points' % len(curve))
