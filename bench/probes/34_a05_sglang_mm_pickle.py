# source: sgl-project/sglang https://github.com/sgl-project/sglang/pull/33391 — when bundled multimodal items were expanded per image, `_slice_value` returned `value[start:end]` views of the bundled feature tensor, and pickling each expanded MultimodalDataItem for IPC serialised the whole base storage (issue #33388, ~518x amplification); the fix materialises a compact copy of any CPU view whose storage exceeds its payload so only the payload is pickled.
import dataclasses
import pickle
from typing import Any, Dict, List, Optional

import torch


@dataclasses.dataclass
class MultimodalDataItem:
    modality: str
    feature: Any = None
    offsets: Optional[List] = None
    model_specific_data: Dict[str, Any] = dataclasses.field(default_factory=dict)


def _slice_value(value, start, end):
    if isinstance(value, torch.Tensor):
        return value[start:end]  # want: A
    if isinstance(value, (list, tuple)):
        return value[start:end]
    return value


def get_new_expanded_mm_items(original_mm_items, item_cls=MultimodalDataItem, slice_fn=_slice_value):
    expanded_mm_items = []
    for item in original_mm_items:
        grid = item.model_specific_data.get("image_grid_thw")
        if item.modality != "image" or grid is None or grid.shape[0] <= 1:
            expanded_mm_items.append(item)
            continue
        patches = grid.prod(-1).tolist()
        start = 0
        for i, n in enumerate(patches):
            end = start + n
            new_item = item_cls(
                modality=item.modality,
                feature=slice_fn(item.feature, start, end),
                offsets=[item.offsets[i]],
                model_specific_data={
                    k: (slice_fn(v, i, i + 1) if k == "image_grid_thw" else v)
                    for k, v in item.model_specific_data.items()
                },
            )
            expanded_mm_items.append(new_item)
            start = end
    return expanded_mm_items


def _compact_if_view(t):
    if isinstance(t, torch.Tensor) and t.device.type == "cpu":
        if t.untyped_storage().nbytes() > t.numel() * t.element_size():
            return t.clone()
    return t


def _slice_value_fixed(value, start, end):
    if isinstance(value, torch.Tensor):
        return _compact_if_view(value[start:end])
    if isinstance(value, (list, tuple)):
        return value[start:end]
    return value


if __name__ == "__main__":
    n_img, patches = 8, 256
    grid = torch.tensor([[1, 16, 16]] * n_img)
    feat = torch.randn(n_img * patches, 64)
    for fn in (_slice_value, _slice_value_fixed):
        bundled = MultimodalDataItem(modality="image", feature=feat, offsets=list(range(n_img)),
                                     model_specific_data={"image_grid_thw": grid})
        items = get_new_expanded_mm_items([bundled], slice_fn=fn)
        payload = items[0].feature.numel() * items[0].feature.element_size()
        size = len(pickle.dumps(items[0]))
        back = pickle.loads(pickle.dumps(items[0]))
        assert torch.equal(back.feature, feat[:patches])
        print("%-20s one expanded item: payload %6d B, pickled %7d B" % (fn.__name__, payload, size))
        if fn is _slice_value:
            assert size > 4 * payload
        else:
            assert size < 2 * payload
