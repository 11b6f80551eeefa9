# source: pytorch/pytorch https://github.com/pytorch/pytorch/pull/15703 — DistributedDataParallel._sync_params cached `p.data` for every replica parameter and broadcast into them with `param_data.set_(tensor)`; after the Variable/Tensor merge `.data` is a separate shallow copy, so set_ re-pointed only the temporary and replica weights were never updated; the fix copies into the storage instead.
import torch
import torch.nn as nn


def broadcast_coalesced(tensors, devices):
    """Stand-in for comm.broadcast_coalesced on one host: one copy per device."""
    return [[t.clone() for t in tensors] for _ in devices]


class DistributedDataParallel(nn.Module):
    def __init__(self, module, device_ids):
        super().__init__()
        self.device_ids = device_ids
        self._module_copies = [module] + [
            type(module)() for _ in device_ids[1:]
        ]
        self.modules_params_data = [[] for _ in range(len(device_ids))]
        for dev_idx, module_copy in enumerate(self._module_copies):
            self.modules_params_data[dev_idx] = [p.data for p in module_copy.parameters()]

    def _sync_params(self):
        if len(self.device_ids) > 1:
            result = broadcast_coalesced(self.modules_params_data[0], self.device_ids)
            for tensors, module_params_data in zip(result[1:], self.modules_params_data[1:]):
                for tensor, param_data in zip(tensors, module_params_data):
                    param_data.set_(tensor)  # want: B


class DistributedDataParallelFixed(DistributedDataParallel):
    def _sync_params(self):
        if len(self.device_ids) > 1:
            result = broadcast_coalesced(self.modules_params_data[0], self.device_ids)
            for tensors, module_params_data in zip(result[1:], self.modules_params_data[1:]):
                for tensor, param_data in zip(tensors, module_params_data):
                    param_data.copy_(tensor)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def run(cls):
    torch.manual_seed(0)
    ddp = cls(Net(), device_ids=[0, 1, 2])
    with torch.no_grad():
        ddp._module_copies[0].fc1.weight.add_(1.0)  # "optimizer step" on replica 0
    ddp._sync_params()
    return torch.equal(ddp._module_copies[0].fc1.weight, ddp._module_copies[2].fc1.weight)


if __name__ == "__main__":
    ok = run(DistributedDataParallel)
    print("buggy replicas in sync:", ok)
    assert not ok
    ok = run(DistributedDataParallelFixed)
    print("fixed replicas in sync:", ok)
    assert ok
