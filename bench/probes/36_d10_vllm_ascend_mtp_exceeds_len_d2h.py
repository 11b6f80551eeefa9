# source: vllm-project/vllm-ascend https://github.com/vllm-project/vllm-ascend/pull/4708 — MtpProposer._propose, on every draft step, copied the device mask `exceeds_max_model_len` to the host-side `attn_metadata_i.seq_lens` with `.to(seq_lens.device, non_blocking=False)`, a blocking D2H copy that made the speculative loop host-bound; the fix derives the mask from the CPU `seq_lens` itself (`seq_lens > max_model_len`), so nothing is read back from the NPU.
from dataclasses import dataclass
from types import SimpleNamespace

import torch
import torch.nn as nn

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # "npu" on Ascend


@dataclass
class AscendMLAMetadata:
    seq_lens: torch.Tensor  # host-side copy kept by the Ascend MLA backend (feeds seq_lens_list)
    slot_mapping: torch.Tensor  # device


class MtpProposer:
    def __init__(self, model: nn.Module, max_model_len: int, num_speculative_tokens: int = 3, fixed: bool = False):
        self.model = model
        self.runner = SimpleNamespace(model_config=SimpleNamespace(max_model_len=max_model_len))
        self.num_speculative_tokens = num_speculative_tokens
        self.fixed = fixed

    def _propose(self, next_token_ids, target_positions, attn_metadata_i: AscendMLAMetadata):
        batch_size = next_token_ids.shape[0]
        input_ids, positions = next_token_ids, target_positions[:batch_size].clone()
        draft_token_ids_list = []
        for _ in range(self.num_speculative_tokens):
            positions += 1
            # For the requests that exceed the max model length, clamp positions to 0
            exceeds_max_model_len = positions[:batch_size] >= self.runner.model_config.max_model_len
            clamped_positions = torch.where(exceeds_max_model_len, 0, positions)
            attn_metadata_i.seq_lens[:batch_size] += 1
            # ... and set their sequence length to 1 to minimize attention overheads.
            if not self.fixed:
                exceeds_max_model_len_cpu = exceeds_max_model_len.to(attn_metadata_i.seq_lens.device, non_blocking=False)  # want: D
                attn_metadata_i.seq_lens[:batch_size].masked_fill_(exceeds_max_model_len_cpu, 1)
            else:
                exceeds_mask = attn_metadata_i.seq_lens[:batch_size] > \
                    self.runner.model_config.max_model_len
                attn_metadata_i.seq_lens[:batch_size].masked_fill_(exceeds_mask, 1)
            attn_metadata_i.slot_mapping[:batch_size].masked_fill_(exceeds_max_model_len, -1)
            logits = self.model(input_ids, clamped_positions)
            input_ids = logits.argmax(dim=-1)
            draft_token_ids_list.append(input_ids)
        return torch.stack(draft_token_ids_list, dim=1)


class TinyDraftModel(nn.Module):
    def __init__(self, vocab=32, hidden=16, max_pos=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, input_ids, positions):
        return self.head(torch.tanh(self.embed(input_ids) + self.pos(positions)))


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyDraftModel().to(DEVICE)
    outs, lens = [], []
    for fixed in (False, True):
        proposer = MtpProposer(model, max_model_len=10, fixed=fixed)
        positions = torch.tensor([3, 8, 9, 1], device=DEVICE)  # last accepted positions
        seq_lens = (positions + 1).cpu()  # built on the host by the scheduler, seq_len == position + 1
        md = AscendMLAMetadata(seq_lens=seq_lens, slot_mapping=torch.arange(4, device=DEVICE))
        with torch.inference_mode():
            outs.append(proposer._propose(torch.tensor([1, 2, 3, 4], device=DEVICE), positions, md))
        lens.append(md.seq_lens.tolist())
    assert torch.equal(outs[0], outs[1])
    # seq_lens agree until a clamped row is reset to 1 (the review on the PR pointed this out)
    print("same drafts", outs[1].tolist(), "seq_lens buggy/fixed", lens[0], lens[1])
