"""torch_pe_attribute.py: a sequence model whose sinusoidal position table
is a plain attribute made in __init__ (self.pe = ...), not a registered
buffer, so model.to(dev) leaves it on the CPU, and forward() moves the rows
it needs with self.pe[:T].to(x.device) on every call: the same 256 KiB
uploaded each step, a pattern found in many repositories' positional
encodings and attention masks. The model is elementwise (a token mixer
without matmuls: cuBLAS cannot run on the simulator). Batches come from a
pinned DataLoader with non_blocking=True; the loss is read every 20 steps.
PyTorch's caching allocator keeps its segments until exit: saying so is fine.

TRUTH: redundant-upload @ pe
ALLOW: reupload-fresh @ pe
ALLOW: leak(held-to-exit)
ALLOW: leak(caching-allocator)
ALLOW: fragmentation(caching-allocator)
(the fix is register_buffer('pe', ...) so the table moves with the model
once; told as reupload-fresh, "keep the GPU tensor", it is the same problem
under its other name; the copy blocks too, .to() without non_blocking, but
that is the same copy: one finding)
"""
import math

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

STEPS = 120
BATCH, T, D, CLASSES = 16, 128, 512, 8
dev = torch.device('cuda')
torch.manual_seed(0)


def sinusoids(length, dim):
    pos = torch.arange(length, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    pe = torch.zeros(length, dim)
    pe[:, 0::2] = torch.sin(pos * freq)
    pe[:, 1::2] = torch.cos(pos * freq)
    return pe


class Mixer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pe = sinusoids(512, D)                        # not register_buffer
        self.gate = torch.nn.Parameter(torch.ones(D))
        self.mix = torch.nn.Parameter(torch.full((T, 1), 1.0 / T))
        self.head = torch.nn.Parameter(torch.randn(CLASSES, D) * 0.02)

    def forward(self, x):
        x = x + self.pe[:x.shape[1]].to(x.device)          # @pe
        h = torch.tanh(x * self.gate)
        pooled = (h * self.mix).sum(1)
        return (pooled.unsqueeze(1) * self.head).sum(-1)


model = Mixer().to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
data = TensorDataset(torch.randn(BATCH * 30, T, D), torch.randint(0, CLASSES, (BATCH * 30,)))
loader = DataLoader(data, batch_size=BATCH, shuffle=True, pin_memory=True, drop_last=True)

running = torch.zeros((), device=dev)
step = 0
while step < STEPS:
    for x, y in loader:
        x = x.to(dev, non_blocking=True)
        y = y.to(dev, non_blocking=True)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        running += loss.detach()
        step += 1
        if step % 20 == 0:
            print('step %d loss %.4f' % (step, running.item() / 20))
            running.zero_()
        if step == STEPS:
            break
torch.cuda.synchronize()
