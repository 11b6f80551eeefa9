import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2)

    def forward(self, x):
        y = self.fc(x)
        probs = y.softmax(-1).cpu().numpy()  # want: D
        return torch.from_numpy(probs)
