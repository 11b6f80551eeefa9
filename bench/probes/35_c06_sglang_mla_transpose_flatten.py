# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/25463 — on the MLA absorb decode path the batched GEMM wrote its output as (heads, batch, v_head_dim) and the code then did `attn_bmm_output.transpose(0, 1).flatten(1, 2)`, where flatten of the transposed view silently materialises a contiguous copy every layer every step; the fix allocates the buffer as (batch, heads, v_head_dim), hands the kernel the transposed view, and flattens the contiguous buffer for free.
import torch
import torch.nn as nn


def batched_gemm_pre_quant(x, w, out):
    """Stand-in for the aiter batched GEMM: honours arbitrary output strides (writes through `out`)."""
    torch.bmm(x, w, out=out)
    return out


class DeepseekV2AttentionMLA(nn.Module):
    def __init__(self, num_local_heads=16, kv_lora_rank=64, v_head_dim=32, hidden_size=256):
        super().__init__()
        self.num_local_heads = num_local_heads
        self.kv_lora_rank = kv_lora_rank
        self.v_head_dim = v_head_dim
        self.w_vc = nn.Parameter(torch.randn(num_local_heads, kv_lora_rank, v_head_dim) * 0.05, requires_grad=False)
        self.o_proj = nn.Linear(num_local_heads * v_head_dim, hidden_size, bias=False)

    def forward_absorb_core(self, attn_output):
        attn_output = attn_output.view(-1, self.num_local_heads, self.kv_lora_rank)
        x = attn_output.transpose(0, 1)
        attn_bmm_output = torch.empty(
            x.shape[0], x.shape[1], self.w_vc.shape[2], device=x.device, dtype=x.dtype
        )
        batched_gemm_pre_quant(x, self.w_vc, attn_bmm_output)
        attn_bmm_output = attn_bmm_output.transpose(0, 1).flatten(1, 2)  # want: C
        return self.o_proj(attn_bmm_output)


class DeepseekV2AttentionMLAFixed(DeepseekV2AttentionMLA):
    def forward_absorb_core(self, attn_output):
        attn_output = attn_output.view(-1, self.num_local_heads, self.kv_lora_rank)
        x = attn_output.transpose(0, 1)
        # (batch, heads, v_head_dim): the layout o_proj wants; the kernel writes through a transposed view
        attn_bmm_output = torch.empty(
            x.shape[1], x.shape[0], self.w_vc.shape[2], device=x.device, dtype=x.dtype
        )
        batched_gemm_pre_quant(x, self.w_vc, attn_bmm_output.transpose(0, 1))
        attn_bmm_output = attn_bmm_output.flatten(1, 2)
        return self.o_proj(attn_bmm_output)


if __name__ == "__main__":
    torch.manual_seed(0)
    bug = DeepseekV2AttentionMLA()
    fix = DeepseekV2AttentionMLAFixed()
    fix.load_state_dict(bug.state_dict())
    attn = torch.randn(8, 16 * 64)
    with torch.no_grad():
        y1, y2 = bug.forward_absorb_core(attn), fix.forward_absorb_core(attn)
    assert torch.allclose(y1, y2, atol=1e-5)
    buf = torch.empty(16, 8, 32)
    flat = buf.transpose(0, 1).flatten(1, 2)
    buf2 = torch.empty(8, 16, 32)
    flat2 = buf2.flatten(1, 2)
    print("buggy flatten aliases the GEMM buffer:", flat.data_ptr() == buf.data_ptr(),
          "| fixed flatten aliases:", flat2.data_ptr() == buf2.data_ptr())
    assert flat.data_ptr() != buf.data_ptr() and flat2.data_ptr() == buf2.data_ptr()
