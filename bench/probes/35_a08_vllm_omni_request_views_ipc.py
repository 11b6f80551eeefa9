# source: vllm-project/vllm-omni https://github.com/vllm-project/vllm-omni/pull/6023 — request-level batching split the batch output into per-request views and `_pack_tensor_if_large` sized its shm-vs-inline decision on the view, so each small view went inline and pickle shipped the entire batch storage once per request (~1.3 GB for a 32-request batch), overflowing the message queue; the fix sizes by backing storage and materializes views before sending.
import pickle
from dataclasses import dataclass, field

import torch

_SHM_TENSOR_THRESHOLD = 1 << 20


@dataclass
class DiffusionOutput:
    request_id: str
    output: torch.Tensor
    custom_output: dict = field(default_factory=dict)
    finished: bool = True


class _ShmTensorHandle:
    def __init__(self, tensor):
        self.shape = tuple(tensor.shape)
        self.dtype = tensor.dtype
        self.name = f"shm_{id(tensor)}"


class MessageQueue:
    def __init__(self):
        self.sent_bytes = 0

    def enqueue(self, obj):
        self.sent_bytes += len(pickle.dumps(obj))


def _pack_tensor_if_large(val):
    if val.nelement() * val.element_size() > _SHM_TENSOR_THRESHOLD:
        return _ShmTensorHandle(val)
    return val  # want: A


def _pack_tensor_if_large_fixed(val):
    storage_nbytes = val.untyped_storage().nbytes()
    if storage_nbytes > _SHM_TENSOR_THRESHOLD and val.nelement() * val.element_size() > _SHM_TENSOR_THRESHOLD:
        return _ShmTensorHandle(val)
    if storage_nbytes > val.nelement() * val.element_size():
        val = val.clone()
    return val


def split_batch_result(images, latents, request_ids):
    outputs = []
    for i, rid in enumerate(request_ids):
        outputs.append(DiffusionOutput(
            request_id=rid,
            output=images[i:i + 1],  # maybe: A (view is fine until it crosses the pickle boundary)
            custom_output={"latents": latents[i:i + 1]},
        ))
    return outputs


def send_outputs(mq, outputs, pack):
    for out in outputs:
        mq.enqueue({
            "type": "OUTPUT_READY",
            "request_id": out.request_id,
            "output": pack(out.output),
            "custom_output": {k: pack(v) for k, v in out.custom_output.items()},
        })


if __name__ == "__main__":
    n = 32
    images = torch.rand(n, 3, 64, 64)
    latents = torch.rand(n, 4, 32, 32)
    outs = split_batch_result(images, latents, [f"req-{i}" for i in range(n)])
    for pack in (_pack_tensor_if_large, _pack_tensor_if_large_fixed):
        mq = MessageQueue()
        send_outputs(mq, outs, pack)
        print(f"{pack.__name__:28s} wire bytes {mq.sent_bytes/1e6:7.2f} MB (batch itself {(images.numel()+latents.numel())*4/1e6:.2f} MB)")
