import torch


@torch.no_grad()
def build_bank(backbone, loader):
    bank = []
    labels = []
    for images, targets in loader:
        feats = backbone(images)
        bank.append(feats[:, 0])  # want: A
        labels.append(targets)
    return torch.cat(bank), torch.cat(labels)
