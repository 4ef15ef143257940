"""torch_data_on_gpu.py: a small-dataset training script in the style of
Keller Jordan's airbench / hlb-CIFAR10, which load the whole training set
onto the GPU once and never touch the host again: the uint8 images are moved
with one .to(dev), normalised on the device, and each epoch draws a
torch.randperm on the device, indexes batches out of the resident tensor and
flips half of them at random, all on the device. Labels live on the device
too. The loss is summed on the device and read once per epoch; the accuracy
of the final evaluation pass is read once at the end.
PyTorch's caching allocator keeps its segments until exit: saying so is fine.

TRUTH: none
ALLOW: leak(held-to-exit)
ALLOW: leak(caching-allocator)
ALLOW: fragmentation(caching-allocator)
(one upload of the dataset, one read per epoch: nothing to fix)
"""
import torch
import torch.nn.functional as F

EPOCHS = 8
N, BATCH = 8192, 256
C, H, W, CLASSES = 3, 32, 32, 10
dev = torch.device('cuda')
torch.manual_seed(0)

images_cpu = torch.randint(0, 256, (N, H, W, C), dtype=torch.uint8)   # as loaded from disk
labels_cpu = torch.randint(0, CLASSES, (N,))
images = images_cpu.to(dev)                                          # @dataset
labels = labels_cpu.to(dev)
mean = torch.tensor([0.4914, 0.4822, 0.4465], device=dev) * 255
std = torch.tensor([0.2470, 0.2435, 0.2616], device=dev) * 255
images = ((images.float() - mean) / std).permute(0, 3, 1, 2).contiguous()

w = (torch.randn(C, H, W, device=dev) * 0.01).requires_grad_()
proto = (torch.randn(CLASSES, C * H * W, device=dev) * 0.01).requires_grad_()
opt = torch.optim.SGD([w, proto], lr=0.2, momentum=0.9, nesterov=True)


def forward(x):
    h = torch.tanh(x * w).flatten(1)
    return (h.unsqueeze(1) * proto).sum(-1)


for epoch in range(EPOCHS):
    perm = torch.randperm(N, device=dev)
    total = torch.zeros((), device=dev)
    for i in range(N // BATCH):
        idx = perm[i * BATCH:(i + 1) * BATCH]
        x, y = images[idx], labels[idx]
        flip = torch.rand(BATCH, 1, 1, 1, device=dev) < 0.5
        x = torch.where(flip, x.flip(-1), x)
        loss = F.cross_entropy(forward(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        total += loss.detach()
    print('epoch %d loss %.4f' % (epoch, total.item() / (N // BATCH)))

with torch.no_grad():
    correct = torch.zeros((), device=dev)
    for i in range(N // BATCH):
        x, y = images[i * BATCH:(i + 1) * BATCH], labels[i * BATCH:(i + 1) * BATCH]
        correct += (forward(x).argmax(1) == y).sum()
    print('train accuracy %.4f' % (correct.item() / N))
