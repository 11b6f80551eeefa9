# source: vllm-project/llm-compressor https://github.com/vllm-project/llm-compressor/commit/0525b0ab9d53a63d5aec305ace44c9ac5ca4da4a — In DDP GPTQ calibration, `broadcast_qparams_and_cleanup` broadcast each module's `weight_scale`/`weight_zero_point` from the owning rank with `dist.broadcast(as_broadcastable(param), ...)`. For CPU-offloaded modules `getattr(module, name)` returns a temporarily onloaded copy, so the broadcast wrote into that temporary and the offload storage kept stale/uninitialised scales on non-source ranks (issue #2949). The fix collects the non-source entries and, after the comms finish, writes the result back with `update_offload_parameter(module, name, param)`.
import torch

_FP8_DTYPES = (torch.float8_e4m3fn,)


class _Work:
    def wait(self):
        pass


class FakeDist:
    """Single-process stand-in for torch.distributed."""

    def __init__(self, rank, src_values):
        self.rank = rank
        self.src_values = src_values

    def get_rank(self):
        return self.rank

    def broadcast(self, tensor, src, async_op=False):
        if self.rank != src:
            tensor.copy_(self.src_values)
        return _Work()


class OffloadedLinear(torch.nn.Module):
    """CPUCache-style offloaded module."""

    def __init__(self):
        super().__init__()
        self._offload_cache = {"weight_scale": torch.zeros(4), "weight_zero_point": torch.zeros(4)}

    def __getattr__(self, name):
        cache = self.__dict__.get("_offload_cache")
        if cache is not None and name in cache:
            return cache[name].to("cpu", copy=True)
        return super().__getattr__(name)


def update_offload_parameter(module, name, data):
    module._offload_cache[name].copy_(data)


def as_broadcastable(tensor):
    if tensor.dtype in _FP8_DTYPES:
        return tensor.data.view(torch.uint8)
    return tensor


def _wait_for_comms(pending_comms):
    for work in pending_comms:
        work.wait()
    pending_comms.clear()


def broadcast_qparams_and_cleanup(dist, module_list, module_to_rank, qparam_names):
    pending_comms = []
    for module in module_list:
        for name in qparam_names:
            if (param := getattr(module, name, None)) is not None:
                pending_comms.append(
                    dist.broadcast(as_broadcastable(param), src=module_to_rank[module], async_op=True)  # want: B
                )
    _wait_for_comms(pending_comms)


def broadcast_qparams_and_cleanup_fixed(dist, module_list, module_to_rank, qparam_names):
    rank = dist.get_rank()
    pending_comms = []
    writeback_items = []
    for module in module_list:
        src = module_to_rank[module]
        for name in qparam_names:
            if (param := getattr(module, name, None)) is not None:
                broadcast_param = as_broadcastable(param)
                pending_comms.append(dist.broadcast(broadcast_param, src=src, async_op=True))
                if rank != src:
                    writeback_items.append((module, name, param, broadcast_param))
    _wait_for_comms(pending_comms)
    for module, name, param, broadcast_param in writeback_items:
        if broadcast_param is not param and (broadcast_param.data_ptr() != param.data_ptr()):
            param.copy_(broadcast_param.view_as(param))
        update_offload_parameter(module, name, param)


if __name__ == "__main__":
    names = ["weight_scale", "weight_zero_point"]
    dist = FakeDist(rank=1, src_values=torch.full((4,), 0.25))

    mods = [OffloadedLinear(), OffloadedLinear()]
    broadcast_qparams_and_cleanup(dist, mods, {mods[0]: 0, mods[1]: 0}, names)
    assert torch.all(mods[0]._offload_cache["weight_scale"] == 0.0)

    mods_f = [OffloadedLinear(), OffloadedLinear()]
    broadcast_qparams_and_cleanup_fixed(dist, mods_f, {mods_f[0]: 0, mods_f[1]: 0}, names)
    assert torch.all(mods_f[1]._offload_cache["weight_scale"] == 0.25)
    print("ok")
