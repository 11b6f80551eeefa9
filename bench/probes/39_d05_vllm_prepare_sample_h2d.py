# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/2207 — ModelRunner._prepare_sample built the sampler's selected_token_indices and categorized_sample_indices every step with torch.tensor(python_list, device="cuda"). Each of these is a blocking pageable host-to-device copy that waits on the stream, so per-step metadata preparation could not overlap the model forward; the fix builds the tensors in pinned CPU memory and moves them with .to(device, non_blocking=True) through an async_h2d helper.
import enum
from dataclasses import dataclass
from typing import Dict, List, Tuple

import torch


class SamplingType(enum.IntEnum):
    GREEDY = 0
    RANDOM = 1


class SamplingParams:
    def __init__(self, temperature=1.0, prompt_logprobs=None):
        self.temperature = temperature
        self.prompt_logprobs = prompt_logprobs

    @property
    def sampling_type(self):
        return SamplingType.GREEDY if self.temperature < 1e-5 else SamplingType.RANDOM


@dataclass
class SequenceGroupMetadata:
    request_id: str
    is_prompt: bool
    seq_data: dict
    sampling_params: SamplingParams


@dataclass
class SamplingMetadata:
    seq_groups: list
    seq_data: dict
    prompt_lens: list
    selected_token_indices: torch.Tensor
    categorized_sample_indices: dict


def async_h2d(data: list, dtype, target_device, pin_memory: bool) -> torch.Tensor:
    t = torch.tensor(data, dtype=dtype, pin_memory=pin_memory, device="cpu")
    return t.to(device=target_device, non_blocking=True)


class ModelRunner:
    def __init__(self, device="cuda", pin_memory=True):
        self.device = torch.device(device)
        self.pin_memory = pin_memory

    def _collect_indices(self, seq_group_metadata_list, prompt_lens):
        seq_groups: List[Tuple[List[int], SamplingParams]] = []
        selected_token_indices: List[int] = []
        selected_token_start_idx = 0
        categorized_sample_indices: Dict[SamplingType, List[int]] = {t: [] for t in SamplingType}
        categorized_sample_indices_start_idx = 0
        max_prompt_len = max(prompt_lens) if prompt_lens else 1
        for i, seq_group_metadata in enumerate(seq_group_metadata_list):
            seq_ids = list(seq_group_metadata.seq_data.keys())
            sampling_params = seq_group_metadata.sampling_params
            seq_groups.append((seq_ids, sampling_params))
            if seq_group_metadata.is_prompt:
                prompt_len = prompt_lens[i]
                categorized_sample_indices[sampling_params.sampling_type].append(
                    categorized_sample_indices_start_idx)
                categorized_sample_indices_start_idx += 1
                selected_token_indices.append(selected_token_start_idx + prompt_len - 1)
                selected_token_start_idx += max_prompt_len
            else:
                num_seqs = len(seq_ids)
                selected_token_indices.extend(
                    range(selected_token_start_idx, selected_token_start_idx + num_seqs))
                selected_token_start_idx += num_seqs
                categorized_sample_indices[sampling_params.sampling_type].extend(
                    range(categorized_sample_indices_start_idx,
                          categorized_sample_indices_start_idx + num_seqs))
                categorized_sample_indices_start_idx += num_seqs
        return seq_groups, selected_token_indices, categorized_sample_indices

    def _prepare_sample(self, seq_group_metadata_list, prompt_lens):
        seq_groups, selected_token_indices, categorized_sample_indices = self._collect_indices(
            seq_group_metadata_list, prompt_lens)
        selected_token_indices = torch.tensor(selected_token_indices, dtype=torch.long, device=self.device)  # want: D
        categorized_sample_indices = {
            t: torch.tensor(seq_ids, dtype=torch.int, device=self.device)  # want: D
            for t, seq_ids in categorized_sample_indices.items()
        }
        seq_data = {k: v for g in seq_group_metadata_list for k, v in g.seq_data.items()}
        return SamplingMetadata(seq_groups, seq_data, prompt_lens, selected_token_indices,
                                categorized_sample_indices)


class ModelRunnerFixed(ModelRunner):
    def _prepare_sample(self, seq_group_metadata_list, prompt_lens):
        seq_groups, selected_token_indices, categorized_sample_indices = self._collect_indices(
            seq_group_metadata_list, prompt_lens)
        selected_token_indices = async_h2d(selected_token_indices, dtype=torch.long,
                                           target_device=self.device, pin_memory=self.pin_memory)
        categorized_sample_indices = {
            t: async_h2d(seq_ids, dtype=torch.int, target_device=self.device,
                         pin_memory=self.pin_memory)
            for t, seq_ids in categorized_sample_indices.items()
        }
        seq_data = {k: v for g in seq_group_metadata_list for k, v in g.seq_data.items()}
        return SamplingMetadata(seq_groups, seq_data, prompt_lens, selected_token_indices,
                                categorized_sample_indices)


if __name__ == "__main__":
    groups = [
        SequenceGroupMetadata("0", False, {0: [1, 2]}, SamplingParams(0.0)),
        SequenceGroupMetadata("1", False, {1: [3], 2: [4]}, SamplingParams(0.8)),
        SequenceGroupMetadata("2", False, {3: [5]}, SamplingParams(0.7)),
    ]
    a = ModelRunner("cpu", pin_memory=False)._prepare_sample(groups, [])
    b = ModelRunnerFixed("cpu", pin_memory=False)._prepare_sample(groups, [])
    assert torch.equal(a.selected_token_indices, b.selected_token_indices)
    for t in SamplingType:
        assert torch.equal(a.categorized_sample_indices[t], b.categorized_sample_indices[t])
    print("ok")
