# source: UKPLab/sentence-transformers https://github.com/UKPLab/sentence-transformers/commit/8dd9a3eac6c8745e66a1ee05b2bbd72ddd2b7680 — `SentenceTransformer.encode` tried to move each batch of embeddings off the GPU ("fixes for #522 and #487, to avoid oom problems on gpu with large datasets") with a bare `embeddings.cpu()`; the returned CPU copy was discarded, so every per-sentence embedding kept living on the GPU and large `encode` calls still ran out of memory. The fix ("assign embeddings after moving them to cpu") writes `embeddings = embeddings.cpu()`.
from typing import Dict, List

import torch
from torch import nn


class MeanPooling(nn.Module):
    def forward(self, features: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        tok = features['token_embeddings']
        mask = features['attention_mask'].unsqueeze(-1).float()
        features['sentence_embedding'] = (tok * mask).sum(1) / mask.sum(1)
        return features


class TinyWordEmbeddings(nn.Module):
    def __init__(self, vocab=50, dim=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)

    def forward(self, features):
        features['token_embeddings'] = self.emb(features['input_ids'])
        return features


class SentenceTransformer(nn.Sequential):
    def tokenize(self, texts: List[str]) -> Dict[str, torch.Tensor]:
        ids = [[hash(w) % 50 for w in t.split()] for t in texts]
        n = max(len(i) for i in ids)
        return {'input_ids': torch.tensor([i + [0] * (n - len(i)) for i in ids]),
                'attention_mask': torch.tensor([[1] * len(i) + [0] * (n - len(i)) for i in ids])}

    def encode(self, sentences: List[str], batch_size=2, output_value='sentence_embedding',
               convert_to_numpy=True, device='cpu', fixed=False):
        self.eval()
        all_embeddings = []
        length_sorted_idx = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
        sentences_sorted = [sentences[idx] for idx in length_sorted_idx]
        for start in range(0, len(sentences), batch_size):
            features = self.tokenize(sentences_sorted[start:start + batch_size])
            for feature_name in features:
                features[feature_name] = features[feature_name].to(device)
            with torch.no_grad():
                out_features = self.forward(features)
                embeddings = out_features[output_value]
                # fixes for #522 and #487
                # to avoid oom problems on gpu with large datasets
                if convert_to_numpy:
                    if not fixed:
                        embeddings.cpu()  # want: B
                    else:
                        embeddings = embeddings.cpu()
                for emb in embeddings:
                    all_embeddings.append(emb.detach())
        inverse = sorted(range(len(length_sorted_idx)), key=lambda i: length_sorted_idx[i])
        all_embeddings = [all_embeddings[idx] for idx in inverse]
        return torch.stack(all_embeddings) if convert_to_numpy else all_embeddings


if __name__ == "__main__":
    torch.manual_seed(0)
    model = SentenceTransformer(TinyWordEmbeddings(), MeanPooling())
    sents = ["a b c", "hello world", "x", "the quick brown fox"]
    bug = model.encode(sents)
    fix = model.encode(sents, fixed=True)
    assert torch.allclose(bug, fix)
    # On a CUDA run the buggy path keeps every `emb` on the GPU; on CPU `.cpu()` is the identity,
    # so the only visible symptom here is that the statement's result is never used.
    print("embeddings:", tuple(bug.shape), "device:", bug.device)
