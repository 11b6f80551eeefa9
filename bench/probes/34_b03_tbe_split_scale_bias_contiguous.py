# source: pytorch/FBGEMM https://github.com/pytorch/FBGEMM/pull/1808 — split_embedding_weights_with_scale_bias(split_scale_bias_mode=2) returned `weights_shifts[:, k:].contiguous()` (and scale/bias the same way); the slices are non-contiguous, so `.contiguous()` made copies and loading a state_dict through those tensors never changed the TBE weight. The fix drops `.contiguous()` so the returned tensors are views into the real buffer.
import torch
import torch.nn as nn


class IntNBitTableBatchedEmbeddingBagsCodegen(nn.Module):
    def __init__(self, embedding_specs, scale_bias_size_in_bytes=4):
        super().__init__()
        self.embedding_specs = embedding_specs  # (name, rows, dim)
        self.scale_bias_size_in_bytes = scale_bias_size_in_bytes
        offsets, total = [], 0
        for _, rows, dim in embedding_specs:
            offsets.append(total)
            total += rows * self.row_size_in_bytes(dim)
        self.weights_physical_offsets = offsets
        self.register_buffer("weights_dev", torch.zeros(total, dtype=torch.uint8))
        self.weight_initialized = True

    def row_size_in_bytes(self, dim):
        return dim + self.scale_bias_size_in_bytes  # int8 rows + fp16 scale + fp16 bias

    def split_embedding_weights_with_scale_bias(self, split_scale_bias_mode=1):
        assert self.weight_initialized
        splits = []
        for t, (_, rows, dim) in enumerate(self.embedding_specs):
            offset = self.weights_physical_offsets[t]
            weights_shifts = self.weights_dev.detach()[offset: offset + rows * self.row_size_in_bytes(dim)].view(
                rows, self.row_size_in_bytes(dim)
            )
            sb = self.scale_bias_size_in_bytes
            if split_scale_bias_mode == 1:
                splits.append((weights_shifts[:, sb:], weights_shifts[:, :sb]))
            else:
                # weights_shifts: [0:2] is scale; [2:4] is bias; [4:] is real weights
                splits.append(
                    (
                        weights_shifts[:, sb:].contiguous(),  # want: B
                        weights_shifts[:, : sb // 2].contiguous().view(torch.float16),  # want: B
                        weights_shifts[:, sb // 2: sb].contiguous().view(torch.float16),  # want: B
                    )
                )
        return splits


class IntNBitTableBatchedEmbeddingBagsCodegenFixed(IntNBitTableBatchedEmbeddingBagsCodegen):
    def split_embedding_weights_with_scale_bias(self, split_scale_bias_mode=1):
        assert self.weight_initialized
        splits = []
        for t, (_, rows, dim) in enumerate(self.embedding_specs):
            offset = self.weights_physical_offsets[t]
            weights_shifts = self.weights_dev.detach()[offset: offset + rows * self.row_size_in_bytes(dim)].view(
                rows, self.row_size_in_bytes(dim)
            )
            sb = self.scale_bias_size_in_bytes
            if split_scale_bias_mode == 1:
                splits.append((weights_shifts[:, sb:], weights_shifts[:, :sb]))
            else:
                splits.append(
                    (
                        weights_shifts[:, sb:],
                        weights_shifts[:, : sb // 2].view(torch.float16),
                        weights_shifts[:, sb // 2: sb].view(torch.float16),
                    )
                )
        return splits


def quant_state_dict_split_scale_bias(tbe):
    # torchrec-style: expose weight / weight_qscale / weight_qbias per table as state_dict entries
    sd = {}
    for (name, _, _), (w, scale, bias) in zip(tbe.embedding_specs, tbe.split_embedding_weights_with_scale_bias(2)):
        sd[f"{name}.weight"] = w
        sd[f"{name}.weight_qscale"] = scale
        sd[f"{name}.weight_qbias"] = bias
    return sd


def load_quant_state_dict(tbe, checkpoint):
    for key, dst in quant_state_dict_split_scale_bias(tbe).items():
        dst.copy_(checkpoint[key])


if __name__ == "__main__":
    specs = [("table_0", 8, 16), ("table_1", 4, 8)]
    ckpt = {}
    for name, rows, dim in specs:
        ckpt[f"{name}.weight"] = torch.randint(0, 255, (rows, dim), dtype=torch.uint8)
        ckpt[f"{name}.weight_qscale"] = torch.rand(rows, 1).half()
        ckpt[f"{name}.weight_qbias"] = torch.rand(rows, 1).half()
    for cls in (IntNBitTableBatchedEmbeddingBagsCodegen, IntNBitTableBatchedEmbeddingBagsCodegenFixed):
        tbe = cls(specs)
        load_quant_state_dict(tbe, ckpt)
        print(f"{cls.__name__:45s} bytes written into weights_dev: {int((tbe.weights_dev != 0).sum())}")
    tbe = IntNBitTableBatchedEmbeddingBagsCodegen(specs)
    load_quant_state_dict(tbe, ckpt)
    assert int(tbe.weights_dev.count_nonzero()) == 0
