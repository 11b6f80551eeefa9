# source: LibreYOLO/libreyolo https://github.com/LibreYOLO/libreyolo/pull/546 — The LibreSigLIP2 attention-pooling head built its query with `self.probe.repeat(batch_size, 1, 1)`, allocating and copying a batch_size x 1 x dim tensor of the learned probe on every forward pass. Review pointed out the reference uses `self.probe.expand(batch_size, -1, -1)`, a zero-cost view with the same semantics, and the head was changed to expand.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Siglip2MLP(nn.Module):
    def __init__(self, hidden_size: int, intermediate_size: int):
        super().__init__()
        self.fc1 = nn.Linear(hidden_size, intermediate_size)
        self.fc2 = nn.Linear(intermediate_size, hidden_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x), approximate="tanh"))


class Siglip2MultiheadAttentionPoolingHead(nn.Module):
    def __init__(self, hidden_size: int = 32, num_heads: int = 4, intermediate_size: int = 64, eps: float = 1e-6):
        super().__init__()
        self.num_heads = num_heads
        self.probe = nn.Parameter(torch.randn(1, 1, hidden_size))
        self.attention = nn.MultiheadAttention(hidden_size, num_heads, batch_first=True)
        self.layernorm = nn.LayerNorm(hidden_size, eps=eps)
        self.mlp = Siglip2MLP(hidden_size, intermediate_size)

    def _attend(self, query: torch.Tensor, key_value: torch.Tensor) -> torch.Tensor:
        batch, tgt_len, embed_dim = query.shape
        src_len = key_value.shape[1]
        num_heads = self.num_heads
        head_dim = embed_dim // num_heads
        w_q, w_k, w_v = self.attention.in_proj_weight.chunk(3, dim=0)
        b_q, b_k, b_v = self.attention.in_proj_bias.chunk(3, dim=0)
        q = F.linear(query, w_q, b_q).view(batch, tgt_len, num_heads, head_dim).transpose(1, 2)
        k = F.linear(key_value, w_k, b_k).view(batch, src_len, num_heads, head_dim).transpose(1, 2)
        v = F.linear(key_value, w_v, b_v).view(batch, src_len, num_heads, head_dim).transpose(1, 2)
        attn = torch.matmul(q, k.transpose(-1, -2)) / (head_dim**0.5)
        attn = torch.softmax(attn, dim=-1)
        out = torch.matmul(attn, v)
        out = out.transpose(1, 2).contiguous().view(batch, tgt_len, embed_dim)
        return F.linear(out, self.attention.out_proj.weight, self.attention.out_proj.bias)

    def forward(self, hidden_state: torch.Tensor) -> torch.Tensor:
        batch_size = hidden_state.shape[0]
        probe = self.probe.repeat(batch_size, 1, 1)  # want: C
        hidden_state = self._attend(probe, hidden_state)
        residual = hidden_state
        hidden_state = self.layernorm(hidden_state)
        hidden_state = residual + self.mlp(hidden_state)
        return hidden_state[:, 0]


class Siglip2MultiheadAttentionPoolingHeadFixed(Siglip2MultiheadAttentionPoolingHead):
    def forward(self, hidden_state: torch.Tensor) -> torch.Tensor:
        batch_size = hidden_state.shape[0]
        probe = self.probe.expand(batch_size, -1, -1)
        hidden_state = self._attend(probe, hidden_state)
        residual = hidden_state
        hidden_state = self.layernorm(hidden_state)
        hidden_state = residual + self.mlp(hidden_state)
        return hidden_state[:, 0]


if __name__ == "__main__":
    torch.manual_seed(0)
    head = Siglip2MultiheadAttentionPoolingHead().eval()
    fixed = Siglip2MultiheadAttentionPoolingHeadFixed().eval()
    fixed.load_state_dict(head.state_dict())
    x = torch.randn(6, 10, 32)

    seen = {}
    for name, mod in (("old", head), ("new", fixed)):
        orig = mod._attend

        def spy(query, key_value, _orig=orig, _name=name):
            seen[_name] = query
            return _orig(query, key_value)

        mod._attend = spy
    with torch.no_grad():
        a, b = head(x), fixed(x)
    assert torch.allclose(a, b, atol=1e-6)
    assert seen["old"].data_ptr() != head.probe.data_ptr()  # per-forward copy of the probe
    assert seen["new"].data_ptr() == fixed.probe.data_ptr()
    assert seen["old"].untyped_storage().nbytes() == 6 * seen["new"].untyped_storage().nbytes()
    print("ok")
