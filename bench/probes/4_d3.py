import torch
import torch.nn as nn


class Keep(nn.Module):
    def forward(self, scores, thresh: float):
        keep = scores > thresh
        return scores[keep]  # want: D
