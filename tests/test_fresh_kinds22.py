"""Kinds of code met in pass twenty-two (a precision audit of three libraries not read before, and blind round
sixteen): each finding's message names the evidence the engine has. Each lint kind is checked with the prefilter on
and off; what a message claims, with real torch."""

from __future__ import annotations

import textwrap

from conftest import lint_snippet as _lint, run_snippet as _run


# ---------------------------------------------------------------- an item of a list is not an indexing of a tensor
GRADIENT_CHUNKS = """
    import torch


    def reduce_chunks(grads, num_chunks, dtype):
        dv = [torch.zeros(grads[0].shape, dtype=torch.float) for _ in range(num_chunks)]
        out = []
        for i in range(num_chunks):
            dv[i].add_(grads[i])
            dv[i] = dv[i].to(dtype)
            out.append(dv[i].contiguous())
        return out
"""


def test_contiguous_of_a_list_item_names_the_stored_item_not_advanced_indexing(lint_source):
    # DeepSpeed's FPDT backward (`dv[i].contiguous()` of a list of `torch.zeros` chunks): the finding holds, and its
    # reason is the item stored, not a gather by an index tensor.
    assert _lint(GRADIENT_CHUNKS) == [(10, "VL301")]
    [(_, _, message)] = [f for f in lint_source(textwrap.dedent(GRADIENT_CHUNKS).lstrip("\n")) if f[1] == "VL301"]
    assert "(it is an item of `dv`, stored contiguous)" in message and "advanced indexing" not in message


def test_the_stored_item_is_contiguous_and_contiguous_returns_it():
    scope = _run(GRADIENT_CHUNKS)
    torch = scope["torch"]
    grads = [torch.randn(3, 4).t() for _ in range(2)]  # strided inputs: the items are still built contiguous
    dv = [torch.zeros(grads[0].shape) for _ in range(2)]
    dv[0].add_(grads[0])
    item = dv[0].to(torch.float16)
    assert item.is_contiguous() and item.contiguous() is item
    assert all(t.is_contiguous() for t in scope["reduce_chunks"](grads, 2, torch.float16))


# ---------------------------------------------------------------- `dict(batch)` copies the mapping, not its values
PPO_LOSS = """
    import torch
    from torch import nn


    class PPOLoss(nn.Module):
        def __init__(self, actor):
            super().__init__()
            self.actor = actor

        def forward(self, tensordict: dict) -> dict:
            tensordict = dict(tensordict)
            advantage = tensordict["advantage"]
            if advantage.numel() > 1:
                loc = advantage.mean().item()
                scale = advantage.std().clamp_min(1e-6).item()
                advantage = (advantage - loc) / scale
            return {"loss": -(self.actor(tensordict["observation"]) * advantage).mean()}
"""


def test_an_item_of_a_copied_batch_dict_is_what_the_dict_held():
    # TorchRL `PPOLoss.forward` (pytorch/rl#1783): `dict(td)` of a batch dict still holds its tensors, so the
    # advantage normalisation's `.item()`s are host syncs in every loss call.
    assert _lint(PPO_LOSS) == [(14, "VL401"), (15, "VL401")]


def test_dict_of_a_dict_shares_its_values_and_item_syncs_on_a_tensor():
    torch = _run(PPO_LOSS)["torch"]
    batch = {"advantage": torch.randn(8), "observation": torch.randn(8, 3)}
    copied = dict(batch)
    assert copied["advantage"] is batch["advantage"]  # the same tensor, not a copy and not a host value
    assert isinstance(copied["advantage"].mean().item(), float)


DICT_FORMS = """
    import torch


    def forms(td: dict, names):
        made = [torch.zeros(3), torch.ones(3)]
        by_pairs = dict(zip(names, made))
        a = by_pairs["a"]
        by_keywords = dict(x=torch.zeros(3))
        b = by_keywords["x"]
        c = dict(td)["k"]
        return a, b, c
"""


def test_dict_calls_hold_the_values_they_are_given(tmp_path):
    beliefs = _beliefs(tmp_path, DICT_FORMS)
    assert beliefs[("a", 7)]["tensor"] is True  # the second item of each pair
    assert beliefs[("b", 9)]["tensor"] is True  # a keyword's value
    assert beliefs[("c", 10)]["tensor"] is None  # what a bare `dict` parameter holds: nothing known (not "no tensor")


