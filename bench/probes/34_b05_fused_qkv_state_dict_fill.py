# source: pytorch/torchtitan https://github.com/pytorch/torchtitan/pull/3794 — the RL generator pulled new weights by filling `model.state_dict()` in place, but FusedQKVLinear's state_dict post-hook emits wq/wk/wv as fresh `.reshape(...).contiguous()` copies of the fused wqkv, so the in-place fill never reached the real parameter. The fix re-applies the filled dict with `load_state_dict` so the merge hook writes into wqkv.
import torch
import torch.nn as nn


class FusedQKVLinear(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads):
        super().__init__()
        self.head_dim = dim // n_heads
        self.heads_per_kv = n_heads // n_kv_heads
        self.r_dim = self.heads_per_kv + 2
        self.wqkv = nn.Linear(dim, n_kv_heads * self.r_dim * self.head_dim, bias=False)
        self.register_state_dict_post_hook(self._split_qkv_on_save)
        self.register_load_state_dict_pre_hook(self._merge_qkv_on_load)

    @staticmethod
    def _split_qkv_on_save(module, state_dict, prefix, local_metadata):
        hd, hpk, r = module.head_dim, module.heads_per_kv, module.r_dim
        key = f"{prefix}wqkv.weight"
        if key not in state_dict:
            return
        tensor = state_dict.pop(key)
        n_kv = tensor.shape[0] // (r * hd)
        w = tensor.reshape(n_kv, r, hd, tensor.shape[1])
        state_dict[f"{prefix}wq.weight"] = w[:, :hpk].reshape(-1, tensor.shape[1]).contiguous()  # maybe: B (hook emits a copy, not a view of wqkv)
        state_dict[f"{prefix}wk.weight"] = w[:, hpk].reshape(-1, tensor.shape[1]).contiguous()  # maybe: B (hook emits a copy, not a view of wqkv)
        state_dict[f"{prefix}wv.weight"] = w[:, hpk + 1].reshape(-1, tensor.shape[1]).contiguous()  # maybe: B (hook emits a copy, not a view of wqkv)

    @staticmethod
    def _merge_qkv_on_load(module, state_dict, prefix, *args):
        hd, hpk = module.head_dim, module.heads_per_kv
        keys = [f"{prefix}{w}.weight" for w in ("wq", "wk", "wv")]
        if not all(k in state_dict for k in keys):
            return
        wq, wk, wv = (state_dict.pop(k) for k in keys)
        n_kv = wk.shape[0] // hd
        q = wq.reshape(n_kv, hpk, hd, wq.shape[1])
        k = wk.reshape(n_kv, 1, hd, wq.shape[1])
        v = wv.reshape(n_kv, 1, hd, wq.shape[1])
        state_dict[f"{prefix}wqkv.weight"] = torch.cat([q, k, v], dim=1).reshape(-1, wq.shape[1])


class Attention(nn.Module):
    def __init__(self, dim=32, n_heads=4, n_kv_heads=2):
        super().__init__()
        self.qkv_linear = FusedQKVLinear(dim, n_heads, n_kv_heads)
        self.wo = nn.Linear(dim, dim, bias=False)


def fill_state_dict_in_place(user_state_dict, remote_state_dict):
    # stand-in for ts.get_state_dict(..., user_state_dict=..., direct_rdma=...): writes into the given tensors
    with torch.no_grad():
        for key, dst in user_state_dict.items():
            if key in remote_state_dict:
                dst.copy_(remote_state_dict[key])


class Generator:
    def __init__(self, model):
        self.model = model

    def _pull_model_state_dict(self, remote_state_dict):
        fill_state_dict_in_place(self.model.state_dict(), remote_state_dict)  # want: B


class GeneratorFixed(Generator):
    def _pull_model_state_dict(self, remote_state_dict):
        model_sd = self.model.state_dict()
        fill_state_dict_in_place(model_sd, remote_state_dict)
        # state_dict() returns hook-produced copies for fused modules, re-apply via load_state_dict
        self.model.load_state_dict(model_sd, strict=False)


if __name__ == "__main__":
    torch.manual_seed(0)
    trainer_model = Attention()
    remote_sd = {k: v.clone() for k, v in trainer_model.state_dict().items()}
    for cls in (Generator, GeneratorFixed):
        torch.manual_seed(1)
        gen = cls(Attention())
        gen._pull_model_state_dict(remote_sd)
        qkv_ok = torch.equal(gen.model.qkv_linear.wqkv.weight, trainer_model.qkv_linear.wqkv.weight)
        wo_ok = torch.equal(gen.model.wo.weight, trainer_model.wo.weight)
        print(f"{cls.__name__:15s} wo synced: {wo_ok}  fused wqkv synced: {qkv_ok}")
    torch.manual_seed(1)
    g = Generator(Attention())
    g._pull_model_state_dict(remote_sd)
    assert not torch.equal(g.model.qkv_linear.wqkv.weight, trainer_model.qkv_linear.wqkv.weight)
