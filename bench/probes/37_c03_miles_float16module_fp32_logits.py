# source: radixark/miles https://github.com/radixark/miles/pull/2764 — Megatron's Float16Module.forward defaults to fp32_output=True, so the policy log-prob forward upcast the complete per-rank [T, V/TP] bf16 logits to a new fp32 tensor before the chunked log-prob path (which already casts each chunk to fp32) could run, OOMing on large vocabularies. The fix passes fp32_output=False for policy scoring/training so logits stay in bf16 and only each chunk is converted to fp32 right before the cross-entropy.
import torch
import torch.nn as nn
import torch.nn.functional as F


class GPTModel(nn.Module):
    def __init__(self, vocab_size: int = 64, hidden: int = 16):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, hidden)
        self.decoder = nn.Linear(hidden, hidden)
        self.output_layer = nn.Linear(hidden, vocab_size, bias=False)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.decoder(self.embedding(input_ids)))
        return self.output_layer(h)


class Float16Module(nn.Module):
    def __init__(self, module: nn.Module, dtype=torch.bfloat16):
        super().__init__()
        self.module = module.to(dtype)

    def forward(self, *inputs, fp32_output: bool = True, **kwargs):
        outputs = self.module(*inputs, **kwargs)
        if fp32_output:
            outputs = outputs.float()  # want: C
        return outputs


def compute_log_probs(logits_chunk: torch.Tensor, tokens_chunk: torch.Tensor) -> torch.Tensor:
    return -F.cross_entropy(logits_chunk, tokens_chunk, reduction="none")


def get_log_probs(logits: torch.Tensor, tokens: torch.Tensor, log_probs_chunk_size: int) -> torch.Tensor:
    log_probs = []
    for logits_chunk, tokens_chunk in zip(logits.split(log_probs_chunk_size), tokens.split(log_probs_chunk_size)):
        logits_chunk = logits_chunk.to(torch.float32)
        log_probs.append(compute_log_probs(logits_chunk, tokens_chunk))
    return torch.cat(log_probs, dim=0)


def forward_only_log_probs(model: Float16Module, input_ids: torch.Tensor, args) -> dict:
    logits = model(input_ids)  # maybe: C (caller leaves fp32_output at its default True)
    logits = logits.squeeze(0)
    tokens = torch.roll(input_ids.squeeze(0), shifts=-1)
    return {"log_probs": get_log_probs(logits, tokens, args["log_probs_chunk_size"]), "logits": logits}


def forward_only_log_probs_fixed(model: Float16Module, input_ids: torch.Tensor, args) -> dict:
    logits = model(input_ids, fp32_output=False)
    logits = logits.squeeze(0)
    tokens = torch.roll(input_ids.squeeze(0), shifts=-1)
    return {"log_probs": get_log_probs(logits, tokens, args["log_probs_chunk_size"]), "logits": logits}


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Float16Module(GPTModel())
    input_ids = torch.randint(0, 64, (1, 24))
    args = {"log_probs_chunk_size": 8}
    with torch.no_grad():
        old = forward_only_log_probs(model, input_ids, args)
        new = forward_only_log_probs_fixed(model, input_ids, args)
    assert old["logits"].dtype == torch.float32 and new["logits"].dtype == torch.bfloat16
    assert old["logits"].untyped_storage().nbytes() == 2 * new["logits"].untyped_storage().nbytes()
    assert torch.allclose(old["log_probs"], new["log_probs"], atol=1e-5)
    print("ok")
