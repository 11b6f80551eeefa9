# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/27776 — `apply_custom_logit_processor` ran on the sampler hot path and, for every batch using a custom logit processor, recovered the affected rows with `batch_mask.nonzero(as_tuple=True)[0]` and indexed logits with the boolean mask, an implicit GPU-to-CPU sync on every sampling step that defeated overlap scheduling. The PR carries compact per-processor row indices in `SamplingBatchInfo`, built on the host together with the mask, and the sampler consumes those instead.
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Tuple

import torch


@dataclass
class SamplingBatchInfo:
    temperatures: torch.Tensor
    # processor id -> (processor, mask over rows)
    custom_logit_processor: Dict[int, Tuple[Callable, torch.Tensor]] = field(default_factory=dict)
    # processor id -> row indices, filled when the batch is built
    custom_logit_processor_rows: Dict[int, torch.Tensor] = field(default_factory=dict)
    custom_logit_processor_rows_cpu: Dict[int, List[int]] = field(default_factory=dict)
    custom_params: List[dict] = field(default_factory=list)


def build_sampling_info(processor_ids, processors, device):
    bs = len(processor_ids)
    info = SamplingBatchInfo(temperatures=torch.ones(bs, 1, device=device), custom_params=[{}] * bs)
    for pid in sorted(set(p for p in processor_ids if p is not None)):
        rows = [i for i, p in enumerate(processor_ids) if p == pid]
        mask = torch.zeros(bs, dtype=torch.bool)
        mask[rows] = True
        info.custom_logit_processor[pid] = (processors[pid], mask.to(device, non_blocking=True))
        info.custom_logit_processor_rows[pid] = torch.tensor(rows, dtype=torch.int64).to(device, non_blocking=True)
        info.custom_logit_processor_rows_cpu[pid] = rows
    return info


def apply_custom_logit_processor(logits, sampling_batch_info):
    for _, (processor, batch_mask) in sampling_batch_info.custom_logit_processor.items():
        batch_indices = batch_mask.nonzero(as_tuple=True)[0]  # want: D
        logits[batch_mask] = processor(  # want: D
            logits[batch_mask],  # maybe: D (boolean-mask gather, also needs the count on the host)
            [sampling_batch_info.custom_params[i] for i in batch_indices],
        )
    return logits


def apply_custom_logit_processor_fixed(logits, sampling_batch_info):
    for pid, (processor, _) in sampling_batch_info.custom_logit_processor.items():
        rows = sampling_batch_info.custom_logit_processor_rows[pid]
        params = [sampling_batch_info.custom_params[i] for i in sampling_batch_info.custom_logit_processor_rows_cpu[pid]]
        logits.index_copy_(0, rows, processor(logits.index_select(0, rows), params))
    return logits


def ban_token_zero(logits, params):
    logits = logits.clone()
    logits[:, 0] = -float("inf")
    return logits


if __name__ == "__main__":
    torch.manual_seed(0)
    info = build_sampling_info([None, 3, None, 3, 5], {3: ban_token_zero, 5: ban_token_zero}, torch.device("cpu"))
    for _ in range(3):  # one call per sampling step
        logits = torch.randn(5, 10)
        a = apply_custom_logit_processor(logits.clone(), info)
        b = apply_custom_logit_processor_fixed(logits.clone(), info)
        assert torch.equal(a, b)
        assert torch.isinf(a[[1, 3, 4], 0]).all() and not torch.isinf(a[[0, 2], 0]).any()
    print("ok")
