"""torch_clip_validate.py: a PyTorch loop (elementwise model: cuBLAS cannot
run on the simulator) with hand-written gradient clipping and a validation
pass, both written the way that reads naturally and waits for the GPU. The
gradients of the 8 parameter tensors are computed by hand; clipping sums their
norms on the host, `p.grad.norm().item()` once per parameter (a norm kernel
before each read), every step. Every 25 steps a validation pass over 10
batches adds up each batch's correct predictions with
`(pred == y).sum().item()`. Around them, done right: batches from a
DataLoader(shuffle=True, pin_memory=True) sent with non_blocking=True, the
loss accumulated on the device and read every 25 steps.
PyTorch's caching allocator keeps its segments until exit: saying so is fine.

TRUTH: sync-in-loop @ norm
TRUTH: sync-in-loop @ val_acc
ALLOW: redundant-upload @ val_x
ALLOW: reupload-fresh @ val_x
ALLOW: redundant-upload @ val_y
ALLOW: reupload-fresh @ val_y
ALLOW: leak(held-to-exit)
ALLOW: leak(caching-allocator)
ALLOW: fragmentation(caching-allocator)
(norm: 8 waits a step, fixed by torch.nn.utils.clip_grad_norm_, which reduces on
the device; val_acc: 10 waits per pass, fixed by accumulating the count on the
device and reading it once per pass. The validation set goes up again each
pass, as a DataLoader does: 1.25 MiB every 25 steps is not worth a finding,
keeping it on the device would be right too. The loss read every 25 steps is
logging.)
"""
import torch
from torch.utils.data import DataLoader, TensorDataset

STEPS = 150
BATCH = 64
FEATURES = 512              # a batch: 64 x 512 float32 = 128 KiB
VAL_EVERY = 25
MAX_NORM = 1.0
dev = torch.device('cuda')
torch.manual_seed(0)

train = TensorDataset(torch.randn(BATCH * 60, FEATURES), torch.randint(0, 10, (BATCH * 60,)))
val = TensorDataset(torch.randn(BATCH * 10, FEATURES), torch.randint(0, 10, (BATCH * 10,)))
train_loader = DataLoader(train, batch_size=BATCH, shuffle=True, pin_memory=True, drop_last=True)
val_loader = DataLoader(val, batch_size=BATCH, pin_memory=True)
params = [torch.randn(FEATURES, device=dev) * 0.1 for _ in range(8)]


def forward(x):
    h = x
    for p in params:
        h = torch.tanh(h * p)
    return h[:, :10]


def clip_grads(grads):
    total = 0.0
    for g in grads:
        total += g.norm().item() ** 2                 # @norm
    coef = MAX_NORM / (total ** 0.5 + 1e-6)
    if coef < 1.0:
        for g in grads:
            g.mul_(coef)


def validate():
    correct = 0
    with torch.no_grad():
        for xv_cpu, yv_cpu in val_loader:
            xv = xv_cpu.to(dev, non_blocking=True)    # @val_x
            yv = yv_cpu.to(dev, non_blocking=True)    # @val_y
            pred = forward(xv).argmax(1)
            correct += (pred == yv).sum().item()      # @val_acc
    return correct / len(val)


running = torch.zeros((), device=dev)
step = 0
while step < STEPS:
    for x_cpu, y_cpu in train_loader:
        x = x_cpu.to(dev, non_blocking=True)          # @batch
        y = y_cpu.to(dev, non_blocking=True)          # @labels
        out = forward(x)
        err = out - torch.nn.functional.one_hot(y, 10).float()
        running += err.square().mean()
        # Hand-written gradients, one per parameter (elementwise, as the model)
        grads = [(err.mean() * x[0] * p).detach() for p in params]
        clip_grads(grads)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p.sub_(1e-3 * g)
        step += 1
        if step % VAL_EVERY == 0:
            print('step %d loss %.4f val acc %.3f'
                  % (step, running.item() / VAL_EVERY, validate()))   # @loss_item
            running.zero_()
        if step == STEPS:
            break
torch.cuda.synchronize()
