# source: vllm-project/vllm-omni https://github.com/vllm-project/vllm-omni/pull/6590 (review on pipeline_irodori_tts.py) — _condition_row "copies one request's rows out of a batched condition state" so per-request state does not keep the whole group's encoder output alive, but its row() helper used value[index : index + 1].contiguous(), which is a no-op on a row slice of a contiguous batch; reviewer: "Use clone here; contiguous slices still retain the entire batch's storage."
import dataclasses
from dataclasses import dataclass
from typing import Dict, List, Optional

import torch
from torch import nn


@dataclass(frozen=True)
class IrodoriConditionState:
    text_state: torch.Tensor  # [B, T_text, D]
    text_mask: torch.Tensor  # [B, T_text]
    speaker_state: Optional[torch.Tensor]  # [B, T_ref, D]
    speaker_mask: Optional[torch.Tensor]


class ConditionEncoder(nn.Module):
    def __init__(self, vocab=100, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, token_ids, ref_latents):
        text_state = self.proj(self.embed(token_ids))
        return IrodoriConditionState(
            text_state=text_state,
            text_mask=token_ids != 0,
            speaker_state=self.proj(ref_latents) if ref_latents is not None else None,
            speaker_mask=None,
        )


class IrodoriTTSPipeline:
    def __init__(self):
        self.encoder = ConditionEncoder()
        # per-request conditions live until that request's last denoising step
        self._request_conditions: Dict[str, IrodoriConditionState] = {}

    @staticmethod
    def _condition_row(condition: IrodoriConditionState, index: int) -> IrodoriConditionState:
        """Copy one request's rows out of a batched condition state.

        The copy is deliberate: a view would keep the whole group's encoder
        output alive for as long as the slowest request in it.
        """

        def row(value: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
            return None if value is None else value[index : index + 1].contiguous()  # want: A

        return dataclasses.replace(
            condition,
            text_state=row(condition.text_state),
            text_mask=row(condition.text_mask),
            speaker_state=row(condition.speaker_state),
            speaker_mask=row(condition.speaker_mask),
        )

    @torch.no_grad()
    def encode_group(self, request_ids: List[str], token_ids, ref_latents=None):
        condition = self.encoder(token_ids, ref_latents)
        for i, request_id in enumerate(request_ids):
            self._request_conditions[request_id] = self._condition_row(condition, i)
        # a local look at one row, dropped at return: nothing kept
        first_len = int(condition.text_mask[0:1].sum())
        return first_len

    def finish(self, request_id: str):
        self._request_conditions.pop(request_id, None)


class IrodoriTTSPipelineFixed(IrodoriTTSPipeline):
    @staticmethod
    def _condition_row(condition: IrodoriConditionState, index: int) -> IrodoriConditionState:
        def row(value: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
            return None if value is None else value[index : index + 1].clone()

        return dataclasses.replace(
            condition,
            text_state=row(condition.text_state),
            text_mask=row(condition.text_mask),
            speaker_state=row(condition.speaker_state),
            speaker_mask=row(condition.speaker_mask),
        )


if __name__ == "__main__":
    torch.manual_seed(0)
    B, T, D = 16, 64, 32
    ids = [f"req-{i}" for i in range(B)]
    tokens = torch.randint(1, 100, (B, T))
    refs = torch.randn(B, 48, D)

    pipe = IrodoriTTSPipeline()
    pipe.encode_group(ids, tokens, refs)
    fixed = IrodoriTTSPipelineFixed()
    fixed.encoder.load_state_dict(pipe.encoder.state_dict())
    fixed.encode_group(ids, tokens, refs)
    for rid in ids[:-1]:  # all but the slowest request finish
        pipe.finish(rid)
        fixed.finish(rid)
    slow = pipe._request_conditions[ids[-1]]
    slow_fixed = fixed._request_conditions[ids[-1]]
    assert torch.equal(slow.text_state, slow_fixed.text_state)
    assert slow.text_state.is_contiguous()  # .contiguous() had nothing to do
    assert slow.text_state.untyped_storage().nbytes() == B * T * D * 4  # whole group's encoder output
    assert slow.speaker_state.untyped_storage().nbytes() == B * 48 * D * 4
    assert slow_fixed.text_state.untyped_storage().nbytes() == T * D * 4
    print("ok: the slowest request kept the whole group's condition tensors alive")
