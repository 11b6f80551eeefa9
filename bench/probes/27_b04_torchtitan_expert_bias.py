# source: pytorch/torchtitan https://github.com/pytorch/torchtitan/pull/1226 — MoE._update_expert_bias rebound the registered buffer (`self.expert_bias = self.expert_bias + expert_bias_delta`), so the tensor the checkpointer already held was never updated and checkpoints stored all-zero expert_bias; the fix updates the buffer in place (`self.expert_bias.add_(expert_bias_delta)`).
import torch
import torch.nn as nn
import torch.nn.functional as F


class TokenChoiceTopKRouter(nn.Module):
    def __init__(self, dim, num_experts, top_k):
        super().__init__()
        self.gate = nn.Linear(dim, num_experts, bias=False)
        self.num_experts = num_experts
        self.top_k = top_k

    def forward(self, x, expert_bias=None):
        scores = F.softmax(self.gate(x).to(torch.float32), dim=1)
        # NOTE: The expert_bias is only used for routing. The gating value
        #       top_scores is still derived from the original scores.
        _, selected_experts_indices = torch.topk(scores + expert_bias, k=self.top_k, dim=1)
        top_scores = scores.gather(dim=1, index=selected_experts_indices)
        num_local_tokens_per_expert = torch.histc(
            selected_experts_indices.view(-1).float(), bins=self.num_experts, min=0, max=self.num_experts
        )
        return top_scores, selected_experts_indices, num_local_tokens_per_expert


class MoE(nn.Module):
    def __init__(self, dim=8, num_experts=4, top_k=1, load_balance_coeff=1e-3):
        super().__init__()
        self.router = TokenChoiceTopKRouter(dim, num_experts, top_k)
        self.experts = nn.Linear(dim, dim)
        self.load_balance_coeff = load_balance_coeff
        self.register_buffer("expert_bias", torch.zeros(num_experts, dtype=torch.float32), persistent=True)
        self.register_buffer("tokens_per_expert", torch.zeros(num_experts, dtype=torch.float32), persistent=True)
        if self.load_balance_coeff is not None and self.load_balance_coeff > 0:
            self.register_full_backward_hook(self._update_expert_bias)

    def _update_expert_bias(self, *_):
        expert_bias_delta = self.load_balance_coeff * torch.sign(
            self.tokens_per_expert.mean() - self.tokens_per_expert
        )
        expert_bias_delta = expert_bias_delta - expert_bias_delta.mean()
        self.expert_bias = self.expert_bias + expert_bias_delta  # want: B

        self.tokens_per_expert.zero_()

    def forward(self, x):
        bs, slen, dim = x.shape
        top_scores, _, num_local_tokens_per_expert = self.router(x.reshape(bs * slen, dim), self.expert_bias)
        # will be used to update the expert bias for load balancing
        self.tokens_per_expert += num_local_tokens_per_expert
        out = self.experts(x.reshape(bs * slen, dim)) * top_scores.sum(-1, keepdim=True)
        return out.reshape(bs, slen, dim)


class MoEFixed(MoE):
    def _update_expert_bias(self, *_):
        expert_bias_delta = self.load_balance_coeff * torch.sign(
            self.tokens_per_expert.mean() - self.tokens_per_expert
        )
        expert_bias_delta = expert_bias_delta - expert_bias_delta.mean()
        self.expert_bias.add_(expert_bias_delta)

        self.tokens_per_expert.zero_()


class CheckpointManager:
    """Like torchtitan's checkpointer: grabs the model state dict once and saves it later."""
    def __init__(self, model):
        self.states = {"model": model.state_dict()}

    def save(self):
        return {k: v.clone() for k, v in self.states["model"].items()}


def train(model_cls):
    torch.manual_seed(0)
    model = model_cls()
    ckpt = CheckpointManager(model)
    for _ in range(3):
        x = torch.randn(2, 16, 8, requires_grad=True)
        model(x).sum().backward()
    return model.expert_bias, ckpt.save()["expert_bias"]


if __name__ == "__main__":
    live, saved = train(MoE)
    print("buggy: live expert_bias", live, "\n       checkpointed      ", saved)
    live, saved = train(MoEFixed)
    print("fixed: live expert_bias", live, "\n       checkpointed      ", saved)
