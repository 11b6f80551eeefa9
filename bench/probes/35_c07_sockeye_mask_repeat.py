# source: awslabs/sockeye https://github.com/awslabs/sockeye/pull/1015 — the PyTorch encoder and decoder turned the (batch*heads, 1, src_len) length mask into a (batch*heads, len, src_len) mask with `.repeat(1, len, 1)`, materialising a copy that is len times larger on every forward; the fix uses `.expand(-1, len, -1)`, which broadcasts without allocating.
from typing import List, Optional

import torch as pt
import torch.nn.functional as F


def prepare_source_length_mask(lengths: pt.Tensor, heads: int, max_length: int) -> pt.Tensor:
    lengths = lengths.repeat_interleave(heads, dim=0)  # (batch_size * heads, seq_len)
    # (batch_size * heads, 1, max_len)
    return ~(pt.arange(max_length, device=lengths.device)[None, :] < lengths[:, None]).view(-1, 1, max_length)


class EncoderBlock(pt.nn.Module):
    def __init__(self, model_size, heads):
        super().__init__()
        self.heads = heads
        self.qkv = pt.nn.Linear(model_size, 3 * model_size)

    def forward(self, data, att_mask):
        # data: (len, batch, model) time-major
        t, b, d = data.shape
        q, k, v = self.qkv(data).chunk(3, dim=-1)
        q, k, v = (x.reshape(t, b * self.heads, d // self.heads).transpose(0, 1) for x in (q, k, v))
        logits = pt.bmm(q, k.transpose(1, 2)).masked_fill(att_mask, -1e4)
        out = pt.bmm(F.softmax(logits, dim=-1), v)
        return data + out.transpose(0, 1).reshape(t, b, d)


class PyTorchTransformerEncoder(pt.nn.Module):
    def __init__(self, model_size=64, attention_heads=8, num_layers=2):
        super().__init__()
        self.attention_heads = attention_heads
        self.layers = pt.nn.ModuleList(EncoderBlock(model_size, attention_heads) for _ in range(num_layers))

    def forward(self, data: pt.Tensor, valid_length: pt.Tensor):
        _, max_len, __ = data.size()
        # length_mask for source attention masking. Shape: (batch_size * heads, 1, max_len)
        att_mask = prepare_source_length_mask(valid_length, self.attention_heads, max_length=max_len)
        att_mask = att_mask.repeat(1, max_len, 1)  # want: C

        data = data.transpose(1, 0)  # batch to time major
        for layer in self.layers:
            data = layer(data, att_mask=att_mask)
        data = data.transpose(1, 0)  # time to batch major
        return data, valid_length


class PyTorchTransformerDecoder(pt.nn.Module):
    def __init__(self, attention_heads=8):
        super().__init__()
        self.attention_heads = attention_heads

    def init_state_from_encoder(self, encoder_outputs: pt.Tensor, encoder_valid_length: Optional[pt.Tensor] = None,
                                target_embed: Optional[pt.Tensor] = None) -> List[pt.Tensor]:
        source_max_len = encoder_outputs.size()[1]
        target_length = target_embed.size()[1]
        steps = pt.arange(0, target_length, device=target_embed.device).unsqueeze(0)
        # (batch * heads, 1, source_max_len)
        source_mask = prepare_source_length_mask(encoder_valid_length, self.attention_heads, source_max_len)
        source_mask = source_mask.repeat(1, target_length, 1)  # want: C
        # Shape: (batch, heads, trg_max_len, src_max_len)
        source_mask = source_mask.view(-1, self.attention_heads, target_length, source_max_len)
        return [steps, encoder_outputs.transpose(1, 0), source_mask]


class PyTorchTransformerEncoderFixed(PyTorchTransformerEncoder):
    def forward(self, data: pt.Tensor, valid_length: pt.Tensor):
        _, max_len, __ = data.size()
        att_mask = prepare_source_length_mask(valid_length, self.attention_heads, max_length=max_len)
        att_mask = att_mask.expand(-1, max_len, -1)

        data = data.transpose(1, 0)
        for layer in self.layers:
            data = layer(data, att_mask=att_mask)
        data = data.transpose(1, 0)
        return data, valid_length


class PyTorchTransformerDecoderFixed(PyTorchTransformerDecoder):
    def init_state_from_encoder(self, encoder_outputs, encoder_valid_length=None, target_embed=None):
        source_max_len = encoder_outputs.size()[1]
        target_length = target_embed.size()[1]
        steps = pt.arange(0, target_length, device=target_embed.device).unsqueeze(0)
        source_mask = prepare_source_length_mask(encoder_valid_length, self.attention_heads, source_max_len)
        source_mask = source_mask.expand(-1, target_length, -1)  # Shape: (batch * heads, trg_max_len, src_max_len)
        source_mask = source_mask.view(-1, self.attention_heads, target_length, source_max_len)
        return [steps, encoder_outputs.transpose(1, 0), source_mask]


if __name__ == "__main__":
    pt.manual_seed(0)
    batch, src_len, trg_len = 4, 50, 40
    x = pt.randn(batch, src_len, 64)
    lengths = pt.tensor([50, 31, 12, 44])
    enc, enc_fix = PyTorchTransformerEncoder(), PyTorchTransformerEncoderFixed()
    enc_fix.load_state_dict(enc.state_dict())
    with pt.no_grad():
        (y1, _), (y2, _) = enc(x, lengths), enc_fix(x, lengths)
    assert pt.allclose(y1, y2, atol=1e-5)
    s1 = PyTorchTransformerDecoder().init_state_from_encoder(y1, lengths, pt.randn(batch, trg_len, 64))
    s2 = PyTorchTransformerDecoderFixed().init_state_from_encoder(y1, lengths, pt.randn(batch, trg_len, 64))
    assert pt.equal(s1[2], s2[2])
    print(f"decoder source_mask storage bytes: repeat={s1[2].untyped_storage().nbytes()} "
          f"expand={s2[2].untyped_storage().nbytes()}")
    assert s1[2].untyped_storage().nbytes() == trg_len * s2[2].untyped_storage().nbytes()
