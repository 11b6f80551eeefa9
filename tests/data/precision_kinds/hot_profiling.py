# VL402: moving a model to the CPU on request (`force_cpu`, the last of the retries) in a FLOP-profiling
# CLI is the purpose of the call, once per model (open_clip_train/profiler.py:35/116)
import torch
import open_clip


def profile_torch(model, batch_size: int = 1, force_cpu: bool = False) -> int:
    if force_cpu:
        model = model.to("cpu")
    device = next(model.parameters()).device
    x = torch.ones((batch_size, 3, 224, 224), device=device)
    with torch.utils.flop_counter.FlopCounterMode(display=False) as counter:
        model(x)
    return counter.get_total_flops()


def profile_model(model_name: str) -> dict:
    model = open_clip.create_model(model_name)
    if torch.cuda.is_available():
        model = model.cuda()
    results = {"model": model_name}
    retries = 2
    while retries:
        retries -= 1
        try:
            results["flops"] = profile_torch(model, force_cpu=not retries)
        except RuntimeError:
            pass
    return results


def main(names: list) -> None:
    for m in names:
        print(profile_model(m))
