# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/29723 — MedusaProposer.propose() ran `[logit.argmax(dim=-1).tolist() for logit in logits]` and transposed the Python lists on every decode step, one blocking GPU->CPU copy per Medusa head per step. The fix ("Optimize Medusa proposer to avoid GPU-CPU sync") stacks the per-head argmax into a [batch, num_heads] tensor that stays on the GPU.
import torch
import torch.nn as nn


class ResidualBlock(nn.Module):
    def __init__(self, hidden_size, num_layers):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(hidden_size, hidden_size) for _ in range(num_layers)])
        self.act = nn.SiLU()

    def forward(self, x):
        for layer in self.layers:
            x = x + self.act(layer(x))
        return x


class Medusa(nn.Module):
    def __init__(self, hidden_size, vocab_size, num_heads, num_hidden_layers=1):
        super().__init__()
        self.blocks = nn.ModuleList([ResidualBlock(hidden_size, num_hidden_layers) for _ in range(num_heads)])
        self.lm_heads = nn.ModuleList([nn.Linear(hidden_size, vocab_size, bias=False) for _ in range(num_heads)])

    def forward(self, hidden_states):
        return [block(hidden_states) for block in self.blocks]

    def compute_logits(self, hidden_states, sampling_metadata=None):
        return [lm_head(hs) for lm_head, hs in zip(self.lm_heads, hidden_states)]


class MedusaProposer:
    """Medusa proposer class for generating token sequences."""

    def __init__(self, model, device):
        self.model = model
        self.device = device

    def propose(self, target_hidden_states, sampling_metadata=None):
        # Generate blocks and compute logits
        blocks = self.model(target_hidden_states)
        logits = self.model.compute_logits(blocks, None)

        # Get draft tokens and transpose the result
        draft_tokens = [logit.argmax(dim=-1).tolist() for logit in logits]  # want: D
        return [list(row) for row in zip(*draft_tokens)]


class MedusaProposerFixed(MedusaProposer):
    def propose(self, target_hidden_states, sampling_metadata=None):
        blocks = self.model(target_hidden_states)
        logits = self.model.compute_logits(blocks, None)
        # Compute argmax for each Medusa head and stack into a single tensor
        # Shape: [batch_size, num_heads]
        draft_tokens = torch.stack([logit.argmax(dim=-1) for logit in logits], dim=1)
        return draft_tokens


class TinyTarget(nn.Module):
    def __init__(self, vocab_size, hidden_size):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden_size)
        self.mix = nn.Linear(hidden_size, hidden_size)
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)

    def forward(self, token_ids):
        hidden = torch.tanh(self.mix(self.embed(token_ids)))
        return hidden, self.lm_head(hidden)


@torch.inference_mode()
def decode_loop(proposer_cls, steps, device):
    torch.manual_seed(0)
    target = TinyTarget(100, 32).to(device)
    proposer = proposer_cls(Medusa(32, 100, num_heads=3).to(device), device)
    tokens = torch.randint(0, 100, (4,), device=device)
    all_drafts = []
    for _ in range(steps):
        hidden, logits = target(tokens)
        tokens = logits.argmax(-1)  # sampled token stays on device
        all_drafts.append(proposer.propose(hidden))
    return all_drafts


if __name__ == "__main__":
    dev = torch.device("cpu")
    buggy = decode_loop(MedusaProposer, 16, dev)
    fixed = decode_loop(MedusaProposerFixed, 16, dev)
    assert all(torch.equal(torch.tensor(b), f) for b, f in zip(buggy, fixed))
    print("draft shape per step:", tuple(fixed[0].shape), "python lists in buggy:", type(buggy[0]).__name__)
