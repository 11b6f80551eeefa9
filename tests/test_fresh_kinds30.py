"""Kinds of code met in pass thirty, on a fifth blind set of reconstructed public bugs and a fifteenth audit of
libraries never read before (flash-linear-attention, GPyTorch, Pyro, PyG). Each lint kind is checked with the
prefilter on and off; what a finding claims, with real torch."""

from __future__ import annotations

from conftest import lint_snippet as _lint, run_snippet as _run

# ------------------------------------------- a docstring type with a non-tensor alternative says nothing
DOCUMENTED = """
    import torch


    class Guide:
        def quantiles(self, quantiles, loc):
            '''
            :param quantiles: A list of requested quantiles between 0 and 1.
            :type quantiles: torch.Tensor or list
            '''
            return torch.tensor(quantiles, dtype=loc.dtype, device=loc.device)

        def scaled(self, scale, loc):
            '''
            Args:
                scale (float or torch.Tensor): how much to scale by
            '''
            return torch.tensor(scale, device=loc.device) * loc

        def masked(self, mask, loc):
            '''
            Args:
                mask (torch.Tensor): a bool or float mask tensor
            '''
            return torch.tensor(mask, device=loc.device) * loc
"""


def test_a_docstring_type_with_a_list_or_number_alternative_is_a_tensor_on_some_paths_only():
    import textwrap

    from viewlint.beliefs import beliefs_of_text
    from viewlint.engine import lint_text
    from viewlint.settings import Settings

    assert [line for line, code in _lint(DOCUMENTED) if code == "VL307"] == [10, 17, 24]
    source = textwrap.dedent(DOCUMENTED).lstrip("\n")
    messages = {d.start.row: d.message for d in lint_text(source, "m.py", Settings(select=("VL307",)))}
    assert "may hold a tensor on some paths (docstring says `quantiles` may be a tensor)" in messages[10]
    assert "may hold a tensor on some paths" in messages[17]
    assert "is already a tensor (docstring says `mask` is a tensor)" in messages[24]
    # What holds on every path only: `viewlint beliefs` claims no tensor for a list-or-tensor parameter.
    probe = source.replace("        return torch.tensor(quantiles,", "        q = quantiles\n        return torch.tensor(q,")
    believed = {r["target"]: r["tensor"] for r in beliefs_of_text(probe, "m.py")}
    assert believed["q"] is None
    scope = _run(DOCUMENTED)
    torch = scope["torch"]
    guide, loc = scope["Guide"](), torch.zeros(3)
    assert guide.quantiles([0.05, 0.5, 0.95], loc).tolist() == [0.05000000074505806, 0.5, 0.949999988079071]
    assert guide.scaled(2.0, loc).tolist() == [0.0, 0.0, 0.0]  # a float: `torch.tensor` makes it one
    # Given a tensor, `torch.as_tensor` (the fix) does not copy where `torch.tensor` does.
    q = torch.tensor([0.1, 0.9])
    assert torch.as_tensor(q, dtype=q.dtype).data_ptr() == q.data_ptr()
    assert torch.tensor(q.tolist()).data_ptr() != q.data_ptr()


# ------------------------------------------- VL313: a clone read only by `.item()` / `.tolist()`
READ_OUT = """
    import torch
    import torch.nn.functional as F


    class Trainer:
        def train(self, model, opt, batches):
            for x, y in batches:
                opt.zero_grad()
                loss = F.mse_loss(model(x), y)
                aux = model.aux_loss(x)
                self.last_aux = aux.clone().detach().item()
                self.last_loss = loss.clone().item()
                self.history = loss.detach().clone()
                self.values = (loss * 2).clone().detach().tolist()
                kept = loss.detach().clone()
                kept.add_(1.0)
                (loss + aux).backward()
                opt.step()
"""


def test_a_clone_whose_only_reader_is_item_or_tolist_is_flagged():
    found = _lint(READ_OUT)
    assert sorted(line for line, code in found if code == "VL313") == [11, 12, 14]
    torch = _run(READ_OUT)["torch"]
    loss = torch.tensor(2.5)
    assert loss.clone().detach().item() == loss.item() == 2.5  # the copy changes nothing that `.item()` reads
    assert (loss * 2).clone().detach().tolist() == (loss * 2).tolist()


# ------------------------------------------- a collective writes its tensor: a clone before it protects the original
COLLECTIVE = """
    import torch
    import torch.distributed as dist
    from torch import nn


    class ShardedLoss(nn.Module):
        def forward(self, logits, world_size):
            c_max, c_ids = torch.max(logits, -1, keepdim=True)
            if world_size > 1:
                local_max = c_max.clone()
                torch.distributed.all_reduce(c_max, op=torch.distributed.ReduceOp.MAX)
                return torch.where(local_max == c_max, c_ids, -1)
            return c_ids



    class Gathered(nn.Module):
        def forward(self, logits, out):
            kept = logits.clone()
            torch.ops.mylib.gather_into(kept, out)
            return (kept * 2).sum()


    class Unsharded(nn.Module):
        def forward(self, logits):
            local = logits.clone()
            return torch.where(local > 0, local, logits).sum()
"""


