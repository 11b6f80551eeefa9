import torch


def save_embeddings(model, ids, path):
    with torch.no_grad():
        emb = model.embed(ids)
    torch.save({"first": emb[0], "n": len(ids)}, path)  # maybe: A (nothing says `model.embed` returns a tensor)
