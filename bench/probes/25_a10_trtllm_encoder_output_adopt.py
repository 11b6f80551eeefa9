# source: NVIDIA/TensorRT-LLM https://github.com/NVIDIA/TensorRT-LLM/pull/16051 (review on multimodal_encoder_cache_manager.adopt; the earlier cache path in PR #15734 already cloned: "Per-item embeddings are views produced by splitting a request-level encoder output. Clone them so a cached item neither aliases mutable caller output nor retains the entire batch allocation while cache accounting charges only its logical size") — the budgeted output store adopted torch.split views of a grouped encoder run without cloning while charging numel() * element_size() bytes each
from collections import OrderedDict
from typing import Dict, Iterator, List, Tuple

import torch
from torch import nn


class VisionEncoder(nn.Module):
    def __init__(self, patch_dim=48, hidden=64):
        super().__init__()
        self.proj = nn.Linear(patch_dim, hidden)

    def forward(self, patches):
        return self.proj(patches)


def run_encoder_items(encoder: nn.Module, encoder_inputs: List[Tuple[str, torch.Tensor, str]]) -> Iterator[Tuple[str, torch.Tensor]]:
    """Group consecutive items of one modality, run the encoder once per group, and hand out per-item outputs."""
    group_keys: List[str] = []
    group_params: List[torch.Tensor] = []
    group_modality = None

    def flush_group():
        if not group_params:
            return
        embeddings = encoder(torch.cat(group_params, dim=0))
        lengths = [p.shape[0] for p in group_params]
        yield from zip(list(group_keys), torch.split(embeddings, lengths, dim=0))
        group_keys.clear()
        group_params.clear()

    for key, patches, modality in encoder_inputs:
        if group_modality is not None and modality != group_modality:
            yield from flush_group()
        group_modality = modality
        group_keys.append(key)
        group_params.append(patches)
    yield from flush_group()


class MultimodalEncoderOutputStore:
    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.used_bytes = 0
        self._entries: "OrderedDict[str, torch.Tensor]" = OrderedDict()

    @staticmethod
    def _nbytes(t: torch.Tensor) -> int:
        return t.numel() * t.element_size()

    def adopt(self, key: str, embedding: torch.Tensor) -> None:
        nbytes = self._nbytes(embedding)
        while self._entries and self.used_bytes + nbytes > self.max_bytes:
            _, old = self._entries.popitem(last=False)
            self.used_bytes -= self._nbytes(old)
        self._entries[key] = embedding  # want: A
        self.used_bytes += nbytes

    def get(self, key: str) -> torch.Tensor:
        self._entries.move_to_end(key)
        return self._entries[key]

    def storage_bytes(self) -> int:
        seen: Dict[int, int] = {}
        for t in self._entries.values():
            seen[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return sum(seen.values())


class MultimodalEncoderOutputStoreFixed(MultimodalEncoderOutputStore):
    def adopt(self, key: str, embedding: torch.Tensor) -> None:
        super().adopt(key, embedding.clone())


@torch.no_grad()
def encode_step(encoder, store, encoder_inputs):
    for key, item_embedding in run_encoder_items(encoder, encoder_inputs):
        store.adopt(key, item_embedding)


@torch.no_grad()
def prefill_inputs_embeds(encoder, encoder_inputs) -> torch.Tensor:
    # per-item views only feed a cat that allocates: nothing outlives the call
    return torch.cat([emb for _, emb in run_encoder_items(encoder, encoder_inputs)], dim=0)


if __name__ == "__main__":
    torch.manual_seed(0)
    enc = VisionEncoder()
    requests = [(f"img{i}", torch.randn(256, 48), "image") for i in range(8)]
    item_bytes = 256 * 64 * 4
    store = MultimodalEncoderOutputStore(max_bytes=2 * item_bytes)
    store_fixed = MultimodalEncoderOutputStoreFixed(max_bytes=2 * item_bytes)
    encode_step(enc, store, requests)
    encode_step(enc, store_fixed, requests)
    assert store.used_bytes == store_fixed.used_bytes == 2 * item_bytes  # the budget "holds"
    assert torch.equal(store.get("img7"), store_fixed.get("img7"))
    assert store.storage_bytes() == 8 * item_bytes  # ...but the two survivors pin the whole group output
    assert store_fixed.storage_bytes() == 2 * item_bytes
    assert prefill_inputs_embeds(enc, requests).shape == (8 * 256, 64)
    print("ok: adopted split views retained the whole grouped encoder output past the byte budget")
