# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/7892 — The PR adds `return_hidden_states` and passes the sampler's batched last-layer hidden states up to each sequence group, which keeps one row per decode step until the RequestOutput is built. A reviewer reported that with return_hidden_states=True GPU usage "keeps going up" during llm.generate, because each kept row is a view into that step's whole [num_tokens, hidden] batch tensor; the suggested remedy was to move the per-sequence hidden states to CPU before keeping them.
from dataclasses import dataclass, field
from typing import List, Optional

import torch


@dataclass
class SamplerOutput:
    sampled_token_ids: torch.Tensor
    hidden_states: Optional[torch.Tensor] = None


@dataclass
class SequenceGroup:
    request_id: str
    output_token_ids: List[int] = field(default_factory=list)
    hidden_states: List[torch.Tensor] = field(default_factory=list)


class LLMEngine:
    def __init__(self, return_hidden_states: bool):
        self.return_hidden_states = return_hidden_states

    def _process_model_outputs(self, output: SamplerOutput, scheduled_seq_groups: List[SequenceGroup]) -> None:
        for i, seq_group in enumerate(scheduled_seq_groups):
            seq_group.output_token_ids.append(int(output.sampled_token_ids[i]))
            if self.return_hidden_states and output.hidden_states is not None:
                seq_group.hidden_states.append(output.hidden_states[i])  # want: A

    def get_request_output(self, seq_group: SequenceGroup):
        return seq_group.output_token_ids, torch.stack(seq_group.hidden_states)


class LLMEngineFixed(LLMEngine):
    def _process_model_outputs(self, output: SamplerOutput, scheduled_seq_groups: List[SequenceGroup]) -> None:
        for i, seq_group in enumerate(scheduled_seq_groups):
            seq_group.output_token_ids.append(int(output.sampled_token_ids[i]))
            if self.return_hidden_states and output.hidden_states is not None:
                seq_group.hidden_states.append(output.hidden_states[i].cpu())


def run_steps(engine: LLMEngine, groups: List[SequenceGroup], steps: int, hidden: int = 256):
    g = torch.Generator().manual_seed(0)
    for _ in range(steps):
        hidden_states = torch.randn(64, hidden, generator=g)
        logits = hidden_states[: len(groups)] @ torch.ones(hidden, 8)
        engine._process_model_outputs(SamplerOutput(logits.argmax(-1), hidden_states), groups)
    return [engine.get_request_output(sg) for sg in groups]


if __name__ == "__main__":
    groups = [SequenceGroup(f"req-{i}") for i in range(4)]
    outs = run_steps(LLMEngine(return_hidden_states=True), groups, steps=6)
    row = groups[0].hidden_states[0]
    assert row.untyped_storage().nbytes() == 64 * row.numel() * row.element_size()

    groups_fixed = [SequenceGroup(f"req-{i}") for i in range(4)]
    outs_fixed = run_steps(LLMEngineFixed(return_hidden_states=True), groups_fixed, steps=6)
    for (ids_a, hs_a), (ids_b, hs_b) in zip(outs, outs_fixed):
        assert ids_a == ids_b and torch.equal(hs_a, hs_b)
    print("ok")
