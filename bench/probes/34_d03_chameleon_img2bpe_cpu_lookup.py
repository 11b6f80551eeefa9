# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/51458 — Chameleon's convert_img2bpe indexed a CPU-resident img2bpe mapping table with `img_batch.to("cpu")`, forcing a device-to-host copy of the image tokens (and a copy back) on every image forward; the fix caches the mapping table per device and indexes on device.
from functools import cached_property

import torch
import torch.nn as nn


class ChameleonImageVocabularyMapping:
    """A class for mapping discrete image tokens from VQGAN to BPE tokens."""

    def __init__(self, vocab_map):
        self.vocab_map = vocab_map
        self.image_token_id = vocab_map.get("<image>")

    @cached_property
    def val2name(self):
        return {v: k for k, v in self.vocab_map.items()}

    @cached_property
    def image_tokens(self):
        return sorted([val for name, val in self.vocab_map.items() if name.startswith("IMGIMG")])

    @cached_property
    def bpe2img(self):
        img_tkn_chr_mapping = {chr(ord("A") + i): str(i) for i in range(10)}

        def remap(old_name):
            return "".join(img_tkn_chr_mapping.get(c, c) for c in old_name[len("IMGIMG"):-1])

        return {tok: int(remap(self.val2name[tok])) for tok in self.image_tokens}

    @cached_property
    def img2bpe(self):
        return {v: k for k, v in self.bpe2img.items()}

    @cached_property
    def img2bpe_mapping_tensor(self):
        mapping = torch.zeros(max(self.img2bpe.keys()) + 1, dtype=torch.int)
        for k, v in self.img2bpe.items():
            mapping[k] = v
        return mapping

    def convert_img2bpe(self, img_batch):
        device = img_batch.device
        img_tokens = self.img2bpe_mapping_tensor[img_batch.to("cpu")]  # want: D
        return img_tokens.to(device)  # maybe: D (H2D copy back of the looked-up tokens; removed by the same fix)


class ChameleonImageVocabularyMappingFixed(ChameleonImageVocabularyMapping):
    def __init__(self, vocab_map):
        super().__init__(vocab_map)
        self._img2bpe_by_device = {}

    def _mapping_on(self, device):
        table = self._img2bpe_by_device.get(device)
        if table is None:
            table = self.img2bpe_mapping_tensor.to(device)
            self._img2bpe_by_device[device] = table
        return table

    def convert_img2bpe(self, img_batch):
        return self._mapping_on(img_batch.device)[img_batch]


class TinyVQModel(nn.Module):
    def __init__(self, codebook=16):
        super().__init__()
        self.proj = nn.Conv2d(3, codebook, kernel_size=4, stride=4)

    def encode(self, pixel_values):
        logits = self.proj(pixel_values)
        return logits.argmax(dim=1)  # [B, h, w] discrete image tokens


class ChameleonModel(nn.Module):
    def __init__(self, vocabulary_mapping):
        super().__init__()
        self.vqmodel = TinyVQModel()
        self.vocabulary_mapping = vocabulary_mapping

    def get_image_tokens(self, pixel_values):
        """Tokenizes images into discrete tokens with VQGAN module."""
        batch_size = pixel_values.shape[0]
        image_toks = self.vqmodel.encode(pixel_values)
        bpe_toks = self.vocabulary_mapping.convert_img2bpe(image_toks)
        bpe_toks = bpe_toks.view(batch_size, -1)
        return bpe_toks


def make_vocab(codebook=16):
    vocab = {"<image>": 8711}
    for i in range(codebook):
        name = "IMGIMG" + "".join(chr(ord("A") + int(d)) for d in str(i)) + "Z"
        vocab[name] = 4 + i
    return vocab


if __name__ == "__main__":
    torch.manual_seed(0)
    vocab = make_vocab()
    pixels = torch.randn(2, 3, 32, 32)
    m0 = ChameleonModel(ChameleonImageVocabularyMapping(vocab))
    m1 = ChameleonModel(ChameleonImageVocabularyMappingFixed(vocab))
    m1.load_state_dict(m0.state_dict())
    t0, t1 = m0.get_image_tokens(pixels), m1.get_image_tokens(pixels)
    print("bpe tokens equal:", torch.equal(t0, t1), tuple(t0.shape))
