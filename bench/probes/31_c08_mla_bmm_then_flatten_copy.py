# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/7441 — in DeepseekV2AttentionMLA.forward_absorb the value up-projection did `attn_bmm_output = torch.bmm(attn_output.transpose(0, 1), self.w_vc)` and then `attn_bmm_output.transpose(0, 1).flatten(1, 2)`, so flatten of the head-major result silently copied the whole [tokens, heads*v_head_dim] activation before o_proj; the fix ("Remove copy after bmm") preallocates the token-major output and lets bmm write into its transposed view via `out=`.
import torch
from torch import nn


def v_up_proj_and_o_proj(attn_output, w_vc, o_proj, num_local_heads, kv_lora_rank):
    # attn_output: [tokens, heads * kv_lora_rank] from the MLA kernel
    attn_output = attn_output.view(-1, num_local_heads, kv_lora_rank)
    attn_bmm_output = torch.bmm(attn_output.transpose(0, 1), w_vc)
    attn_output = attn_bmm_output.transpose(0, 1).flatten(1, 2)  # want: C
    return o_proj(attn_output)


def v_up_proj_and_o_proj_fixed(attn_output, w_vc, o_proj, num_local_heads, kv_lora_rank):
    v_head_dim = w_vc.shape[-1]
    attn_output = attn_output.view(-1, num_local_heads, kv_lora_rank)
    attn_bmm_output = torch.empty(
        (attn_output.shape[0], num_local_heads * v_head_dim),
        dtype=attn_output.dtype,
        device=attn_output.device,
    )
    torch.bmm(
        attn_output.transpose(0, 1),
        w_vc,
        out=attn_bmm_output.view(-1, num_local_heads, v_head_dim).transpose(0, 1),
    )
    return o_proj(attn_bmm_output)


class DeepseekV2AttentionMLA(nn.Module):
    def __init__(self, hidden_size=64, num_heads=4, kv_lora_rank=32, v_head_dim=16, fixed=False):
        super().__init__()
        self.num_local_heads = num_heads
        self.kv_lora_rank = kv_lora_rank
        self.v_head_dim = v_head_dim
        self.fixed = fixed
        self.w_vc = nn.Parameter(torch.randn(num_heads, kv_lora_rank, v_head_dim) / kv_lora_rank ** 0.5)
        self.o_proj = nn.Linear(num_heads * v_head_dim, hidden_size, bias=False)
        self.mla_kernel = nn.Linear(hidden_size, num_heads * kv_lora_rank, bias=False)

    def forward_absorb(self, hidden_states):
        # stand-in for the absorbed MLA attention kernel output: [tokens, heads * kv_lora_rank]
        attn_output = self.mla_kernel(hidden_states)
        fn = v_up_proj_and_o_proj_fixed if self.fixed else v_up_proj_and_o_proj
        return fn(attn_output, self.w_vc, self.o_proj, self.num_local_heads, self.kv_lora_rank)


if __name__ == "__main__":
    torch.manual_seed(0)
    bug = DeepseekV2AttentionMLA()
    fix = DeepseekV2AttentionMLA(fixed=True)
    fix.load_state_dict(bug.state_dict())
    x = torch.randn(37, 64)
    with torch.no_grad():
        torch.testing.assert_close(bug.forward_absorb(x), fix.forward_absorb(x))
        a = torch.randn(37, 4 * 32)
        r = torch.bmm(a.view(-1, 4, 32).transpose(0, 1), bug.w_vc)
        flat = r.transpose(0, 1).flatten(1, 2)
    print("flatten after bmm copies:", flat.data_ptr() != r.data_ptr(), "bytes:", flat.numel() * flat.element_size())
