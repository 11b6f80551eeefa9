# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/42561 — MLA `_v_up_proj` ran torch.bmm into a transposed view of the output buffer, then rebuilt (B, N*V) with transpose().reshape(), resize_()d the view and out.copy_(out_new) — a full copy of the attention output onto its own storage every layer; the PR lets bmm write straight into out.transpose(0, 1) and drops the copy.
import torch


class MLACommonBaseImpl:
    def __init__(self, num_heads=16, kv_lora_rank=64, v_head_dim=32, dtype=torch.float32):
        self.num_heads = num_heads
        self.kv_lora_rank = kv_lora_rank
        self.v_head_dim = v_head_dim
        self.W_UV = None
        self._dtype = dtype

    def process_weights_after_loading(self, kv_b_proj_weight):
        # kv_b_proj_weight: (L, N * V) already dequantized; stored once as (N, L, V)
        W_UV = kv_b_proj_weight.view(self.kv_lora_rank, self.num_heads, self.v_head_dim)
        self.W_UV = W_UV.transpose(0, 1).contiguous()

    def _v_up_proj(self, x, out):
        # Convert from (B, N, L) to (N, B, L)
        x = x.view(-1, self.num_heads, self.kv_lora_rank).transpose(0, 1)
        # Convert from (B, N * V) to (N, B, V)
        out = out.view(-1, self.num_heads, self.v_head_dim).transpose(0, 1)

        # Multiply (N, B, L) x (N, L, V) -> (N, B, V)
        torch.bmm(x, self.W_UV, out=out)  # Reuse "out" to make it "hot"

        # Convert from (N, B, V) to (B, N * V)
        out_new = out.transpose(0, 1).reshape(-1, self.num_heads * self.v_head_dim)

        # Adjust output buffer shape back to the original (B, N * V)
        N, B, V = out.shape
        out.resize_((B, N * V))
        out.copy_(out_new)  # want: C

    def forward_decode(self, attn_out_latent, output):
        # attn_out_latent: (B, N, L) from the latent attention kernel
        self._v_up_proj(attn_out_latent, out=output)
        return output


class MLACommonBaseImplFixed(MLACommonBaseImpl):
    def _v_up_proj(self, x, out):
        # Convert from (B, N, L) to (N, B, L)
        x = x.view(-1, self.num_heads, self.kv_lora_rank).transpose(0, 1)
        # Convert from (B, N * V) to (B, N, V)
        out = out.view(-1, self.num_heads, self.v_head_dim)

        # Multiply (N, B, L) x (N, L, V) -> (N, B, V), written through the (B, N, V) layout
        torch.bmm(x, self.W_UV, out=out.transpose(0, 1))


def count_self_copies(fn):
    n = 0
    orig = torch.Tensor.copy_

    def spy(self, src, non_blocking=False):
        nonlocal n
        if self.data_ptr() == src.data_ptr():
            n += 1
        return orig(self, src, non_blocking)

    torch.Tensor.copy_ = spy
    try:
        fn()
    finally:
        torch.Tensor.copy_ = orig
    return n


if __name__ == "__main__":
    torch.manual_seed(0)
    B, N, L, V = 32, 16, 64, 32
    w = torch.randn(L, N * V)
    buggy, fixed = MLACommonBaseImpl(N, L, V), MLACommonBaseImplFixed(N, L, V)
    buggy.process_weights_after_loading(w)
    fixed.process_weights_after_loading(w)
    x = torch.randn(B, N, L)
    out_b, out_f = torch.empty(B, N * V), torch.empty(B, N * V)
    n_b = count_self_copies(lambda: buggy.forward_decode(x, out_b))
    n_f = count_self_copies(lambda: fixed.forward_decode(x, out_f))
    ref = torch.einsum("bnl,nlv->bnv", x, buggy.W_UV).reshape(B, N * V)
    assert torch.allclose(out_b, ref, atol=1e-4) and torch.allclose(out_f, ref, atol=1e-4)
    print("full-size copies of the output onto its own storage per call: buggy", n_b, "fixed", n_f)
