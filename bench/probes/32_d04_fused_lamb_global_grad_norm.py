# source: NVIDIA/apex https://github.com/NVIDIA/apex/pull/851 — FusedLAMB.step reduced the fp32 and fp16 gradient norms with multi_tensor_l2norm and immediately called `.item()` on each, blending them with math.sqrt on the host before launching the LAMB kernel (a sync per optimizer step); the fix ("make FusedLAMB async") keeps both norms and the blended global norm as device tensors and passes the tensor straight into the update kernel.
import math

import torch


def multi_tensor_l2norm(tensor_list):
    # stand-in for multi_tensor_applier(self.multi_tensor_l2norm, self._dummy_overflow_buf, [tensor_list], False)[0]
    return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(t.float()) for t in tensor_list]))


def multi_tensor_lamb(params, grads, exp_avgs, exp_avg_sqs, lr, beta1, beta2, eps, step,
                      weight_decay, global_grad_norm, max_grad_norm):
    # stand-in for the fused CUDA kernel; the clip factor is evaluated on device
    ratio = global_grad_norm / max_grad_norm
    clip = ratio.clamp(min=1.0) if torch.is_tensor(ratio) else max(ratio, 1.0)
    for p, g, m, v in zip(params, grads, exp_avgs, exp_avg_sqs):
        g = g.float() / clip
        m.mul_(beta1).add_(g, alpha=1 - beta1)
        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
        m_hat = m / (1 - beta1 ** step)
        v_hat = v / (1 - beta2 ** step)
        update = m_hat / (v_hat.sqrt() + eps) + weight_decay * p.float()
        w_norm = torch.linalg.vector_norm(p.float())
        u_norm = torch.linalg.vector_norm(update)
        trust = torch.where((w_norm > 0) & (u_norm > 0), w_norm / u_norm, torch.ones_like(w_norm))
        p.add_((-lr * trust * update).to(p.dtype))


class FusedLAMB(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.01, max_grad_norm=1.0):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, max_grad_norm=max_grad_norm)
        super().__init__(params, defaults)

    def _global_grad_norm(self, g_all_32, g_all_16):
        g_norm_32, g_norm_16 = 0.0, 0.0
        # compute grad norm for two lists
        if len(g_all_32) > 0:
            g_norm_32 = multi_tensor_l2norm(g_all_32).item()  # want: D
        if len(g_all_16) > 0:
            g_norm_16 = multi_tensor_l2norm(g_all_16).item()  # want: D
        # blend two grad norms to get global grad norm
        return math.sqrt(g_norm_32 * g_norm_32 + g_norm_16 * g_norm_16)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()

        g_all_32, g_all_16 = [], []
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.dtype == torch.float32:
                    g_all_32.append(p.grad)
                elif p.dtype in (torch.float16, torch.bfloat16):
                    g_all_16.append(p.grad)
                else:
                    raise RuntimeError("FusedLAMB only support fp16 and fp32.")

        global_grad_norm = self._global_grad_norm(g_all_32, g_all_16)
        max_grad_norm = self.defaults["max_grad_norm"]

        for group in self.param_groups:
            group["step"] = group.get("step", 0) + 1
            beta1, beta2 = group["betas"]
            params, grads, exp_avgs, exp_avg_sqs = [], [], [], []
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state["exp_avg"] = torch.zeros_like(p, dtype=torch.float32)
                    state["exp_avg_sq"] = torch.zeros_like(p, dtype=torch.float32)
                params.append(p)
                grads.append(p.grad)
                exp_avgs.append(state["exp_avg"])
                exp_avg_sqs.append(state["exp_avg_sq"])
            multi_tensor_lamb(params, grads, exp_avgs, exp_avg_sqs, group["lr"], beta1, beta2, group["eps"],
                              group["step"], group["weight_decay"], global_grad_norm, max_grad_norm)
        return loss


class FusedLAMBAsync(FusedLAMB):
    def _global_grad_norm(self, g_all_32, g_all_16):
        device = (g_all_32 or g_all_16)[0].device
        g_norm_32 = torch.zeros(1, device=device)
        g_norm_16 = torch.zeros(1, device=device)
        if len(g_all_32) > 0:
            g_norm_32 = multi_tensor_l2norm(g_all_32)
        if len(g_all_16) > 0:
            g_norm_16 = multi_tensor_l2norm(g_all_16)
        # blend two grad norms to get global grad norm, still on device
        return multi_tensor_l2norm([g_norm_32, g_norm_16])


if __name__ == "__main__":
    results = []
    for cls in (FusedLAMB, FusedLAMBAsync):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
        opt = cls(model.parameters(), lr=1e-2)
        x, y = torch.randn(64, 16), torch.randn(64, 4)
        for _ in range(5):
            opt.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
        results.append(torch.cat([p.detach().flatten() for p in model.parameters()]))
    torch.testing.assert_close(results[0], results[1])
    print("FusedLAMB and FusedLAMBAsync agree")
