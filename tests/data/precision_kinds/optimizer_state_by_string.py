# VL202: `self.base_optimizer.state[p]["latent"] = ...`: an optimizer's state is a dict keyed by parameters,
# and what a string indexes is a dict, not a gathered copy (torchao prototype/parq/optim/quantopt.py:270)
import torch


class Wrapper(torch.optim.Optimizer):
    @torch.no_grad()
    def step(self, closure=None):
        loss = self.base_optimizer.step(closure=closure)
        for p in self._state.keys():
            self.base_optimizer.state[p]["latent"] = self._state[p]["latent"]
        for group in self.param_groups:
            for p in group["params"]:
                if p.dim() == 1:
                    p = p.unsqueeze(0)
                p.div_(2.0)
        return loss


def remember(opt, x: torch.Tensor) -> None:
    p = x.unsqueeze(0)
    opt.state[p]["step"] = 1.0
