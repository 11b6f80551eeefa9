import torch


def export_pruned(model, keep, path):
    sd = {k: v[:keep] for k, v in model.state_dict().items()}
    torch.save(sd, path)  # want: A
