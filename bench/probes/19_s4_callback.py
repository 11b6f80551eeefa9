import torch
from transformers import TrainerCallback


class GradNormCallback(TrainerCallback):
    def on_step_end(self, args, state, control, model=None, **kwargs):
        total = 0.0
        for p in model.parameters():
            if p.grad is not None:
                total += p.grad.norm().item() ** 2  # want: D
        state.log_history.append({"grad_norm": total ** 0.5})
