# source: huggingface/pytorch-image-models https://github.com/huggingface/pytorch-image-models/pull/1094 — Lars.step() applied weight decay with the out-of-place `grad.add(p, alpha=weight_decay)` whose result was discarded, so weight decay never reached the update; the fix uses `grad.add_(p, alpha=weight_decay)`.
import torch
from torch.optim.optimizer import Optimizer


class Lars(Optimizer):
    def __init__(self, params, lr=1.0, momentum=0, dampening=0, weight_decay=0, nesterov=False,
                 trust_coeff=0.001, eps=1e-8, trust_clip=False, always_adapt=False):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, trust_coeff=trust_coeff, eps=eps, trust_clip=trust_clip,
                        always_adapt=always_adapt)
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        device = self.param_groups[0]['params'][0].device
        one_tensor = torch.tensor(1.0, device=device)  # because torch.where doesn't handle scalars correctly

        for group in self.param_groups:
            weight_decay = group['weight_decay']
            momentum = group['momentum']
            dampening = group['dampening']
            nesterov = group['nesterov']
            trust_coeff = group['trust_coeff']
            eps = group['eps']

            for p in group['params']:
                if p.grad is None:
                    continue
                grad = p.grad

                # apply LARS LR adaptation, LARC clipping, weight decay
                if weight_decay != 0 or group['always_adapt']:
                    w_norm = p.norm(2.0)
                    g_norm = grad.norm(2.0)
                    trust_ratio = trust_coeff * w_norm / (g_norm + w_norm * weight_decay + eps)
                    trust_ratio = torch.where(
                        w_norm > 0,
                        torch.where(g_norm > 0, trust_ratio, one_tensor),
                        one_tensor,
                    )
                    if group['trust_clip']:
                        trust_ratio = torch.minimum(trust_ratio / group['lr'], one_tensor)
                    grad.add(p, alpha=weight_decay)  # want: B
                    grad.mul_(trust_ratio)

                # apply SGD update
                if momentum != 0:
                    param_state = self.state[p]
                    if 'momentum_buffer' not in param_state:
                        buf = param_state['momentum_buffer'] = torch.clone(grad).detach()
                    else:
                        buf = param_state['momentum_buffer']
                        buf.mul_(momentum).add_(grad, alpha=1. - dampening)
                    if nesterov:
                        grad = grad.add(buf, alpha=momentum)
                    else:
                        grad = buf

                p.add_(grad, alpha=-group['lr'])

        return loss


if __name__ == "__main__":
    p = torch.nn.Parameter(torch.full((4,), 2.0))
    opt = Lars([p], lr=0.1, weight_decay=0.5, momentum=0.9, nesterov=True)
    for _ in range(5):
        opt.zero_grad()
        (p * 0).sum().backward()   # zero task gradient: only weight decay should move p
        opt.step()
    print("p after 5 steps with weight_decay=0.5 (should have shrunk below 2.0):", p.data)
