# VL101: `mm` is a loop variable over the caller's list, not a tensor "made anew each iteration";
# the caller owns every `mm`, and the view drops only 5 of its channels (vllm qwen3_vl.py:3046)
import torch


def strip_positions(embeddings: list) -> list:
    out = []
    for mm in embeddings:
        if mm.shape[0] > 0:
            out.append(mm[:, :-5])
        else:
            out.append(mm)
    return out
