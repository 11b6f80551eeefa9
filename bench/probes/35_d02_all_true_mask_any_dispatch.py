# source: vllm-project/vllm-omni https://github.com/vllm-project/vllm-omni/pull/6871 — Boogu-Image always built an all-True attention mask, and the FlashAttention backend picked dense vs. varlen with `if attention_mask is not None and torch.any(~attention_mask)`, a device-to-host sync per attention call; the fix (for issue #6862) returns None from a `_make_attention_mask` helper for single/equal-length batches so the dense path is taken without the check.
import torch
import torch.nn.functional as F
from torch import nn


class AttnMetadata:
    def __init__(self, attn_mask=None):
        self.attn_mask = attn_mask


class FlashAttentionImpl:
    def __init__(self, num_heads, head_size):
        self.num_heads = num_heads
        self.scale = head_size ** -0.5

    def _forward_dense(self, query, key, value):
        return F.scaled_dot_product_attention(query, key, value, scale=self.scale)

    def _forward_varlen_masked(self, query, key, value, attention_mask):
        bias = attention_mask[:, None, None, :]
        return F.scaled_dot_product_attention(query, key, value, attn_mask=bias, scale=self.scale)

    def forward(self, query, key, value, attn_metadata=None):
        attention_mask = attn_metadata.attn_mask if attn_metadata is not None else None
        if attention_mask is not None and torch.any(~attention_mask):  # want: D
            return self._forward_varlen_masked(query, key, value, attention_mask)
        return self._forward_dense(query, key, value)


class BooguJointBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.attn = FlashAttentionImpl(heads, dim // heads)

    def forward(self, x, attn_metadata):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        o = self.attn.forward(q, k, v, attn_metadata)
        return x + self.proj(o.transpose(1, 2).reshape(b, s, d))


class BooguImageTransformer(nn.Module):
    def __init__(self, dim=32, heads=4, depth=3):
        super().__init__()
        self.blocks = nn.ModuleList(BooguJointBlock(dim, heads) for _ in range(depth))

    def build_joint_attention_mask(self, text_lens, img_len, device):
        max_txt = max(text_lens)
        lens = torch.tensor([t + img_len for t in text_lens], device=device)
        return torch.arange(max_txt + img_len, device=device)[None, :] < lens[:, None]

    def forward(self, hidden_states, text_lens, img_len):
        mask = self.build_joint_attention_mask(text_lens, img_len, hidden_states.device)
        meta = AttnMetadata(mask)
        for blk in self.blocks:
            hidden_states = blk(hidden_states, meta)
        return hidden_states


class BooguImageTransformerFixed(BooguImageTransformer):
    def _make_attention_mask(self, text_lens, img_len, device):
        # Single sample or equal lengths: every token is valid, skip the mask entirely.
        if len(text_lens) == 1 or len(set(text_lens)) == 1:
            return None
        return self.build_joint_attention_mask(text_lens, img_len, device)

    def forward(self, hidden_states, text_lens, img_len):
        mask = self._make_attention_mask(text_lens, img_len, hidden_states.device)
        meta = AttnMetadata(mask)
        for blk in self.blocks:
            hidden_states = blk(hidden_states, meta)
        return hidden_states


if __name__ == "__main__":
    torch.manual_seed(0)
    bug = BooguImageTransformer()
    fix = BooguImageTransformerFixed()
    fix.load_state_dict(bug.state_dict())
    x = torch.randn(1, 8 + 16, 32)
    with torch.no_grad():
        a = bug(x, [8], 16)
        b = fix(x, [8], 16)
    print("bs=1 outputs match:", torch.allclose(a, b, atol=1e-5))
    x2 = torch.randn(2, 8 + 16, 32)
    with torch.no_grad():
        print("ragged batch match:", torch.allclose(bug(x2, [8, 5], 16), fix(x2, [8, 5], 16), atol=1e-5))
