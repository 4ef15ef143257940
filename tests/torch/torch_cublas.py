"""torch_cublas.py: a matmul, which needs cuBLAS, after an upload; cuBLAS
cannot run on the simulator, so this must stop with the simulator's message
naming what is missing (test_cublas.py)."""
import torch

x = torch.ones(64, 64).to('cuda')
print('uploaded', flush=True)
y = x @ x
torch.cuda.synchronize()
print('matmul returned')
