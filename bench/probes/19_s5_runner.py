import torch


class ModelRunner:
    def __init__(self, model, max_bs):
        self.model = model
        self.input_ids = torch.zeros(max_bs, dtype=torch.long, device="cuda")
        self.seq_lens = torch.zeros(max_bs, dtype=torch.int32, device="cuda")

    def prepare(self, ids: torch.Tensor, slots: torch.Tensor):
        self.input_ids[slots].copy_(ids)  # want: B

    def forward_decode(self, bs: int):
        logits = self.model(self.input_ids[:bs])
        max_len = int(self.seq_lens[:bs].max())  # want: D
        return logits, max_len
