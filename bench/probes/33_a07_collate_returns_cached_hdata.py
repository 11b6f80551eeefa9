# source: hypernetwork-research-group/hypertorch https://github.com/hypernetwork-research-group/hypertorch/pull/176 — with sample_full_hypergraph=True, DataLoader.collate returned `self.__cached_dataset_hdata.to(batch[0].device)`; HData.to() moves fields in place and returns self (and tensor .to() is a no-op on the same device), so every "batch" was the dataset's cached object and in-place edits to a batch corrupted the dataset; the fix returns `.clone().to(...)` with a new HData.clone().
import torch
from torch.utils.data import Dataset
from torch.utils.data import DataLoader as TorchDataLoader


class HData:
    def __init__(self, x, edge_index, edge_attr=None, y=None):
        self.x = x
        self.edge_index = edge_index
        self.edge_attr = edge_attr
        self.y = y

    @property
    def device(self):
        return self.x.device

    def to(self, device, non_blocking=False):
        self.x = self.x.to(device, non_blocking=non_blocking)
        self.edge_index = self.edge_index.to(device, non_blocking=non_blocking)
        if self.edge_attr is not None:
            self.edge_attr = self.edge_attr.to(device, non_blocking=non_blocking)
        if self.y is not None:
            self.y = self.y.to(device, non_blocking=non_blocking)
        return self

    def clone(self):
        return HData(
            self.x.clone(),
            self.edge_index.clone(),
            None if self.edge_attr is None else self.edge_attr.clone(),
            None if self.y is None else self.y.clone(),
        )


class HypergraphDataset(Dataset):
    def __init__(self, hdata):
        self.hdata = hdata

    def __len__(self):
        return self.hdata.x.shape[0]

    def __getitem__(self, idx):
        return self.hdata


class DataLoader(TorchDataLoader):
    def __init__(self, dataset, batch_size=1, shuffle=False, sample_full_hypergraph=False, **kwargs):
        self.sample_full_hypergraph = sample_full_hypergraph
        self.__cached_dataset_hdata = dataset.hdata
        super().__init__(dataset, batch_size=batch_size, shuffle=shuffle, collate_fn=self.collate, **kwargs)

    def collate(self, batch):
        if self.sample_full_hypergraph:
            return self.__cached_dataset_hdata.to(batch[0].device)  # want: A
        raise NotImplementedError


class DataLoaderFixed(DataLoader):
    def collate(self, batch):
        if self.sample_full_hypergraph:
            return self._DataLoader__cached_dataset_hdata.clone().to(batch[0].device)
        raise NotImplementedError


if __name__ == "__main__":
    for cls in (DataLoader, DataLoaderFixed):
        hdata = HData(torch.ones(6, 3), torch.tensor([[0, 1, 2, 3], [0, 0, 1, 1]]), y=torch.zeros(6))
        dataset = HypergraphDataset(hdata)
        loader = cls(dataset, batch_size=2, sample_full_hypergraph=True)
        for batch in loader:
            batch.x.mul_(2.0)  # e.g. in-place feature normalisation / dropout in the train loop
        aliased = batch.x.data_ptr() == dataset.hdata.x.data_ptr()
        print(f"{cls.__name__}: batch aliases dataset={aliased}, dataset x[0,0] after 3 batches="
              f"{dataset.hdata.x[0, 0].item()} (expected 1.0)")
