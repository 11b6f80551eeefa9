# source: pyg-team/pytorch_geometric https://github.com/pyg-team/pytorch_geometric/pull/5978 — LinkLoader stored edge_label_index[0] / edge_label_index[1] (row views of the [2, E] edge index, by default data.edge_index itself) in self.input_data, so the loader object kept and shipped the whole shared storage to multiprocessing.spawn workers (failing there); the fix .clone()s both rows.
import pickle
from typing import Any, List, Union

import torch
from torch import Tensor


class Data:
    def __init__(self, x, edge_index):
        self.x = x
        self.edge_index = edge_index


# ---- torch_geometric/loader/utils.py ------------------------------------------------


class InputData:
    def __init__(self, *args):
        self.args = args

    def __getitem__(self, index: Union[Tensor, List[int]]) -> Any:
        if not isinstance(index, Tensor):
            index = torch.tensor(index, dtype=torch.long)

        outs = [index]
        for arg in self.args:
            outs.append(arg[index] if arg is not None else None)
        return tuple(outs)


def get_edge_label_index(data, edge_label_index):
    edge_type = None
    if isinstance(data, Data):
        if edge_label_index is None:
            return None, data.edge_index
        return None, edge_label_index
    raise NotImplementedError


# ---- torch_geometric/loader/link_loader.py ------------------------------------------


class LinkLoader(torch.utils.data.DataLoader):
    def __init__(
        self,
        data,
        link_sampler,
        edge_label_index=None,
        edge_label=None,
        edge_label_time=None,
        neg_sampling_ratio: float = 0.0,
        transform=None,
        filter_per_worker: bool = False,
        **kwargs,
    ):
        # Remove for PyTorch Lightning:
        if 'dataset' in kwargs:
            del kwargs['dataset']
        if 'collate_fn' in kwargs:
            del kwargs['collate_fn']

        # Get edge type (or `None` for homogeneous graphs):
        edge_type, edge_label_index = get_edge_label_index(data, edge_label_index)
        if edge_label is None:
            edge_label = torch.zeros(edge_label_index.size(1), device=edge_label_index.device)

        self.data = data
        self.edge_type = edge_type
        self.link_sampler = link_sampler
        self.input_data = InputData(edge_label_index[0], edge_label_index[1],  # maybe: A (the reported failure was a spawn/fd error from shipping the shared storage, not memory growth)
                                    edge_label, edge_label_time)
        self.neg_sampling_ratio = neg_sampling_ratio
        self.transform = transform
        self.filter_per_worker = filter_per_worker

        iterator = range(edge_label_index.size(1))
        super().__init__(iterator, collate_fn=self.collate_fn, **kwargs)

    def collate_fn(self, index: List[int]) -> Any:
        r"""Samples a subgraph from a batch of input nodes."""
        input_data = self.input_data[index]
        return self.link_sampler(input_data, negative_sampling_ratio=self.neg_sampling_ratio)


class LinkLoaderFixed(LinkLoader):
    """Post-fix constructor body (look-alike, correct)."""

    def set_input(self, edge_label_index, edge_label, edge_label_time=None):
        self.input_data = InputData(
            edge_label_index[0].clone(),
            edge_label_index[1].clone(),
            edge_label,
            edge_label_time,
        )


def link_sampler(input_data, negative_sampling_ratio=0.0):
    index, row, col, label, _ = input_data
    return torch.stack([row, col]), label


if __name__ == "__main__":
    torch.manual_seed(0)
    data = Data(torch.randn(1000, 8), torch.randint(0, 1000, (2, 50000)))
    loader = LinkLoader(data, link_sampler, batch_size=128, shuffle=True)
    batch = next(iter(loader))
    row = loader.input_data.args[0]
    print("row view shares data.edge_index storage:", row.untyped_storage().data_ptr() == data.edge_index.untyped_storage().data_ptr())
    print("pickled input_data (buggy):", len(pickle.dumps(loader.input_data.args[:1])), "bytes")
    fixed = LinkLoaderFixed(data, link_sampler, batch_size=128)
    fixed.set_input(data.edge_index, torch.zeros(50000))
    print("pickled input_data (fixed):", len(pickle.dumps(fixed.input_data.args[:1])), "bytes")
