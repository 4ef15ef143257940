"""torch_accum_ema.py: a training loop in the shape of timm's train.py and
Hugging Face Accelerate's examples (elementwise model: cuBLAS cannot run on
the simulator): batches from a DataLoader with pin_memory=True moved with
non_blocking=True, gradient accumulation over 4 micro-batches, gradient
clipping (clip_grad_norm_, which keeps the norm on the device), SGD with
momentum and a LambdaLR warm-up then cosine schedule (the lr is a Python
float the scheduler computes on the host), and an exponential moving average
of the weights updated on the device after each optimizer step
(torch._foreach_lerp_, as timm's ModelEmaV3 does). The loss is accumulated
on the device and read every 25 optimizer steps, with the lr for the log line.
PyTorch's caching allocator keeps its segments until exit: saying so is fine.

TRUTH: none
ALLOW: leak(held-to-exit)
ALLOW: leak(caching-allocator)
ALLOW: fragmentation(caching-allocator)
(nothing crosses the bus but the batches, pinned and async, and one scalar
per 25 optimizer steps)
"""
import math

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

OPT_STEPS = 60
ACCUM = 4
LOG_EVERY = 25
BATCH, FEATURES, CLASSES = 64, 512, 16
dev = torch.device('cuda')
torch.manual_seed(0)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(FEATURES))
        self.bias = torch.nn.Parameter(torch.zeros(FEATURES))
        self.proto = torch.nn.Parameter(torch.randn(CLASSES, FEATURES) * 0.02)

    def forward(self, x):
        h = torch.tanh(x * self.scale + self.bias)
        return (h.unsqueeze(1) * self.proto).sum(-1)


model = Net().to(dev)
ema = [p.detach().clone() for p in model.parameters()]
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
warmup = 10


def lr_lambda(step):
    if step < warmup:
        return (step + 1) / warmup
    return 0.5 * (1 + math.cos(math.pi * (step - warmup) / (OPT_STEPS - warmup)))


sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)
data = TensorDataset(torch.randn(BATCH * 40, FEATURES),
                     torch.randint(0, CLASSES, (BATCH * 40,)))
loader = DataLoader(data, batch_size=BATCH, shuffle=True, pin_memory=True, drop_last=True)

running = torch.zeros((), device=dev)
opt_step = 0
micro = 0
while opt_step < OPT_STEPS:
    for x, y in loader:
        x = x.to(dev, non_blocking=True)
        y = y.to(dev, non_blocking=True)
        loss = F.cross_entropy(model(x), y) / ACCUM
        loss.backward()
        running += loss.detach()
        micro += 1
        if micro % ACCUM:
            continue
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        opt.zero_grad(set_to_none=True)
        with torch.no_grad():
            torch._foreach_lerp_(ema, [p.detach() for p in model.parameters()], 1 - 0.999)
        opt_step += 1
        if opt_step % LOG_EVERY == 0:
            print('step %d loss %.4f lr %.5f'
                  % (opt_step, running.item() / LOG_EVERY, sched.get_last_lr()[0]))
            running.zero_()
        if opt_step == OPT_STEPS:
            break
torch.cuda.synchronize()
print('done %d optimizer steps' % opt_step)
