import torch
from torch import nn

model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
data = torch.randn(1024, 8, device="cuda")
target = torch.randn(1024, 1, device="cuda")
for step in range(100):
    idx = torch.randint(0, 1024, (32,), device="cuda")
    loss = nn.functional.mse_loss(model(data[idx]), target[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if loss.item() < 1e-3:  # want: D
        break
