# source: pytorch/pytorch https://github.com/pytorch/pytorch/pull/31357 — the RPC process_group_agent wire serializer pickled the tensors of a message as-is, so a small slice of a big table sent over RPC shipped (and kept queued) the whole original storage; the fix clones a tensor in the serializer when it uses less than half of its storage and the storage is more than a few KB.
import io
import pickle

import torch

_RECOPY_MIN_STORAGE_BYTES = 64 * 1024


class Message:
    def __init__(self, payload, tensors, message_type="REQUEST"):
        self.payload = payload
        self.tensors = tensors
        self.type = message_type


def wire_serialize(payload, tensors):
    buf = io.BytesIO()
    torch.save({"payload": payload, "tensors": list(tensors)}, buf)  # want: A
    return buf.getvalue()


def _worth_recopying(t):
    storage_bytes = t.untyped_storage().nbytes()
    useful_bytes = t.numel() * t.element_size()
    return storage_bytes >= _RECOPY_MIN_STORAGE_BYTES and useful_bytes * 2 < storage_bytes


def wire_serialize_fixed(payload, tensors):
    tensors = [t.clone() if _worth_recopying(t) else t for t in tensors]
    buf = io.BytesIO()
    torch.save({"payload": payload, "tensors": tensors}, buf)
    return buf.getvalue()


class ProcessGroupAgent:
    serialize = staticmethod(wire_serialize)

    def __init__(self, name):
        self.name = name
        # serialized sends stay queued until the background send thread drains them
        self._send_queue = []

    def send(self, to, message):
        data = self.serialize(pickle.dumps((message.type, message.payload)), message.tensors)
        self._send_queue.append((to, data))
        return len(data)


class ProcessGroupAgentFixed(ProcessGroupAgent):
    serialize = staticmethod(wire_serialize_fixed)


class ShardedEmbeddingServer:
    def __init__(self, agent, num_rows, dim):
        self.agent = agent
        self.table = torch.randn(num_rows, dim)

    def push_rows(self, worker, lo, hi):
        rows = self.table[lo:hi]  # maybe: A (view handed to RPC; the PR fixed the serializer, not the caller)
        return self.agent.send(worker, Message({"op": "rows", "lo": lo, "hi": hi}, [rows]))


if __name__ == "__main__":
    torch.manual_seed(0)
    buggy = ShardedEmbeddingServer(ProcessGroupAgent("ps"), 4096, 64)
    fixed = ShardedEmbeddingServer(ProcessGroupAgentFixed("ps"), 4096, 64)
    fixed.table = buggy.table
    n_bug = sum(buggy.push_rows(f"worker{i}", i * 8, i * 8 + 8) for i in range(4))
    n_fix = sum(fixed.push_rows(f"worker{i}", i * 8, i * 8 + 8) for i in range(4))
    payload = 4 * 8 * 64 * 4
    print("payload bytes", payload, "buggy wire bytes", n_bug, "fixed wire bytes", n_fix)
    assert n_bug > 50 * n_fix
