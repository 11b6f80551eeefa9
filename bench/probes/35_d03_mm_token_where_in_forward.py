# source: NVIDIA/TensorRT-LLM https://github.com/NVIDIA/TensorRT-LLM/pull/14384 — VLM fuse_input_embeds fell back to filter_mm_token_from_input_ids, whose single-argument torch.where on the GPU input_ids forced a host-device sync on every forward step; the fix computes text/mm token indices from a CPU copy of input_ids in the model engine and ships them with a pinned non_blocking copy.
import torch
from torch import nn


def filter_mm_token_from_input_ids(input_ids, vocab_size, mm_token_ids=None):
    if mm_token_ids is None:
        mm_token_mask = input_ids >= vocab_size
        text_token_mask = input_ids < vocab_size
    else:
        mm_token_ids = mm_token_ids.to(input_ids.device, non_blocking=True)
        mm_token_mask = torch.isin(input_ids, mm_token_ids)
        text_token_mask = ~mm_token_mask
    text_token_indices = torch.where(text_token_mask)[0]  # want: D
    mm_token_indices = torch.where(mm_token_mask)[0]  # want: D
    return text_token_indices, mm_token_indices


def fuse_input_embeds(embedding_layer, input_ids, mm_embeds, mm_token_ids=None,
                      text_token_indices=None, mm_token_indices=None):
    if len(mm_embeds) == 0:
        return input_ids, None
    mm_embed = torch.cat(mm_embeds, dim=0)
    if text_token_indices is None or mm_token_indices is None:
        text_token_indices, mm_token_indices = filter_mm_token_from_input_ids(
            input_ids, vocab_size=embedding_layer.num_embeddings, mm_token_ids=mm_token_ids)
    text_embed = embedding_layer(input_ids[text_token_indices])
    input_embeds = torch.empty(input_ids.shape[0], mm_embed.shape[-1],
                               device=text_embed.device, dtype=text_embed.dtype)
    input_embeds[text_token_indices, :] = text_embed
    input_embeds[mm_token_indices, :] = mm_embed.to(dtype=input_embeds.dtype)
    return None, input_embeds


class ModelEngine:
    def __init__(self, embedding, mm_token_ids, device):
        self.embedding = embedding
        self.mm_token_ids = mm_token_ids
        self.device = device

    def forward_step(self, input_ids_list, mm_embeds):
        input_ids = torch.tensor(input_ids_list, dtype=torch.int32).to(self.device, non_blocking=True)
        return fuse_input_embeds(self.embedding, input_ids, mm_embeds, self.mm_token_ids)


class ModelEngineFixed(ModelEngine):
    def _prepare_multimodal_indices(self, input_ids_list):
        input_ids_cpu = torch.tensor(input_ids_list, dtype=torch.int32)
        mm_mask_cpu = torch.isin(input_ids_cpu, self.mm_token_ids)
        text_token_indices = torch.where(~mm_mask_cpu)[0]
        mm_token_indices = torch.where(mm_mask_cpu)[0]
        return text_token_indices, mm_token_indices

    def _ship_multimodal_indices(self, text_idx_cpu, mm_idx_cpu):
        pin = torch.cuda.is_available()
        text_idx = text_idx_cpu.pin_memory() if pin else text_idx_cpu
        mm_idx = mm_idx_cpu.pin_memory() if pin else mm_idx_cpu
        return (text_idx.to(self.device, non_blocking=True), mm_idx.to(self.device, non_blocking=True))

    def forward_step(self, input_ids_list, mm_embeds):
        text_idx, mm_idx = self._ship_multimodal_indices(*self._prepare_multimodal_indices(input_ids_list))
        input_ids = torch.tensor(input_ids_list, dtype=torch.int32).to(self.device, non_blocking=True)
        return fuse_input_embeds(self.embedding, input_ids, mm_embeds, self.mm_token_ids,
                                 text_token_indices=text_idx, mm_token_indices=mm_idx)


if __name__ == "__main__":
    torch.manual_seed(0)
    vocab, hidden, image_token = 100, 16, 99
    emb = nn.Embedding(vocab, hidden)
    mm_ids = torch.tensor([image_token], dtype=torch.int32)
    ids = [1, 2, 3] + [image_token] * 4 + [5, 6]
    mm = [torch.randn(4, hidden)]
    dev = torch.device("cpu")
    _, a = ModelEngine(emb, mm_ids, dev).forward_step(ids, mm)
    _, b = ModelEngineFixed(emb, mm_ids, dev).forward_step(ids, mm)
    print("fused embeds equal:", torch.equal(a, b), tuple(a.shape))
