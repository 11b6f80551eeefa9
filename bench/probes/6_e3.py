import torch


def embed_all(model, loader):
    feats = []
    for batch in loader:
        out = model(**batch)
        feats.append(out.last_hidden_state[:, 0])
    return torch.cat(feats)
