# source: vllm-project/vllm-gaudi https://github.com/vllm-project/vllm-gaudi/pull/646 — HPUMLAImpl inherited MLACommonImpl.process_weights_after_loading, which stores the absorbed MLA weights as strided views (`W_UV.transpose(0, 1)`, `W_UK.permute(1, 2, 0)`); the decode path then runs torch.bmm against them on every step, so each HPU graph execution re-materialised the transposed weight. The PR "make mla weight contiguous" overrides process_weights_after_loading to call `.contiguous()` on W_UV and W_UK_T once after loading.
import torch
import torch.nn as nn


class MLACommonImpl(nn.Module):
    def __init__(self, num_heads, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim):
        super().__init__()
        self.num_heads = num_heads
        self.kv_lora_rank = kv_lora_rank
        self.qk_nope_head_dim = qk_nope_head_dim
        self.qk_rope_head_dim = qk_rope_head_dim
        self.v_head_dim = v_head_dim
        self.kv_b_proj = nn.Linear(kv_lora_rank, num_heads * (qk_nope_head_dim + v_head_dim), bias=False)

    def process_weights_after_loading(self, act_dtype: torch.dtype):
        kv_b_proj_weight = self.kv_b_proj.weight.detach().to(act_dtype).T
        kv_b_proj_weight = kv_b_proj_weight.view(
            self.kv_lora_rank,
            self.num_heads,
            self.qk_nope_head_dim + self.v_head_dim,
        )
        W_UK, W_UV = kv_b_proj_weight.split([self.qk_nope_head_dim, self.v_head_dim], dim=-1)
        # Convert from (L, N, V) to (N, L, V)
        self.W_UV = W_UV.transpose(0, 1)  # maybe: C (strided weight kept for the per-step bmm)
        # Convert from (L, N, P) to (N, P, L)
        self.W_UK_T = W_UK.permute(1, 2, 0)


class HPUMLAImpl(MLACommonImpl):

    def forward(self, q: torch.Tensor, latent: torch.Tensor) -> torch.Tensor:
        # decode
        q_nope, q_pe = q.split([self.qk_nope_head_dim, self.qk_rope_head_dim], dim=-1)
        # Convert from (B, N, P) to (N, B, P)
        q_nope = q_nope.transpose(0, 1)
        # Multiply (N, B, P) x (N, P, L) -> (N, B, L)
        decode_ql_nope = torch.bmm(q_nope, self.W_UK_T)  # want: C
        # Convert from (N, B, L) to (B, N, L)
        decode_ql_nope = decode_ql_nope.transpose(0, 1)
        output = self._forward_decode(decode_ql_nope, q_pe, latent)
        return output

    def _forward_decode(self, q_nope, q_pe, latent):
        # stand-in for HPUPagedAttention.forward_decode over the latent cache
        scores = torch.einsum("bnl,tl->bnt", q_nope, latent)
        probs = scores.softmax(dim=-1)
        output = torch.einsum("bnt,tl->bnl", probs, latent)
        result = self._v_up_proj(output)
        return result

    # NOTE(Chendi): PR25184 using output buffer as default, which can't be used in HPU Graph,
    # so we override and always return a new tensor
    def _v_up_proj(self, x):
        # Convert from (B, N, L) to (N, B, L)
        x = x.view(-1, self.num_heads, self.kv_lora_rank).transpose(0, 1)
        # Multiply (N, B, L) x (N, L, V) -> (N, B, V)
        x = torch.bmm(x, self.W_UV)  # want: C
        # Convert from (N, B, V) to (B, N * V)
        x = x.transpose(0, 1).reshape(-1, self.num_heads * self.v_head_dim)
        return x


class HPUMLAImplFixed(HPUMLAImpl):

    # NOTE(Xinyu): Make the loaded weight contiguous to avoid the transpose
    # during each graph execution
    def process_weights_after_loading(self, act_dtype: torch.dtype):
        super().process_weights_after_loading(act_dtype)
        self.W_UV: torch.Tensor = self.W_UV.contiguous()
        self.W_UK_T: torch.Tensor = self.W_UK_T.contiguous()


if __name__ == "__main__":
    torch.manual_seed(0)
    cfg = dict(num_heads=4, kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=8)
    buggy, fixed = HPUMLAImpl(**cfg), HPUMLAImplFixed(**cfg)
    fixed.load_state_dict(buggy.state_dict())
    buggy.process_weights_after_loading(torch.float32)
    fixed.process_weights_after_loading(torch.float32)

    q = torch.randn(3, 4, 12)
    latent = torch.randn(10, 16)
    with torch.no_grad():
        assert torch.allclose(buggy(q, latent), fixed(q, latent), atol=1e-5)

    # buggy: the weights stay strided, so every step that needs a dense layout copies them
    for w in (buggy.W_UV, buggy.W_UK_T):
        assert not w.is_contiguous() and w.contiguous().data_ptr() != w.data_ptr()
    # fixed: laid out once at load time, per-step use is copy-free
    for w in (fixed.W_UV, fixed.W_UK_T):
        assert w.is_contiguous() and w.contiguous().data_ptr() == w.data_ptr()
    print("ok")
