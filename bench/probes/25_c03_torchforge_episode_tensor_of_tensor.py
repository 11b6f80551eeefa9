# source: meta-pytorch/torchforge PR #438 (log quoted there: apps/grpo/main.py:63 and :72 "UserWarning: To copy construct from a tensor ...") — the GRPO Episode.request_tensor / response_tensor properties ran torch.tensor(tokens, dtype=torch.long) on the Completion's prompt_ids / token_ids, which were already tensors, so every collate copied each sequence once more before padding; the fix is `.to(torch.long)` (no copy when already long)
import uuid
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F


@dataclass
class Completion:
    prompt_ids: torch.Tensor
    token_ids: torch.Tensor
    text: str
    generator_version: int = 0


@dataclass
class Episode:
    episode_id: str
    pad_id: int
    request_len: int
    response_len: int
    target: Any | None = None
    request: str | None = None
    response: str | None = None
    completion: Completion | None = None
    ref_logprobs: torch.Tensor | None = None
    reward: float | None = None
    advantage: float | None = None

    @property
    def policy_version(self) -> int | None:
        return self.completion.generator_version

    @property
    def request_tensor(self) -> torch.Tensor:
        request_tokens = self.completion.prompt_ids
        tensor = torch.tensor(request_tokens, dtype=torch.long)  # want: C
        if tensor.shape[0] < self.request_len:  # left pad
            diff = self.request_len - tensor.shape[0]
            tensor = F.pad(tensor, (diff, 0), value=self.pad_id)
        return tensor

    @property
    def response_tensor(self) -> torch.Tensor:
        response_tokens = self.completion.token_ids
        tensor = torch.tensor(response_tokens, dtype=torch.long)  # want: C
        if tensor.shape[0] < self.response_len:  # right pad
            diff = self.response_len - tensor.shape[0]
            tensor = F.pad(tensor, (0, diff), value=self.pad_id)
        return tensor


@dataclass
class EpisodeFixed(Episode):
    @property
    def request_tensor(self) -> torch.Tensor:
        tensor: torch.Tensor = self.completion.prompt_ids.to(torch.long)
        if tensor.shape[0] < self.request_len:
            tensor = F.pad(tensor, (self.request_len - tensor.shape[0], 0), value=self.pad_id)
        return tensor

    @property
    def response_tensor(self) -> torch.Tensor:
        tensor: torch.Tensor = self.completion.token_ids.to(torch.long)
        if tensor.shape[0] < self.response_len:
            tensor = F.pad(tensor, (0, self.response_len - tensor.shape[0]), value=self.pad_id)
        return tensor


Group = list[Episode]


def collate(batches: list[Group]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    inputs, targets = [], []
    for batch in batches:
        request = torch.stack([e.request_tensor for e in batch])  # [b x s]
        response = torch.stack([e.response_tensor for e in batch])  # [b x s]
        ref_logprobs = torch.stack([e.ref_logprobs for e in batch]).squeeze()  # [b x s]
        advantages = torch.tensor([e.advantage for e in batch]).unsqueeze(-1)  # python floats -> tensor
        mask = response != batch[0].pad_id
        inputs.append({"tokens": torch.cat([request, response], dim=1)})
        targets.append({"response": response, "ref_logprobs": ref_logprobs, "advantages": advantages, "padding_mask": mask})
    return inputs, targets


def compute_advantages(group: Group) -> list[float]:
    rewards = torch.tensor([[e.reward for e in group]])  # list of python floats
    mean = rewards.mean(1, keepdim=True)
    std = rewards.std(1, keepdim=True)
    return ((rewards - mean) / (std + 1e-4)).squeeze(0).tolist()  # CPU tensor built from floats


def make_group(cls, group_size=4, max_req=12, max_res=10, pad_id=0, vocab=100):
    g = torch.Generator().manual_seed(0)
    prompt = torch.randint(1, vocab, (7,), generator=g, dtype=torch.int32)
    group = []
    for i in range(group_size):
        n = int(torch.randint(3, max_res + 1, (1,), generator=g))
        completion = Completion(prompt_ids=prompt, token_ids=torch.randint(1, vocab, (n,), generator=g, dtype=torch.int32), text=f"r{i}")
        group.append(cls(episode_id=str(uuid.uuid4()), pad_id=pad_id, request_len=max_req, response_len=max_res,
                         completion=completion, ref_logprobs=torch.randn(1, max_res, generator=g), reward=float(i % 2)))
    for e, a in zip(group, compute_advantages(group)):
        e.advantage = a
    return group


if __name__ == "__main__":
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        slow_inputs, slow_targets = collate([make_group(Episode)])
    fast_inputs, fast_targets = collate([make_group(EpisodeFixed)])
    assert torch.equal(slow_inputs[0]["tokens"], fast_inputs[0]["tokens"])
    assert torch.equal(slow_targets[0]["padding_mask"], fast_targets[0]["padding_mask"])
    print("ok", tuple(fast_inputs[0]["tokens"].shape))
