# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/20201 — in-place modification through two chained boolean masks (`a[b][c] = v`) silently left `a` unchanged because `a[b]` is a copy; the workaround adopted in the thread is to index once or write the sub-tensor back (`k = a[b]; k[c] = v; a[b] = k`). Reconstructed here as a depth-target cleaner in a training collate step.
import torch
import torch.nn as nn
import torch.nn.functional as F


class DepthTargetCleaner:
    def __init__(self, min_depth=0.1, max_depth=10.0):
        self.min_depth = min_depth
        self.max_depth = max_depth

    def __call__(self, depth):
        valid = depth > 0
        # cap far-away outliers among the valid pixels
        depth[valid][depth[valid] > self.max_depth] = self.max_depth  # want: B
        # and lift tiny depths up to the sensor minimum
        depth[valid].clamp_(min=self.min_depth)  # want: B
        return depth, valid


class DepthTargetCleanerFixed(DepthTargetCleaner):
    def __call__(self, depth):
        valid = depth > 0
        sub = depth[valid]
        sub[sub > self.max_depth] = self.max_depth
        depth[valid] = sub.clamp(min=self.min_depth)
        return depth, valid


def collate(batch, cleaner):
    images = torch.stack([b[0] for b in batch])
    depths, masks = zip(*(cleaner(b[1].clone()) for b in batch))
    return images, torch.stack(depths), torch.stack(masks)


class TinyDepthNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 1, 3, padding=1)

    def forward(self, x):
        return F.softplus(self.conv(x)).squeeze(1)


def train_step(model, opt, batch, cleaner):
    images, depth, valid = collate(batch, cleaner)
    pred = model(images)
    loss = F.l1_loss(pred[valid], depth[valid])
    opt.zero_grad()
    loss.backward()
    opt.step()
    return depth, valid, loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    batch = []
    for _ in range(2):
        d = torch.rand(8, 8) * 30.0
        d[d < 3.0] = 0.0
        d[0, 0] = 0.01
        batch.append((torch.randn(3, 8, 8), d))
    for cls in (DepthTargetCleaner, DepthTargetCleanerFixed):
        model = TinyDepthNet()
        opt = torch.optim.SGD(model.parameters(), lr=1e-2)
        depth, valid, loss = train_step(model, opt, batch, cls())
        print(f"{cls.__name__:24s} max valid depth={depth[valid].max().item():6.2f} "
              f"min valid depth={depth[valid].min().item():.2f} loss={loss:.3f}")
    depth, valid = DepthTargetCleaner()(batch[0][1].clone())
    assert depth[valid].max() > 10.0
