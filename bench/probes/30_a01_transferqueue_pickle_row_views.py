# source: TransferQueue/TransferQueue https://github.com/TransferQueue/TransferQueue/pull/170 — YuanrongStorageClient._batch_put ran pickle.dumps(value) on every CPU value, but the KV storage manager hands it per-sample rows of the batch tensor, so every key serialised the whole batch storage ("Serializing slice of tensors results in entire tensors being serialized"); the fix cloned tensors before pickling.
import pickle

import torch


class _CpuDsClient:
    """Stand-in for the Yuanrong datasystem KV client (bytes in, bytes out)."""

    def __init__(self):
        self.store = {}

    def mset(self, keys, values):
        for k, v in zip(keys, values):
            self.store[k] = v


class YuanrongStorageClient:
    def __init__(self, npu_client=None):
        self._cpu_ds_client = _CpuDsClient()
        self._npu_ds_client = npu_client

    def npu_ds_client_is_available(self):
        return self._npu_ds_client is not None

    def _batch_put(self, keys, values):
        if self.npu_ds_client_is_available():
            cpu_keys = []
            cpu_values = []
            npu_keys = []
            npu_values = []
            for key, value in zip(keys, values, strict=False):
                if isinstance(value, torch.Tensor) and value.device.type == "npu":
                    if not value.is_contiguous():
                        raise ValueError(f"NPU Tensor is not contiguous: {value}")
                    npu_keys.append(key)
                    npu_values.append(value)
                else:
                    cpu_keys.append(key)
                    cpu_values.append(pickle.dumps(value))  # want: A
            if npu_keys:
                self._npu_ds_client.dev_mset(npu_keys, npu_values)
            if cpu_keys:
                self._cpu_ds_client.mset(cpu_keys, cpu_values)
        else:
            values = [pickle.dumps(value) for value in values]  # want: A
            self._cpu_ds_client.mset(keys, values)

    def put(self, keys, values):
        if len(keys) != len(values):
            raise ValueError("Number of keys must match number of values")
        self._batch_put(keys, values)


class YuanrongStorageClientFixed(YuanrongStorageClient):
    @staticmethod
    def _serialize(value):
        if isinstance(value, torch.Tensor):
            # a row of a batch tensor would drag the whole batch storage into the pickle
            value = value.clone()
        return pickle.dumps(value)

    def _batch_put(self, keys, values):
        values = [self._serialize(value) for value in values]
        self._cpu_ds_client.mset(keys, values)


class KVStorageManager:
    def __init__(self, storage_client):
        self.storage_client = storage_client

    @staticmethod
    def _generate_keys(field_names, global_indexes):
        return [f"{index}@{field}" for field in field_names for index in global_indexes]

    @staticmethod
    def _generate_values(data):
        # one value per (field, sample): iterating a tensor yields row views of it
        return [row for field in sorted(data.keys()) for row in data[field]]  # maybe: A (views are created here, but they only hurt once pickled by the client)

    def put_data(self, data, global_indexes):
        keys = self._generate_keys(sorted(data.keys()), global_indexes)
        values = self._generate_values(data)
        self.storage_client.put(keys, values)


if __name__ == "__main__":
    batch = {
        "input_ids": torch.randint(0, 32000, (64, 256)),
        "old_log_prob": torch.randn(64, 256),
    }
    idx = list(range(64))

    buggy = YuanrongStorageClient()
    KVStorageManager(buggy).put_data(batch, idx)
    fixed = YuanrongStorageClientFixed()
    KVStorageManager(fixed).put_data(batch, idx)

    k = "3@old_log_prob"
    row_bytes = 256 * 4
    b_len, f_len = len(buggy._cpu_ds_client.store[k]), len(fixed._cpu_ds_client.store[k])
    print(f"payload {row_bytes} B  buggy pickle {b_len} B  fixed pickle {f_len} B")
    assert b_len > 32 * row_bytes and f_len < 4 * row_bytes
    assert torch.equal(pickle.loads(buggy._cpu_ds_client.store[k]), pickle.loads(fixed._cpu_ds_client.store[k]))
