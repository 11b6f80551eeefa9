# source: KaiyangZhou/deep-person-reid https://github.com/KaiyangZhou/deep-person-reid/issues/409 — the evaluation feature loop appended `features.data.cpu()` to the feature list, which on a CPU run is only an alias of the model output (and its whole backing buffer), so every batch's full output stayed alive until the end of evaluation; the fix appends `features.cpu().clone()`.
import time
import numpy as np
import torch
import torch.nn as nn


class ReIDHead(nn.Module):
    """Toy BNNeck-style head: one fused projection, eval returns the embedding part."""

    def __init__(self, in_dim=96, feature_dim=16, num_classes=200):
        super(ReIDHead, self).__init__()
        self.feature_dim = feature_dim
        self.backbone = nn.Sequential(nn.Flatten(), nn.Linear(in_dim, 64), nn.ReLU())
        self.fused = nn.Linear(64, feature_dim + num_classes)

    def forward(self, x):
        y = self.fused(self.backbone(x))
        if not self.training:
            return y[:, :self.feature_dim]
        return y[:, self.feature_dim:]


def feature_extraction(model, data_loader, use_gpu=False):
    batch_time = 0.
    f_, pids_, camids_ = [], [], []
    for batch_idx, (imgs, pids, camids) in enumerate(data_loader):
        if use_gpu:
            imgs = imgs.cuda()
        end = time.time()
        features = model(imgs)
        batch_time += time.time() - end
        features = features.data.cpu()  # want: A
        f_.append(features)
        pids_.append(pids.numpy())
        camids_.append(camids.numpy())
    return f_, np.concatenate(pids_), np.concatenate(camids_)


def feature_extraction_fixed(model, data_loader, use_gpu=False):
    batch_time = 0.
    f_, pids_, camids_ = [], [], []
    for batch_idx, (imgs, pids, camids) in enumerate(data_loader):
        if use_gpu:
            imgs = imgs.cuda()
        end = time.time()
        features = model(imgs)
        batch_time += time.time() - end
        features = features.cpu().clone()
        f_.append(features)
        pids_.append(pids.numpy())
        camids_.append(camids.numpy())
    return f_, np.concatenate(pids_), np.concatenate(camids_)


@torch.no_grad()
def evaluate(model, query_loader, gallery_loader, extract=feature_extraction):
    model.eval()
    qf, q_pids, q_camids = extract(model, query_loader)
    gf, g_pids, g_camids = extract(model, gallery_loader)
    pinned = sum(f.untyped_storage().nbytes() for f in qf + gf)
    payload = sum(f.numel() * f.element_size() for f in qf + gf)
    qf, gf = torch.cat(qf, 0), torch.cat(gf, 0)
    distmat = torch.cdist(qf, gf)
    return distmat, pinned, payload


def make_loader(n=5, bs=16):
    return [(torch.randn(bs, 3, 8, 4), torch.randint(0, 50, (bs,)), torch.randint(0, 6, (bs,)))
            for _ in range(n)]


if __name__ == "__main__":
    torch.manual_seed(0)
    model = ReIDHead()
    q, g = make_loader(), make_loader(8)
    d_bug, pinned_bug, payload_bug = evaluate(model, q, g, feature_extraction)
    d_fix, pinned_fix, payload_fix = evaluate(model, q, g, feature_extraction_fixed)
    assert torch.allclose(d_bug, d_fix)
    print('buggy: feature payload %d B, storage held by list %d B' % (payload_bug, pinned_bug))
    print('fixed: feature payload %d B, storage held by list %d B' % (payload_fix, pinned_fix))
    assert pinned_bug > 10 * payload_bug
    assert pinned_fix == payload_fix
