"""Kinds of code met in pass twenty (round fourteen's blind probes): a function a constructor may be given, called
through the attribute that keeps it; a view of a tensor a helper computed and handed back, read off a name the loop
binds; lists of ints declared empty and filled later, by annotation or by the items stored; the complement of a mask
as an index; and the index text of a subscript whose receiver has brackets of its own. Each lint kind is checked with
the prefilter on and off; the lost writes and the pinned storage with real torch."""

from __future__ import annotations

import pytest

from conftest import lint_snippet as _lint, run_snippet as _run


# ---------------------------------------------------------------- a function kept in an attribute, chosen by callers
HELD_METRIC = """
    import torch
    from torch import nn


    def _metric(logits, mask):
        return (logits.argmax(-1) == 1).sum().item() / (mask.sum().item() + 1e-6)


    def _metric_on_device(logits, mask):
        return (logits.argmax(-1) == 1).sum() / mask.sum().clamp_min(1e-6)


    class Head(nn.Module):
        def __init__(self, hidden=8, vocab=16, metric_fn=_metric):
            super().__init__()
            self.proj = nn.Linear(hidden, vocab)
            self.metric_fn = metric_fn

        def forward(self, hidden_states, mask):
            logits = self.proj(hidden_states)
            with torch.no_grad():
                accuracy = self.metric_fn(logits=logits, mask=mask)
            return logits, accuracy


    def build():
        return Head(8, 16), Head(8, 16, metric_fn=_metric_on_device)
"""


def test_a_call_of_a_function_the_constructions_choose_hands_its_arguments_to_each():
    # One construction keeps the default, another passes a function of its own: `self.metric_fn(...)` may run
    # either, and what `forward` passes (a module's output) reaches both (SpecForge PR #222).
    assert _lint(HELD_METRIC) == [(6, "VL401"), (6, "VL401")]


def test_with_one_construction_the_call_runs_the_default_alone():
    source = HELD_METRIC.replace("Head(8, 16), Head(8, 16, metric_fn=_metric_on_device)", "Head(8, 16)")
    assert _lint(source) == [(6, "VL401"), (6, "VL401")]


def test_a_function_nothing_calls_through_the_attribute_stays_quiet():
    source = HELD_METRIC.replace("accuracy = self.metric_fn(logits=logits, mask=mask)", "accuracy = None")
    assert _lint(source) == []


# ---------------------------------------------------------------- a helper's computed tensor, read off a loop's name
ACTIVATIONS = """
    import torch


    def collect(model, prompt):
        with torch.no_grad():
            hidden_states = model(prompt)
            stacked = torch.stack(hidden_states, dim=0).squeeze().detach().cpu()
        return stacked, None


    def last_token(prompts, model):
        kept = []
        for prompt in prompts:
            acts, _ = collect(model, prompt)
            kept.append(acts[:, -1, :])
        return kept
"""


def test_a_slice_of_what_a_helper_computed_on_this_iteration_pins_all_of_it():
    # honest_llama issue #26: `.cpu()` of a CPU tensor is the tensor itself, a view of the stack the helper made.
    assert _lint(ACTIVATIONS) == [(15, "VL101")]


def test_the_slice_pins_the_whole_stack_at_run_time():
    scope = _run(ACTIVATIONS)
    torch = scope["torch"]
    model = lambda prompt: [torch.randn(1, 6, 4) for _ in range(3)]  # noqa: E731 - three layers' outputs
    kept = scope["last_token"]([None, None], model)
    assert kept[0].numel() * kept[0].element_size() == 3 * 4 * 4
    assert kept[0].untyped_storage().nbytes() == 3 * 6 * 4 * 4  # every position of every layer stays alive


def test_a_leading_index_of_a_batch_of_one_pins_nothing_more():
    # `F.interpolate(x[None], ...)[0]` is all of the interpolated batch of one.
    source = """
        import torch
        import torch.nn.functional as F


        def resize(img, res):
            return F.interpolate(img[None], size=(res, res), mode="bilinear", align_corners=False)[0]


        def predict(images, res):
            out = []
            for img in images:
                out.append(resize(img, res))
            return torch.stack(out)
    """
    assert _lint(source) == []


# ---------------------------------------------------------------- lists of ints declared empty, filled later
SEEDED = """
    from typing import Dict, List

    import torch


    def multinomial(probs: torch.Tensor, k: int, seeded: Dict[int, torch.Generator]) -> torch.Tensor:
        q = torch.empty_like(probs)
        unseeded: List[int] = []
        start = 0
        for idx in range(len(q) // k):
            end = start + k
            generator = seeded.get(idx)
            if generator is None:
                unseeded.extend(list(range(start, end)))
            else:
                q[start:end].exponential_(1.0, generator=generator)
            start = end
        q[unseeded].exponential_(1.0)
        return probs.div_(q).argmax(dim=1)
"""


