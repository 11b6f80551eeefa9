import torch


class BlockTable:
    def __init__(self, max_reqs: int, max_blocks: int):
        self.table = torch.zeros(max_reqs, max_blocks, dtype=torch.int32, device="cuda")
        self.table_cpu = torch.zeros(max_reqs, max_blocks, dtype=torch.int32, pin_memory=True)

    def append_row(self, req_idx: int, block_ids: list):
        n = len(block_ids)
        self.table_cpu[req_idx, :n] = torch.tensor(block_ids, dtype=torch.int32)

    def commit(self, num_reqs: int):
        self.table[:num_reqs].copy_(self.table_cpu[:num_reqs], non_blocking=True)

    def move_row(self, src: int, dst: int, perm: torch.Tensor):
        self.table[perm].copy_(self.table[src])  # want: B
