# source: microsoft/DeepSpeed https://github.com/microsoft/DeepSpeed/pull/1278 — in OnebitAdam's non_freeze branch `exp_avg.mul_(beta1).add(1 - beta1, grad)` used the out-of-place add, so the gradient contribution was computed into a discarded temporary and the momentum only decayed to zero ("training has no effect"); the fix made it `.add_(1 - beta1, grad)`.
import warnings

import torch

warnings.filterwarnings("ignore", message="This overload of")


class OnebitAdam(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, freeze_step=1, bias_correction=True, betas=(0.9, 0.999),
                 eps=1e-8, weight_decay=0.):
        defaults = dict(lr=lr, bias_correction=bias_correction, betas=betas, eps=eps, weight_decay=weight_decay)
        super(OnebitAdam, self).__init__(params, defaults)
        self.freeze_step = freeze_step
        self.initialize = True          # pretend the cupy/comm buffers are already set up
        self.adam_freeze_key = False
        self.size = 1                   # world size

    def step(self, closure=None, grads=None):
        loss = None
        if closure is not None:
            loss = closure()

        if grads is None:
            grads_group = [None] * len(self.param_groups)
        else:
            grads_group = grads

        for group, grads_this_group in zip(self.param_groups, grads_group):
            if grads_this_group is None:
                grads_this_group = [None] * len(group['params'])

            for p, grad in zip(group['params'], grads_this_group):
                if p.grad is None and grad is None:
                    continue
                if grad is None:
                    grad = p.grad.data

                state = self.state[p]
                if len(state) == 0:
                    state['step'] = 0
                    state['exp_avg'] = torch.zeros_like(p.data)
                    state['exp_avg_sq'] = torch.zeros_like(p.data)

                exp_avg, exp_avg_sq = state['exp_avg'], state['exp_avg_sq']
                beta1, beta2 = group['betas']

                state['step'] += 1

                if self.adam_freeze_key is False:
                    exp_avg.mul_(beta1).add_(1 - beta1, grad)
                    exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)
                    grad = None
                    if self.initialize:
                        update = exp_avg / (exp_avg_sq.sqrt() + group['eps'])
                else:
                    if 'non_freeze' in group.keys() and group['non_freeze'] is True:
                        # dist.all_reduce(grad); grad.mul_(1 / dist.get_world_size())  -- world size 1
                        grad.mul_(1 / self.size)
                        exp_avg.mul_(beta1).add(1 - beta1, grad)  # want: B
                        exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)
                        grad = None
                    else:
                        if self.initialize is True:
                            exp_avg.mul_(beta1).add_(1 - beta1, grad)
                        grad = None

                    if self.initialize:
                        update = exp_avg / (exp_avg_sq.sqrt() + group['eps'])

                if self.initialize:
                    if group['weight_decay'] > 0.0:
                        update += group['weight_decay'] * p.data
                    with torch.no_grad():
                        p.add_(-group['lr'] * update)

        if self.adam_freeze_key is False:
            if state['step'] >= self.freeze_step:
                self.adam_freeze_key = True
        return loss


if __name__ == "__main__":
    torch.manual_seed(0)
    w = torch.nn.Parameter(torch.ones(4))
    opt = OnebitAdam([{'params': [w], 'non_freeze': True}], lr=0.1, freeze_step=1)
    for it in range(6):
        opt.zero_grad()
        ((w - 3.0) ** 2).sum().backward()
        opt.step()
        print(f"step {it}: exp_avg={opt.state[w]['exp_avg'][0].item():+.4f}  w={w[0].item():.4f}")
    print("after freeze, exp_avg only decays (gradient never accumulated); w should move toward 3")
