# source: sgl-project/sglang PR #1261 ("Transpose mla weight offline") — DeepSeek-V2 MLA attention split kv_b_proj.weight into w_kc/w_vc and transposed them into contiguous copies inside every forward; the PR does it once after weight loading to "boost performance slightly and reduce runtime cuda memory usage".
import torch
from torch import nn


class DeepseekV2AttentionMLA(nn.Module):
    def __init__(self, num_heads=4, qk_nope_head_dim=16, v_head_dim=16, kv_lora_rank=32, hidden=64):
        super().__init__()
        self.num_heads, self.kv_lora_rank = num_heads, kv_lora_rank
        self.qk_nope_head_dim, self.v_head_dim = qk_nope_head_dim, v_head_dim
        self.q_proj = nn.Linear(hidden, num_heads * qk_nope_head_dim, bias=False)
        self.kv_a_proj = nn.Linear(hidden, kv_lora_rank, bias=False)
        self.kv_b_proj = nn.Linear(kv_lora_rank, num_heads * (qk_nope_head_dim + v_head_dim), bias=False)
        self.o_proj = nn.Linear(num_heads * v_head_dim, hidden, bias=False)
        self.w_kc = None
        self.w_vc = None

    def _latent_attention(self, q_latent, kv_latent):
        scores = torch.einsum("thc,sc->hts", q_latent, kv_latent) / q_latent.shape[-1] ** 0.5
        return torch.einsum("hts,sc->thc", scores.softmax(-1), kv_latent)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        t = hidden_states.shape[0]
        q_nope = self.q_proj(hidden_states).view(t, self.num_heads, self.qk_nope_head_dim)
        kv_latent = self.kv_a_proj(hidden_states)
        w_kc, w_vc = self.kv_b_proj.weight.unflatten(
            0, (-1, self.qk_nope_head_dim + self.v_head_dim)
        ).split([self.qk_nope_head_dim, self.v_head_dim], dim=1)
        q_latent = torch.bmm(q_nope.transpose(0, 1), w_kc).transpose(0, 1)  # maybe: C (w_kc is a strided slice of the weight; bmm may copy it)
        attn_output = self._latent_attention(q_latent, kv_latent)
        w_vc_t = w_vc.transpose(1, 2).contiguous()  # want: C
        out = torch.bmm(attn_output.transpose(0, 1), w_vc_t)
        return self.o_proj(out.transpose(0, 1).reshape(t, -1))

    def post_load_weights(self):
        w_kc, w_vc = self.kv_b_proj.weight.detach().unflatten(
            0, (-1, self.qk_nope_head_dim + self.v_head_dim)
        ).split([self.qk_nope_head_dim, self.v_head_dim], dim=1)
        self.w_kc = w_kc.transpose(1, 2).contiguous().transpose(1, 2)  # once, at load time: fine
        self.w_vc = w_vc.contiguous().transpose(1, 2)

    def forward_fixed(self, hidden_states: torch.Tensor) -> torch.Tensor:
        t = hidden_states.shape[0]
        q_nope = self.q_proj(hidden_states).view(t, self.num_heads, self.qk_nope_head_dim)
        kv_latent = self.kv_a_proj(hidden_states)
        q_latent = torch.bmm(q_nope.transpose(0, 1), self.w_kc).transpose(0, 1)
        attn_output = self._latent_attention(q_latent, kv_latent)
        out = torch.bmm(attn_output.transpose(0, 1), self.w_vc)
        return self.o_proj(out.transpose(0, 1).reshape(t, -1))


if __name__ == "__main__":
    torch.manual_seed(0)
    attn = DeepseekV2AttentionMLA()
    attn.post_load_weights()
    x = torch.randn(5, 64)
    with torch.no_grad():
        assert torch.allclose(attn(x), attn.forward_fixed(x), atol=1e-5)
    w_vc = attn.kv_b_proj.weight.unflatten(0, (4, 32)).split([16, 16], dim=1)[1]
    assert w_vc.transpose(1, 2).contiguous().data_ptr() != attn.kv_b_proj.weight.data_ptr()  # a new copy each forward
    print("ok: the per-forward transpose().contiguous() of w_vc is hoistable to load time")