def _beliefs(tmp_path, source: str) -> dict:
    import json

    from conftest import run_viewlint

    path = tmp_path / "m.py"
    path.write_text(textwrap.dedent(source).lstrip("\n"), encoding="utf-8")
    completed = run_viewlint("beliefs", str(path))
    rows = [json.loads(line) for line in completed.stdout.splitlines() if line.strip()]
    return {(row["target"], row["line"]): row for row in rows}


# ---------------------------------------------------------------- a per-step batch by its class
ALLOC_FOR_EXTEND = """
    import torch


    class ScheduleBatch:
        def __init__(self, reqs, device):
            self.reqs = reqs
            self.device = device
            self.seq_lens = torch.zeros(len(reqs), dtype=torch.int64, device=device)

        def merge_batch(self, other: "ScheduleBatch"):
            self.seq_lens = torch.cat([self.seq_lens, other.seq_lens])
            self.reqs.extend(other.reqs)


    def alloc_for_extend(batch: ScheduleBatch):
        prefix_tensors = [r.prefix_indices for r in batch.reqs]
        last_loc = [
            (t[-1:] if len(t) > 0 else torch.tensor([-1], device=batch.device))
            for t in prefix_tensors
        ]
        return torch.cat(last_loc)
"""


def test_a_function_given_a_schedule_batch_runs_every_step():
    # SGLang PR #32575 (`alloc_for_extend(batch: ScheduleBatch)`): the scheduler prepares each step's batch there, so
    # a `torch.tensor(..., device=)` per request is an upload every step. The batch class's own `merge_batch(other)`
    # joins two batches as often as requests come, not every step: its `torch.cat` is not flagged.
    assert _lint(ALLOC_FOR_EXTEND) == [(18, "VL405")]


def test_the_upload_builds_on_the_host_the_value_the_slice_holds():
    scope = _run(ALLOC_FOR_EXTEND)
    torch = scope["torch"]

    class Req:
        def __init__(self, prefix):
            self.prefix_indices = prefix

    batch = scope["ScheduleBatch"]([Req(torch.tensor([4, 5])), Req(torch.tensor([], dtype=torch.int64))], "cpu")
    assert scope["alloc_for_extend"](batch).tolist() == [5, -1]


# ---------------------------------------------------------------- a list of Python values is host data
REPLAY_METADATA = """
    import torch


    class Metadata:
        def __init__(self, max_bs, device):
            self.cu_seqlens_q = torch.zeros(max_bs + 1, dtype=torch.int32, device=device)


    class DraftBackend:
        def __init__(self, num_draft_tokens: int, device):
            self.num_draft_tokens = num_draft_tokens
            self.device = device

        def init_forward_metadata_replay_cuda_graph(self, metadata, bs: int):
            extend_seq_lens_cpu = [self.num_draft_tokens] * bs
            extend_seq_lens = torch.tensor(extend_seq_lens_cpu, dtype=torch.int32, device=self.device)
            metadata.cu_seqlens_q[1 : bs + 1].copy_(torch.cumsum(extend_seq_lens, dim=0, dtype=torch.int32))
"""


def test_a_list_of_attribute_values_uploaded_every_replay():
    # SGLang PR #29415 (DSA `_apply_cuda_graph_metadata`): `[n_draft] * bs` is built on the host, whatever its items
    # are known to be, and copied to the device before every replay.
    assert _lint(REPLAY_METADATA) == [(16, "VL405")]


def test_the_list_upload_gives_the_same_values_as_torch_full():
    scope = _run(REPLAY_METADATA)
    torch = scope["torch"]
    metadata, backend = scope["Metadata"](4, "cpu"), scope["DraftBackend"](3, "cpu")
    backend.init_forward_metadata_replay_cuda_graph(metadata, 3)
    assert metadata.cu_seqlens_q.tolist() == [0, 3, 6, 9, 0]
    assert torch.equal(torch.tensor([3] * 3, dtype=torch.int32), torch.full((3,), 3, dtype=torch.int32))


# ---------------------------------------------------------------- an environment switch read in the test itself
ENV_SWITCH = """
    import os

    import torch


    class Layer(torch.nn.Module):
        def forward(self, x, rids):
            if os.environ.get("MODEL_VALIDATE_ROWS") == "1":
                expected = torch.tensor(rids, device=x.device)
                assert bool((x[:, 0] == expected).all())
            return x * 2
"""


