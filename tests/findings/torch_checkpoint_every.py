"""torch_checkpoint_every.py: a long PyTorch run (elementwise model: cuBLAS
cannot run on the simulator) with the usual bookkeeping done the usual,
sound way. Batches come from a DataLoader(shuffle=True, pin_memory=True) and
go up with .to(dev, non_blocking=True); the parameters live on the GPU from
the start; the loss is accumulated on the device and read with .item() every
50 steps; every 100 steps (15 times) a checkpoint copies the state to the CPU with
`{k: v.cpu() for k, v in model.items()}` and serializes it with torch.save.
PyTorch's caching allocator keeps its segments until exit: saying so is fine.

TRUTH: none
ALLOW: leak(held-to-exit)
ALLOW: leak(caching-allocator)
ALLOW: fragmentation(caching-allocator)
(the loss read waits once per 50 steps and the checkpoint once per 100, its
six downloads back to back: both are the "every N steps" the rules ask for;
shuffled batches never repeat, so nothing is redundant)
"""
import io

import torch
from torch.utils.data import DataLoader, TensorDataset

STEPS = 1500
BATCH = 32
FEATURES = 1024             # a batch: 32 x 1024 float32 = 128 KiB
LOG_EVERY = 50
CKPT_EVERY = 100
dev = torch.device('cuda')
torch.manual_seed(0)

data = TensorDataset(torch.randn(BATCH * 150, FEATURES), torch.randint(0, 10, (BATCH * 150,)))
loader = DataLoader(data, batch_size=BATCH, shuffle=True, pin_memory=True, drop_last=True)
model = {
    'embed': torch.randn(FEATURES, device=dev),
    'scale1': torch.ones(FEATURES, device=dev),
    'bias1': torch.zeros(FEATURES, device=dev),
    'scale2': torch.ones(FEATURES, device=dev),
    'bias2': torch.zeros(FEATURES, device=dev),
    'head': torch.randn(10, device=dev),
    'class_emb': torch.randn(10, FEATURES, device=dev),   # 40 KiB
    'mixer': torch.randn(BATCH, FEATURES, device=dev),    # 128 KiB
}
total = torch.zeros((), device=dev)
checkpoints = []
step = 0
while step < STEPS:
    for x_cpu, y_cpu in loader:
        x = x_cpu.to(dev, non_blocking=True)          # @batch
        y = y_cpu.to(dev, non_blocking=True)          # @labels
        h = torch.tanh(x * model['embed'] * model['scale1'] + model['bias1'])
        h = torch.relu(h * model['scale2'] + model['bias2']) * model['mixer']
        h = h + model['class_emb'][y]
        logits = h[:, :10] * model['head']
        loss = (logits - y.unsqueeze(1).float()).square().mean()
        total += loss.detach()
        with torch.no_grad():
            for p in model.values():
                p.sub_(1e-4 * p.sign())
        step += 1
        if step % LOG_EVERY == 0:
            print('step %d loss %.4f' % (step, total.item() / LOG_EVERY))   # @loss_item
            total.zero_()
        if step % CKPT_EVERY == 0:
            state = {k: v.cpu() for k, v in model.items()}                 # @ckpt
            buf = io.BytesIO()
            torch.save({'step': step, 'model': state}, buf)
            checkpoints.append(buf.getbuffer().nbytes)
        if step == STEPS:
            break
torch.cuda.synchronize()
print('%d checkpoints, %d bytes each' % (len(checkpoints), checkpoints[-1]))
