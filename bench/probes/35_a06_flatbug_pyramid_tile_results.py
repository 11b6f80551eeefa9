# source: darsa-group/flat-bug https://github.com/darsa-group/flat-bug/pull/123 — the pyramid-tiling inference kept each tile (a slice view of the rescaled full image) inside the intermediate ultralytics-style `Results` objects collected for all scales, so every scale's full image stayed resident until the final merge and large images went OOM; the fix stops storing the tile tensors in the intermediate Results.
import torch
import torch.nn.functional as F
from torch import nn


class Results:
    def __init__(self, orig_img, path, names, boxes=None):
        self.orig_img = orig_img
        self.orig_shape = tuple(orig_img.shape[-2:]) if orig_img is not None else None
        self.path = path
        self.names = names
        self.boxes = boxes


class TinyDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(3, 6, 8, stride=8)

    def forward(self, x):
        out = self.head(x)
        return out.flatten(2).transpose(1, 2)[:, :16]


class Predictor:
    TILE_SIZE = 64

    def __init__(self):
        self._model = TinyDetector().eval()
        self.names = {0: "insect"}

    def _tile_offsets(self, h, w):
        step = self.TILE_SIZE
        return [(y, x) for y in range(0, h - step + 1, step) for x in range(0, w - step + 1, step)]

    def _make_result(self, tile, path, pred):
        return Results(orig_img=tile, path=path, names=self.names, boxes=pred[:, :6].clone())  # want: A

    @torch.no_grad()
    def _detect_scale(self, image, scale, path):
        scaled = F.interpolate(image[None], scale_factor=scale, mode="bilinear", align_corners=False)[0]
        offsets = self._tile_offsets(*scaled.shape[-2:])
        tiles = [scaled[:, y:y + self.TILE_SIZE, x:x + self.TILE_SIZE] for (y, x) in offsets]
        preds = self._model(torch.stack(tiles))
        return [self._make_result(tile, path, pred) for tile, pred in zip(tiles, preds)]

    def pyramid_predictions(self, image, path, scales=(1.0, 0.75, 0.5, 0.25)):
        all_results = []
        for scale in scales:
            all_results.extend(self._detect_scale(image, scale, path))
        return all_results


class PredictorFixed(Predictor):
    def _make_result(self, tile, path, pred):
        result = Results(orig_img=None, path=path, names=self.names, boxes=pred[:, :6].clone())
        result.orig_shape = tuple(tile.shape[-2:])
        return result


def retained_bytes(results):
    storages = {}
    for r in results:
        for t in (r.orig_img, r.boxes):
            if t is not None:
                storages[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
    return sum(storages.values())


if __name__ == "__main__":
    image = torch.rand(3, 512, 512)
    for cls in (Predictor, PredictorFixed):
        res = cls().pyramid_predictions(image, "img.jpg")
        print(f"{cls.__name__:15s} {len(res)} results retain {retained_bytes(res)/1e6:6.2f} MB")
