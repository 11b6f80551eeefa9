# source: vllm-project/vllm-ascend https://github.com/vllm-project/vllm-ascend/pull/10442 — In the prefill context-parallel attention path, `_gather_and_restore_pcp_qkv` scattered the gathered QKV rows into a `new_empty` workspace and then tried to zero the padding rows with `qkv_fa_padding_workspace[decode_offset:][~pcp_unpad_mask].fill_(0)`; the boolean-mask index returns a copy, so the padding kept uninitialised memory that flowed into FA and broke Qwen3.5 accuracy. The fix uses mask assignment `...[~pcp_unpad_mask] = 0`.
from dataclasses import dataclass
from unittest import mock

import torch


@dataclass
class PCPMetadata:
    pcp_unpad_mask: torch.Tensor
    pcp_enter_fa_restore_idx: torch.Tensor


@dataclass
class AscendMetadata:
    num_actual_tokens_pcp_padded: int
    num_decode_tokens: int
    num_decodes: int
    pcp_metadata: PCPMetadata


class AscendAttentionCPImpl:
    def __init__(self, num_heads=2, num_kv_heads=1, head_size=4, pcp_size=1, fixed=False):
        self.num_heads, self.num_kv_heads, self.head_size = num_heads, num_kv_heads, head_size
        self.pcp_size = pcp_size
        self.fixed = fixed

    def _gather_and_restore_pcp_qkv(self, query, key, value, attn_metadata: AscendMetadata):
        num_tokens = query.shape[0]
        pcp = attn_metadata.pcp_metadata
        qkv_fla = torch.cat(
            [query.reshape(num_tokens, -1), key.reshape(num_tokens, -1), value.reshape(num_tokens, -1)], dim=-1
        )
        all_qkv = qkv_fla  # get_pcp_group().all_gather(...) with a single rank
        actual_qkv = torch.index_select(all_qkv, 0, pcp.pcp_enter_fa_restore_idx)
        qkv_fa_padding_workspace = query.new_empty(
            (attn_metadata.num_actual_tokens_pcp_padded, (self.num_heads + 2 * self.num_kv_heads) * self.head_size)
        )
        decode_offset = attn_metadata.num_decode_tokens * self.pcp_size
        qkv_fa_padding_workspace[:decode_offset] = actual_qkv[:decode_offset]
        pcp_unpad_mask = pcp.pcp_unpad_mask[attn_metadata.num_decodes * self.pcp_size :]
        qkv_fa_padding_workspace[decode_offset:][pcp_unpad_mask] = actual_qkv[decode_offset:]
        if not self.fixed:
            qkv_fa_padding_workspace[decode_offset:][~pcp_unpad_mask].fill_(0)  # want: B
        else:
            qkv_fa_padding_workspace[decode_offset:][~pcp_unpad_mask] = 0
        return qkv_fa_padding_workspace.split(
            [self.num_heads * self.head_size, self.num_kv_heads * self.head_size, self.num_kv_heads * self.head_size],
            dim=-1,
        )


if __name__ == "__main__":
    T = 5  # 1 decode token + 4 real prefill tokens, padded to 7 rows
    q, k, v = torch.randn(T, 2, 4), torch.randn(T, 1, 4), torch.randn(T, 1, 4)
    mask = torch.tensor([True, True, True, False, True, False, True])  # decode row + 6 prefill slots
    meta = AscendMetadata(7, 1, 1, PCPMetadata(mask, torch.arange(T)))
    garbage = lambda self, size, **kw: torch.full(size, float("nan"), dtype=self.dtype)  # uninitialised memory
    with mock.patch.object(torch.Tensor, "new_empty", garbage):
        qb, _, _ = AscendAttentionCPImpl()._gather_and_restore_pcp_qkv(q, k, v, meta)
        qf, _, _ = AscendAttentionCPImpl(fixed=True)._gather_and_restore_pcp_qkv(q, k, v, meta)
    print("buggy padding rows contain NaN:", torch.isnan(qb).any().item())
    print("fixed padding rows contain NaN:", torch.isnan(qf).any().item())
    assert torch.isnan(qb).any() and not torch.isnan(qf).any()
