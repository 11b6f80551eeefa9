# source: vllm-project/vllm https://github.com/vllm-project/vllm/pull/43464 — the GLM-5 indexer loader parked RunAI-streamed FP8 `wk` weight/scale tensors (zero-copy views into the streamer's reusable staging buffer) in `_pending_wk_fp8` until both halves arrived, so later yields overwrote them and the dequantised weights were garbage (issue #43163); the validated fix clones before parking (`tensor.clone()`), the merged PR makes the RunAI iterator yield clones.
import torch


class SafetensorsStreamer:
    """Stand-in for runai_model_streamer with a memory cap: every yielded tensor is a
    view into one staging buffer that is refilled for the next tensor."""

    def __init__(self, memory_limit):
        self.staging = torch.empty(memory_limit, dtype=torch.uint8)
        self.files = []

    def stream_files(self, files):
        self.files = files

    def get_tensors(self):
        for name, src in self.files:
            nbytes = src.numel() * src.element_size()
            raw = self.staging[:nbytes]
            raw.copy_(src.reshape(-1).view(torch.uint8))
            yield name, raw.view(src.dtype).view(src.shape)  # maybe: A (zero-copy streamer contract; merged PR clones in the iterator)


def runai_safetensors_weights_iterator(hf_weights_files, memory_limit):
    streamer = SafetensorsStreamer(memory_limit)
    streamer.stream_files(hf_weights_files)
    yield from streamer.get_tensors()


def dequant_wk(weight, scale):
    return (weight.float() * scale).to(torch.bfloat16)


class GlmMoeDsaIndexerLoader:
    def __init__(self):
        self._pending_wk_fp8 = {}
        self.wk_weights_proj = {}

    def load_weights(self, weights):
        loaded = set()
        for name, tensor in weights:
            if ".indexer.wk." not in name:
                loaded.add(name)
                continue
            layer = name.split(".indexer")[0]
            is_weight = name.endswith(".weight")
            entry = self._pending_wk_fp8.setdefault(layer, {})
            entry["weight" if is_weight else "scale"] = tensor  # want: A
            if "weight" in entry and "scale" in entry:
                self.wk_weights_proj[layer] = dequant_wk(entry.pop("weight"), entry.pop("scale"))
                del self._pending_wk_fp8[layer]
            loaded.add(name)
        return loaded


class GlmMoeDsaIndexerLoaderFixed:
    def __init__(self):
        self._pending_wk_fp8 = {}
        self.wk_weights_proj = {}

    def load_weights(self, weights):
        loaded = set()
        for name, tensor in weights:
            if ".indexer.wk." not in name:
                loaded.add(name)
                continue
            layer = name.split(".indexer")[0]
            is_weight = name.endswith(".weight")
            entry = self._pending_wk_fp8.setdefault(layer, {})
            # The streamer may reuse its buffer once the iterator advances: own the data.
            entry["weight" if is_weight else "scale"] = tensor.clone()
            if "weight" in entry and "scale" in entry:
                self.wk_weights_proj[layer] = dequant_wk(entry.pop("weight"), entry.pop("scale"))
                del self._pending_wk_fp8[layer]
            loaded.add(name)
        return loaded


if __name__ == "__main__":
    torch.manual_seed(0)
    w = torch.randint(-8, 8, (16, 32), dtype=torch.int8)
    s = torch.rand(16, 1)
    files = [
        ("model.layers.0.indexer.wk.weight", w),
        ("model.layers.0.mlp.gate.weight", torch.randn(64, 64)),  # streams in between
        ("model.layers.0.indexer.wk.weight_scale_inv", s),
    ]
    expected = dequant_wk(w, s)
    memory_limit = 64 * 64 * 4
    bad = GlmMoeDsaIndexerLoader()
    bad.load_weights(runai_safetensors_weights_iterator(files, memory_limit))
    good = GlmMoeDsaIndexerLoaderFixed()
    good.load_weights(runai_safetensors_weights_iterator(files, memory_limit))
    ok_bad = torch.equal(bad.wk_weights_proj["model.layers.0"], expected)
    ok_good = torch.equal(good.wk_weights_proj["model.layers.0"], expected)
    print("pending views -> correct dequant:", ok_bad)
    print("pending clones -> correct dequant:", ok_good)
    view = next(runai_safetensors_weights_iterator(files[:1], memory_limit))[1]
    print("streamed tensor payload", view.numel(), "bytes; backing storage", view.untyped_storage().nbytes())
    assert not ok_bad and ok_good
