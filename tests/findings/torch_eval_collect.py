"""torch_eval_collect.py: a PyTorch training loop (elementwise model: cuBLAS
cannot run on the simulator) with an evaluation pass every 25 steps, written
the usual sound way. Batches come from a pinned DataLoader with
non_blocking=True; the loss is accumulated on the device and read every 25
steps; each evaluation pass collects its 8 batches' predicted classes in a
list of CUDA tensors, concatenates them and reads them once (.cpu()) to
score on the host. The list lives for one pass and is dropped at the next
(the last pass's list is still referenced when the script ends).
PyTorch's caching allocator keeps its segments until exit: saying so is fine.

TRUTH: none
ALLOW: redundant-upload @ val
ALLOW: reupload-fresh @ val
ALLOW: leak(held-to-exit)
ALLOW: leak(caching-allocator)
ALLOW: fragmentation(caching-allocator)
(the evaluation's list grows within a pass and is let go: no leak; one read
per pass and one per 25 steps are the "every N steps" the rules ask for; the
validation batches are the same bytes every pass, 1 MiB that could stay on
the device: saying so is right, not required)
"""
import torch
from torch.utils.data import DataLoader, TensorDataset

STEPS = 200
EVAL_EVERY = 25
EVAL_BATCHES = 8
BATCH, FEATURES, CLASSES = 64, 512, 16
dev = torch.device('cuda')
torch.manual_seed(0)

train = DataLoader(TensorDataset(torch.randn(BATCH * 50, FEATURES),
                                 torch.randint(0, CLASSES, (BATCH * 50,))),
                   batch_size=BATCH, shuffle=True, pin_memory=True, drop_last=True)
val_x = torch.randn(EVAL_BATCHES, BATCH, FEATURES).pin_memory()
val_y = torch.randint(0, CLASSES, (EVAL_BATCHES * BATCH,))
w = torch.randn(FEATURES, device=dev) * 0.01
proto = torch.randn(CLASSES, FEATURES, device=dev)


def forward(x):
    h = torch.tanh(x * w)
    return (h.unsqueeze(1) * proto).sum(-1)         # logits, elementwise


def evaluate():
    preds = []
    for i in range(EVAL_BATCHES):
        x = val_x[i].to(dev, non_blocking=True)     # @val
        preds.append(forward(x).argmax(1))
    return torch.cat(preds).cpu()


running = torch.zeros((), device=dev)
step = 0
accuracy = []
while step < STEPS:
    for x, y in train:
        x = x.to(dev, non_blocking=True)
        y = y.to(dev, non_blocking=True)
        logits = forward(x)
        loss = (logits.logsumexp(1) - logits.gather(1, y[:, None]).squeeze(1)).mean()
        w -= 1e-3 * torch.tanh(loss) * w             # a stand-in update, on the device
        running += loss.detach()
        step += 1
        if step % EVAL_EVERY == 0:
            print('step %d loss %.4f' % (step, running.item() / EVAL_EVERY))
            running.zero_()
            accuracy.append(float((evaluate() == val_y).float().mean()))
        if step == STEPS:
            break
torch.cuda.synchronize()
print('evaluations %d' % len(accuracy))
