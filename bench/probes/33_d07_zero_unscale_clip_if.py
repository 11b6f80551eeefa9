# source: deepspeedai/DeepSpeed https://github.com/deepspeedai/DeepSpeed/pull/5632 — ZeRO stage 1/2 unscale_and_clip_grads computed the clip coefficient from the device total_norm and branched on it with `if clip > 1:`, forcing a host/device sync (and a pipeline bubble) in every optimizer step; the fix uses torch.clamp(clip, min=1.0) and always multiplies on device.
import torch


class DeepSpeedZeroOptimizer:
    def __init__(self, init_optimizer, clip_grad=1.0, static_loss_scale=1024.0):
        self.optimizer = init_optimizer
        self.clip_grad = clip_grad
        self.loss_scale = static_loss_scale
        self.bit16_groups = [list(g["params"]) for g in init_optimizer.param_groups]

    def get_grad_norm_direct(self, gradients):
        norms = torch.stack([g.detach().float().norm(2) for g in gradients])
        return norms.norm(2)

    def unscale_and_clip_grads(self, grad_groups_flat, total_norm):
        # compute combined scale factor for this group
        combined_scale = self.loss_scale
        if self.clip_grad > 0.0:
            # norm is in fact norm*scale
            clip = ((total_norm / self.loss_scale) + 1e-6) / self.clip_grad
            if clip > 1:  # want: D
                combined_scale = clip * self.loss_scale

        for grad in grad_groups_flat:
            if isinstance(grad, list):
                sub_partitions = grad
                for g in sub_partitions:
                    g.data.mul_(1.0 / combined_scale)
            else:
                grad.data.mul_(1.0 / combined_scale)

    def step(self, closure=None):
        grads = [p.grad for group in self.bit16_groups for p in group]
        flat = torch.cat([g.view(-1) for g in grads])
        scaled_global_grad_norm = self.get_grad_norm_direct([flat])
        self.unscale_and_clip_grads([flat], scaled_global_grad_norm)
        offset = 0
        for g in grads:
            g.copy_(flat[offset:offset + g.numel()].view_as(g))
            offset += g.numel()
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=False)


class DeepSpeedZeroOptimizerFixed(DeepSpeedZeroOptimizer):
    def unscale_and_clip_grads(self, grad_groups_flat, total_norm):
        # compute combined scale factor for this group
        combined_scale = self.loss_scale
        if self.clip_grad > 0.0:
            # norm is in fact norm*scale
            clip = ((total_norm / self.loss_scale) + 1e-6) / self.clip_grad
            clip = torch.clamp(clip, min=1.0)
            combined_scale = clip * self.loss_scale

        for grad in grad_groups_flat:
            if isinstance(grad, list):
                sub_partitions = grad
                for g in sub_partitions:
                    g.data.mul_(1.0 / combined_scale)
            else:
                grad.data.mul_(1.0 / combined_scale)


def train(opt_cls):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    opt = opt_cls(torch.optim.SGD(model.parameters(), lr=0.05), clip_grad=0.5, static_loss_scale=1024.0)
    for _ in range(5):
        x, y = torch.randn(8, 16), torch.randn(8, 4)
        loss = torch.nn.functional.mse_loss(model(x), y) * opt.loss_scale
        loss.backward()
        opt.step()
    return torch.cat([p.detach().view(-1) for p in model.parameters()])


if __name__ == "__main__":
    a = train(DeepSpeedZeroOptimizer)
    b = train(DeepSpeedZeroOptimizerFixed)
    assert torch.allclose(a, b, atol=1e-6)
    print("params equal after clipped steps, max |diff|", float((a - b).abs().max()))
