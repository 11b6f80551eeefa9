# source: sgl-project/sglang-omni https://github.com/sgl-project/sglang-omni/pull/1462 — Qwen3TTSModelRunner._write_feedback_buffers built the per-step decode feedback rows with torch.stack(rows).to(...) into a temporary and then .copy_()'d it into the staged embedding weight, and post_process_outputs cloned two rows per request; the fix stacks straight into the graph buffer (torch.stack(rows, out=weight[:bs])) and takes one batched snapshot clone per step.
import torch
import torch.nn as nn


class SchedReq:
    def __init__(self, request_id, hidden):
        self.request_id = request_id
        self.pending_feedback_queue = [torch.randn(hidden)]
        self.output_codes = []
        self.feedback_out = []


class Qwen3TTSModel(nn.Module):
    def __init__(self, vocab=128, hidden=64, max_bs=16, groups=16):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self._decode_feedback_embedding = nn.Embedding(max_bs, hidden)
        self._output_codes = torch.zeros(max_bs, groups, dtype=torch.long)
        self._output_embeds = torch.zeros(max_bs, hidden)

    def get_input_embeddings(self):
        return self.embed_tokens


def _take_next_decode_input_embed(sched_req, device, dtype):
    if not sched_req.pending_feedback_queue:
        return None
    return sched_req.pending_feedback_queue.pop(0).to(device=device, dtype=dtype)


class Qwen3TTSModelRunner:
    def __init__(self, model):
        self.model = model
        self._row_ids_cache = None

    def _write_feedback_buffers(self, input_ids, requests):
        batch_size = len(requests)
        if batch_size == 0:
            return
        decode_feedback_embedding = self.model._decode_feedback_embedding
        row_ids = torch.arange(batch_size, device=input_ids.device, dtype=input_ids.dtype)
        rows = []
        for row_idx, sched_req in enumerate(requests):
            combined = _take_next_decode_input_embed(
                sched_req,
                device=decode_feedback_embedding.weight.device,
                dtype=decode_feedback_embedding.weight.dtype,
            )
            if combined is None:
                token_id = input_ids[row_idx : row_idx + 1].to(device=decode_feedback_embedding.weight.device)
                combined = self.model.get_input_embeddings()(token_id).reshape(-1)
            rows.append(combined)
        stacked = torch.stack(rows, dim=0).to(device=decode_feedback_embedding.weight.device, dtype=decode_feedback_embedding.weight.dtype)  # want: C
        with torch.no_grad():
            decode_feedback_embedding.weight[:batch_size].copy_(stacked)  # want: C
        # During graph decode, input_ids carries staged embedding row ids.
        input_ids[:batch_size].copy_(row_ids)

    def post_process_outputs(self, requests, finished):
        for row_idx, sched_req in enumerate(requests):
            if finished[row_idx]:
                continue
            code_chunk = self.model._output_codes[row_idx].detach().clone()  # maybe: C (the snapshot itself is required because the buffer is overwritten next step; the fix only batched 2N per-row clones into one clone per step)
            feedback = self.model._output_embeds[row_idx].detach().clone()  # maybe: C (same as above)
            sched_req.output_codes.append(code_chunk)
            sched_req.pending_feedback_queue.append(feedback)

    # ---- fixed versions (after #1462) ----
    def _decode_row_ids(self, batch_size, input_ids):
        cached = self._row_ids_cache
        if cached is None or cached.numel() < batch_size or cached.dtype != input_ids.dtype:
            cached = torch.arange(max(batch_size, 64), device=input_ids.device, dtype=input_ids.dtype)
            self._row_ids_cache = cached
        return cached[:batch_size]

    def _write_feedback_buffers_fixed(self, input_ids, requests):
        batch_size = len(requests)
        if batch_size == 0:
            return
        decode_feedback_embedding = self.model._decode_feedback_embedding
        row_ids = self._decode_row_ids(batch_size, input_ids)
        rows = []
        for row_idx, sched_req in enumerate(requests):
            combined = _take_next_decode_input_embed(
                sched_req,
                device=decode_feedback_embedding.weight.device,
                dtype=decode_feedback_embedding.weight.dtype,
            )
            if combined is None:
                token_id = input_ids[row_idx : row_idx + 1].to(device=decode_feedback_embedding.weight.device)
                combined = self.model.get_input_embeddings()(token_id).reshape(-1)
            rows.append(combined)
        with torch.no_grad():
            torch.stack(rows, dim=0, out=decode_feedback_embedding.weight[:batch_size])
        input_ids[:batch_size].copy_(row_ids)

    def post_process_outputs_fixed(self, requests, finished):
        n = len(requests)
        codes_snap = self.model._output_codes[:n].clone()
        embeds_snap = self.model._output_embeds[:n].clone()
        for row_idx, sched_req in enumerate(requests):
            if finished[row_idx]:
                continue
            sched_req.output_codes.append(codes_snap[row_idx])
            sched_req.pending_feedback_queue.append(embeds_snap[row_idx])


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Qwen3TTSModel()
    runner = Qwen3TTSModelRunner(model)
    reqs = [SchedReq(i, 64) for i in range(8)]
    reqs2 = [SchedReq(i, 64) for i in range(8)]
    for r, r2 in zip(reqs, reqs2):
        r2.pending_feedback_queue = [t.clone() for t in r.pending_feedback_queue]
    for step in range(20):  # AR decode loop
        ids = torch.randint(0, 128, (8,))
        runner._write_feedback_buffers(ids.clone(), reqs)
        w1 = model._decode_feedback_embedding.weight[:8].detach().clone()
        runner._write_feedback_buffers_fixed(ids.clone(), reqs2)
        w2 = model._decode_feedback_embedding.weight[:8].detach().clone()
        assert torch.equal(w1, w2)
        model._output_codes.random_(0, 100)
        model._output_embeds.normal_()
        finished = [False] * 8
        runner.post_process_outputs(reqs, finished)
        runner.post_process_outputs_fixed(reqs2, finished)
    print("ok", len(reqs[0].output_codes))
