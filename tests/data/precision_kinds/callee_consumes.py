# VL101: passing views to a method of this module that only computes from them (`build_pyramid`
# stores a matmul result, never its arguments) keeps nothing alive (torchvision raft.py:497)
import torch
import torch.nn.functional as F
from torch import nn


class Corr(nn.Module):
    def build_pyramid(self, fmap1: torch.Tensor, fmap2: torch.Tensor) -> None:
        b, c, h, w = fmap1.shape
        corr = torch.matmul(fmap1.view(b, c, h * w).transpose(1, 2), fmap2.view(b, c, h * w))
        self.pyramid = [corr]
        self.pyramid.append(F.avg_pool2d(corr.view(b * h * w, 1, h, w), 2))


class Raft(nn.Module):
    def __init__(self, enc: nn.Module):
        super().__init__()
        self.enc, self.corr = enc, Corr()

    def forward(self, im1: torch.Tensor, im2: torch.Tensor) -> torch.Tensor:
        fmaps = self.enc(torch.cat([im1, im2], dim=0))
        fmap1, fmap2 = torch.chunk(fmaps, chunks=2, dim=0)
        self.corr.build_pyramid(fmap1, fmap2)
        return self.corr.pyramid[0]
