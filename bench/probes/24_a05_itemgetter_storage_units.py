# source: TransferQueue/TransferQueue https://github.com/TransferQueue/TransferQueue/pull/163 — _filter_storage_data picked each storage unit's samples with itemgetter(*batch_indexes)(data[fname]); the rows are views of the client's batch tensor, so pickling the per-unit message sent the whole batch to every storage unit ("prevent pickling the whole tensor for every storage unit"; .contiguous() would not copy them); fix: item.clone() for tensor items
import pickle
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, Dict, List

import torch


@dataclass
class StorageMetaGroup:
    storage_id: str
    batch_indexes: List[int] = field(default_factory=list)
    local_indexes: List[int] = field(default_factory=list)

    def get_batch_indexes(self) -> List[int]:
        return self.batch_indexes


def build_storage_meta_groups(global_indexes: List[int], num_units: int) -> Dict[str, StorageMetaGroup]:
    groups: Dict[str, StorageMetaGroup] = {}
    for batch_index, g in enumerate(global_indexes):
        sid = f"storage_{g % num_units}"
        grp = groups.setdefault(sid, StorageMetaGroup(sid))
        grp.batch_indexes.append(batch_index)
        grp.local_indexes.append(g // num_units)
    return groups


def _filter_storage_data(storage_meta_group: StorageMetaGroup, data: Dict[str, Any]) -> Dict[str, list]:
    results = {}
    batch_indexes = storage_meta_group.get_batch_indexes()
    if not batch_indexes:
        return results
    for fname in data.keys():
        result = itemgetter(*batch_indexes)(data[fname])
        if not isinstance(result, tuple):
            result = (result,)
        results[fname] = list(result)  # want: A
    return results


def _filter_storage_data_fixed(storage_meta_group: StorageMetaGroup, data: Dict[str, Any]) -> Dict[str, list]:
    results = {}
    for fname, column in data.items():
        picked = itemgetter(*storage_meta_group.get_batch_indexes())(column)
        picked = picked if isinstance(picked, tuple) else (picked,)
        results[fname] = [x.clone() if isinstance(x, torch.Tensor) else x for x in picked]
    return results


def put_data(data: Dict[str, Any], global_indexes: List[int], num_units: int, filter_fn=_filter_storage_data):
    messages = {}
    for sid, grp in build_storage_meta_groups(global_indexes, num_units).items():
        body = {"local_indexes": grp.local_indexes, "data": filter_fn(grp, data)}
        messages[sid] = pickle.dumps(body)  # what ZMQMessage.serialize() does to the body
    return messages


if __name__ == "__main__":
    batch = {
        "input_ids": torch.randint(0, 1000, (16, 256)),
        "old_log_prob": torch.randn(16, 256),
        "uid": [f"u{i}" for i in range(16)],
    }
    batch_bytes = 16 * 256 * (8 + 4)
    sent = put_data(batch, list(range(100, 116)), num_units=4)
    sent_fixed = put_data(batch, list(range(100, 116)), num_units=4, filter_fn=_filter_storage_data_fixed)
    assert len(sent) == 4
    assert all(len(m) > batch_bytes for m in sent.values())  # each unit gets the whole batch
    assert all(len(m) < batch_bytes // 2 for m in sent_fixed.values())
    row = pickle.loads(sent["storage_0"])["data"]["old_log_prob"][0]
    assert row.shape == (256,) and row.untyped_storage().nbytes() == 16 * 256 * 4
    print("ok: itemgetter rows shipped the whole batch to every storage unit")