def test_checks_behind_an_environment_switch_read_in_the_test_are_cold():
    # The body runs only when a user turns on a validation switch (SGLang's KV canary oracle behind
    # `if envs.SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE.get():`): opt-in checking, not the hot path.
    assert _lint(ENV_SWITCH) == []


# ---------------------------------------------------------------- one tensor split between two holders
RADIX_SPLIT = """
    from typing import List, Optional

    import torch


    class TreeNode:
        def __init__(self):
            self.children = {}
            self.parent: Optional["TreeNode"] = None
            self.key: List[int] = None
            self.value: Optional[torch.Tensor] = None


    class RadixCache:
        def _split_node(self, key, child: TreeNode, split_len: int):
            new_node = TreeNode()
            new_node.children = {key[split_len]: child}
            new_node.parent = child.parent
            new_node.key = child.key[:split_len]
            new_node.value = child.value[:split_len]
            child.parent = new_node
            child.key = child.key[split_len:]
            child.value = child.value[split_len:]
            new_node.parent.children[key[0]] = new_node
            return new_node


    class RadixCacheFixed(RadixCache):
        def _split_node(self, key, child: TreeNode, split_len: int):
            new_node = TreeNode()
            new_node.children = {key[split_len]: child}
            new_node.parent = child.parent
            new_node.key = child.key[:split_len]
            new_node.value = child.value[:split_len].clone()
            child.parent = new_node
            child.key = child.key[split_len:]
            child.value = child.value[split_len:].clone()
            new_node.parent.children[key[0]] = new_node
            return new_node
"""


def test_a_tensor_split_between_two_tree_nodes_pins_all_of_it_in_each():
    # SGLang PR #17191 (`RadixCache._split_node`): both halves of a node's KV indices stayed views of one storage, so
    # evicting one node freed none of it. The field's type is read off `__init__`'s `self.value: Optional[Tensor]`.
    assert _lint(RADIX_SPLIT) == [(20, "VL101"), (23, "VL101")]


def test_each_half_keeps_the_whole_storage_and_clone_gives_each_its_own():
    scope = _run(RADIX_SPLIT)
    torch = scope["torch"]
    for cache, pinned in ((scope["RadixCache"](), True), (scope["RadixCacheFixed"](), False)):
        root, child = scope["TreeNode"](), scope["TreeNode"]()
        child.parent, child.key, child.value = root, list(range(1000)), torch.arange(1000)
        root.children[0] = child
        parent = cache._split_node(child.key, child, 10)
        whole = 1000 * child.value.element_size()
        assert (parent.value.untyped_storage().nbytes() == whole) is pinned
        assert (child.value.untyped_storage().nbytes() == whole) is pinned


# ---------------------------------------------------------------- what `torch.*_like` is given is a tensor
SPIKING_RESET = """
    import torch


    class SpikingNeuron(torch.nn.Module):
        @staticmethod
        def detach(*args):
            for state in args:
                state.detach_()

        @staticmethod
        def zeros(*args):
            for state in args:
                state = torch.zeros_like(state)
"""


def test_a_loop_variable_given_to_zeros_like_and_rebound_leaves_the_caller_s_tensors():
    # snnTorch issue #423 (`SpikingNeuron.zeros`): `torch.zeros_like(state)` says `state` is a tensor (the `*_like`
    # factories raise a TypeError on anything else), so rebinding it clears nothing.
    assert _lint(SPIKING_RESET) == [(13, "VL205")]


def test_the_rebound_loop_variable_clears_nothing_and_like_factories_take_only_tensors():
    scope = _run(SPIKING_RESET)
    torch = scope["torch"]
    mem = torch.ones(3)
    scope["SpikingNeuron"].zeros(mem)
    assert mem.tolist() == [1.0, 1.0, 1.0]
    for bad in ([1.0, 2.0], 3.0):
        try:
            torch.zeros_like(bad)
        except TypeError:
            continue
        raise AssertionError(f"torch.zeros_like accepted {bad!r}")


# ---------------------------------------------------------------- the body of `if not <guard>:` is where the guard fails
GUARDS = """
    import torch


    class Block(torch.nn.Module):
        def forward(self, x, step: int, in_capture: bool = False):
            if not torch.jit.is_scripting():
                eager = x.sum().item()
            if not step % 100:
                logged = x.sum().item()
            if in_capture:
                captured = x.sum().item()
            if not torch.cuda.is_current_stream_capturing():
                replayed = x.sum().item()
            return x
"""