def test_a_clone_before_a_collective_or_a_custom_op_writes_is_needed():
    found = _lint(COLLECTIVE)
    assert [line for line, code in found if code == "VL313"] == [26]  # only the clone nothing writes
    torch = _run(COLLECTIVE)["torch"]
    c_max = torch.tensor([1.0, 5.0])
    local_max = c_max.clone()
    c_max.copy_(torch.tensor([4.0, 5.0]))  # what `all_reduce(MAX)` does to `c_max`, in place
    assert (local_max == c_max).tolist() == [False, True]  # without the clone, both sides would be the reduced value


# ------------------------------------------- math methods the tables did not name keep the receiver's facts
SCATTER = """
    import torch
    from torch import nn


    class DataParallel(nn.Module):
        def forward(self, data_list, device_ids):
            num_devices = min(len(device_ids), len(data_list))
            count = torch.tensor([data.numel() for data in data_list])
            ptr = torch.cat([count.new_zeros(1), count.cumsum(0)])
            device_id = num_devices * ptr.to(torch.float) / ptr[-1].item()
            device_id = ((device_id[:-1] + device_id[1:]) / 2.0).to(torch.long)
            split = device_id.bincount().cumsum(0)
            split = torch.unique(split, sorted=True)
            return split.tolist()


    class Gate(nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor):
            m = x.maximum(y).erf()
            if m.greater(0.5).any():
                return m
            return y
"""


def test_a_math_method_of_a_host_tensor_stays_on_the_host_and_of_a_tensor_is_one():
    found = _lint(SCATTER)
    assert [(line, code) for line, code in found if code.startswith("VL4")] == [(20, "VL403")]
    scope = _run(SCATTER)
    torch = scope["torch"]
    assert scope["DataParallel"]()([torch.zeros(3), torch.zeros(5)], [0, 1]) == [1, 2]  # all of it on the CPU: no sync
    m = torch.tensor([0.2, 0.9]).maximum(torch.tensor([0.1, 1.0])).erf()
    assert m.device.type == "cpu" and isinstance(m.greater(0.5).any(), torch.Tensor)  # a tensor: `if` reads it back


# ------------------------------------------- VL101: a view put in a container of an object the caller handed in
CALLER_HELD = """
    import torch


    class Req:
        def __init__(self):
            self.customized_info = None
            self.history = []


    class OutputProcessor:
        def collect(self, i: int, req: Req, info: dict[str, torch.Tensor]):
            if req.customized_info is None:
                req.customized_info = {}
            for k, v in info.items():
                req.customized_info.setdefault(k, [])
                req.customized_info[k].append(v[i])
                req.history.append(v[i].clone())

        def local(self, i: int, info: dict[str, torch.Tensor]):
            rows = {}
            for k, v in info.items():
                rows.setdefault(k, []).append(v[i])
            return sum(len(r) for r in rows.values())


    class CacheLayer:
        def __init__(self):
            self.cache = torch.zeros(4)

        def update(self, x: torch.Tensor):
            out = self.cache.clone()
            self.cache.copy_(x)
            return out


    class PaddingCache:
        def __init__(self):
            self.layers = {}

        def update(self, hidden: torch.Tensor, key):
            if key not in self.layers:
                self.layers[key] = CacheLayer()
            return self.layers[key].update(hidden[0])
"""


def test_a_view_kept_in_a_container_of_an_object_the_caller_holds_is_flagged():
    found = _lint(CALLER_HELD)
    assert [line for line, code in found if code.startswith("VL1")] == [16]
    scope = _run(CALLER_HELD)
    torch = scope["torch"]
    req, batch = scope["Req"](), torch.zeros(64, 256)
    scope["OutputProcessor"]().collect(3, req, {"scores": batch})
    kept = req.customized_info["scores"][0]
    assert kept.untyped_storage().nbytes() == batch.untyped_storage().nbytes() == 64 * 256 * 4  # all of the batch
    assert req.history[0].untyped_storage().nbytes() == 256 * 4  # the clone keeps its row only
    cache, hidden = scope["PaddingCache"](), torch.ones(8, 4)
    cache.update(hidden, "conv1")
    assert cache.layers["conv1"].cache.untyped_storage().nbytes() == 4 * 4  # `update` copied the row: nothing pinned


