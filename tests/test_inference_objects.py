"""Evidence from objects and callers that real code gives without annotating: instances of the module's
classes (their methods and, for modules, their `forward`), `torch.nn` layers, an optimizer's `step` and
`param_groups`, and the script block `if __name__ == "__main__":` as a caller.

Every case is linted on both paths (the prefilter on and off): the prefilter must never hide what the
analysis finds. The negative cases hold the same shapes without the evidence."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Optional

import pytest

from conftest import lint_both_paths


def codes(source: str) -> list[tuple[int, str]]:
    """(row, code) of every finding, the same with and without the prefilter (asserted)."""
    return lint_both_paths(textwrap.dedent(source).lstrip("\n"))


# ---------------------------------------------------------------- calls of the module's classes
def test_a_module_instance_call_returns_what_its_forward_returns():
    assert codes("""
    import torch
    import torch.nn as nn


    class Extractor(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(16, 32)

        def forward(self, x):
            return self.proj(x)


    def run(images, path):
        extractor = Extractor()
        out = extractor(images)
        torch.save(out[0], path)
    """) == [(17, "VL103")]


def test_a_module_whose_forward_returns_a_tuple_gives_whole_tensors():
    # `out[0]` is the first tensor of the tuple, not a row of a tensor: saving it saves what it holds.
    assert codes("""
    import torch
    import torch.nn as nn


    class Pair(nn.Module):
        def forward(self, x):
            return x * 2, x + 1


    def run(images, path):
        pair = Pair()
        out = pair(images)
        torch.save(out[0], path)
    """) == []


def test_a_method_of_a_constructed_instance_gets_its_callers_arguments():
    assert codes("""
    import torch


    class Dumper:
        def dump_first(self, x, path):
            torch.save(x[0], path)


    def main():
        d = Dumper()
        batch = torch.randn(64, 1024)
        d.dump_first(batch, "/tmp/a.pt")
    """) == [(6, "VL103")]


def test_a_method_of_an_instance_of_another_class_is_not_confused_with_a_same_named_one():
    # `d` is a `Keeper`, whose `dump_first` is not the one that saves a row.
    assert codes("""
    import torch


    class Dumper:
        def dump_first(self, x, path):
            torch.save(x[0], path)


    class Keeper:
        def dump_first(self, x, path):
            return x


    def main():
        d = Keeper()
        batch = torch.randn(64, 1024)
        d.dump_first(batch, "/tmp/a.pt")
    """) == []


# ---------------------------------------------------------------- torch.nn modules held in names
def test_iterating_an_annotated_modules_output_gives_views():
    assert codes("""
    import torch
    import torch.nn as nn


    def save_embeddings(encoder: nn.Module, prompts, ids):
        for prompt, emb in zip(prompts, encoder(ids)[0]):
            torch.save(emb, f"/tmp/{prompt}.pt")
    """) == [(7, "VL103")]


def test_an_unknown_callable_is_not_a_module():
    assert codes("""
    import torch


    def save_embeddings(encoder, prompts, ids):
        for prompt, emb in zip(prompts, encoder(ids)[0]):
            torch.save(emb, f"/tmp/{prompt}.pt")
    """) == []


@pytest.mark.parametrize("layer, found", [
    ("nn.Linear(8, 8)", [(8, "VL103")]),       # a new tensor: `[0]` is a row of it
    ("nn.LSTM(8, 8)", []),                     # a tuple (output, (h, c)): `[0]` is the whole output
    ("nn.Identity()", [(8, "VL103")]),         # its input itself, a tensor: `[0]` is a row of `x`
])
def test_torch_nn_layers_give_what_their_kind_gives(layer, found):
    assert codes(f"""
    import torch
    import torch.nn as nn


    def run(x, path):
        layer = {layer}
        out = layer(x)
        torch.save(out[0], path)
    """) == found


# ---------------------------------------------------------------- optimizers
def test_an_optimizers_step_is_hot_and_its_param_groups_hold_parameters():
    assert codes("""
    import torch
    from torch.optim import Optimizer


    class ClippedSGD(Optimizer):
        def __init__(self, params, lr=1e-3):
            super().__init__(params, dict(lr=lr))

        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    norm = p.grad.norm().item()
                    p.add_(p.grad, alpha=-group["lr"] / max(norm, 1.0))
    """) == [(15, "VL401")]


def test_step_of_a_class_that_is_no_optimizer_is_not_hot():
    assert codes("""
    import torch


    class Scheduler:
        def __init__(self, params):
            self.param_groups = [{"params": list(params)}]

        def step(self):
            for group in self.param_groups:
                for p in group["params"]:
                    norm = p.grad.norm().item()
    """) == []


# ---------------------------------------------------------------- the script block as a caller
def test_the_main_block_is_a_caller_whose_arguments_are_evidence():
    assert codes("""
    import torch


    def dump_first(x, path):
        torch.save(x[0], path)


    if __name__ == "__main__":
        batch = torch.randn(64, 1024)
        dump_first(batch, "/tmp/a.pt")
    """) == [(5, "VL103")]


def test_the_main_blocks_cpu_demo_does_not_make_a_function_cpu_only():
    # The demo builds its batches on the CPU; the function is a training step whose `.item()` syncs on a GPU.
    assert codes("""
    import torch


    def train_step(model, batch, optimizer):
        loss = model(batch).sum()
        loss.backward()
        optimizer.step()
        return loss.item()


    def train(model, loader, optimizer):
        for batch in loader:
            train_step(model, batch, optimizer)


    if __name__ == "__main__":
        model = torch.nn.Linear(4, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        train(model, [torch.randn(2, 4)], optimizer)
    """) == [(8, "VL401")]


def test_what_the_main_blocks_training_loop_calls_runs_every_step_and_nothing_else_it_calls():
    # (Pass eighteen: a script's training loop is a training loop; the block itself is never hot.)
    script = """
    import torch


    def report(t):
        return t.sum().item()


    if __name__ == "__main__":
        for step in range(3):
            loss = torch.randn(4, device="cuda").sum()
            loss.backward()
            print(report(loss))
    """
    assert codes(script) == [(5, "VL401")]
    assert codes(script.replace("            loss.backward()\n", "")) == []


# ---------------------------------------------------------------- lists a loop fills and the function returns
ACCUMULATE = """
import torch


def cls_token(act):
    return act[:, 0, :]


def collect(model, loader):
    feats = []
    for batch in loader:
        act = model(batch.cuda())
        feats.append({stored})
    return {returned}
"""


@pytest.mark.parametrize("stored, returned, found", [
    ("cls_token(act)", "feats", [(12, "VL101")]),        # each entry pins one batch's whole activation
    ("act[:, 0]", "feats, len(feats)", [(12, "VL101")]),  # handed back in a tuple
    ("cls_token(act).clone()", "feats", []),            # a copy owns just its row
    ("act", "feats", []),                                # the whole tensor: nothing extra is pinned
    # The list dies with the call (the result is a copy), but until the join it holds every batch of the loader.
    ("cls_token(act)", "torch.cat(feats)", [(12, "VL101")]),
])
def test_a_returned_list_a_loop_fills_with_views_of_each_iterations_tensor(stored, returned, found):
    assert codes(ACCUMULATE.format(stored=stored, returned=returned)) == found


def test_rows_of_one_tensor_made_before_the_loop_pin_nothing_more():
    assert codes("""
    import torch


    def rows(x: torch.Tensor):
        out = []
        for i in range(x.shape[0]):
            out.append(x[i])
        return out
    """) == []


# ---------------------------------------------------------------- outputs of a module of unknown kind
def test_a_multi_dimensional_index_of_a_module_output_is_a_view_of_the_output_tensor():
    # `model: nn.Module` gives a tensor or a tuple of them; `act[:, 0, :]` takes no tuple, so it is a view of
    # the tensor, made anew on each iteration: the returned list keeps every batch's whole activation.
    assert codes("""
    import torch
    from torch import nn


    def collect(model: nn.Module, loader):
        feats = []
        for batch in loader:
            act = model(batch)
            feats.append(act[:, 0, :])
        return feats
    """) == [(9, "VL101")]


def test_a_single_index_of_a_module_output_may_be_an_element_of_its_tuple():
    # `out[0]` of a module that may give a tuple is its first output (a tensor of its own), or row 0 of the
    # tensor: nothing to claim; and a model of unknown kind is no evidence.
    assert codes("""
    import torch
    from torch import nn


    def collect(model: nn.Module, other, loader):
        feats = []
        for batch in loader:
            feats.append(model(batch)[0])
            act = other(batch)
            feats.append(act[:, 0, :])
        return feats
    """) == []


# ---------------------------------------------------------------- functions held in locals
def beliefs(source: str, display: str = "model.py", source_path: Optional[Path] = None) -> dict[tuple[int, str], dict]:
    """(row, target) -> what `viewlint beliefs` says of that binding."""
    from viewlint.beliefs import beliefs_of_text

    records = beliefs_of_text(source, display, source_path=str(source_path) if source_path else None)
    return {(r["line"], r["target"]): r for r in records}


def package(root: Path, **modules: str) -> Path:
    """A package `pkg` under `root` holding `modules` (name -> dedented source); its folder."""
    folder = root / "pkg"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    for name, source in modules.items():
        (folder / f"{name}.py").write_text(textwrap.dedent(source).lstrip("\n"))
    return folder


def test_a_function_held_in_a_local_runs_that_function_and_an_interface_claims_its_first_result():
    source = textwrap.dedent("""
    from typing import Callable

    import torch
    from torch import nn

    ALL_ATTENTION_FUNCTIONS = {}
    ROPE_INIT_FUNCTIONS = {}


    def eager_attention_forward(module, query, key, value):
        attn_weights = torch.softmax(torch.matmul(query, key.transpose(2, 3)), dim=-1)
        attn_output = torch.matmul(attn_weights, value).transpose(1, 2).contiguous()
        return attn_output, attn_weights


    class Rotary(nn.Module):
        def __init__(self, config):
            super().__init__()
            rope_init_fn: Callable = self.compute_default_rope_parameters
            if config.rope_type != "default":
                rope_init_fn = ROPE_INIT_FUNCTIONS[config.rope_type]
            inv_freq, self.attention_scaling = rope_init_fn(config)

        @staticmethod
        def compute_default_rope_parameters(config):
            return 1.0 / (10000 ** (torch.arange(0, 8, 2).float() / 8)), 1.0


    class Attention(nn.Module):
        def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
            attention_interface: Callable = ALL_ATTENTION_FUNCTIONS.get_interface(self.kind, eager_attention_forward)
            attn_output, attn_weights = attention_interface(self, q, k, v)
            direct = eager_attention_forward
            out2, w2 = direct(self, q, k, v)
            return attn_output, attn_weights
    """)
    found = beliefs(source, "model.py")
    assert found[(23, "inv_freq")]["tensor"] is True  # the default rope function's result
    assert found[(23, "inv_freq")]["device"] is None  # each implementation puts it where it likes
    assert found[(33, "attn_output")]["tensor"] is True  # every attention implementation returns its output
    assert found[(33, "attn_weights")]["tensor"] is None  # eager's weights, or another's `None`: not claimed
    assert (found[(35, "out2")]["tensor"], found[(35, "w2")]["tensor"]) == (True, True)  # the function itself


def test_a_local_holding_an_unknown_callable_claims_nothing():
    source = textwrap.dedent("""
    import torch

    FUNCTIONS = {}


    def run(kind: str, x: torch.Tensor):
        fn = FUNCTIONS[kind]
        out, aux = fn(x)
        return out
    """)
    found = beliefs(source, "model.py")
    assert found[(9, "out")]["tensor"] is None


# ---------------------------------------------------------------- modules of classes from other modules
def test_a_module_list_of_an_imported_class_built_by_append_runs_its_annotated_forward(tmp_path):
    import json
    import subprocess
    import sys

    folder = package(tmp_path, resnet="""
        import torch
        from torch import nn


        class ResBlock(nn.Module):
            def __init__(self, c: int):
                super().__init__()
                self.conv = nn.Conv2d(c, c, 3, padding=1)

            def forward(self, x: torch.Tensor, temb: torch.Tensor) -> torch.Tensor:
                return x + self.conv(x)


        class Pair(nn.Module):
            def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
                return x, x
    """)
    blocks = textwrap.dedent("""
        import torch
        from torch import nn

        from .resnet import Pair, ResBlock


        class Down(nn.Module):
            def __init__(self, c: int, n: int):
                super().__init__()
                resnets = []
                for _ in range(n):
                    resnets.append(ResBlock(c))
                self.resnets = nn.ModuleList(resnets)
                self.pairs = nn.ModuleList([Pair() for _ in range(n)])

            def forward(self, hidden_states, temb):
                for resnet in self.resnets:
                    hidden_states = resnet(hidden_states, temb)
                for pair in self.pairs:
                    both = pair(hidden_states)
                return hidden_states, both
    """).lstrip("\n")
    path = folder / "blocks.py"
    path.write_text(blocks)
    found = beliefs(blocks, "pkg/blocks.py", path)
    assert found[(18, "hidden_states")]["tensor"] is True  # `ResBlock.forward -> torch.Tensor`, read from resnet.py
    assert found[(20, "both")]["tensor"] is not True  # annotated a tuple: not claimed a tensor
    # Without the package around it, nothing is known of the imported class.
    alone = beliefs(blocks, "blocks.py")
    assert alone[(18, "hidden_states")]["tensor"] is not True
    # `viewlint beliefs` reads the package the file is in, as a lint does.
    shown = subprocess.run([sys.executable, "-m", "viewlint", "beliefs", str(path)], capture_output=True, text=True,
                           cwd=tmp_path.parent, check=True).stdout
    records = {(r["line"], r["target"]): r for r in map(json.loads, shown.splitlines())}
    assert records[(18, "hidden_states")]["tensor"] is True


def test_a_list_of_zipped_module_lists_unpacks_into_their_modules():
    source = textwrap.dedent("""
        import torch
        from torch import nn


        class Block(nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return x * 2


        class Stack(nn.Module):
            def __init__(self, n: int):
                super().__init__()
                self.blocks = nn.ModuleList([Block() for _ in range(n)])
                self.norms = nn.ModuleList([nn.LayerNorm(8) for _ in range(n)])

            def forward(self, h):
                pairs = list(zip(self.blocks, self.norms))
                for i, (block, norm) in enumerate(pairs):
                    h = norm(block(h))
                return h
    """).lstrip("\n")
    found = beliefs(source, "stack.py")
    assert found[(19, "h")]["tensor"] is True


def test_a_local_annotated_with_an_imported_output_class_reads_its_fields(tmp_path):
    folder = package(tmp_path, outputs="""
        from dataclasses import dataclass

        import torch


        @dataclass
        class ModelOut:
            last_hidden_state: torch.FloatTensor | None = None
            past: tuple | None = None
    """)
    source = textwrap.dedent("""
        import torch
        from torch import nn

        from .outputs import ModelOut


        class LM(nn.Module):
            def __init__(self, inner: nn.Module):
                super().__init__()
                self.model = inner

            def forward(self, ids):
                outputs: ModelOut = self.model(ids)
                hidden_states = outputs.last_hidden_state
                past = outputs.past
                return hidden_states, past
    """).lstrip("\n")
    path = folder / "lm.py"
    path.write_text(source)
    found = beliefs(source, "pkg/lm.py", path)
    assert found[(13, "outputs")]["tensor"] is False  # the annotation names the object, not a tensor
    # Its fields are declared in outputs.py, which the prefilter would have to read for every file that imports
    # the class (50% slower on sglang): not read, and not claimed.
    assert found[(14, "hidden_states")]["tensor"] is None
    assert found[(15, "past")]["tensor"] is None


def test_a_local_annotated_with_a_class_of_this_module_reads_its_fields():
    source = textwrap.dedent("""
        from dataclasses import dataclass

        import torch
        from torch import nn


        @dataclass
        class ModelOut:
            last_hidden_state: torch.FloatTensor | None = None
            past: tuple | None = None


        class LM(nn.Module):
            def __init__(self, inner: nn.Module):
                super().__init__()
                self.model = inner

            def forward(self, ids):
                outputs: ModelOut = self.model(ids)
                hidden_states = outputs.last_hidden_state
                return hidden_states
    """).lstrip("\n")
    found = beliefs(source, "lm.py")
    assert found[(19, "outputs")]["tensor"] is False
    assert found[(20, "hidden_states")]["tensor"] is True


def test_a_function_imported_from_another_module_returns_what_its_annotation_says(tmp_path):
    from viewlint.engine import lint_text
    from viewlint.settings import Settings

    folder = package(tmp_path, utils="""
        import torch
        from torch import Tensor


        def keep_last(hidden: torch.Tensor, n: int) -> torch.Tensor:
            return hidden[:, -n:, :]


        def pair(x: Tensor) -> tuple[Tensor, int]:
            return x, 0


        def count(x) -> int:
            return 3


        def unannotated(x):
            return x
    """)
    (folder / "api.py").write_text("from .utils import keep_last as last_of\n")  # re-exported under another name
    source = textwrap.dedent("""
        import torch
        from torch import nn

        from pkg import utils
        from .api import last_of
        from .utils import count, keep_last, pair, unannotated


        class Head(nn.Module):
            def forward(self, h, n: int):
                s = keep_last(h, n)
                t = utils.keep_last(h, n)
                a, b = pair(h)
                c = count(h)
                u = unannotated(h)
                r = last_of(h, n)
                if s:
                    return t.item()
                return r.sum().item() + a.max().item() + c
    """).lstrip("\n")
    path = folder / "head.py"
    path.write_text(source)
    found = beliefs(source, "pkg/head.py", path)
    for row, target in ((11, "s"), (12, "t"), (13, "a"), (16, "r")):
        assert found[(row, target)]["tensor"] is True, (row, target)
        assert found[(row, target)]["view"] is None  # the annotation says nothing of views
    assert found[(13, "b")]["tensor"] is False  # the annotation's second position: an `int`
    assert found[(14, "c")]["tensor"] is not True
    assert found[(15, "u")]["tensor"] is not True  # no annotation: nothing claimed
    # The prefilter reads the same answer: `if s:` and `t.item()` are found on both paths.
    paths = []
    for prefilter in (True, False):
        diagnostics = lint_text(source, str(path), Settings(select=("ALL",), prefilter=prefilter))
        paths.append(sorted((d.start.row, d.code) for d in diagnostics))
    assert paths[0] == paths[1]
    assert {(17, "VL403"), (18, "VL401")} <= set(paths[0])
    # Without the package, nothing is known of them.
    assert beliefs(source, "head.py")[(11, "s")]["tensor"] is not True


# ---------------------------------------------------------------- sequences repeated
def test_a_list_repeated_by_a_tensor_count_is_a_list_and_torch_tensor_of_it_copies_nothing_twice():
    # `list * t` repeats the list (`__index__` of a 0-dim count); a tensor times a number stays a tensor.
    source = textwrap.dedent("""
    import torch

    def lengths(chunk_num: torch.Tensor, n_window: int):
        repeated = [n_window * 2] * chunk_num.sum()
        scaled = chunk_num * 2
        as_tensor = torch.tensor([n_window * 2] * chunk_num.sum())
        return repeated, scaled, as_tensor
    """)
    found = beliefs(source)
    assert found[(5, "repeated")]["tensor"] is False
    assert found[(6, "scaled")]["tensor"] is True
    assert [code for _, code in lint_both_paths(source)] == []


def test_a_list_repeated_by_a_tensor_count_is_a_list_on_real_torch():
    torch = pytest.importorskip("torch")
    assert isinstance([3] * torch.tensor(2), list)  # what the belief above says


# ---------------------------------------------------------------- type tests, rebinding, arrays
def test_type_tests_and_rebinding_keep_what_is_no_tensor_from_being_read_as_one():
    # `tokens.unsqueeze(0)` is read off `tokens` after `tokens = torch.tensor(tokens)`: it says nothing of the
    # `tokens` before; inside `if not isinstance(scores, torch.Tensor):` it is no tensor whatever is read off it;
    # `.T` and items of a NumPy array are arrays (or NumPy scalars), not tensor views.
    source = textwrap.dedent("""
    import numpy as np
    import torch

    def to_batch(tokens, scores):
        first = tokens
        if not torch.is_tensor(tokens):
            tokens = torch.tensor(tokens)
        if not isinstance(scores, torch.Tensor):
            raw = scores
        return tokens.unsqueeze(0), first, scores.unsqueeze(0)

    def split(weights: np.ndarray, n: int):
        part = weights[:n]
        flipped = weights.T
        row = part[0].T
        return part, flipped, row

    def used_once(mask):
        kept = mask
        return kept, mask.masked_fill(mask, 0)

    def rebound_by_a_layer(self, hidden):
        residual = hidden
        hidden = self.norm(hidden)
        return hidden.unsqueeze(0) + residual
    """)
    found = beliefs(source)
    assert found[(6, "first")]["tensor"] is None  # was "a tensor, used as one (`.unsqueeze`)"
    assert found[(10, "raw")]["tensor"] is None
    assert found[(14, "part")]["tensor"] is False and found[(15, "flipped")]["tensor"] is False
    assert found[(16, "row")]["tensor"] is None
    assert found[(20, "kept")]["tensor"] is True  # what is read off a name still says tensor
    assert found[(24, "residual")]["tensor"] is True  # ... when rebinding it converts nothing into a tensor


def test_transposes_and_items_of_an_array_are_arrays_on_real_numpy():
    np = pytest.importorskip("numpy")
    torch = pytest.importorskip("torch")
    assert not isinstance(np.zeros((2, 3)).T, torch.Tensor) and isinstance(np.zeros((2, 3))[0], np.ndarray)


def test_a_store_into_an_item_of_a_container_keeps_the_nesting():
    # `cache["buffers"][name] = (buffer, value)`: `cache` holds a dict holding the tuple; unpacking what its
    # `.values()` give takes the tuple apart (a tensor and a view of it), not rows of the tensor.
    source = textwrap.dedent("""
    import torch

    def _restore(cache):
        with torch.no_grad():
            for param, value in cache["parameters"].values():
                param.data = value
            for buffer, value in cache["buffers"].values():
                buffer.data = value

    def _snapshot(module):
        cache = {"parameters": {}, "buffers": {}}
        try:
            with torch.no_grad():
                for name, param in module.named_parameters():
                    if param.dtype != torch.float32:
                        value = param.data
                        cache["parameters"][name] = (param, value)
                        param.data = value.to(dtype=torch.float32)
                for name, buffer in module.named_buffers():
                    if buffer.dtype != torch.float32:
                        value = buffer.data
                        cache["buffers"][name] = (buffer, value)
                        buffer.data = value.to(dtype=torch.float32)
        except BaseException:
            _restore(cache)
            raise
        return cache

    def run(modules, enabled=True):
        flags = [enabled] * len(modules) if isinstance(enabled, bool) else enabled
        caches = [None] * len(modules)
        for index, (module, on) in enumerate(zip(modules, flags)):
            if on:
                caches[index] = _snapshot(module)
        for cache, on in zip(caches, flags):
            if cache is not None:
                _restore(cache)
    """)
    found = beliefs(source)
    # `param` and `buffer` are the tensors of the tuples (were: rows of a tensor, "views via iteration");
    # `value` is what the tuples hold next to them, `.data` of a parameter or buffer: a view of all of it.
    assert found[(6, "param")]["view"] is not True and found[(8, "buffer")]["view"] is not True
    assert found[(8, "value")]["view"] is True
    assert [code for _, code in lint_both_paths(source)] == []


# ---------------------------------------------------------------- evidence down a chain of module calls
HELD_MODULES = """
import torch
import torch.nn as nn


def attend(q, lens=None):
    if lens is not None:
        sizes = (lens[1:] - lens[:-1]).tolist()
        return torch.cat([p * 2 for p in torch.split(q, sizes)])
    return q


class Attention(nn.Module):
    def forward_native(self, x, lens=None):
        return attend(x, lens)

    def forward(self, x, lens=None):
        return self.forward_native(x, lens)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Attention()

    def forward(self, x, lens):
        return x + self.attn(x{passed})


class Tower(nn.Module):
    def __init__(self, depth):
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range(depth))

    def forward(self, x, grid):
        lens = torch.cumsum(grid, 0).{move}
        for {target} in {loop}:
            x = block(x, lens)
        return x
"""


@pytest.mark.parametrize(("target", "loop"), [("block", "self.blocks"), ("_, block", "enumerate(self.blocks)")])
def test_a_device_tensor_reaches_a_helper_through_held_modules(target: str, loop: str) -> None:
    """`for block in self.blocks: block(x, lens)` runs `Block.forward`, whose `self.attn(x, lens=lens)` runs
    `Attention.forward`, then a method, then a helper: what the first caller passes is evidence at every step."""
    source = HELD_MODULES.format(move="to(x.device, non_blocking=True)", target=target, loop=loop, passed=", lens=lens")
    assert codes(source) == [(7, "VL401")]


def test_the_same_chain_without_the_tensor_passed_on_is_no_sync() -> None:
    """`self.attn(x)` leaves `lens` at its default `None`: nothing says the helper reads a tensor."""
    source = HELD_MODULES.format(move="to(x.device, non_blocking=True)", target="block", loop="self.blocks", passed="")
    assert codes(source) == []


VISION_TOWER = """
import torch
import torch.nn as nn


class VisionAttention(nn.Module):
    def forward(self, x, cu_seqlens):
        lengths = cu_seqlens[1:] - cu_seqlens[:-1]
        return torch.cat([piece * 2 for piece in torch.split(x, lengths.tolist())])


class VisionBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = VisionAttention()

    def forward(self, x, cu_seqlens):
        return x + self.attn(x, cu_seqlens=cu_seqlens)


class VisionTower(nn.Module):
    def __init__(self, depth):
        super().__init__()
        self.blocks = nn.ModuleList([VisionBlock() for _ in range(depth)])

    def forward(self, x, {grid}):
        cu_seqlens = torch.repeat_interleave({grid}[:, 1] * {grid}[:, 2], {grid}[:, 0]).cumsum(0)
        for block in self.blocks:
            x = block(x, cu_seqlens)
        return x
"""


@pytest.mark.parametrize("grid", ["grid_thw", "grid"])
def test_a_name_guess_of_the_cpu_stays_with_its_name(grid: str) -> None:
    """`grid_thw` is guessed to be host metadata by its name, and so is what is computed from it there; the guess
    does not cross into the blocks' `cu_seqlens`, which models move to the device with their inputs. A `grid` no
    name guesses is an input on the model's device: repeating by its rows reads their sum there."""
    assert codes(VISION_TOWER.format(grid=grid)) == [(8, "VL401")] + ([(26, "VL404")] if grid == "grid" else [])


# ---------------------------------------------------------------- fields set on an object, then handed on
FIELD_HANDED_ON = """
import torch


class Item:
    def __init__(self, key, num_patches):
        self.key = key
        self.num_patches = num_patches
        self.embeddings = None


class Encoder:
    def __init__(self, encoder):
        self.encoder = encoder
        self.cache = {{}}

    def encode_batch(self, items, pixel_values):
        embeddings = self.encoder(pixel_values)
        for item, emb in zip(items, torch.split(embeddings, [i.num_patches for i in items])):
            item.embeddings = {value}
            self._remember(item)
        return items

    def _remember(self, item):
        self.cache[item.key] = item.embeddings.contiguous()
"""


@pytest.mark.parametrize(("value", "found"), [("emb.unsqueeze(0)", [(24, "VL102")]), ("emb.clone()", [])])
def test_a_field_set_on_an_object_reaches_the_method_it_is_handed_to(value: str, found: list) -> None:
    """`item.embeddings = emb.unsqueeze(0)` (a view of one split piece) and then `self._remember(item)`: the helper's
    `item.embeddings` is that view, and `.contiguous()` of it keeps the whole batch alive in the cache."""
    assert codes(FIELD_HANDED_ON.format(value=value)) == found


def test_a_field_one_caller_sets_to_a_view_and_another_leaves_is_not_known_and_nothing_fails():
    # One call sets `tensor.data` to a view first, the other does not: the field is not known in `_move` (and the
    # view's base, recorded for that call, has nothing to attach to).
    source = textwrap.dedent("""
        import torch


        def _move(tensor):
            kept = tensor.data
            return kept


        def pinned(tensor, source: torch.Tensor):
            tensor.data = source[0]
            _move(tensor)


        def plain(tensor):
            _move(tensor)
    """).lstrip("\n")
    from conftest import lint_both_paths

    assert lint_both_paths(source) == []
    assert beliefs(source)[(5, "kept")]["view"] is None
