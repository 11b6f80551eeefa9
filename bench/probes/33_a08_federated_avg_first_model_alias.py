# source: OpenMined/PySyft https://github.com/OpenMined/PySyft/pull/3614 — utils.federated_avg started from `model = model_list[0]` and then set_()/scaled its parameters in place, so the "new" averaged model was the first worker's model object and averaging silently overwrote that worker's weights (issue #3613); the fix builds the result from a fresh copy instead of the first model.
import copy

import torch
from torch import nn


def add_model(dst_model, src_model):
    params1 = src_model.named_parameters()
    params2 = dst_model.named_parameters()
    dict_params2 = dict(params2)
    with torch.no_grad():
        for name1, param1 in params1:
            if name1 in dict_params2:
                dict_params2[name1].set_(param1.data + dict_params2[name1].data)
    return dst_model


def scale_model(model, scale):
    params = model.named_parameters()
    dict_params = dict(params)
    with torch.no_grad():
        for name, param in dict_params.items():
            dict_params[name].set_(dict_params[name].data * scale)
    return model


def federated_avg(models):
    nr_models = len(models)
    model_list = list(models.values())
    model = model_list[0]  # want: A
    for i in range(1, nr_models):
        model = add_model(model, model_list[i])
    model = scale_model(model, 1.0 / nr_models)
    return model


def federated_avg_fixed(models):
    nr_models = len(models)
    model_list = list(models.values())
    model = copy.deepcopy(model_list[0])
    for i in range(1, nr_models):
        model = add_model(model, model_list[i])
    model = scale_model(model, 1.0 / nr_models)
    return model


if __name__ == "__main__":
    for avg in (federated_avg, federated_avg_fixed):
        workers = {}
        for i, name in enumerate(["alice", "bob", "charlie"]):
            m = nn.Linear(2, 1, bias=False)
            nn.init.constant_(m.weight, float(i + 1))
            workers[name] = m
        alice_before = workers["alice"].weight.detach().clone()
        avg_model = avg(workers)
        print(f"{avg.__name__}: avg weight={avg_model.weight[0, 0].item():.1f}, "
              f"avg is alice's model={avg_model is workers['alice']}, "
              f"alice unchanged={torch.equal(workers['alice'].weight, alice_before)}")
