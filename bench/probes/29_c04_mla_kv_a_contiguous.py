# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/8058 — DeepseekV2AttentionMLA.forward_normal_prepare split latent_cache into kv_a / k_pe and called `self.kv_a_layernorm(kv_a.contiguous())`, copying the strided kv_a piece every layer and step even though the RMSNorm kernel already accepts strided input; the fix passes `kv_a` directly.
import torch
import torch.nn as nn


class RMSNorm(nn.Module):
    """Row-wise RMSNorm; like sgl_kernel.rmsnorm it handles a strided last-dim-contiguous input."""

    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.eps = eps
        self.seen = []

    def forward(self, x):
        self.seen.append((x.is_contiguous(), x.untyped_storage().nbytes()))
        variance = x.pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(variance + self.eps) * self.weight


class DeepseekV2AttentionMLA(nn.Module):
    def __init__(self, hidden_size=32, num_heads=4, qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=8, kv_lora_rank=16):
        super().__init__()
        self.num_local_heads = num_heads
        self.qk_nope_head_dim = qk_nope_head_dim
        self.qk_rope_head_dim = qk_rope_head_dim
        self.qk_head_dim = qk_nope_head_dim + qk_rope_head_dim
        self.v_head_dim = v_head_dim
        self.kv_lora_rank = kv_lora_rank
        self.q_proj = nn.Linear(hidden_size, num_heads * self.qk_head_dim, bias=False)
        self.kv_a_proj_with_mqa = nn.Linear(hidden_size, kv_lora_rank + qk_rope_head_dim, bias=False)
        self.kv_a_layernorm = RMSNorm(kv_lora_rank)
        self.kv_b_proj = nn.Linear(kv_lora_rank, num_heads * (qk_nope_head_dim + v_head_dim), bias=False)

    def rotary_emb(self, positions, q_pe, k_pe):
        return q_pe, k_pe

    def forward_normal_prepare(self, positions, hidden_states):
        q = self.q_proj(hidden_states).view(-1, self.num_local_heads, self.qk_head_dim)
        latent_cache = self.kv_a_proj_with_mqa(hidden_states)

        _, q_pe = q.split([self.qk_nope_head_dim, self.qk_rope_head_dim], dim=-1)
        kv_a, _ = latent_cache.split([self.kv_lora_rank, self.qk_rope_head_dim], dim=-1)
        latent_cache = latent_cache.unsqueeze(1)
        kv_a = self.kv_a_layernorm(kv_a.contiguous())  # want: C
        kv = self.kv_b_proj(kv_a)
        kv = kv.view(-1, self.num_local_heads, self.qk_nope_head_dim + self.v_head_dim)
        k_nope = kv[..., : self.qk_nope_head_dim]
        v = kv[..., self.qk_nope_head_dim :]
        k_pe = latent_cache[:, :, self.kv_lora_rank :]
        q_pe, k_pe = self.rotary_emb(positions, q_pe, k_pe)
        q[..., self.qk_nope_head_dim :] = q_pe
        k = torch.empty_like(q)
        k[..., : self.qk_nope_head_dim] = k_nope
        k[..., self.qk_nope_head_dim :] = k_pe

        latent_cache[:, :, : self.kv_lora_rank] = kv_a.unsqueeze(1)
        latent_cache[:, :, self.kv_lora_rank :] = k_pe
        return q, k, v, latent_cache


class DeepseekV2AttentionMLAFixed(DeepseekV2AttentionMLA):
    def forward_normal_prepare(self, positions, hidden_states):
        q = self.q_proj(hidden_states).view(-1, self.num_local_heads, self.qk_head_dim)
        latent_cache = self.kv_a_proj_with_mqa(hidden_states)

        _, q_pe = q.split([self.qk_nope_head_dim, self.qk_rope_head_dim], dim=-1)
        kv_a, _ = latent_cache.split([self.kv_lora_rank, self.qk_rope_head_dim], dim=-1)
        latent_cache = latent_cache.unsqueeze(1)
        kv_a = self.kv_a_layernorm(kv_a)
        kv = self.kv_b_proj(kv_a)
        kv = kv.view(-1, self.num_local_heads, self.qk_nope_head_dim + self.v_head_dim)
        k_nope = kv[..., : self.qk_nope_head_dim]
        v = kv[..., self.qk_nope_head_dim :]
        k_pe = latent_cache[:, :, self.kv_lora_rank :]
        q_pe, k_pe = self.rotary_emb(positions, q_pe, k_pe)
        q[..., self.qk_nope_head_dim :] = q_pe
        k = torch.empty_like(q)
        k[..., : self.qk_nope_head_dim] = k_nope
        k[..., self.qk_nope_head_dim :] = k_pe

        latent_cache[:, :, : self.kv_lora_rank] = kv_a.unsqueeze(1)
        latent_cache[:, :, self.kv_lora_rank :] = k_pe
        return q, k, v, latent_cache


if __name__ == "__main__":
    torch.manual_seed(0)
    buggy = DeepseekV2AttentionMLA()
    fixed = DeepseekV2AttentionMLAFixed()
    fixed.load_state_dict(buggy.state_dict())
    h = torch.randn(6, 32)
    pos = torch.arange(6)

    with torch.no_grad():
        out_a = buggy.forward_normal_prepare(pos, h)
        out_b = fixed.forward_normal_prepare(pos, h)
    for a, b in zip(out_a, out_b):
        assert torch.allclose(a, b)

    # buggy: RMSNorm receives a freshly allocated contiguous copy of kv_a (storage == payload)
    # fixed: RMSNorm reads kv_a in place from the kv_a_proj_with_mqa output (storage > payload)
    payload = 6 * 16 * 4
    print("norm input (contiguous, storage bytes) buggy:", buggy.kv_a_layernorm.seen[-1], "fixed:", fixed.kv_a_layernorm.seen[-1], "payload:", payload)
    assert buggy.kv_a_layernorm.seen[-1] == (True, payload)
    assert fixed.kv_a_layernorm.seen[-1] == (False, 6 * 20 * 4)
