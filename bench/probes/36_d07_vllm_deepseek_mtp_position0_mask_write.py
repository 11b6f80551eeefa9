# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/27643 — DeepSeekMultiTokenPredictorLayer.forward zeroed the position-0 embeddings with `inputs_embeds[positions == 0] = 0`; a boolean-mask index_put runs nonzero() on the device mask and blocks on the D2H count in every speculative draft step (and breaks static-graph capture on Ascend); the fix rewrites it as `torch.where(positions.unsqueeze(-1) == 0, 0, inputs_embeds)`.
import torch
import torch.nn as nn


class DeepSeekMultiTokenPredictorLayer(nn.Module):
    def __init__(self, hidden_size: int):
        super().__init__()
        self.enorm = nn.RMSNorm(hidden_size, eps=1e-6)
        self.hnorm = nn.RMSNorm(hidden_size, eps=1e-6)
        self.eh_proj = nn.Linear(hidden_size * 2, hidden_size, bias=False)
        self.mtp_block = nn.Sequential(nn.Linear(hidden_size, hidden_size), nn.SiLU())

    def forward(self, input_ids, positions, previous_hidden_states, inputs_embeds=None, spec_step_index=0):
        assert inputs_embeds is not None
        # masking inputs at position 0, as not needed by MTP
        inputs_embeds[positions == 0] = 0  # want: D
        inputs_embeds = self.enorm(inputs_embeds)
        previous_hidden_states = self.hnorm(previous_hidden_states)
        hidden_states = self.eh_proj(torch.cat([inputs_embeds, previous_hidden_states], dim=-1))
        return hidden_states + self.mtp_block(hidden_states)


class DeepSeekMultiTokenPredictorLayerFixed(DeepSeekMultiTokenPredictorLayer):
    def forward(self, input_ids, positions, previous_hidden_states, inputs_embeds=None, spec_step_index=0):
        assert inputs_embeds is not None
        # masking inputs at position 0, as not needed by MTP
        inputs_embeds = torch.where(positions.unsqueeze(-1) == 0, 0, inputs_embeds)
        inputs_embeds = self.enorm(inputs_embeds)
        previous_hidden_states = self.hnorm(previous_hidden_states)
        hidden_states = self.eh_proj(torch.cat([inputs_embeds, previous_hidden_states], dim=-1))
        return hidden_states + self.mtp_block(hidden_states)


class DeepSeekMultiTokenPredictor(nn.Module):
    def __init__(self, vocab_size=64, hidden_size=16, num_mtp_layers=1, layer_cls=DeepSeekMultiTokenPredictorLayer):
        super().__init__()
        self.mtp_start_layer_idx = 61
        self.num_mtp_layers = num_mtp_layers
        self.embed_tokens = nn.Embedding(vocab_size, hidden_size)
        self.layers = nn.ModuleDict(
            {str(self.mtp_start_layer_idx + i): layer_cls(hidden_size) for i in range(num_mtp_layers)}
        )
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)

    def forward(self, input_ids, positions, previous_hidden_states, spec_step_idx=0):
        inputs_embeds = self.embed_tokens(input_ids)
        current_step_idx = spec_step_idx % self.num_mtp_layers
        layer = self.layers[str(self.mtp_start_layer_idx + current_step_idx)]
        return layer(input_ids, positions, previous_hidden_states, inputs_embeds, current_step_idx)


@torch.inference_mode()
def propose(drafter, next_token_ids, positions, target_hidden_states, num_speculative_tokens=3):
    draft_token_ids = []
    input_ids, hidden_states = next_token_ids, target_hidden_states
    for step in range(num_speculative_tokens):  # one drafter forward per speculative token
        hidden_states = drafter(input_ids, positions, hidden_states, spec_step_idx=step)
        input_ids = drafter.lm_head(hidden_states).argmax(dim=-1)
        draft_token_ids.append(input_ids)
        positions = positions + 1
    return torch.stack(draft_token_ids, dim=1)


if __name__ == "__main__":
    torch.manual_seed(0)
    buggy = DeepSeekMultiTokenPredictor()
    fixed = DeepSeekMultiTokenPredictor(layer_cls=DeepSeekMultiTokenPredictorLayerFixed)
    fixed.load_state_dict(buggy.state_dict())
    next_tokens = torch.tensor([3, 7, 11, 5])
    positions = torch.tensor([0, 4, 0, 9])  # two requests just started (position 0)
    hidden = torch.randn(4, 16)
    a = propose(buggy, next_tokens, positions, hidden)
    b = propose(fixed, next_tokens, positions, hidden)
    assert torch.equal(a, b)
    print("same draft tokens:", a.tolist())
