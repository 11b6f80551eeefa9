import torch

stats = []


def record(module, inputs, output):
    stats.append(output.abs().max().item())  # maybe: D (`output` is a tensor or a tuple: the hook signature alone does not say)


def attach(model):
    for m in model.modules():
        m.register_forward_hook(record)
