# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/26082 — `embed_mm_inputs` (VLM prefill) located the multimodal placeholder rows with `torch.where(mask.squeeze(dim=-1))[0]` before scattering the vision embeddings in, and the single-argument where (nonzero) must sync to size its output on every image/video request; the fix writes the embeddings with `input_embeds.masked_scatter_(mask.expand_as(input_embeds), embedding)` and never materialises the indices.
import torch
import torch.nn as nn


class Modality:
    IMAGE = "image"
    VIDEO = "video"


def _get_multimodal_mask(input_ids, placeholder_tensor):
    return torch.isin(input_ids, placeholder_tensor).unsqueeze(-1)


def get_embedding_and_mask(data_embedding_func, items, placeholder_tensor, input_ids):
    embedding = data_embedding_func(items)
    special_multimodal_mask = _get_multimodal_mask(input_ids, placeholder_tensor)
    return embedding, special_multimodal_mask


def embed_mm_inputs(mm_items_by_modality, input_ids, input_embedding, data_embedding_func_mapping, placeholder_tokens):
    embeddings, masks = [], []
    for modality, items in mm_items_by_modality.items():
        embedding, mask = get_embedding_and_mask(
            data_embedding_func_mapping[modality], items, placeholder_tokens[modality], input_ids)
        embeddings.append(embedding)
        masks.append(mask)

    vocab_size = input_embedding.num_embeddings
    input_ids.clamp_(min=0, max=vocab_size - 1)
    inputs_embeds = input_embedding(input_ids)

    for embedding, mask in zip(embeddings, masks):
        if embedding is None or mask is None:
            continue
        indices = torch.where(mask.squeeze(dim=-1))[0]  # want: D
        inputs_embeds[indices] = embedding.to(inputs_embeds.device, inputs_embeds.dtype)
    return inputs_embeds


def embed_mm_inputs_fixed(mm_items_by_modality, input_ids, input_embedding, data_embedding_func_mapping,
                          placeholder_tokens):
    embeddings, masks = [], []
    for modality, items in mm_items_by_modality.items():
        embedding, mask = get_embedding_and_mask(
            data_embedding_func_mapping[modality], items, placeholder_tokens[modality], input_ids)
        embeddings.append(embedding)
        masks.append(mask)

    vocab_size = input_embedding.num_embeddings
    input_ids.clamp_(min=0, max=vocab_size - 1)
    inputs_embeds = input_embedding(input_ids)

    for embedding, mask in zip(embeddings, masks):
        if embedding is None or mask is None:
            continue
        # masked_scatter_ fills True rows in order, same as the sorted-index assignment,
        # without a host round-trip to learn how many rows there are.
        inputs_embeds.masked_scatter_(mask.expand_as(inputs_embeds),
                                      embedding.to(inputs_embeds.device, inputs_embeds.dtype))
    return inputs_embeds


class TinyVLM(nn.Module):
    def __init__(self, vocab=64, dim=16, image_token_id=60):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.vision_proj = nn.Linear(12, dim)
        self.image_token_id = image_token_id

    def get_image_feature(self, items):
        return self.vision_proj(torch.cat([it for it in items], dim=0))

    @torch.no_grad()
    def forward(self, input_ids, images, embed_fn):
        return embed_fn(
            {Modality.IMAGE: images}, input_ids.clone(), self.embed_tokens,
            {Modality.IMAGE: self.get_image_feature},
            {Modality.IMAGE: torch.tensor([self.image_token_id])},
        )


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyVLM()
    input_ids = torch.randint(0, 50, (20,))
    input_ids[3:7] = 60
    input_ids[12:15] = 60
    images = [torch.randn(4, 12), torch.randn(3, 12)]
    a = model(input_ids, images, embed_mm_inputs)
    b = model(input_ids, images, embed_mm_inputs_fixed)
    assert torch.equal(a, b)
    print("merged embeddings identical:", tuple(b.shape))
