# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/1261 — DeepseekV2AttentionMLA.forward re-split kv_b_proj.weight into w_kc/w_vc on every call and passed `w_vc.transpose(1, 2).contiguous()` to the value bmm, copying the whole absorbed weight each forward; the fix ("Transpose mla weight offline") materialises w_kc/w_vc once in load_weights and reuses them.
import torch
from torch import nn


class DeepseekV2AttentionMLA(nn.Module):
    def __init__(self, hidden_size, num_heads, qk_nope_head_dim, qk_rope_head_dim, v_head_dim, kv_lora_rank):
        super().__init__()
        self.num_local_heads = num_heads
        self.qk_nope_head_dim = qk_nope_head_dim
        self.qk_rope_head_dim = qk_rope_head_dim
        self.qk_head_dim = qk_nope_head_dim + qk_rope_head_dim
        self.v_head_dim = v_head_dim
        self.kv_lora_rank = kv_lora_rank
        self.scaling = self.qk_head_dim ** -0.5
        self.q_proj = nn.Linear(hidden_size, num_heads * self.qk_head_dim, bias=False)
        self.kv_a_proj_with_mqa = nn.Linear(hidden_size, kv_lora_rank + qk_rope_head_dim, bias=False)
        self.kv_a_layernorm = nn.LayerNorm(kv_lora_rank)
        self.kv_b_proj = nn.Linear(kv_lora_rank, num_heads * (qk_nope_head_dim + v_head_dim), bias=False)
        self.o_proj = nn.Linear(num_heads * v_head_dim, hidden_size, bias=False)

    def attn(self, q_input, k_input, v_input):
        scores = torch.einsum("qhd,kd->hqk", q_input, k_input.squeeze(1)) * self.scaling
        probs = scores.softmax(dim=-1)
        return torch.einsum("hqk,kd->qhd", probs, v_input.squeeze(1))

    def forward(self, positions, hidden_states):
        q_len = hidden_states.shape[0]
        q_input = hidden_states.new_empty(q_len, self.num_local_heads, self.kv_lora_rank + self.qk_rope_head_dim)
        q = self.q_proj(hidden_states).view(-1, self.num_local_heads, self.qk_head_dim)
        q_nope, q_pe = q.split([self.qk_nope_head_dim, self.qk_rope_head_dim], dim=-1)

        w_kc, w_vc = self.kv_b_proj.weight.unflatten(0, (-1, self.qk_nope_head_dim + self.v_head_dim)).split(
            [self.qk_nope_head_dim, self.v_head_dim], dim=1
        )
        q_nope_out = q_input[..., : self.kv_lora_rank]
        torch.bmm(q_nope.transpose(0, 1), w_kc, out=q_nope_out.transpose(0, 1))

        latent_cache = self.kv_a_proj_with_mqa(hidden_states)
        v_input = latent_cache[..., : self.kv_lora_rank]
        v_input = self.kv_a_layernorm(v_input).unsqueeze(1)
        k_input = latent_cache.unsqueeze(1)
        k_input[..., : self.kv_lora_rank] = v_input
        q_input[..., self.kv_lora_rank :] = q_pe

        attn_output = self.attn(q_input, k_input, v_input)
        attn_output = attn_output.view(-1, self.num_local_heads, self.kv_lora_rank)
        attn_bmm_output = attn_output.new_empty(q_len, self.num_local_heads, self.v_head_dim)
        torch.bmm(
            attn_output.transpose(0, 1),
            w_vc.transpose(1, 2).contiguous(),  # want: C
            out=attn_bmm_output.transpose(0, 1),
        )
        attn_output = attn_bmm_output.flatten(1, 2)
        return self.o_proj(attn_output)


class DeepseekV2AttentionMLAFixed(DeepseekV2AttentionMLA):
    def __init__(self, *args):
        super().__init__(*args)
        self.w_kc = None
        self.w_vc = None

    def load_weights(self):
        w = self.kv_b_proj.weight.detach()
        w_kc, w_vc = w.unflatten(0, (-1, self.qk_nope_head_dim + self.v_head_dim)).split(
            [self.qk_nope_head_dim, self.v_head_dim], dim=1
        )
        self.w_kc = w_kc.transpose(1, 2).contiguous().transpose(1, 2)
        self.w_vc = w_vc.contiguous().transpose(1, 2)

    def forward(self, positions, hidden_states):
        q_len = hidden_states.shape[0]
        q_input = hidden_states.new_empty(q_len, self.num_local_heads, self.kv_lora_rank + self.qk_rope_head_dim)
        q = self.q_proj(hidden_states).view(-1, self.num_local_heads, self.qk_head_dim)
        q_nope, q_pe = q.split([self.qk_nope_head_dim, self.qk_rope_head_dim], dim=-1)
        q_nope_out = q_input[..., : self.kv_lora_rank]
        torch.bmm(q_nope.transpose(0, 1), self.w_kc, out=q_nope_out.transpose(0, 1))

        latent_cache = self.kv_a_proj_with_mqa(hidden_states)
        v_input = latent_cache[..., : self.kv_lora_rank]
        v_input = self.kv_a_layernorm(v_input).unsqueeze(1)
        k_input = latent_cache.unsqueeze(1)
        k_input[..., : self.kv_lora_rank] = v_input
        q_input[..., self.kv_lora_rank :] = q_pe

        attn_output = self.attn(q_input, k_input, v_input)
        attn_output = attn_output.view(-1, self.num_local_heads, self.kv_lora_rank)
        attn_bmm_output = attn_output.new_empty(q_len, self.num_local_heads, self.v_head_dim)
        torch.bmm(attn_output.transpose(0, 1), self.w_vc, out=attn_bmm_output.transpose(0, 1))
        attn_output = attn_bmm_output.flatten(1, 2)
        return self.o_proj(attn_output)


if __name__ == "__main__":
    torch.manual_seed(0)
    args = (64, 4, 16, 8, 16, 32)
    bug = DeepseekV2AttentionMLA(*args)
    fix = DeepseekV2AttentionMLAFixed(*args)
    fix.load_state_dict(bug.state_dict())
    fix.load_weights()
    x = torch.randn(10, 64)
    with torch.no_grad():
        torch.testing.assert_close(bug(None, x), fix(None, x), rtol=1e-4, atol=1e-5)
        w_vc = bug.kv_b_proj.weight.unflatten(0, (4, 32)).split([16, 16], dim=1)[1]
        per_call = w_vc.transpose(1, 2).contiguous()
    print("per-forward weight copy bytes (buggy):", per_call.untyped_storage().nbytes())
    print("fixed w_vc reused, same storage each call:", fix.w_vc.data_ptr() == fix.w_vc.data_ptr())
