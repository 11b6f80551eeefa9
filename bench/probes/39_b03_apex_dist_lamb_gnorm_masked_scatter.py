# source: NVIDIA/apex https://github.com/NVIDIA/apex/commit/56650eb8eecf03af2fc80a21d15cc0cb6ea06191 — DistributedFusedLAMB computed the per-parameter grad norms of the fp16 and fp32 contributions separately and merged them into one buffer with `gnorm.masked_scatter(is_fp16, gnorm_fp16)` / `gnorm.masked_scatter(is_fp32, gnorm_fp32)`. `masked_scatter` is out-of-place, so both results were thrown away and the trust-ratio step read an uninitialised `gnorm`. The fix ("Bug fix in update norm calculation") uses `masked_scatter_`.
import torch


def multi_tensor_l2norm(tensor_lists):
    return torch.stack([t.float().norm() for t in tensor_lists[0]])


class DistributedFusedLAMB:
    def __init__(self, params):
        self._contrib_model_param_for_norm_fp16 = [p for p in params if p.dtype == torch.float16]
        self._contrib_model_param_for_norm_fp32 = [p for p in params if p.dtype == torch.float32]
        self._contrib_model_param_for_norm_is_fp16 = torch.tensor([p.dtype == torch.float16 for p in params])
        self._contrib_model_param_for_norm_is_fp32 = torch.tensor([p.dtype == torch.float32 for p in params])
        self._contrib_model_param_for_norm_num = len(params)

    def _compute_contrib_param_norm(self):
        if self._contrib_model_param_for_norm_fp16 and self._contrib_model_param_for_norm_fp32:
            gnorm_fp16 = multi_tensor_l2norm([self._contrib_model_param_for_norm_fp16])
            gnorm_fp32 = multi_tensor_l2norm([self._contrib_model_param_for_norm_fp32])
            gnorm = torch.zeros(size=[self._contrib_model_param_for_norm_num], dtype=torch.float32)
            gnorm.masked_scatter(self._contrib_model_param_for_norm_is_fp16, gnorm_fp16)  # want: B
            gnorm.masked_scatter(self._contrib_model_param_for_norm_is_fp32, gnorm_fp32)  # want: B
        elif self._contrib_model_param_for_norm_fp16:
            gnorm = multi_tensor_l2norm([self._contrib_model_param_for_norm_fp16])
        else:
            gnorm = multi_tensor_l2norm([self._contrib_model_param_for_norm_fp32])
        return gnorm


class DistributedFusedLAMBFixed(DistributedFusedLAMB):
    def _compute_contrib_param_norm(self):
        if self._contrib_model_param_for_norm_fp16 and self._contrib_model_param_for_norm_fp32:
            gnorm_fp16 = multi_tensor_l2norm([self._contrib_model_param_for_norm_fp16])
            gnorm_fp32 = multi_tensor_l2norm([self._contrib_model_param_for_norm_fp32])
            gnorm = torch.zeros(size=[self._contrib_model_param_for_norm_num], dtype=torch.float32)
            gnorm.masked_scatter_(self._contrib_model_param_for_norm_is_fp16, gnorm_fp16)
            gnorm.masked_scatter_(self._contrib_model_param_for_norm_is_fp32, gnorm_fp32)
        elif self._contrib_model_param_for_norm_fp16:
            gnorm = multi_tensor_l2norm([self._contrib_model_param_for_norm_fp16])
        else:
            gnorm = multi_tensor_l2norm([self._contrib_model_param_for_norm_fp32])
        return gnorm


if __name__ == "__main__":
    torch.manual_seed(0)
    params = [
        torch.randn(4, 4).half(),
        torch.randn(8),
        torch.randn(3, 3).half(),
        torch.randn(5),
    ]
    buggy = DistributedFusedLAMB(params)._compute_contrib_param_norm()
    fixed = DistributedFusedLAMBFixed(params)._compute_contrib_param_norm()
    assert torch.all(buggy == 0.0)
    expected = torch.stack([p.float().norm() for p in params])
    assert torch.allclose(fixed, expected)
    print("ok")
