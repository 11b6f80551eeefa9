import torch


def save_prefix(tensors: dict, n: int, path):
    torch.save({k: v[:n] for k, v in tensors.items()}, path)  # maybe: A (values unknown)


def save_rows(weight: torch.Tensor, rows: list, path):
    torch.save([weight[r] for r in rows], path)  # maybe: A (`rows` may hold ints or index tensors)
