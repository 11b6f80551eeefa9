# source: seung-lab/metroem https://github.com/seung-lab/metroem/commit/ad2aa18ac7b21f64e61186aceb98e4a6609e3c24 — `get_prewarp_mask` builds the per-key pre-warp loss mask; when no custom mask value is configured it called `torch.where(mask != 1.0, torch.zeros(1, ...), prewarp_result)` as a bare statement. `torch.where` is out-of-place, so the zeroing of masked regions was discarded and defects/black regions kept full MSE weight. The fix ("typos causing incorrect masks") assigns the result back to `prewarp_result`.
import torch


def get_mask_settings(settings, key):
    mask_value = settings.get("mask_value", None)
    coarsen_ranges = settings.get("coarsen_ranges", None)
    return mask_value, coarsen_ranges


def coarsen_mask(mask, n=1):
    kernel = torch.ones(1, 1, 3, 3, device=mask.device)
    for _ in range(n):
        mask = (torch.nn.functional.conv2d(mask, kernel, padding=1) > 0).float()
    return mask


def get_prewarp_mask(bundle, keys_to_apply, inv=False):
    prewarp_result = torch.ones_like(bundle["src"])
    for settings in keys_to_apply:
        name = settings["name"]
        if name not in bundle:
            continue
        mask = bundle[name]
        if inv:
            mask = 1.0 - mask
        mask_value_in_settings, coarsen_ranges_in_settings = get_mask_settings(settings, name)
        if mask_value_in_settings != None:
            prewarp_result = torch.where(mask != 1.0, torch.tensor(mask_value_in_settings, device=prewarp_result.device), prewarp_result)
        else:
            torch.where(mask != 1.0, torch.zeros(1, device=prewarp_result.device), prewarp_result)  # want: B

        around_the_mask = mask
        if coarsen_ranges_in_settings != None:
            for length, weight in coarsen_ranges_in_settings:
                coarsened = coarsen_mask(around_the_mask, length)
                prewarp_result[(coarsened != around_the_mask) * (prewarp_result == 1.0)] = weight
                around_the_mask = coarsened
    return prewarp_result


def get_prewarp_mask_fixed(bundle, keys_to_apply, inv=False):
    prewarp_result = torch.ones_like(bundle["src"])
    for settings in keys_to_apply:
        name = settings["name"]
        if name not in bundle:
            continue
        mask = bundle[name]
        if inv:
            mask = 1.0 - mask
        mask_value_in_settings, coarsen_ranges_in_settings = get_mask_settings(settings, name)
        if mask_value_in_settings != None:
            prewarp_result = torch.where(mask != 1.0, torch.tensor(mask_value_in_settings, device=prewarp_result.device), prewarp_result)
        else:
            prewarp_result = torch.where(mask != 1.0, torch.zeros(1, device=prewarp_result.device), prewarp_result)

        around_the_mask = mask
        if coarsen_ranges_in_settings != None:
            for length, weight in coarsen_ranges_in_settings:
                coarsened = coarsen_mask(around_the_mask, length)
                prewarp_result[(coarsened != around_the_mask) * (prewarp_result == 1.0)] = weight
                around_the_mask = coarsened
    return prewarp_result


if __name__ == "__main__":
    src = torch.ones(1, 1, 8, 8)
    defects = torch.ones(1, 1, 8, 8)
    defects[..., 2:4, 2:4] = 0.0
    bundle = {"src": src, "src_defects": defects}
    keys = [{"name": "src_defects"}]
    buggy = get_prewarp_mask(bundle, keys)
    fixed = get_prewarp_mask_fixed(bundle, keys)
    assert torch.all(buggy == 1.0)
    assert fixed[..., 2:4, 2:4].sum().item() == 0.0
    assert fixed.sum().item() == 64 - 4
    print("ok")
