# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/35546 — EAGLEDraftExtendCudaGraphRunner.execute wrapped `out.hidden_states[:raw_bs]`, a slice of the captured graph's static output buffer, into the LogitsProcessorOutput that the EAGLE worker kept in spec_info for the next round, so the following replay overwrote it; the fix clones the selected hidden states before they leave the graph buffer.
from dataclasses import dataclass
from typing import Optional

import torch
from torch import nn


@dataclass
class LogitsProcessorOutput:
    next_token_logits: torch.Tensor
    hidden_states: Optional[torch.Tensor] = None


@dataclass
class ForwardBatch:
    batch_size: int
    input_embeds: torch.Tensor


@dataclass
class EagleDraftInput:
    hidden_states: Optional[torch.Tensor] = None
    topk_p: Optional[torch.Tensor] = None
    topk_index: Optional[torch.Tensor] = None


class EAGLEDraftExtendCudaGraphRunner:
    def __init__(self, model, max_bs, hidden_size, vocab_size):
        self.model = model
        self.static_input = torch.zeros(max_bs, hidden_size)
        # Output buffers produced at capture time and rewritten by every replay.
        self.output_buffers = LogitsProcessorOutput(
            next_token_logits=torch.zeros(max_bs, vocab_size), hidden_states=torch.zeros(max_bs, hidden_size))

    @torch.no_grad()
    def _replay_graph(self, shape_key, forward_batch):
        bs = forward_batch.batch_size
        self.static_input[:bs].copy_(forward_batch.input_embeds)
        hidden, logits = self.model(self.static_input)  # stands in for graph.replay()
        self.output_buffers.hidden_states.copy_(hidden)
        self.output_buffers.next_token_logits.copy_(logits)
        return self.output_buffers

    def execute(self, forward_batch):
        raw_bs = forward_batch.batch_size
        out = self._replay_graph(raw_bs, forward_batch)
        out = LogitsProcessorOutput(
            next_token_logits=out.next_token_logits[:raw_bs],  # maybe: A (consumed by topk before the next replay)
            hidden_states=out.hidden_states[:raw_bs],  # want: A
        )
        return out


class EAGLEDraftExtendCudaGraphRunnerFixed(EAGLEDraftExtendCudaGraphRunner):
    def execute(self, forward_batch):
        raw_bs = forward_batch.batch_size
        out = self._replay_graph(raw_bs, forward_batch)
        out = LogitsProcessorOutput(
            next_token_logits=out.next_token_logits[:raw_bs],
            # Detach from the graph buffer: the next replay overwrites these rows.
            hidden_states=out.hidden_states[:raw_bs].clone(),
        )
        return out


class DraftModel(nn.Module):
    def __init__(self, hidden, vocab):
        super().__init__()
        self.layer = nn.Linear(hidden, hidden)
        self.lm_head = nn.Linear(hidden, vocab)

    def forward(self, x):
        h = torch.tanh(self.layer(x))
        return h, self.lm_head(h)


class EAGLEWorker:
    def __init__(self, runner):
        self.cuda_graph_runner_for_draft_extend = runner

    def forward_draft_extend_after_decode(self, forward_batch, spec_info):
        logits_output = self.cuda_graph_runner_for_draft_extend.execute(forward_batch)
        probs = torch.softmax(logits_output.next_token_logits, dim=-1)
        spec_info.topk_p, spec_info.topk_index = probs.topk(2, dim=-1)
        spec_info.hidden_states = logits_output.hidden_states
        return spec_info


if __name__ == "__main__":
    torch.manual_seed(0)
    model = DraftModel(16, 32)
    for runner_cls in (EAGLEDraftExtendCudaGraphRunner, EAGLEDraftExtendCudaGraphRunnerFixed):
        worker = EAGLEWorker(runner_cls(model, max_bs=8, hidden_size=16, vocab_size=32))
        step1 = ForwardBatch(3, torch.randn(3, 16))
        info_a = worker.forward_draft_extend_after_decode(step1, EagleDraftInput())
        kept = info_a.hidden_states.clone()
        # Another request group replays the same captured graph before info_a is consumed.
        worker.forward_draft_extend_after_decode(ForwardBatch(3, torch.randn(3, 16)), EagleDraftInput())
        survived = torch.equal(info_a.hidden_states, kept)
        print(f"{runner_cls.__name__}: round-1 hidden states survive next replay: {survived}")
        assert survived == (runner_cls is EAGLEDraftExtendCudaGraphRunnerFixed)
