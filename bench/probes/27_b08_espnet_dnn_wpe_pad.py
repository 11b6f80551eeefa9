# source: espnet/espnet https://github.com/espnet/espnet/issues/1272 (fixed by https://github.com/espnet/espnet/pull/1273) — DNN_WPE.forward called `enhanced.masked_fill(make_pad_mask(ilens, enhanced.real), 0)` and dropped the result, so padded frames of the dereverberated signal were never zeroed; the fix uses the in-place `enhanced.masked_fill_(...)`.
from typing import Tuple

import torch


def make_pad_mask(lengths, xs=None, length_dim=-1):
    if length_dim == 0:
        raise ValueError('length_dim cannot be 0: {}'.format(length_dim))

    if not isinstance(lengths, list):
        lengths = lengths.tolist()
    bs = int(len(lengths))
    if xs is None:
        maxlen = int(max(lengths))
    else:
        maxlen = xs.size(length_dim)

    seq_range = torch.arange(0, maxlen, dtype=torch.int64)
    seq_range_expand = seq_range.unsqueeze(0).expand(bs, maxlen)
    seq_length_expand = seq_range_expand.new(lengths).unsqueeze(-1)
    mask = seq_range_expand >= seq_length_expand

    if xs is not None:
        assert xs.size(0) == bs, (xs.size(0), bs)

        if length_dim < 0:
            length_dim = xs.dim() + length_dim
        # ind = (:, None, ..., None, :, , None, ..., None)
        ind = tuple(slice(None) if i in (0, length_dim) else None for i in range(xs.dim()))
        mask = mask[ind].expand_as(xs).to(xs.device)
    return mask


def wpe_one_iteration(Y, power, taps=10, delay=3, eps=1e-10, inverse_power=True):
    """Stand-in for the WPE step: subtract a delayed linear prediction (leaks into padded frames)."""
    if inverse_power:
        inverse_power = 1 / torch.clamp(power, min=eps)
    else:
        inverse_power = power
    weight = (0.1 * inverse_power / (1 + inverse_power))[..., None, :]
    return Y - weight * torch.roll(Y, shifts=delay, dims=-1)


class MaskEstimator(torch.nn.Module):
    def __init__(self, widim):
        super().__init__()
        self.out = torch.nn.Linear(widim, widim)

    def forward(self, xs, ilens) -> Tuple[Tuple[torch.Tensor], torch.LongTensor]:
        # xs: (B, F, C, T) -> mask (B, F, C, T)
        mag = xs.abs().permute(0, 2, 3, 1)           # (B, C, T, F)
        mask = torch.sigmoid(self.out(mag)).permute(0, 3, 1, 2)
        return (mask,), ilens


class DNN_WPE(torch.nn.Module):
    def __init__(self, widim=5, taps=5, delay=3, use_dnn_mask=True, iterations=1, normalization=False):
        super().__init__()
        self.iterations = iterations
        self.taps = taps
        self.delay = delay
        self.normalization = normalization
        self.use_dnn_mask = use_dnn_mask
        self.inverse_power = True
        if self.use_dnn_mask:
            self.mask_est = MaskEstimator(widim)

    def forward(self, data: torch.Tensor, ilens: torch.LongTensor):
        # (B, T, C, F) -> (B, F, C, T)
        enhanced = data = data.permute(0, 3, 2, 1)
        mask = None

        for i in range(self.iterations):
            # Calculate power: (..., C, T)
            power = enhanced.real ** 2 + enhanced.imag ** 2
            if i == 0 and self.use_dnn_mask:
                # mask: (B, F, C, T)
                (mask,), _ = self.mask_est(enhanced, ilens)
                if self.normalization:
                    # Normalize along T
                    mask = mask / mask.sum(dim=-1)[..., None]
                # (..., C, T) * (..., C, T) -> (..., C, T)
                power = power * mask

            # Averaging along the channel axis: (..., C, T) -> (..., T)
            power = power.mean(dim=-2)

            # enhanced: (..., C, T) -> (..., C, T)
            enhanced = wpe_one_iteration(
                data.contiguous(), power,
                taps=self.taps, delay=self.delay,
                inverse_power=self.inverse_power)

            enhanced.masked_fill(make_pad_mask(ilens, enhanced.real), 0)  # want: B

        # (B, F, C, T) -> (B, T, C, F)
        enhanced = enhanced.permute(0, 3, 2, 1)
        if mask is not None:
            mask = mask.transpose(-1, -3)
        return enhanced, ilens, mask


class DNN_WPE_Fixed(DNN_WPE):
    def forward(self, data, ilens):
        enhanced = data = data.permute(0, 3, 2, 1)
        for i in range(self.iterations):
            power = (enhanced.real ** 2 + enhanced.imag ** 2).mean(dim=-2)
            enhanced = wpe_one_iteration(data.contiguous(), power, taps=self.taps, delay=self.delay,
                                         inverse_power=self.inverse_power)
            enhanced.masked_fill_(make_pad_mask(ilens, enhanced.real), 0)
        return enhanced.permute(0, 3, 2, 1), ilens, None


if __name__ == "__main__":
    torch.manual_seed(0)
    B, T, C, F = 2, 12, 2, 5
    ilens = torch.LongTensor([12, 7])
    data = torch.randn(B, T, C, F, dtype=torch.complex64)
    data[1, 7:] = 0  # zero padding of the shorter utterance
    out, _, _ = DNN_WPE(widim=F)(data, ilens)
    print("buggy: max |enhanced| in padded frames of utt 1:", out[1, 7:].abs().max().item())
    out, _, _ = DNN_WPE_Fixed(widim=F)(data, ilens)
    print("fixed: max |enhanced| in padded frames of utt 1:", out[1, 7:].abs().max().item())
