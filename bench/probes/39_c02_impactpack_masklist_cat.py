# source: ltdrdata/ComfyUI-Impact-Pack https://github.com/ltdrdata/ComfyUI-Impact-Pack/pull/1084 — MaskListToMaskBatch.doit grew the output batch with `mask1 = torch.cat((mask1, mask2), dim=0)` once per incoming mask, re-copying everything accumulated so far on every iteration (O(n^2); with hundreds of masks the node "runs indefinitely"). The PR collects the (resized) 3-D masks in a list and concatenates once at the end, making it O(n).
import torch
import torch.nn.functional as F


def make_3d_mask(mask):
    if len(mask.shape) == 4:
        return mask.squeeze(0)
    elif len(mask.shape) == 2:
        return mask.unsqueeze(0)
    return mask


def common_upscale(samples, width, height, upscale_method, crop):
    # stand-in for comfy.utils.common_upscale (bilinear instead of lanczos)
    return F.interpolate(samples, size=(height, width), mode="bilinear", align_corners=False)


class MaskListToMaskBatch:
    INPUT_IS_LIST = True
    RETURN_TYPES = ("MASK",)
    FUNCTION = "doit"
    CATEGORY = "ImpactPack/Operation"

    def doit(self, mask):
        if len(mask) == 1:
            mask = make_3d_mask(mask[0])
            return (mask,)
        elif len(mask) > 1:
            mask1 = make_3d_mask(mask[0])

            for mask2 in mask[1:]:
                mask2 = make_3d_mask(mask2)
                if mask1.shape[1:] != mask2.shape[1:]:
                    mask2 = common_upscale(mask2.unsqueeze(1), mask1.shape[2], mask1.shape[1], "lanczos", "center").squeeze(1)
                mask1 = torch.cat((mask1, mask2), dim=0)  # want: C

            return (mask1,)
        else:
            empty_mask = torch.zeros((1, 64, 64), dtype=torch.float32, device="cpu").unsqueeze(0)
            return (empty_mask,)


class MaskListToMaskBatchFixed(MaskListToMaskBatch):
    def doit(self, mask):
        if len(mask) == 1:
            mask = make_3d_mask(mask[0])
            return (mask,)
        elif len(mask) > 1:
            mask1 = make_3d_mask(mask[0])
            target_shape = mask1.shape[1:]
            masks = [mask1]

            for mask2 in mask[1:]:
                mask2 = make_3d_mask(mask2)
                if target_shape != mask2.shape[1:]:
                    mask2 = common_upscale(mask2.unsqueeze(1), target_shape[1], target_shape[0], "lanczos", "center").squeeze(1)
                masks.append(mask2)

            return (torch.cat(masks, dim=0),)
        else:
            empty_mask = torch.zeros((1, 64, 64), dtype=torch.float32, device="cpu").unsqueeze(0)
            return (empty_mask,)


if __name__ == "__main__":
    torch.manual_seed(0)
    masks = [torch.rand(16, 16) for _ in range(6)] + [torch.rand(1, 8, 8)]

    allocs = []
    real_cat = torch.cat

    def counting_cat(tensors, dim=0):
        out = real_cat(tensors, dim=dim)
        allocs.append(out.numel())
        return out

    torch.cat = counting_cat
    (out_bug,) = MaskListToMaskBatch().doit(masks)
    bug_allocs = list(allocs)
    allocs.clear()
    (out_fix,) = MaskListToMaskBatchFixed().doit(masks)
    fix_allocs = list(allocs)
    torch.cat = real_cat

    assert torch.allclose(out_bug, out_fix)
    assert out_fix.shape == (7, 16, 16)
    assert len(bug_allocs) == 6 and len(fix_allocs) == 1
    assert sum(bug_allocs) > sum(fix_allocs)
    print("ok")
