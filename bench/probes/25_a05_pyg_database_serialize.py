# source: pyg-team/pytorch_geometric https://github.com/pyg-team/pytorch_geometric/pull/8051 — torch_geometric.data.Database.serialize did torch.save(data, buffer) for each row written by multi_insert; rows taken from a batch tensor (data_list[start:start + batch_size], then per-row iteration) are views, so every SQLite BLOB held the whole batch; fix: "Ensure that data is not a view of a larger tensor: data = data.clone()" before torch.save
import io
import sqlite3
from abc import ABC, abstractmethod
from typing import Any, Iterable, List, Optional, Union

import torch
from torch import Tensor


class Database(ABC):
    @abstractmethod
    def insert(self, index: int, data: Any):
        raise NotImplementedError

    def multi_insert(self, indices, data_list, batch_size: Optional[int] = None):
        if isinstance(indices, slice):
            indices = range(indices.start or 0, indices.stop, indices.step or 1)
        length = min(len(indices), len(data_list))
        batch_size = length if batch_size is None else batch_size
        for start in range(0, length, batch_size):
            self._multi_insert(indices[start:start + batch_size], data_list[start:start + batch_size])

    def _multi_insert(self, indices: Union[Iterable[int], Tensor, range], data_list: Iterable[Any]):
        if isinstance(indices, Tensor):
            indices = indices.tolist()
        for index, data in zip(indices, data_list):
            self.insert(index, data)

    @abstractmethod
    def get(self, index: int) -> Any:
        raise NotImplementedError

    @staticmethod
    def serialize(data: Any) -> bytes:
        r"""Serializes :obj:`data` into bytes."""
        buffer = io.BytesIO()
        torch.save(data, buffer)  # want: A
        return buffer.getvalue()

    @staticmethod
    def deserialize(data: bytes) -> Any:
        return torch.load(io.BytesIO(data), weights_only=True)

    def __getitem__(self, key):
        return self.get(key) if isinstance(key, int) else [self.get(i) for i in key]

    def __setitem__(self, key, value):
        if isinstance(key, int):
            self.insert(key, value)
        else:
            self.multi_insert(key, value)


class SQLiteDatabase(Database):
    def __init__(self, path: str, name: str):
        self.name = name
        self._connection = sqlite3.connect(path)
        self.cursor = self._connection.cursor()
        self.cursor.execute(f"CREATE TABLE IF NOT EXISTS {name} (id INTEGER PRIMARY KEY, data BLOB NOT NULL)")

    def insert(self, index: int, data: Any):
        query = f"INSERT INTO {self.name} (id, data) VALUES (?, ?)"
        self.cursor.execute(query, (index, self.serialize(data)))

    def _multi_insert(self, indices, data_list):
        if isinstance(indices, Tensor):
            indices = indices.tolist()
        data_list = [self.serialize(data) for data in data_list]
        query = f"INSERT INTO {self.name} (id, data) VALUES (?, ?)"
        self.cursor.executemany(query, zip(indices, data_list))

    def get(self, index: int) -> Any:
        self.cursor.execute(f"SELECT data FROM {self.name} WHERE id = ?", (index,))
        return self.deserialize(self.cursor.fetchone()[0])

    def blob_bytes(self) -> int:
        self.cursor.execute(f"SELECT SUM(LENGTH(data)) FROM {self.name}")
        return self.cursor.fetchone()[0]


class SQLiteDatabaseFixed(SQLiteDatabase):
    @staticmethod
    def serialize(data: Any) -> bytes:
        # Ensure that data is not a view of a larger tensor:
        if isinstance(data, Tensor):
            data = data.clone()
        buffer = io.BytesIO()
        torch.save(data, buffer)
        return buffer.getvalue()


def snapshot(db_path: str, table: torch.Tensor) -> bytes:
    # the whole table in one blob: nothing beyond its own storage is written
    buffer = io.BytesIO()
    torch.save(table, buffer)
    return buffer.getvalue()


if __name__ == "__main__":
    x = torch.randn(1000, 16)
    db = SQLiteDatabase(":memory:", "x")
    db[0:1000] = x
    db_fix = SQLiteDatabaseFixed(":memory:", "x")
    db_fix[0:1000] = x
    assert torch.equal(db[17], x[17]) and torch.equal(db_fix[17], x[17])
    row = db[17]
    assert row.untyped_storage().nbytes() == x.numel() * 4  # each stored row drags the 1000x16 table along
    assert row.untyped_storage().nbytes() > row.numel() * row.element_size()
    assert db.blob_bytes() > 20 * db_fix.blob_bytes()
    assert len(snapshot(":memory:", x)) < 2 * x.numel() * 4
    print("ok: every row BLOB serialized the whole inserted batch")
