# source: NVIDIA/Megatron-LM https://github.com/NVIDIA/Megatron-LM/issues/1403 — forward_backward_no_pipelining accumulated the per-microbatch token count with `total_num_tokens += num_tokens.item()`, blocking the host between every forward and backward; the fix (commit linked in the issue) keeps the sum on device with `total_num_tokens += num_tokens`.
import contextlib

import torch
import torch.nn as nn


def loss_func(loss_mask, output_tensor):
    losses = output_tensor.float()
    loss_mask = loss_mask.view(-1).float()
    loss = torch.sum(losses.view(-1) * loss_mask)
    num_tokens = loss_mask.sum().clone().detach().to(torch.int)
    return loss, num_tokens, {"lm loss": torch.cat([loss.view(1), num_tokens.view(1)])}


def forward_step_func(data_iterator, model):
    tokens, labels, loss_mask = next(data_iterator)
    logits = model(tokens)
    output_tensor = nn.functional.cross_entropy(
        logits.view(-1, logits.size(-1)), labels.view(-1), reduction="none")
    return output_tensor, lambda out: loss_func(loss_mask, out)


def forward_step(forward_step_func, data_iterator, model, num_microbatches, forward_data_store):
    output_tensor, loss_fn = forward_step_func(data_iterator, model)
    output_tensor, num_tokens, loss_reduced = loss_fn(output_tensor)
    output_tensor = output_tensor / num_microbatches
    forward_data_store.append(loss_reduced)
    return output_tensor, num_tokens


def backward_step(output_tensor):
    output_tensor.backward()


def forward_backward_no_pipelining(forward_step_func, data_iterator, model, num_microbatches,
                                   forward_only=False, no_sync_func=contextlib.nullcontext):
    forward_data_store = []
    total_num_tokens = torch.zeros([], dtype=torch.int, device=next(model.parameters()).device)
    with no_sync_func():
        for i in range(num_microbatches - 1):
            output_tensor, num_tokens = forward_step(
                forward_step_func, data_iterator, model, num_microbatches, forward_data_store)
            total_num_tokens += num_tokens.item()  # want: D
            if not forward_only:
                backward_step(output_tensor)

    # Run computation for last microbatch out of context handler (want to
    # synchronize gradients).
    output_tensor, num_tokens = forward_step(
        forward_step_func, data_iterator, model, num_microbatches, forward_data_store)
    total_num_tokens += num_tokens.item()  # want: D

    if not forward_only:
        backward_step(output_tensor)

    return forward_data_store, total_num_tokens


def forward_backward_no_pipelining_fixed(forward_step_func, data_iterator, model, num_microbatches,
                                         forward_only=False, no_sync_func=contextlib.nullcontext):
    forward_data_store = []
    total_num_tokens = torch.zeros([], dtype=torch.int, device=next(model.parameters()).device)
    with no_sync_func():
        for i in range(num_microbatches - 1):
            output_tensor, num_tokens = forward_step(
                forward_step_func, data_iterator, model, num_microbatches, forward_data_store)
            total_num_tokens += num_tokens
            if not forward_only:
                backward_step(output_tensor)

    output_tensor, num_tokens = forward_step(
        forward_step_func, data_iterator, model, num_microbatches, forward_data_store)
    total_num_tokens += num_tokens

    if not forward_only:
        backward_step(output_tensor)

    return forward_data_store, total_num_tokens


def make_batches(n, vocab=32, seq=16, mbs=2):
    g = torch.Generator().manual_seed(0)
    out = []
    for _ in range(n):
        tokens = torch.randint(0, vocab, (mbs, seq), generator=g)
        labels = torch.roll(tokens, -1, dims=1)
        loss_mask = (torch.rand(mbs, seq, generator=g) > 0.2).float()
        out.append((tokens, labels, loss_mask))
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(32, 16), nn.Linear(16, 32))
    batches = make_batches(4)
    _, n_bug = forward_backward_no_pipelining(forward_step_func, iter(batches), model, 4)
    _, n_fix = forward_backward_no_pipelining_fixed(forward_step_func, iter(batches), model, 4)
    assert int(n_bug) == int(n_fix)
    print("total_num_tokens:", int(n_fix))