# ------------------------------------------- VL101: every piece of a split put in some parameter pins nothing extra
DEFUSED = """
    import torch
    from torch import nn


    class Fused(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn_qkvw = nn.Parameter(torch.randn(12, 4))


    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.query, self.key, self.value = nn.Linear(4, 4), nn.Linear(4, 4), nn.Linear(4, 4)


    def revert(child, orig_module):
        qkvw = child.attn_qkvw.data
        qw, kw, vw = torch.chunk(qkvw, 3, axis=0)
        orig_module.query.weight.data = qw
        orig_module.key.weight.data = kw
        orig_module.value.weight.data = vw
        return orig_module


    def revert_query_only(child, orig_module):
        qkvw = child.attn_qkvw.data
        qw, kw, vw = torch.chunk(qkvw, 3, axis=0)
        orig_module.query.weight.data = qw
        return orig_module
"""


def test_every_piece_of_a_split_put_in_a_parameter_pins_nothing_extra():
    found = _lint(DEFUSED)
    assert [line for line, code in found if code == "VL101"] == [29]  # only the one that keeps a third of it
    scope = _run(DEFUSED)
    torch = scope["torch"]
    child, attention = scope["Fused"](), scope["Attention"]()
    scope["revert"](child, attention)
    used = sum(p.weight.numel() * p.weight.element_size() for p in (attention.query, attention.key, attention.value))
    assert attention.query.weight.untyped_storage().nbytes() == used  # the three pieces use all of the storage


# ------------------------------------------- VL405: an empty literal uploads nothing
EMPTY_UPLOAD = """
    import torch
    from torch import nn


    class Attention(nn.Module):
        def forward(self, q, bias1=None):
            if bias1 is None:
                bias1 = torch.tensor([], dtype=q.dtype, device=q.device)
            scale = torch.tensor([0.5], dtype=q.dtype, device=q.device)
            return q * scale, bias1
"""


def test_an_empty_literal_uploads_nothing():
    found = _lint(EMPTY_UPLOAD)
    assert [line for line, code in found if code == "VL405"] == [9]
    torch = _run(EMPTY_UPLOAD)["torch"]
    assert torch.tensor([], device="meta").numel() == 0  # nothing to copy


# ------------------------------------------- what an autograd Function hands a helper is a tensor where the helper uses it so
FUNCTION_INPUTS = """
    import torch


    def _kldiv_forward(y_pred, y_true, log_target, reduction, eps):
        bt, v = y_pred.shape
        out = torch.zeros(bt, v, device=y_pred.device)
        launch(out, y_pred, y_true, float(eps), int(log_target))
        return out


    def launch(out, a, b, eps, log_target):
        out.copy_(a - b + eps * log_target)


    def flce_forward(_input, weight, target, ignore_index=-100):
        target_mask = target != ignore_index
        total_n_non_ignore = target_mask.sum().item()
        return (_input @ weight.t()).sum() / total_n_non_ignore


    class KLDiv(torch.autograd.Function):
        @staticmethod
        def forward(ctx, y_pred, y_true, reduction, log_target, eps):
            return _kldiv_forward(y_pred.contiguous(), y_true.contiguous(), log_target, reduction, eps)


    class FusedLinearCrossEntropy(torch.autograd.Function):
        @staticmethod
        def forward(ctx, _input, weight, target, ignore_index=-100):
            return flce_forward(_input=_input, weight=weight, target=target, ignore_index=ignore_index)
"""


def test_a_function_input_handed_to_a_helper_is_a_tensor_only_where_the_helper_uses_it_as_one():
    found = _lint(FUNCTION_INPUTS)
    # `float(eps)`, `int(log_target)`: numbers the Function is given; `target_mask.sum().item()`: a sync on `target`.
    assert [(line, code) for line, code in found if code.startswith("VL4")] == [(17, "VL401")]
    scope = _run(FUNCTION_INPUTS)
    torch = scope["torch"]
    out = scope["KLDiv"].apply(torch.ones(2, 3), torch.zeros(2, 3), "sum", True, 1e-6)
    assert out.shape == (2, 3)  # `eps` and `log_target` stay Python numbers all the way down
    target = torch.tensor([1, -100, 2])
    assert isinstance((target != -100).sum(), torch.Tensor)  # what `.item()` reads back is a tensor


# ------------------------------------------- a test-mode switch guards checks run on request
TEST_MODE = """
    import torch
    from torch import nn


    class SelfAttention(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.qkv = nn.Linear(8, 24)

        def run_realtime_tests(self, q, k):
            assert torch.all(q[:, 0] == k[:, 0]), "query and key rows differ"

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            if self.config.test_mode:
                self.run_realtime_tests(q, q)
            if self.config.check_rows:
                assert torch.all(q == q)
            return v
"""


def test_a_test_mode_switch_guards_checks_that_run_on_request():
    found = _lint(TEST_MODE)
    assert [(line, code) for line, code in found if code.startswith("VL4")] == [(19, "VL403")]
    scope = _run(TEST_MODE)
    torch = scope["torch"]

    class Config:
        test_mode, check_rows = False, False

    attention = scope["SelfAttention"](Config())
    assert attention(torch.randn(2, 8)).shape == (2, 8)  # with the switch off, no check runs
