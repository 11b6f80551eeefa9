# source: ai-dynamo/dynamo https://github.com/ai-dynamo/dynamo/pull/6061 — In the vLLM prefill worker's embedding loading, a tensor received over NIXL is a view into a pre-allocated, reusable receive buffer. Keeping that view as `group.loaded_embedding` pins the whole receive buffer for the lifetime of the request group (and the next transfer overwrites it). The merged code clones the remote embedding before releasing the buffer slot ("NIXL tensor is a view into a pre-allocated, reusable buffer. We need to clone it before releasing the buffer for other requests").
import asyncio
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch


@dataclass
class MultiModalGroup:
    url: str
    num_tokens: int
    loaded_embedding: Optional[torch.Tensor] = None


class NixlEmbeddingReceiver:
    def __init__(self, hidden_size: int, buffer_tokens: int):
        self.buffer = torch.zeros(buffer_tokens, hidden_size)
        self.offset = 0
        self.released: List[int] = []

    async def receive_embeddings(self, group: MultiModalGroup) -> Tuple[int, torch.Tensor]:
        start = self.offset
        view = self.buffer[start:start + group.num_tokens]
        view.copy_(torch.full((group.num_tokens, self.buffer.shape[1]), float(len(group.url))))
        self.offset += group.num_tokens
        return start, view

    def release_tensor(self, tensor_id: int):
        self.released.append(tensor_id)


class LocalEmbeddingReceiver(NixlEmbeddingReceiver):
    pass


async def load_embeddings(multimodal_groups: List[MultiModalGroup], receiver: NixlEmbeddingReceiver):
    tasks = [receiver.receive_embeddings(group) for group in multimodal_groups]
    loaded = await asyncio.gather(*tasks)
    is_local = isinstance(receiver, LocalEmbeddingReceiver)
    for group, (tensor_id, embedding) in zip(multimodal_groups, loaded, strict=True):
        if is_local:
            group.loaded_embedding = embedding
        else:
            group.loaded_embedding = embedding  # want: A
        receiver.release_tensor(tensor_id)


async def load_embeddings_fixed(multimodal_groups: List[MultiModalGroup], receiver: NixlEmbeddingReceiver):
    tasks = [receiver.receive_embeddings(group) for group in multimodal_groups]
    loaded = await asyncio.gather(*tasks)
    is_local = isinstance(receiver, LocalEmbeddingReceiver)
    for group, (tensor_id, embedding) in zip(multimodal_groups, loaded, strict=True):
        if is_local:
            group.loaded_embedding = embedding
        else:
            # NIXL tensor is a view into a pre-allocated, reusable buffer. We
            # need to clone it before releasing the buffer for other requests.
            group.loaded_embedding = embedding.clone()
        receiver.release_tensor(tensor_id)


if __name__ == "__main__":
    groups = [MultiModalGroup(url="img-a.png", num_tokens=16), MultiModalGroup(url="img-bb.png", num_tokens=32)]
    receiver = NixlEmbeddingReceiver(hidden_size=64, buffer_tokens=4096)
    asyncio.run(load_embeddings(groups, receiver))
    emb = groups[0].loaded_embedding
    assert emb.untyped_storage().nbytes() == receiver.buffer.numel() * receiver.buffer.element_size()
    assert emb.untyped_storage().nbytes() > emb.numel() * emb.element_size()

    groups_fixed = [MultiModalGroup(url="img-a.png", num_tokens=16), MultiModalGroup(url="img-bb.png", num_tokens=32)]
    receiver_fixed = NixlEmbeddingReceiver(hidden_size=64, buffer_tokens=4096)
    asyncio.run(load_embeddings_fixed(groups_fixed, receiver_fixed))
    emb_fixed = groups_fixed[0].loaded_embedding
    assert emb_fixed.untyped_storage().nbytes() == emb_fixed.numel() * emb_fixed.element_size()
    assert all(torch.equal(a.loaded_embedding, b.loaded_embedding) for a, b in zip(groups, groups_fixed))
    print("ok")
