# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/19109 — maybe_collect_customized_info appended `v[i]`, a row view of the batch-level customized-info tensor (B, ...), to each request's req.customized_info, which accumulates until the request finishes, so every step's whole batch tensor stayed alive until the longest request in it ended (OOM); the fix stores a copy of the row.
from dataclasses import dataclass
from typing import Optional

import torch


class Req:
    def __init__(self, rid, max_new_tokens):
        self.rid = rid
        self.max_new_tokens = max_new_tokens
        self.output_ids = []
        self.customized_info = None
        self.finished = False

    def check_finished(self):
        self.finished = len(self.output_ids) >= self.max_new_tokens


@dataclass
class LogitsProcessorOutput:
    next_token_logits: torch.Tensor
    customized_info: Optional[dict] = None


class SchedulerOutputProcessorMixin:
    def maybe_collect_customized_info(self, i, req, logits_output):
        if logits_output.customized_info is None:
            return
        if req.customized_info is None:
            req.customized_info = {}
        for k, v in logits_output.customized_info.items():
            req.customized_info.setdefault(k, []).append(v[i])  # want: A

    def process_batch_result_decode(self, reqs, logits_output, next_token_ids):
        finished = []
        for i, (req, next_token_id) in enumerate(zip(reqs, next_token_ids.tolist())):
            req.output_ids.append(next_token_id)
            self.maybe_collect_customized_info(i, req, logits_output)
            req.check_finished()
            if req.finished:
                finished.append(req)
        return finished


class SchedulerOutputProcessorMixinFixed(SchedulerOutputProcessorMixin):
    def maybe_collect_customized_info(self, i, req, logits_output):
        if logits_output.customized_info is None:
            return
        if req.customized_info is None:
            req.customized_info = {}
        for k, v in logits_output.customized_info.items():
            # v is a batch tensor (B, ...); copy the row so the batch tensor can be freed
            req.customized_info.setdefault(k, []).append(v[i].clone())


def run_decode(processor, hidden=1024, vocab=64):
    # one long request shares every decode batch with many short ones
    reqs = [Req(rid=0, max_new_tokens=40)] + [Req(rid=r, max_new_tokens=2) for r in range(1, 200)]
    running, waiting = [], list(reqs)
    while running or waiting:
        while waiting and len(running) < 16:
            running.append(waiting.pop(0))
        bs = len(running)
        logits_output = LogitsProcessorOutput(
            next_token_logits=torch.randn(bs, vocab),
            customized_info={"hidden_states": torch.randn(bs, hidden)},
        )
        next_token_ids = logits_output.next_token_logits.argmax(-1)
        done = processor.process_batch_result_decode(running, logits_output, next_token_ids)
        running = [r for r in running if not r.finished]
        if reqs[0] in done:
            return reqs[0]
    return reqs[0]


def _retained(req):
    rows = req.customized_info["hidden_states"]
    storages = {r.untyped_storage().data_ptr(): r.untyped_storage().nbytes() for r in rows}
    payload = sum(r.numel() * r.element_size() for r in rows)
    return payload, sum(storages.values())


if __name__ == "__main__":
    torch.manual_seed(0)
    results = {}
    for cls in (SchedulerOutputProcessorMixin, SchedulerOutputProcessorMixinFixed):
        long_req = run_decode(cls())
        payload, retained = _retained(long_req)
        results[cls.__name__] = retained
        print(cls.__name__, "steps", len(long_req.output_ids), "payload", payload, "retained", retained)
    assert results["SchedulerOutputProcessorMixin"] > 8 * results["SchedulerOutputProcessorMixinFixed"]
