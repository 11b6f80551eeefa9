# source: huggingface/sentence-transformers https://github.com/huggingface/sentence-transformers/issues/1813 — SentenceTransformer.encode(output_value="token_embeddings") trimmed each row with `token_emb[0:last_mask_id + 1]` and extended `all_embeddings` with those slices across all batches, so every batch's padded (B, L, D) output stayed alive on the GPU until encode returned (OOM on large datasets); the fix moved each kept piece off the device as it is accumulated (an owning copy — .clone() in the look-alike below).
import numpy as np
import torch
import torch.nn as nn


def _last_real_token(attention):
    last_mask_id = len(attention) - 1
    while last_mask_id > 0 and attention[last_mask_id].item() == 0:  # maybe: D (per-position .item(); shared by both versions, not the bug studied here)
        last_mask_id -= 1
    return last_mask_id


class TinySentenceTransformer(nn.Module):
    def __init__(self, vocab=1000, dim=384, max_len=128):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.max_len = max_len

    def tokenize(self, texts):
        lens = [min(len(t.split()) + 2, self.max_len) for t in texts]
        width = max(lens)
        ids = torch.zeros(len(texts), width, dtype=torch.long)
        mask = torch.zeros(len(texts), width, dtype=torch.long)
        for i, n in enumerate(lens):
            ids[i, :n] = torch.randint(1, 1000, (n,))
            mask[i, :n] = 1
        return {"input_ids": ids, "attention_mask": mask}

    def forward(self, features):
        tok = self.emb(features["input_ids"])
        m = features["attention_mask"].unsqueeze(-1).float()
        return {"token_embeddings": tok, "attention_mask": features["attention_mask"],
                "sentence_embedding": (tok * m).sum(1) / m.sum(1)}

    def _collect(self, out_features, output_value):
        if output_value == "token_embeddings":
            embeddings = []
            for token_emb, attention in zip(out_features[output_value], out_features["attention_mask"]):
                last_mask_id = _last_real_token(attention)
                embeddings.append(token_emb[0 : last_mask_id + 1])  # want: A
            return embeddings
        embeddings = out_features[output_value].detach()
        return embeddings.cpu()

    def encode(self, sentences, batch_size=32, output_value="sentence_embedding"):
        self.eval()
        all_embeddings = []
        length_sorted_idx = np.argsort([-len(sen) for sen in sentences])
        sentences_sorted = [sentences[idx] for idx in length_sorted_idx]
        for start_index in range(0, len(sentences), batch_size):
            sentences_batch = sentences_sorted[start_index : start_index + batch_size]
            features = self.tokenize(sentences_batch)
            with torch.no_grad():
                out_features = self.forward(features)
                embeddings = self._collect(out_features, output_value)
                all_embeddings.extend(embeddings)
        all_embeddings = [all_embeddings[idx] for idx in np.argsort(length_sorted_idx)]
        return all_embeddings


class TinySentenceTransformerFixed(TinySentenceTransformer):
    def _collect(self, out_features, output_value):
        if output_value == "token_embeddings":
            embeddings = []
            for token_emb, attention in zip(out_features[output_value], out_features["attention_mask"]):
                last_mask_id = _last_real_token(attention)
                embeddings.append(token_emb[0 : last_mask_id + 1].clone())
            return embeddings
        return out_features[output_value].detach().cpu()


def held_bytes(tensors):
    return sum({t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}.values())


if __name__ == "__main__":
    # a few long documents: the batch holding them is padded to 122 tokens for every row
    sentences = [("word " * (120 if i % 32 == 0 else 5)).strip() for i in range(256)]
    torch.manual_seed(0)
    bad = TinySentenceTransformer().encode(sentences, batch_size=64, output_value="token_embeddings")
    torch.manual_seed(0)
    good = TinySentenceTransformerFixed().encode(sentences, batch_size=64, output_value="token_embeddings")
    payload = sum(t.numel() * t.element_size() for t in good)
    print(f"payload {payload} B  buggy holds {held_bytes(bad)} B  fixed holds {held_bytes(good)} B")
    assert all(torch.equal(a, b) for a, b in zip(bad, good))
    assert held_bytes(bad) > 1.5 * held_bytes(good) and held_bytes(good) == payload
