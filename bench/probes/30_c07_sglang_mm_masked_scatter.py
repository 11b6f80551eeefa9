# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/7737 — embed_mm_inputs merged image/audio embeddings with `mask.expand_as(inputs_embeds)` + out-of-place `inputs_embeds = inputs_embeds.masked_scatter(mask, embedding)`, reallocating and copying the whole (num_tokens, hidden) embedding buffer once per modality on every request; the fix writes the multimodal rows into inputs_embeds in place (upstream uses index assignment, ~2.4x faster).
import torch
from torch import nn


class Modality:
    IMAGE = "image"
    AUDIO = "audio"


class MultimodalDataItem:
    def __init__(self, modality, feature, pad_value):
        self.modality = modality
        self.feature = feature
        self.pad_value = pad_value


def get_embedding_and_mask(data_embedding_func, items, placeholder_tensor, input_ids):
    embedding = data_embedding_func(items)
    special_multimodal_mask = torch.isin(input_ids, placeholder_tensor).unsqueeze(-1)
    return embedding, special_multimodal_mask


def embed_mm_inputs(input_ids, input_embedding, mm_items, data_embedding_funcs):
    # 1. text embeddings for the whole (flattened) batch
    inputs_embeds = input_embedding(input_ids)

    # 2. embeddings + placeholder masks per modality
    embeddings, masks = [], []
    for modality in (Modality.IMAGE, Modality.AUDIO):
        items = [item for item in mm_items if item.modality == modality]
        if not items:
            continue
        placeholder_tensor = torch.as_tensor([item.pad_value for item in items], device=input_ids.device)
        embedding, mask = get_embedding_and_mask(data_embedding_funcs[modality], items, placeholder_tensor, input_ids)
        embeddings.append(embedding)
        masks.append(mask)

    # 3. scatter embeddings into input embedding
    for embedding, mask in zip(embeddings, masks):
        mask = mask.expand_as(inputs_embeds).to(inputs_embeds.device)
        inputs_embeds = inputs_embeds.masked_scatter(  # want: C
            mask,
            embedding.to(inputs_embeds.device, inputs_embeds.dtype),
        )
    return inputs_embeds


def embed_mm_inputs_fixed(input_ids, input_embedding, mm_items, data_embedding_funcs):
    inputs_embeds = input_embedding(input_ids)

    embeddings, masks = [], []
    for modality in (Modality.IMAGE, Modality.AUDIO):
        items = [item for item in mm_items if item.modality == modality]
        if not items:
            continue
        placeholder_tensor = torch.as_tensor([item.pad_value for item in items], device=input_ids.device)
        embedding, mask = get_embedding_and_mask(data_embedding_funcs[modality], items, placeholder_tensor, input_ids)
        embeddings.append(embedding)
        masks.append(mask)

    for embedding, mask in zip(embeddings, masks):
        # in-place write into the existing buffer
        inputs_embeds.masked_scatter_(mask, embedding.to(inputs_embeds.device, inputs_embeds.dtype))
    return inputs_embeds


if __name__ == "__main__":
    torch.manual_seed(0)
    hidden, vocab = 64, 1000
    emb = nn.Embedding(vocab + 10, hidden)
    vision = nn.Linear(32, hidden)
    audio = nn.Linear(16, hidden)
    funcs = {
        Modality.IMAGE: lambda items: vision(items[0].feature),
        Modality.AUDIO: lambda items: audio(items[0].feature),
    }
    img_pad, aud_pad = vocab + 1, vocab + 2
    ids = torch.randint(0, vocab, (512,))
    ids[10:42] = img_pad
    ids[100:108] = aud_pad
    items = [MultimodalDataItem(Modality.IMAGE, torch.randn(32, 32), img_pad),
             MultimodalDataItem(Modality.AUDIO, torch.randn(8, 16), aud_pad)]
    with torch.no_grad():
        base = emb(ids)
        a = embed_mm_inputs(ids, emb, items, funcs)
        b = embed_mm_inputs_fixed(ids, emb, items, funcs)
    assert torch.equal(a, b)
    print("full-buffer copies per request (buggy):", 2, "x", base.untyped_storage().nbytes(), "bytes")
    with torch.no_grad():
        e = emb(ids)
        p0 = e.data_ptr()
        e.masked_scatter_(torch.isin(ids, torch.tensor([img_pad])).unsqueeze(-1), vision(items[0].feature))
    print("in-place write keeps buffer:", e.data_ptr() == p0, "| out-of-place result shares buffer:", a.data_ptr() == base.data_ptr())
