# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/12722 — MultiModalKwargs._try_stack and the batched (and flat) fields' _reduce_data always merged items with torch.stack (torch.concat), so a batch holding a single multi-modal item (the common case for one image per request) was copied into a freshly allocated tensor on every request. The fix special-cases len(batch) == 1 and returns batch[0].unsqueeze(0).contiguous() (batch[0].contiguous() for concat), which gives the same result as a view with zero copy when the item is contiguous.
from collections import UserDict, defaultdict
from dataclasses import dataclass
from typing import Union, cast

import torch

NestedTensors = Union[list["NestedTensors"], list[torch.Tensor], torch.Tensor]


def is_list_of(value, typ, *, check="first"):
    if not isinstance(value, list):
        return False
    return all(isinstance(v, typ) for v in (value[:1] if check == "first" else value))


@dataclass(frozen=True)
class MultiModalFieldElem:
    modality: str
    key: str
    data: NestedTensors
    field: "BaseMultiModalField"


@dataclass(frozen=True)
class BaseMultiModalField:
    def _field_factory(self, *, modality: str, key: str):
        return lambda data: MultiModalFieldElem(modality=modality, key=key, data=data, field=self)

    def reduce_data(self, elems: list[MultiModalFieldElem]) -> NestedTensors:
        field_types = [type(item.field) for item in elems]
        if len(set(field_types)) > 1:
            raise ValueError(f"Cannot merge different {field_types=}")
        return self._reduce_data([item.data for item in elems])


@dataclass(frozen=True)
class MultiModalBatchedField(BaseMultiModalField):
    def build_elems(self, modality, key, data):
        field_factory = self._field_factory(modality=modality, key=key)
        return [field_factory(item) for item in data]

    def _reduce_data(self, batch: list[NestedTensors]) -> NestedTensors:
        if len(batch) > 0 and is_list_of(batch, torch.Tensor, check="all"):
            first_shape = batch[0].shape
            if all(elem.shape == first_shape for elem in batch):
                return torch.stack(batch)  # want: C
        return batch


class MultiModalKwargs(UserDict):
    @staticmethod
    def _try_stack(nested_tensors: NestedTensors) -> NestedTensors:
        if isinstance(nested_tensors, torch.Tensor):
            return nested_tensors
        stacked = [MultiModalKwargs._try_stack(t) for t in nested_tensors]
        if not is_list_of(stacked, torch.Tensor, check="all"):
            return stacked
        tensors_ = cast(list[torch.Tensor], stacked)
        if any(t.shape != tensors_[0].shape for t in tensors_):
            return tensors_
        return torch.stack(tensors_)  # want: C

    @staticmethod
    def batch(inputs_list: list["MultiModalKwargs"]):
        if len(inputs_list) == 0:
            return {}
        item_lists = defaultdict[str, list[NestedTensors]](list)
        for inputs in inputs_list:
            for k, v in inputs.items():
                item_lists[k].append(v)
        return {k: MultiModalKwargs._try_stack(item_list) for k, item_list in item_lists.items()}


@dataclass(frozen=True)
class MultiModalBatchedFieldFixed(MultiModalBatchedField):
    def _reduce_data(self, batch: list[NestedTensors]) -> NestedTensors:
        if len(batch) > 0 and is_list_of(batch, torch.Tensor, check="all"):
            if len(batch) == 1:
                return batch[0].unsqueeze(0).contiguous()
            first_shape = batch[0].shape
            if all(elem.shape == first_shape for elem in batch):
                return torch.stack(batch)
        return batch


class MultiModalKwargsFixed(MultiModalKwargs):
    @staticmethod
    def _try_stack(nested_tensors: NestedTensors) -> NestedTensors:
        if isinstance(nested_tensors, torch.Tensor):
            return nested_tensors
        stacked = [MultiModalKwargsFixed._try_stack(t) for t in nested_tensors]
        if not is_list_of(stacked, torch.Tensor, check="all"):
            return stacked
        tensors_ = cast(list[torch.Tensor], stacked)
        if len(tensors_) == 1:
            return tensors_[0].unsqueeze(0).contiguous()
        if any(t.shape != tensors_[0].shape for t in tensors_):
            return tensors_
        return torch.stack(tensors_)

    @staticmethod
    def batch(inputs_list):
        item_lists = defaultdict(list)
        for inputs in inputs_list:
            for k, v in inputs.items():
                item_lists[k].append(v)
        return {k: MultiModalKwargsFixed._try_stack(v) for k, v in item_lists.items()}


if __name__ == "__main__":
    torch.manual_seed(0)
    pixel_values = torch.randn(1, 3, 8, 8)
    for batched_cls, kw_cls, shares in (
        (MultiModalBatchedField, MultiModalKwargs, False),
        (MultiModalBatchedFieldFixed, MultiModalKwargsFixed, True),
    ):
        elems = batched_cls().build_elems("image", "pixel_values", pixel_values)
        merged = elems[0].field.reduce_data(list(elems))
        batched = kw_cls.batch([kw_cls({"pixel_values": pixel_values[0]})])["pixel_values"]
        assert torch.equal(merged, pixel_values) and torch.equal(batched, pixel_values)
        assert (merged.data_ptr() == pixel_values.data_ptr()) == shares
        assert (batched.data_ptr() == pixel_values.data_ptr()) == shares
    print("ok")
