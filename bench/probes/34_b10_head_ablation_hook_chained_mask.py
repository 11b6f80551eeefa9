# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/133456 — assigning through chained masks (`t[mask_a][mask_b] = v`) is silently ignored because the first mask produces a copy; the reporter switched to a single indexing expression. Reconstructed as an attention head-ablation forward hook that edits the module output in place.
import torch
import torch.nn as nn


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, dim=32, n_heads=4):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = dim // n_heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.heads = nn.Identity()  # hook point: per-head outputs (B, H, T, Dh)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.n_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-2, -1) / self.head_dim ** 0.5, dim=-1)
        out = self.heads(att @ v).contiguous()
        return self.proj(out.transpose(1, 2).reshape(B, T, C))


class HeadAblation:
    """Zero the last-position output of selected heads (e.g. to test an induction circuit)."""

    def __init__(self, head_mask):
        self.head_mask = head_mask  # list[bool], one per head

    def __call__(self, module, inputs, output):
        output[:, self.head_mask][:, :, -1] = 0.0  # want: B
        return None


class HeadAblationFixed(HeadAblation):
    def __call__(self, module, inputs, output):
        output[:, self.head_mask, -1] = 0.0
        return None


def run_with_ablation(model, x, ablation):
    captured = {}

    def capture(module, inputs, output):
        captured["heads"] = output

    h1 = model.heads.register_forward_hook(ablation)
    h2 = model.heads.register_forward_hook(capture)
    try:
        y = model(x)
    finally:
        h1.remove()
        h2.remove()
    return y, captured["heads"]


if __name__ == "__main__":
    torch.manual_seed(0)
    model = MultiHeadSelfAttention()
    x = torch.randn(2, 5, 32)
    mask = [True, False, True, False]
    for cls in (HeadAblation, HeadAblationFixed):
        _, heads = run_with_ablation(model, x, cls(mask))
        ablated = bool((heads[:, mask, -1] == 0).all())
        print(f"{cls.__name__:18s} ablated heads zeroed at last position: {ablated}")
    _, heads = run_with_ablation(model, x, HeadAblation(mask))
    assert not (heads[:, mask, -1] == 0).all()
