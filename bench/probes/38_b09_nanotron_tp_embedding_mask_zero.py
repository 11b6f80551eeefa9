# source: huggingface/nanotron https://github.com/huggingface/nanotron/commit/d9bbe35addbed280ff67cdc5ef474d449558bbd2 — TensorParallelEmbedding.forward shifts token ids into the local vocab shard and must send ids owned by other TP ranks to row 0; it did `masked_input[input_mask].zero_()`. Boolean-mask indexing returns a copy, so the out-of-shard ids kept their shifted (negative or too large) values and the embedding lookup indexed out of range. The µTransfer change went back to the index assignment `masked_input[input_mask] = 0`.
from enum import Enum, auto

import torch
import torch.nn as nn


class TensorParallelLinearMode(Enum):
    ALL_REDUCE = auto()
    REDUCE_SCATTER = auto()


class FakeProcessGroup:
    def __init__(self, rank, world_size):
        self._rank, self._world_size = rank, world_size

    def rank(self):
        return self._rank

    def size(self):
        return self._world_size


def differentiable_all_reduce_sum(tensor, group):
    return tensor  # single process: only this rank's contribution


class _ShardedEmbedding(nn.Embedding):
    def __init__(self, num_embeddings, embedding_dim, pg, mode, padding_idx=None):
        self.pg = pg
        self.rank = pg.rank()
        self.world_size = pg.size()
        self.original_num_embeddings = num_embeddings
        assert num_embeddings % self.world_size == 0
        block_size = num_embeddings // self.world_size
        # inputs in `[min_id, max_id[` are handled by `self` to get embeddings
        self.min_id = self.rank * block_size
        self.max_id = (self.rank + 1) * block_size
        super().__init__(block_size, embedding_dim, padding_idx=padding_idx)
        self.mode = mode


class TensorParallelEmbedding(_ShardedEmbedding):
    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        if self.pg.size() > 1:
            # `0` if input is in the correct interval, else `1`
            input_mask = torch.logical_or(self.min_id > input_ids, input_ids >= self.max_id)
            # translate for [0, self.max_id - self.min_id[
            masked_input = input_ids.clone() - self.min_id
            # default all out of bounds values to `0`
            masked_input[input_mask].zero_()  # want: B
        else:
            masked_input = input_ids
        out = super().forward(masked_input)

        if self.pg.size() > 1:
            out = out * (~input_mask[..., None])

        if self.mode is TensorParallelLinearMode.ALL_REDUCE:
            out = differentiable_all_reduce_sum(out, group=self.pg)
        else:
            raise ValueError(f"Got unexpected mode: {self.mode}.")
        return out


class TensorParallelEmbeddingFixed(_ShardedEmbedding):
    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        if self.pg.size() > 1:
            # `0` if input is in the correct interval, else `1`
            input_mask = torch.logical_or(self.min_id > input_ids, input_ids >= self.max_id)
            # translate for [0, self.max_id - self.min_id[
            masked_input = input_ids.clone() - self.min_id
            # default all out of bounds values to `0`
            masked_input[input_mask] = 0
        else:
            masked_input = input_ids
        out = super().forward(masked_input)

        if self.pg.size() > 1:
            out = out * (~input_mask[..., None])

        if self.mode is TensorParallelLinearMode.ALL_REDUCE:
            out = differentiable_all_reduce_sum(out, group=self.pg)
        else:
            raise ValueError(f"Got unexpected mode: {self.mode}.")
        return out


if __name__ == "__main__":
    torch.manual_seed(0)
    pg = FakeProcessGroup(rank=1, world_size=2)  # this rank owns ids [8, 16)
    input_ids = torch.tensor([[3, 9, 15, 1]])

    emb = TensorParallelEmbedding(16, 4, pg=pg, mode=TensorParallelLinearMode.ALL_REDUCE)
    try:
        emb(input_ids)
        raised = False
    except IndexError:
        raised = True
    assert raised, "buggy: ids owned by rank 0 were not zeroed and index out of the local shard"

    fixed = TensorParallelEmbeddingFixed(16, 4, pg=pg, mode=TensorParallelLinearMode.ALL_REDUCE)
    fixed.load_state_dict(emb.state_dict())
    out = fixed(input_ids)
    assert torch.equal(out[0, 0], torch.zeros(4)) and torch.equal(out[0, 3], torch.zeros(4))
    assert torch.equal(out[0, 1], fixed.weight[1])
    print("ok")
