# VL304: `x.last_hidden_state` is an attribute of an argument (the caller's model output), not a
# long-lived buffer, and the result goes to a new name; in-place would corrupt the caller's tensor
# (open_clip hf_model.py:59)
import torch
from torch import nn


class MaxPooler(nn.Module):
    def forward(self, x, attention_mask: torch.Tensor) -> torch.Tensor:
        masked = x.last_hidden_state.masked_fill(attention_mask.unsqueeze(-1), -torch.inf)
        return masked.max(1).values