def test_a_list_annotated_as_ints_and_filled_later_gathers():
    # vLLM PR #10863: the rows of `q` for unseeded requests are never drawn.
    assert _lint(SEEDED) == [(18, "VL201")]


def test_the_write_into_the_list_indexed_rows_is_lost_at_run_time():
    scope = _run(SEEDED)
    torch = scope["torch"]
    q = torch.zeros(4, 3)
    q[[0, 1]].exponential_(1.0)
    assert torch.count_nonzero(q) == 0


BY_SIZE = """
    from typing import Dict, List, Tuple

    import torch


    def add_pos(x: torch.Tensor, sizes: List[Tuple[int, int]], pos: torch.Tensor) -> None:
        by_size: Dict[Tuple[int, int], List[int]] = {}
        for i, size in enumerate(sizes):
            if size not in by_size:
                by_size[size] = [i]
            else:
                by_size[size].append(i)
        for size, rows in by_size.items():
            x[rows, :3].add_(pos[:, :3])
"""


def test_lists_of_ints_kept_by_key_and_appended_to_stay_indices_that_gather():
    # timm (naflex position embeddings): `x[batch_indices, :seq_len].add_(...)` adds into a copy.
    assert _lint(BY_SIZE) == [(14, "VL201")]


def test_a_dict_of_strings_by_key_gathers_nothing():
    source = BY_SIZE.replace("List[int]]", "List[str]]").replace("by_size[size] = [i]", "by_size[size] = [str(i)]") \
        .replace(".append(i)", ".append(str(i))").replace("x[rows, :3].add_(pos[:, :3])", "print(rows)")
    assert _lint(source) == []


# ---------------------------------------------------------------- the complement of a mask as an index
def test_the_complement_of_a_mask_named_so_gathers():
    # vllm-ascend PR #10442: the padding rows were never zeroed.
    source = """
        import torch


        def pad(workspace: torch.Tensor, meta, offset: int) -> None:
            unpad_mask = meta.unpad_mask[offset:]
            workspace[offset:][~unpad_mask].fill_(0)
    """
    assert _lint(source) == [(6, "VL201")]


def test_the_complement_of_an_int_is_a_basic_index():
    source = """
        import torch


        def last(workspace: torch.Tensor, i: int) -> None:
            workspace[~i].fill_(0)
    """
    assert _lint(source) == []
    torch = pytest.importorskip("torch")
    workspace = torch.ones(3, 2)
    workspace[~0].fill_(0)  # `~0` is -1: the last row, a view, written in place
    assert workspace[-1].sum() == 0 and workspace[0].sum() == 2


# ---------------------------------------------------------------- every row of a tensor, kept together
RUN_LENGTHS = """
    import torch


    def mask_to_runs(mask):
        pixels = mask.flatten()
        runs = torch.where(pixels[1:] != pixels[:-1])[0] + 1
        runs[1::2] -= runs[::2]
        return list(runs)


    def segmentation_to_runs(segmentation):
        encodings = []
        for idx in torch.unique(segmentation):
            encodings.append(mask_to_runs(torch.where(segmentation == idx, 1, 0)))
        return encodings


    def all_matches(batches):
        matches = []
        for scores in batches:
            best = torch.stack([scores.argmax(0), scores.argmax(1)]).transpose(0, 1).reshape(-1)
            matches.extend(list(best))
        return matches
"""


def test_every_row_of_a_tensor_kept_together_pins_nothing_more():
    # transformers' OneFormer `binary_mask_to_rle` returns `list(runs)`, LightGlue extends with `list(matches)`: the
    # rows together are all of the tensor (read as `t.unbind()`).
    assert _lint(RUN_LENGTHS) == []


def test_the_rows_of_list_t_share_the_tensors_storage_and_nothing_more():
    scope = _run(RUN_LENGTHS)
    torch = scope["torch"]
    runs = torch.arange(6)
    rows = list(runs)
    assert all(r.untyped_storage().data_ptr() == runs.untyped_storage().data_ptr() for r in rows)
    assert sum(r.numel() for r in rows) == runs.numel()  # together, every element: nothing kept that is not stored
    assert len(scope["segmentation_to_runs"](torch.tensor([[0, 0, 1], [1, 2, 2]]))) == 3
