# source: OpenMined/PySyft https://github.com/OpenMined/PySyft/issues/2499 — building per-client `sy.BaseDataset(data_train_x[a:b], data_train_y[a:b])` fragments kept slice views of the full training tensors, and `.send(worker)` pickled each fragment's whole backing storage, so memory grew by (number of clients x full dataset); the remedy is to give each fragment its own storage (`.clone()`) before it is sent.
import pickle

import torch


class VirtualWorker:
    def __init__(self, id):
        self.id = id
        self.received_bytes = 0
        self._objects = {}

    def recv_obj(self, blob):
        self.received_bytes += len(blob)
        obj = pickle.loads(blob)
        self._objects[id(obj)] = obj
        return id(obj)


class BaseDataset:
    def __init__(self, data, targets, transform=None):
        self.data = data
        self.targets = targets
        self.transform = transform
        self.location = None

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        x = self.data[index]
        if self.transform is not None:
            x = self.transform(x)
        return x, self.targets[index]

    def send(self, location):
        blob = pickle.dumps((self.data, self.targets))
        self.ptr = location.recv_obj(blob)
        self.location = location
        return self


def split_among_clients(data_train_x, data_train_y, n_clients):
    split_points_train = torch.linspace(0, len(data_train_x), n_clients + 1).long().tolist()
    client_train_data = []
    for i in range(n_clients):
        client_train_data.append(
            BaseDataset(data_train_x[split_points_train[i]: split_points_train[i + 1]],  # want: A
                        data_train_y[split_points_train[i]: split_points_train[i + 1]]))  # want: A
    return client_train_data


def split_among_clients_fixed(data_train_x, data_train_y, n_clients):
    split_points_train = torch.linspace(0, len(data_train_x), n_clients + 1).long().tolist()
    client_train_data = []
    for i in range(n_clients):
        lo, hi = split_points_train[i], split_points_train[i + 1]
        client_train_data.append(
            BaseDataset(data_train_x[lo:hi].clone(), data_train_y[lo:hi].clone()))
    return client_train_data


def dispatch(fragments, clients):
    for frag, client in zip(fragments, clients):
        frag.send(client)
    return sum(c.received_bytes for c in clients)


if __name__ == "__main__":
    n_clients = 10
    x = torch.randn(5000, 32)
    y = torch.randint(0, 10, (5000,))
    for fn in (split_among_clients, split_among_clients_fixed):
        clients = [VirtualWorker(f"c{i}") for i in range(n_clients)]
        sent = dispatch(fn(x, y, n_clients), clients)
        print(f"{fn.__name__:26s} sent {sent/1e6:6.2f} MB for a {(x.numel()*4 + y.numel()*8)/1e6:.2f} MB dataset")