def test_not_of_a_cold_guard_is_the_hot_path_and_graph_capture_is_cold():
    # `if not torch.jit.is_scripting():` is the eager path (it was read as cold, by the guard's words); `if not step %
    # 100:` is once per interval; `if in_capture:` (SGLang's DeepSeek-V4 backend) runs while a CUDA graph is captured.
    assert _lint(GUARDS) == [(7, "VL401"), (13, "VL401")]


def test_the_guards_hold_as_read_when_eager_on_the_cpu():
    scope = _run(GUARDS)
    torch = scope["torch"]
    assert not torch.jit.is_scripting()  # eager: the body of `if not torch.jit.is_scripting():` runs
    if torch.cuda.is_available():
        assert not torch.cuda.is_current_stream_capturing()  # outside a capture: that body runs on every call
        assert torch.equal(scope["Block"]()(torch.ones(2, device="cuda"), 3), torch.ones(2, device="cuda"))


# ---------------------------------------------------------------- `x = a if flag else b`, then `if flag:`
ROI_ALIGN = """
    import torch


    def _roi_align(input, rois, pooled_height: int, sampling_ratio: int):
        roi_height = rois[:, 3] - rois[:, 1]
        exact_sampling = sampling_ratio > 0
        roi_bin_grid_h = sampling_ratio if exact_sampling else torch.ceil(roi_height / pooled_height)
        if exact_sampling:
            count = max(roi_bin_grid_h * roi_bin_grid_h, 1)
        else:
            count = torch.clamp(roi_bin_grid_h * roi_bin_grid_h, min=1)
        if not exact_sampling:
            fallback = max(roi_bin_grid_h, 1)
        return count


    class RoIAlign(torch.nn.Module):
        def forward(self, input, rois):
            return _roi_align(input, rois, 7, -1)
"""


def test_a_name_set_by_a_conditional_expression_holds_its_arm_under_the_same_test():
    # torchvision's `_roi_align`: under `if exact_sampling:` the grid is the int `sampling_ratio`, so `max(...)`
    # compares numbers; under `if not exact_sampling:` it is the tensor `torch.ceil(...)`, whose comparison syncs.
    assert _lint(ROI_ALIGN) == [(13, "VL403")]


def test_the_grid_is_an_int_on_the_exact_path_and_a_tensor_on_the_other():
    scope = _run(ROI_ALIGN)
    torch = scope["torch"]
    rois = torch.tensor([[0.0, 0.0, 4.0, 20.0]])
    assert scope["_roi_align"](None, rois, 7, 2) == 4  # a Python int: no tensor compared
    assert isinstance(scope["_roi_align"](None, rois, 7, -1), torch.Tensor)


# ---------------------------------------------------------------- `if not flag:` where every hot caller passes True
LOGPROBS = """
    import torch


    def get_top_logprobs_raw(logprobs, top_nums, no_copy_to_cpu: bool = False):
        values, indices = logprobs.topk(max(top_nums), dim=-1)
        if not no_copy_to_cpu:
            values = values.tolist()
            indices = indices.tolist()
        return values, indices


    def get_token_logprobs_raw(logprobs, token_ids, no_copy_to_cpu: bool = False):
        picked = logprobs[:, token_ids]
        if not no_copy_to_cpu:
            picked = picked.tolist()
        return picked


    class LogitsProcessor(torch.nn.Module):
        def forward(self, logprobs):
            top = get_top_logprobs_raw(logprobs, [2], no_copy_to_cpu=True)
            picked = get_token_logprobs_raw(logprobs, [0, 1])
            return top, picked
"""


def test_a_branch_every_hot_caller_turns_off_with_a_constant_is_cold():
    # SGLang's `logprob_processor.py`: the speculative path calls `get_top_logprobs_raw(..., no_copy_to_cpu=True)`, so
    # `if not no_copy_to_cpu:` never runs there; a helper its hot caller leaves at the default still syncs.
    assert _lint(LOGPROBS) == [(15, "VL401")]


def test_the_flag_keeps_the_values_on_the_device_or_copies_them_to_python():
    scope = _run(LOGPROBS)
    torch = scope["torch"]
    top, picked = scope["LogitsProcessor"]()(torch.log_softmax(torch.randn(2, 5), -1))
    assert isinstance(top[0], torch.Tensor) and isinstance(picked, list)
