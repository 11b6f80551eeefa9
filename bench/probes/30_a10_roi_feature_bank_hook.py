# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/8109 — indexing one ROI feature out of a pooled (128, 512, 7, 7) tensor and torch.save()-ing it stored the whole 12 MB block instead of ~100 KB; the maintainers' fix is `.clone()` before saving. Reconstructed as a forward hook on a box head that files per-image ROI features into a module-level bank keyed by image id, which is later torch.save()d.
import io

import torch
import torch.nn as nn

FEATURE_BANK = {}
_CURRENT_IMAGE_IDS = []


class BoxHead(nn.Module):
    def __init__(self, c=64):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, pooled):  # (num_rois, C, 7, 7)
        return self.conv(pooled).relu()


def _dump_hook(module, inputs, output):
    rois_per_image = output.shape[0] // len(_CURRENT_IMAGE_IDS)
    for j, image_id in enumerate(_CURRENT_IMAGE_IDS):
        # only the top-scoring ROI of each image is kept for the retrieval index
        FEATURE_BANK[image_id] = output[j * rois_per_image].detach()  # want: A


def _dump_hook_fixed(module, inputs, output):
    rois_per_image = output.shape[0] // len(_CURRENT_IMAGE_IDS)
    for j, image_id in enumerate(_CURRENT_IMAGE_IDS):
        FEATURE_BANK[image_id] = output[j * rois_per_image].detach().clone()


def run_detector(box_head, batches, hook):
    FEATURE_BANK.clear()
    handle = box_head.register_forward_hook(hook)
    try:
        with torch.no_grad():
            for image_ids, pooled in batches:
                _CURRENT_IMAGE_IDS[:] = image_ids
                box_head(pooled)
    finally:
        handle.remove()
    f = io.BytesIO()
    torch.save(FEATURE_BANK, f)
    return dict(FEATURE_BANK), f.tell()


if __name__ == "__main__":
    torch.manual_seed(0)
    head = BoxHead()
    # 4 images per batch, 32 ROIs per image -> (128, 64, 7, 7) pooled features
    batches = [([f"img{b}_{i}" for i in range(4)], torch.randn(128, 64, 7, 7)) for b in range(3)]
    bank_bad, size_bad = run_detector(head, batches, _dump_hook)
    bank_good, size_good = run_detector(head, batches, _dump_hook_fixed)
    one = 64 * 7 * 7 * 4
    held_bad = sum({t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in bank_bad.values()}.values())
    print(f"{len(bank_bad)} entries x {one} B  buggy bank holds {held_bad} B, file {size_bad} B  fixed file {size_good} B")
    assert all(torch.equal(bank_bad[k], bank_good[k]) for k in bank_good)
    assert size_bad > 20 * size_good
