# source: THUDM/slime https://github.com/THUDM/slime/commit/e1eea29da634a12e927f938b515f822269bda556 — DeltaCompressionTracker._prepare_delta_chunk appended `(name, tensor)` to `baseline_updates`, kept in the DeltaCompressionCommitState of every PreparedChunk until commit_chunk; the HF tensors were chunk/split/reshape views of the EP-gathered expert buffers, so the pending commit states "pinned ~84 GB of gathered data alive" -> OOM on later steps. The fix stores `tensor.detach().clone()` to break the view chain so gathered buffers can be freed between chunks.
from dataclasses import dataclass, field

import torch


@dataclass
class DeltaCompressionCommitState:
    baseline_updates: list
    artifact_tensors: list = field(default_factory=list)


@dataclass
class PreparedChunk:
    is_delta: bool
    tensors: list
    commit_state: DeltaCompressionCommitState


def gather_experts_to_hf(num_experts=8, rows=64, cols=128):
    gathered = torch.randn(num_experts * rows, cols)  # stands in for the EP all-gather output buffer
    return [(f"experts.{i}.down_proj.weight", w) for i, w in enumerate(gathered.chunk(num_experts))]


class DeltaCompressionTracker:
    def __init__(self, clone_baseline=False):
        self.baseline, self.delta_dtype, self.clone_baseline = {}, torch.bfloat16, clone_baseline

    def _prepare_full_chunk(self, tensors):
        return PreparedChunk(False, tensors, DeltaCompressionCommitState(baseline_updates=list(tensors)))  # maybe: A (full-sync path also holds HF views until commit; the fix commit only changed the delta path)

    def _prepare_delta_chunk(self, tensors):
        delta_tensors, baseline_updates = [], []
        for name, tensor in tensors:
            prev_gpu = self.baseline[name].to(device=tensor.device)
            delta = (tensor - prev_gpu).to(self.delta_dtype)
            del prev_gpu
            if self.clone_baseline:
                baseline_updates.append((name, tensor.detach().clone()))
            else:
                baseline_updates.append((name, tensor))  # want: A
            delta_tensors.append((name, delta))
        return PreparedChunk(True, delta_tensors, DeltaCompressionCommitState(baseline_updates=baseline_updates))

    def commit_chunk(self, commit_state):
        for name, tensor in commit_state.baseline_updates:
            if name not in self.baseline:
                self.baseline[name] = torch.empty_like(tensor, device=torch.device("cpu"))
            self.baseline[name].copy_(tensor.detach())


def pinned_bytes(chunks):
    seen = {}
    for chunk in chunks:
        for _, t in chunk.commit_state.baseline_updates:
            seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
    return sum(seen.values())


def run(clone_baseline):
    torch.manual_seed(0)
    tracker = DeltaCompressionTracker(clone_baseline)
    full = tracker._prepare_full_chunk([(n, t.clone()) for n, t in gather_experts_to_hf()])
    tracker.commit_chunk(full.commit_state)
    pending = []  # chunks are queued for broadcast; commit happens after the engines ack
    for _ in range(4):
        hf = gather_experts_to_hf()
        pending.append(tracker._prepare_delta_chunk(hf[:2]))  # only 2 of 8 experts changed enough to send
        del hf
    return pinned_bytes(pending), sum(t.numel() * t.element_size() for c in pending for _, t in c.commit_state.baseline_updates)


if __name__ == "__main__":
    buggy_pinned, logical = run(clone_baseline=False)
    fixed_pinned, _ = run(clone_baseline=True)
    print("pending baseline bytes logical:", logical, "buggy pinned:", buggy_pinned, "fixed pinned:", fixed_pinned)
    assert buggy_pinned == 4 * logical and fixed_pinned == logical
