# source: NVIDIA-NeMo/RL https://github.com/NVIDIA-NeMo/RL/pull/918 — DistributedLogprob.forward cast the whole TP-sharded bf16 logits tensor with `vocab_parallel_logits.to(torch.float32)` before the log-softmax, materialising a full [batch, seq, vocab/TP] fp32 copy that OOMed in RL training; the fix ("chunked logprob calculation with deferred fp32 cast") slices the sequence into chunks and upcasts only each chunk inside the loop.
import torch
import torch.distributed as dist


def _all_reduce(t, op, group):
    if group is not None:
        dist.all_reduce(t, op=op, group=group)


@torch.no_grad()
def _compute_distributed_log_softmax(vocab_parallel_logits, group):
    logits_max = torch.amax(vocab_parallel_logits, dim=-1, keepdim=True)
    _all_reduce(logits_max, dist.ReduceOp.MAX, group)
    vocab_parallel_logits = vocab_parallel_logits - logits_max
    sum_exp_logits = vocab_parallel_logits.exp().sum(-1, keepdim=True).float()
    _all_reduce(sum_exp_logits, dist.ReduceOp.SUM, group)
    return vocab_parallel_logits - sum_exp_logits.log_().to(vocab_parallel_logits.dtype)


class DistributedLogprob(torch.autograd.Function):
    @staticmethod
    def forward(ctx, vocab_parallel_logits, target, vocab_start_index, vocab_end_index, group, inference_only=False):
        target_mask = (target < vocab_start_index) | (target >= vocab_end_index)
        masked_target = target - vocab_start_index
        masked_target[target_mask] = 0
        vocab_parallel_logits = vocab_parallel_logits.to(torch.float32)  # want: C

        log_softmax_output = _compute_distributed_log_softmax(vocab_parallel_logits, group=group)
        log_probs = log_softmax_output.clone()
        softmax_output = log_softmax_output.exp_()

        log_probs = torch.gather(log_probs, -1, masked_target.unsqueeze(-1)).squeeze(-1)
        log_probs[target_mask] = 0.0
        _all_reduce(log_probs, dist.ReduceOp.SUM, group)
        if not inference_only:
            ctx.save_for_backward(softmax_output, target_mask, masked_target)
        return log_probs


class ChunkedDistributedLogprob(torch.autograd.Function):
    @staticmethod
    def forward(ctx, vocab_parallel_logits, target, vocab_start_index, vocab_end_index, chunk_size, tp_group,
                inference_only=False):
        target_mask = (target < vocab_start_index) | (target >= vocab_end_index)
        masked_target = target - vocab_start_index
        masked_target[target_mask] = 0

        seq_size = int(vocab_parallel_logits.shape[1])
        num_chunks = (seq_size + chunk_size - 1) // chunk_size
        all_log_probs = []
        for chunk_idx in range(num_chunks):
            chunk_start = chunk_idx * chunk_size
            chunk_end = min(seq_size, (chunk_idx + 1) * chunk_size)
            logits = vocab_parallel_logits[:, chunk_start:chunk_end, :]
            logits = logits.to(dtype=torch.float32)
            log_softmax_output = _compute_distributed_log_softmax(logits, group=tp_group)
            log_probs = torch.gather(
                log_softmax_output, -1, masked_target[:, chunk_start:chunk_end].unsqueeze(-1)
            ).squeeze(-1)
            log_probs[target_mask[:, chunk_start:chunk_end]] = 0.0
            _all_reduce(log_probs, dist.ReduceOp.SUM, tp_group)
            all_log_probs.append(log_probs)
        log_probs = torch.cat(all_log_probs, dim=1)
        if not inference_only:
            ctx.save_for_backward(vocab_parallel_logits, target_mask, masked_target)
            ctx.chunk_size = chunk_size
            ctx.tp_group = tp_group
        return log_probs


def from_parallel_logits_to_logprobs(vocab_parallel_logits, target, vocab_start_index, vocab_end_index, group,
                                     inference_only=False, chunk_size=None):
    target = target.roll(shifts=-1, dims=-1)
    if chunk_size is not None:
        probs = ChunkedDistributedLogprob.apply(
            vocab_parallel_logits, target, vocab_start_index, vocab_end_index, chunk_size, group, inference_only
        ).contiguous()
    else:
        probs = DistributedLogprob.apply(
            vocab_parallel_logits, target, vocab_start_index, vocab_end_index, group, inference_only
        ).contiguous()
    return probs[:, :-1]


if __name__ == "__main__":
    torch.manual_seed(0)
    B, S, V = 2, 256, 2048
    logits = torch.randn(B, S, V).to(torch.bfloat16)
    target = torch.randint(0, V, (B, S))
    full = from_parallel_logits_to_logprobs(logits, target, 0, V, None, inference_only=True)
    chunked = from_parallel_logits_to_logprobs(logits, target, 0, V, None, inference_only=True, chunk_size=32)
    torch.testing.assert_close(full, chunked)
    print("buggy fp32 copy of all logits:", B * S * V * 4, "bytes; fixed per-chunk fp32:", B * 32 * V * 4, "bytes")
