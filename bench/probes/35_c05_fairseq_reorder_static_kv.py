# source: facebookresearch/fairseq https://github.com/facebookresearch/fairseq/issues/1851 — during beam search MultiheadAttention.reorder_incremental_state re-gathered every cached buffer with `index_select(0, new_order)` at each step, including the encoder-decoder attention prev_key/prev_value which are identical across beams (a full copy of the static cross-attention K/V per layer per step); the fix (PR #1852) breaks out for encoder_decoder_attention when the batch size is unchanged.
from typing import Dict, Optional

import torch
import torch.nn as nn
from torch import Tensor


class MultiheadAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, encoder_decoder_attention=False):
        super().__init__()
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        self.encoder_decoder_attention = encoder_decoder_attention
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self._key = "attn_state_%d" % id(self)

    def _get_input_buffer(self, incremental_state) -> Dict[str, Optional[Tensor]]:
        return incremental_state.get(self._key, {})

    def _set_input_buffer(self, incremental_state, buffer):
        incremental_state[self._key] = buffer
        return incremental_state

    def init_static_kv(self, incremental_state, encoder_out):
        bsz, src_len, _ = encoder_out.shape
        k = self.k_proj(encoder_out).view(bsz, src_len, self.num_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(encoder_out).view(bsz, src_len, self.num_heads, self.head_dim).transpose(1, 2)
        self._set_input_buffer(incremental_state, {"prev_key": k.contiguous(), "prev_value": v.contiguous(),
                                                   "prev_key_padding_mask": None})

    def reorder_incremental_state(self, incremental_state: Dict[str, Dict[str, Optional[Tensor]]], new_order: Tensor):
        """Reorder buffered internal state (for incremental generation)."""
        input_buffer = self._get_input_buffer(incremental_state)
        if input_buffer is not None:
            for k in input_buffer.keys():
                if input_buffer[k] is not None:
                    input_buffer[k] = input_buffer[k].index_select(0, new_order)  # want: C
            incremental_state = self._set_input_buffer(incremental_state, input_buffer)
        return incremental_state


class MultiheadAttentionFixed(MultiheadAttention):
    def reorder_incremental_state(self, incremental_state: Dict[str, Dict[str, Optional[Tensor]]], new_order: Tensor):
        """Reorder buffered internal state (for incremental generation)."""
        input_buffer = self._get_input_buffer(incremental_state)
        if input_buffer is not None:
            for k in input_buffer.keys():
                input_buffer_k = input_buffer[k]
                if input_buffer_k is not None:
                    if self.encoder_decoder_attention and input_buffer_k.size(0) == new_order.size(0):
                        break
                    input_buffer[k] = input_buffer_k.index_select(0, new_order)
            incremental_state = self._set_input_buffer(incremental_state, input_buffer)
        return incremental_state


def run_beam_steps(layers, encoder_out, steps, beam):
    incremental_state = {}
    for layer in layers:
        layer.init_static_kv(incremental_state, encoder_out)
    bsz = encoder_out.size(0) // beam
    copies = 0
    for step in range(steps):
        # beams of the same sentence may swap places; the batch size (bsz * beam) is unchanged
        new_order = (torch.arange(bsz)[:, None] * beam + torch.randint(0, beam, (bsz, beam))).view(-1)
        for layer in layers:
            before = layer._get_input_buffer(incremental_state)["prev_key"].data_ptr()
            layer.reorder_incremental_state(incremental_state, new_order)
            copies += layer._get_input_buffer(incremental_state)["prev_key"].data_ptr() != before
    return copies


if __name__ == "__main__":
    torch.manual_seed(0)
    bsz, beam, src_len, dim = 4, 5, 64, 128
    encoder_out = torch.randn(bsz, src_len, dim).repeat_interleave(beam, dim=0)  # identical across beams
    with torch.no_grad():
        bug = [MultiheadAttention(dim, 8, encoder_decoder_attention=True) for _ in range(6)]
        fix = [MultiheadAttentionFixed(dim, 8, encoder_decoder_attention=True) for _ in range(6)]
        c_bug = run_beam_steps(bug, encoder_out, steps=20, beam=beam)
        c_fix = run_beam_steps(fix, encoder_out, steps=20, beam=beam)
    print(f"static cross-attn K copies over 20 steps x 6 layers: buggy={c_bug} fixed={c_fix}")
    assert c_bug == 120 and c_fix == 0
