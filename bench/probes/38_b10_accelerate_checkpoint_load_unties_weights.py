# source: huggingface/accelerate https://github.com/huggingface/accelerate/pull/1204 — load_checkpoint_in_model puts every checkpoint tensor in place through set_module_tensor_to_device, which builds a fresh Parameter and stores it with `module._parameters[tensor_name] = new_value`. For tied weights (e.g. decoder weight = encoder embedding) only one object got replaced, so the partner kept the stale pre-load tensor and the tie silently broke. The fix ("Fix tied weights load") records `find_tied_parameters(model)` before loading and calls `retie_parameters(model, tied_params)` afterwards.
import torch
import torch.nn as nn
from collections import OrderedDict


def set_module_tensor_to_device(module, tensor_name, device, value=None, dtype=None):
    if "." in tensor_name:
        splits = tensor_name.split(".")
        for split in splits[:-1]:
            module = getattr(module, split)
        tensor_name = splits[-1]
    is_buffer = tensor_name in module._buffers
    old_value = getattr(module, tensor_name)
    if value is not None and dtype is None:
        value = value.to(old_value.dtype)
    with torch.no_grad():
        new_value = old_value.to(device) if value is None else value.to(device)
        if is_buffer:
            module._buffers[tensor_name] = new_value
        elif value is not None or torch.device(device) != module._parameters[tensor_name].device:
            param_cls = type(module._parameters[tensor_name])
            new_value = param_cls(new_value, requires_grad=old_value.requires_grad).to(device)
            module._parameters[tensor_name] = new_value  # want: B


def find_tied_parameters(model, **kwargs):
    named_parameters = kwargs.get("named_parameters", None)
    prefix = kwargs.get("prefix", "")
    result = kwargs.get("result", {})
    if named_parameters is None:
        named_parameters = {n: p for n, p in model.named_parameters()}
    else:
        for name, parameter in model.named_parameters():
            full_name = name if prefix == "" else f"{prefix}.{name}"
            if full_name not in named_parameters:
                for new_name, new_param in named_parameters.items():
                    if new_param is parameter:
                        result[new_name] = full_name
    for name, child in model.named_children():
        child_name = name if prefix == "" else f"{prefix}.{name}"
        find_tied_parameters(child, named_parameters=named_parameters, prefix=child_name, result=result)
    return result


def retie_parameters(model, tied_params):
    for param_name, tied_param_name in tied_params.items():
        param = model
        for split in param_name.split("."):
            param = getattr(param, split)
        tied_module = model
        for split in tied_param_name.split(".")[:-1]:
            tied_module = getattr(tied_module, split)
        setattr(tied_module, tied_param_name.split(".")[-1], param)


def load_checkpoint_in_model(model, checkpoint, device_map=None, dtype=None):
    state_dict = torch.load(checkpoint, weights_only=True)
    for param_name, param in state_dict.items():
        param_device = "cpu" if device_map is None else device_map[param_name]
        set_module_tensor_to_device(model, param_name, param_device, value=param, dtype=dtype)  # maybe: B (no retie after replacing the tied object)


def load_checkpoint_in_model_fixed(model, checkpoint, device_map=None, dtype=None):
    tied_params = find_tied_parameters(model)
    state_dict = torch.load(checkpoint, weights_only=True)
    for param_name, param in state_dict.items():
        param_device = "cpu" if device_map is None else device_map[param_name]
        set_module_tensor_to_device(model, param_name, param_device, value=param, dtype=dtype)
    retie_parameters(model, tied_params)


def _tied_model():
    model = nn.Sequential(OrderedDict([("linear1", nn.Linear(4, 4, bias=False)), ("linear2", nn.Linear(4, 4, bias=False))]))
    model.linear2.weight = model.linear1.weight
    return model


def _run(loader, path):
    torch.manual_seed(1)
    model = _tied_model()
    loader(model, path)
    return model


if __name__ == "__main__":
    import os
    import tempfile

    torch.manual_seed(0)
    trained = _tied_model()
    path = os.path.join(tempfile.mkdtemp(), "pytorch_model.bin")
    sd = trained.state_dict()
    del sd["linear2.weight"]  # tied weights are stored once, like a save_pretrained checkpoint
    torch.save(sd, path)

    model = _run(load_checkpoint_in_model, path)
    assert torch.equal(model.linear1.weight, trained.linear1.weight)
    assert model.linear2.weight is not model.linear1.weight
    assert not torch.equal(model.linear2.weight, trained.linear1.weight), "buggy: tied partner keeps the old init"

    model = _run(load_checkpoint_in_model_fixed, path)
    assert model.linear2.weight is model.linear1.weight
    assert torch.equal(model.linear2.weight, trained.linear1.weight)
    print("ok")
