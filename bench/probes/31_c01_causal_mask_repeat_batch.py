# source: huggingface/transformers https://github.com/huggingface/transformers/pull/29413 — `_update_causal_mask` built the 4D mask with `self.causal_mask[None, None].repeat(batch_size, 1, 1, 1)`, materialising batch_size copies of the full (max_pos x max_pos) mask every forward; the fix casts the single mask and uses `.expand(batch_size, 1, -1, -1)`, cloning only when a 2D padding mask must be merged in place.
import torch
from torch import nn


class Config:
    def __init__(self, max_position_embeddings=256, attn_implementation="eager"):
        self.max_position_embeddings = max_position_embeddings
        self._attn_implementation = attn_implementation


class LlamaModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        causal_mask = torch.full(
            (config.max_position_embeddings, config.max_position_embeddings), fill_value=True, dtype=torch.bool
        )
        self.register_buffer("causal_mask", torch.triu(causal_mask, diagonal=1), persistent=False)

    def _update_causal_mask(self, attention_mask, input_tensor):
        if self.config._attn_implementation == "flash_attention_2":
            if attention_mask is not None and 0.0 in attention_mask:
                return attention_mask
            return None

        batch_size, seq_length = input_tensor.shape[:2]
        dtype, device = input_tensor.dtype, input_tensor.device

        # support going beyond cached `max_position_embedding`
        if seq_length > self.causal_mask.shape[-1]:
            causal_mask = torch.full((2 * self.causal_mask.shape[-1], 2 * self.causal_mask.shape[-1]), fill_value=1)
            self.register_buffer("causal_mask", torch.triu(causal_mask, diagonal=1), persistent=False)

        # We use the current dtype to avoid any overflows
        min_dtype = torch.finfo(dtype).min
        causal_mask = self.causal_mask[None, None, :, :].repeat(batch_size, 1, 1, 1).to(dtype) * min_dtype  # want: C

        causal_mask = causal_mask.to(dtype=dtype, device=device)  # maybe: C (no-op .to on an already cast tensor; dropped by the fix)
        if attention_mask is not None and attention_mask.dim() == 2:
            mask_length = attention_mask.shape[-1]
            padding_mask = causal_mask[..., :mask_length].eq(0.0) * attention_mask[:, None, None, :].eq(0.0)
            causal_mask[..., :mask_length] = causal_mask[..., :mask_length].masked_fill(padding_mask, min_dtype)

        return causal_mask


class LlamaModelFixed(LlamaModel):
    def _update_causal_mask(self, attention_mask, input_tensor):
        if self.config._attn_implementation == "flash_attention_2":
            if attention_mask is not None and 0.0 in attention_mask:
                return attention_mask
            return None

        batch_size, seq_length = input_tensor.shape[:2]
        dtype, device = input_tensor.dtype, input_tensor.device

        if seq_length > self.causal_mask.shape[-1]:
            causal_mask = torch.full((2 * self.causal_mask.shape[-1], 2 * self.causal_mask.shape[-1]), fill_value=1)
            self.register_buffer("causal_mask", torch.triu(causal_mask, diagonal=1), persistent=False)

        min_dtype = torch.finfo(dtype).min
        causal_mask = self.causal_mask[None, None, :, :].to(dtype=dtype, device=device) * min_dtype
        causal_mask = causal_mask.expand(batch_size, 1, -1, -1)
        if attention_mask is not None and attention_mask.dim() == 2:
            causal_mask = causal_mask.clone()  # copy to contiguous memory for in-place edit
            mask_length = attention_mask.shape[-1]
            padding_mask = causal_mask[..., :mask_length].eq(0.0) * attention_mask[:, None, None, :].eq(0.0)
            causal_mask[..., :mask_length] = causal_mask[..., :mask_length].masked_fill(padding_mask, min_dtype)

        return causal_mask


if __name__ == "__main__":
    cfg = Config(max_position_embeddings=256)
    hidden = torch.randn(16, 32, 8)
    bug = LlamaModel(cfg)._update_causal_mask(None, hidden)
    fix = LlamaModelFixed(cfg)._update_causal_mask(None, hidden)
    assert torch.equal(bug, fix)
    print("buggy mask storage bytes:", bug.untyped_storage().nbytes())
    print("fixed mask storage bytes:", fix.untyped_storage().nbytes())
    assert bug.untyped_storage().nbytes() == 16 * fix.untyped_storage().nbytes()
    am = torch.ones(16, 32)
    am[0, :4] = 0
    assert torch.equal(LlamaModel(cfg)._update_causal_mask(am, hidden), LlamaModelFixed(cfg)._update_causal_mask(am, hidden))
