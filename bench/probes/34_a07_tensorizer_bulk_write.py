# source: coreweave/tensorizer https://github.com/coreweave/tensorizer/pull/65 — TensorSerializer's bulk write summed each tensor's `untyped_storage()` size to pre-allocate the bulk write, so Megatron `main_grad` tensors that are views into one big grad buffer were each counted as the whole buffer (1.3 TiB planned for a 6B model); the fix sizes each tensor by `nelement() * element_size()`.
import io
import torch
import torch.nn as nn


class TensorSerializer:

    def __init__(self, file_obj):
        self._file = file_obj
        self._header = []

    def _tensor_bytes(self, tensor):
        flat = tensor.contiguous().reshape(-1).view(torch.uint8)
        return flat.numpy().tobytes(), tensor.untyped_storage().nbytes()  # maybe: A (a view is sized by its whole base storage; nothing is sliced here)

    def _bulk_write(self, write_specs):
        total_tensor_bytes = 0
        payloads = []
        for name, tensor in write_specs:
            data, nbytes = self._tensor_bytes(tensor)
            payloads.append((name, data))
            total_tensor_bytes += nbytes
        # pre-allocate the region the tensors will be written into
        start = self._file.tell()
        self._file.truncate(start + total_tensor_bytes)
        for name, data in payloads:
            self._header.append((name, self._file.tell(), len(data)))
            self._file.write(data)
        return total_tensor_bytes

    def write_module(self, module, include_grads=True):
        specs = []
        for name, param in module.named_parameters():
            specs.append((name, param.detach()))
            if include_grads and getattr(param, "main_grad", None) is not None:
                specs.append((name + ".main_grad", param.main_grad))
        return self._bulk_write(specs)


class TensorSerializerFixed(TensorSerializer):

    def _tensor_bytes(self, tensor):
        flat = tensor.contiguous().reshape(-1).view(torch.uint8)
        return flat.numpy().tobytes(), tensor.nelement() * tensor.element_size()


def attach_megatron_main_grads(module):
    """Megatron DDP: every param.main_grad is a view into one contiguous grad buffer."""
    params = list(module.parameters())
    numel = sum(p.numel() for p in params)
    grad_buffer = torch.zeros(numel, dtype=torch.float32)
    offset = 0
    for p in params:
        p.main_grad = grad_buffer.narrow(0, offset, p.numel()).view(p.shape)
        offset += p.numel()
    return grad_buffer


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(32, 32) for _ in range(6)])
    grad_buffer = attach_megatron_main_grads(model)
    for p in model.parameters():
        p.main_grad.normal_()
    payload = sum(p.numel() * 4 * 2 for p in model.parameters())
    for cls in (TensorSerializer, TensorSerializerFixed):
        f = io.BytesIO()
        planned = cls(f).write_module(model)
        print("%-22s payload %7d B, pre-allocated %8d B, file %8d B" % (cls.__name__, payload, planned, len(f.getvalue())))
        if cls is TensorSerializer:
            assert planned > 4 * payload
        else:
            assert planned == payload
