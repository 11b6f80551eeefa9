# source: huggingface/trl https://github.com/huggingface/trl/pull/6842 — `_chunked_cross_entropy_loss` (SFT's default `chunked_nll` loss) special-cased a fully-masked micro-batch with `if n_valid_tensor == 0:` on a device tensor, a device-to-host sync on every forward; the fix folds that case into the general path (clamped chunk count, `n_valid_tensor.clamp(min=1)` in the mean) so no Python branch reads the count. (The look-alikes bound the chunk loop by the host row count.)
import torch
import torch.nn.functional as F
import torch.utils.checkpoint


def _chunk(h_chunk, lm_head_weight, lm_head_bias, lbl_chunk, logit_scale):
    logits = F.linear(h_chunk, lm_head_weight, lm_head_bias).float() * logit_scale
    loss = F.cross_entropy(logits, lbl_chunk, ignore_index=-100, reduction="sum")
    valid = lbl_chunk != -100
    correct = ((logits.argmax(-1) == lbl_chunk) & valid).sum().float()
    logp = logits.log_softmax(-1)
    entropy = -(logp.exp() * logp).sum(-1)
    return loss, correct, (entropy * valid).sum()


def _chunked_cross_entropy_loss(hidden_states, lm_head_weight, chunk_size, labels, num_items_in_batch=None,
                                logit_scale=1.0, lm_head_bias=None):
    hidden = hidden_states[..., :-1, :].reshape(-1, hidden_states.size(-1))
    labels = labels[..., 1:].reshape(-1)

    valid = labels != -100
    n_valid_tensor = valid.sum()

    correct = hidden.new_zeros((), dtype=torch.float32)
    entropy_sum = hidden.new_zeros((), dtype=torch.float32)
    if n_valid_tensor == 0:  # want: D
        # Whole micro-batch masked: keep the loss connected to every trainable parameter
        loss = (hidden_states.float().sum() + lm_head_weight.float().sum()) * 0.0
        return loss, correct, entropy_sum, n_valid_tensor

    order = valid.to(torch.int8).argsort(descending=True, stable=True)
    hidden = hidden[order]
    labels = labels[order]

    loss = hidden.new_zeros((), dtype=torch.float32)
    for start in range(0, hidden.size(0), chunk_size):
        chunk_loss, chunk_correct, chunk_entropy = torch.utils.checkpoint.checkpoint(
            _chunk, hidden[start:start + chunk_size], lm_head_weight, lm_head_bias,
            labels[start:start + chunk_size], logit_scale, use_reentrant=False,
        )
        loss = loss + chunk_loss
        correct = correct + chunk_correct
        entropy_sum = entropy_sum + chunk_entropy

    if num_items_in_batch is None:
        loss = loss / n_valid_tensor
    else:
        loss = loss / num_items_in_batch
    return loss, correct, entropy_sum, n_valid_tensor


def _chunked_cross_entropy_loss_fixed(hidden_states, lm_head_weight, chunk_size, labels, num_items_in_batch=None,
                                      logit_scale=1.0, lm_head_bias=None):
    hidden = hidden_states[..., :-1, :].reshape(-1, hidden_states.size(-1))
    labels = labels[..., 1:].reshape(-1)

    valid = labels != -100
    n_valid_tensor = valid.sum()

    correct = hidden.new_zeros((), dtype=torch.float32)
    entropy_sum = hidden.new_zeros((), dtype=torch.float32)

    order = valid.to(torch.int8).argsort(descending=True, stable=True)
    hidden = hidden[order]
    labels = labels[order]

    # A fully-masked micro-batch still runs one chunk: ignore_index gives a zero loss that stays
    # connected to hidden_states / lm_head_weight through the chunk matmul.
    loss = hidden.new_zeros((), dtype=torch.float32)
    for start in range(0, hidden.size(0), chunk_size):
        chunk_loss, chunk_correct, chunk_entropy = torch.utils.checkpoint.checkpoint(
            _chunk, hidden[start:start + chunk_size], lm_head_weight, lm_head_bias,
            labels[start:start + chunk_size], logit_scale, use_reentrant=False,
        )
        loss = loss + chunk_loss
        correct = correct + chunk_correct
        entropy_sum = entropy_sum + chunk_entropy

    if num_items_in_batch is None:
        loss = loss / n_valid_tensor.clamp(min=1)
    else:
        loss = loss / num_items_in_batch
    return loss, correct, entropy_sum, n_valid_tensor


if __name__ == "__main__":
    torch.manual_seed(0)
    hidden_states = torch.randn(2, 9, 16, requires_grad=True)
    weight = torch.randn(32, 16, requires_grad=True)
    labels = torch.randint(0, 32, (2, 9))
    labels[0, :4] = -100
    a = _chunked_cross_entropy_loss(hidden_states, weight, 4, labels)
    b = _chunked_cross_entropy_loss_fixed(hidden_states, weight, 4, labels)
    assert torch.allclose(a[0], b[0]) and torch.equal(a[3], b[3])
    masked = torch.full_like(labels, -100)
    z = _chunked_cross_entropy_loss_fixed(hidden_states, weight, 4, masked)[0]
    z.backward()
    print("loss", float(a[0].detach()), "fully-masked loss", float(z.detach()), "grad ok", weight.grad is not None)
