# source: huggingface/diffusers https://github.com/huggingface/diffusers/pull/13564 — LTX2ConnectorTransformer1d.forward built the register-padded text states with a per-sample boolean-mask gather `hidden_states[i, binary_attn_mask[i].bool(), :]` and read each piece's `.shape[0]` to size F.pad, so every prompt row cost a nonzero() device->host sync inside forward; the fix replaced the Python loop with on-device masking (the stable-argsort gather below is the layout fix from the follow-up #13931).
import torch
import torch.nn as nn
import torch.nn.functional as F


class LTX2ConnectorTransformer1d(nn.Module):
    def __init__(self, inner_dim: int = 8, num_learnable_registers: int = 4):
        super().__init__()
        self.num_learnable_registers = num_learnable_registers
        init_registers = torch.rand(num_learnable_registers, inner_dim) * 2.0 - 1.0
        self.learnable_registers = nn.Parameter(init_registers)
        self.norm_out = nn.RMSNorm(inner_dim, eps=1e-6, elementwise_affine=False)

    def _binarize(self, attention_mask, attn_mask_binarize_threshold):
        binary_attn_mask = (attention_mask >= attn_mask_binarize_threshold).int()
        if binary_attn_mask.ndim == 4:
            binary_attn_mask = binary_attn_mask.squeeze(1).squeeze(1)  # [B, 1, 1, L] --> [B, L]
        return binary_attn_mask

    def forward(self, hidden_states, attention_mask, attn_mask_binarize_threshold: float = -9000.0):
        batch_size, seq_len, _ = hidden_states.shape
        num_register_repeats = seq_len // self.num_learnable_registers
        registers = torch.tile(self.learnable_registers, (num_register_repeats, 1))  # [seq_len, inner_dim]
        binary_attn_mask = self._binarize(attention_mask, attn_mask_binarize_threshold)

        hidden_states_non_padded = [hidden_states[i, binary_attn_mask[i].bool(), :] for i in range(batch_size)]  # want: D
        valid_seq_lens = [x.shape[0] for x in hidden_states_non_padded]
        pad_lengths = [seq_len - valid_seq_len for valid_seq_len in valid_seq_lens]
        padded_hidden_states = [
            F.pad(x, pad=(0, 0, 0, p), value=0) for x, p in zip(hidden_states_non_padded, pad_lengths)
        ]
        padded_hidden_states = torch.cat([x.unsqueeze(0) for x in padded_hidden_states], dim=0)  # [B, L, D]

        flipped_mask = torch.flip(binary_attn_mask, dims=[1]).unsqueeze(-1)  # [B, L, 1]
        hidden_states = flipped_mask * padded_hidden_states + (1 - flipped_mask) * registers
        attention_mask = torch.zeros_like(attention_mask)
        return self.norm_out(hidden_states), attention_mask


class LTX2ConnectorTransformer1dFixed(LTX2ConnectorTransformer1d):
    def forward(self, hidden_states, attention_mask, attn_mask_binarize_threshold: float = -9000.0):
        batch_size, seq_len, _ = hidden_states.shape
        num_register_repeats = seq_len // self.num_learnable_registers
        registers = (
            self.learnable_registers.unsqueeze(0).expand(num_register_repeats, -1, -1).reshape(seq_len, -1)
        )
        binary_attn_mask = self._binarize(attention_mask, attn_mask_binarize_threshold)

        # valid tokens to the front (order kept), registers by absolute position at the tail
        order = torch.argsort(1 - binary_attn_mask, dim=1, stable=True)  # [B, L]
        front_aligned = torch.gather(hidden_states, 1, order.unsqueeze(-1).expand(-1, -1, hidden_states.shape[-1]))
        num_valid = binary_attn_mask.sum(dim=1, keepdim=True)  # [B, 1]
        positions = torch.arange(seq_len, device=hidden_states.device).unsqueeze(0)  # [1, L]
        front_mask = (positions < num_valid).unsqueeze(-1)  # [B, L, 1]
        registers_expanded = registers.unsqueeze(0).expand(batch_size, -1, -1)
        hidden_states = torch.where(front_mask, front_aligned, registers_expanded.to(hidden_states.dtype))
        attention_mask = torch.zeros_like(attention_mask)
        return self.norm_out(hidden_states), attention_mask


if __name__ == "__main__":
    torch.manual_seed(0)
    B, L, D = 3, 8, 8
    x = torch.randn(B, L, D)
    valid = torch.zeros(B, L)
    for b, n in enumerate([8, 5, 2]):  # text encoder output is left-padded
        valid[b, L - n:] = 1.0
    attn = ((1.0 - valid) * -10000.0).view(B, 1, 1, L)

    buggy = LTX2ConnectorTransformer1d(D)
    fixed = LTX2ConnectorTransformer1dFixed(D)
    fixed.load_state_dict(buggy.state_dict())
    out_b, _ = buggy(x, attn)
    out_f, _ = fixed(x, attn)
    assert torch.allclose(out_b, out_f, atol=1e-6)
    print("same layout; buggy path ran", B, "boolean-mask gathers (one nonzero sync each on CUDA)")
