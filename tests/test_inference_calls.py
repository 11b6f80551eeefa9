"""What calls give, as `viewlint beliefs` reports it: long methods, methods of classes other modules define, items of
`ModelOutput`s, `ModuleList`s of several classes, and values a join makes a tensor on some paths only."""

from __future__ import annotations

import textwrap

from conftest import lint_both_paths
from test_inference_objects import beliefs, package


def _long_body(lines: int) -> str:
    """Statements that bind nothing a test asks about, to make a method longer than a summary walks."""
    return "".join(f"        note_{i} = {i}\n" for i in range(lines))


def test_a_method_too_long_to_walk_per_call_gives_what_its_own_walk_returns():
    source = (
        "import torch\n"
        "from torch import nn\n"
        "\n"
        "\n"
        "class Attention(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.proj = nn.Linear(8, 8)\n"
        "\n"
        "    def forward(self, hidden_states: torch.Tensor):\n"
        + _long_body(60)
        + "        out = self.proj(hidden_states)\n"
        "        return out, None\n"
        "\n"
        "\n"
        "class Layer(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.attn = Attention()\n"
        "\n"
        "    def forward(self, x):\n"
        "        h, weights = self.attn(x)\n"
        "        return h\n"
    )
    found = beliefs(source)
    row = source.splitlines().index("        h, weights = self.attn(x)") + 1
    assert found[(row, "h")]["tensor"] is True
    assert found[(row, "weights")]["tensor"] is False  # `None` on its one path


def test_a_long_helpers_view_of_its_parameter_is_a_view_of_what_the_call_passes():
    source = (
        "import torch\n"
        "\n"
        "\n"
        "def first_rows(x: torch.Tensor):\n"
        + _long_body(60).replace("        ", "    ")
        + "    return x[:1]\n"
        "\n"
        "\n"
        "def use(batch: torch.Tensor):\n"
        "    head = first_rows(batch)\n"
        "    other = first_rows(batch + 1)\n"
        "    return head, other\n"
    )
    found = beliefs(source)
    row = source.splitlines().index("    head = first_rows(batch)") + 1
    assert (found[(row, "head")]["view"], found[(row, "head")]["base"]) == (True, "batch")
    # Passed a temporary: a tensor, but the callee's name for its base means nothing here.
    assert found[(row + 1, "other")]["tensor"] is True
    assert found[(row + 1, "other")]["base"] != "x"


def test_a_method_of_an_instance_of_a_class_another_module_defines_returns_what_it_is_annotated_to(tmp_path):
    folder = package(tmp_path, cache="""
        import torch


        class Cache:
            def update(self, k: torch.Tensor, v: torch.Tensor, i: int) -> tuple[torch.Tensor, torch.Tensor]:
                raise NotImplementedError

            def get_seq_length(self) -> int:
                return 0


        class DynamicCache(Cache):
            pass
    """)
    model = textwrap.dedent("""
        import torch

        from .cache import Cache, DynamicCache


        def attend(k: torch.Tensor, v: torch.Tensor, past: Cache | None, dyn: DynamicCache):
            k2, v2 = past.update(k, v, 0)
            n = past.get_seq_length()
            k3, v3 = dyn.update(k, v, 0)
            return k2, v2, n, k3
    """).lstrip("\n")
    path = folder / "model.py"
    path.write_text(model)
    found = beliefs(model, "pkg/model.py", path)
    assert (found[(7, "k2")]["tensor"], found[(7, "v2")]["tensor"]) == (True, True)
    assert "Cache.update" in found[(7, "k2")]["why"]
    assert found[(8, "n")]["tensor"] is not True  # `-> int`
    assert found[(9, "k3")]["tensor"] is True  # defined on the base class of that module
    alone = beliefs(model, "model.py")  # without the package, nothing is known of the class
    assert alone[(7, "k2")]["tensor"] is None


def test_an_integer_index_of_an_output_object_is_its_field_in_declared_order(tmp_path):
    folder = package(tmp_path, outputs="""
        from dataclasses import dataclass
        from typing import Optional

        import torch


        @dataclass
        class Output:
            last_hidden_state: Optional[torch.FloatTensor] = None
            pooler_output: Optional[torch.FloatTensor] = None
    """)
    model = textwrap.dedent("""
        import torch
        from torch import nn

        from .outputs import Output


        class Inner(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)

            def forward(self, x):
                h = self.lin(x)
                return Output(pooler_output=h[:, 0], last_hidden_state=h)


        class Outer(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = Inner()

            def forward(self, x):
                outputs = self.inner(x)
                first = outputs[0]
                second = outputs[1]
                return first, second
    """).lstrip("\n")
    path = folder / "model.py"
    path.write_text(model)
    found = beliefs(model, "pkg/model.py", path)
    # last_hidden_state, not a row of it (`F.linear` of an input of unknown rank may view its own product: not claimed).
    assert (found[(24, "first")]["tensor"], found[(24, "first")]["view"]) == (True, None)
    assert found[(25, "second")]["view"] is True  # pooler_output, a row of it
    # Without the class, the order the call names them in.
    alone = beliefs(model, "model.py")
    assert alone[(24, "first")]["view"] is True


def test_a_module_list_of_several_classes_gives_what_any_of_them_gives(tmp_path):
    folder = package(tmp_path, blocks="""
        import torch
        from torch import nn


        class A(nn.Module):
            def forward(self, x: torch.Tensor, temb=None) -> torch.Tensor:
                return x * 2


        class B(nn.Module):
            def forward(self, x: torch.Tensor, temb=None) -> torch.Tensor:
                return x + 1
    """)
    model = textwrap.dedent("""
        import torch
        from torch import nn

        from .blocks import A, B


        class Mid(nn.Module):
            def __init__(self, spatial: bool):
                super().__init__()
                if spatial:
                    resnets = [A()]
                else:
                    resnets = [B()]
                attentions = []
                for _ in range(2):
                    if spatial:
                        resnets.append(A())
                    else:
                        resnets.append(B())
                    attentions.append(None)
                self.resnets = nn.ModuleList(resnets)
                self.layer = nn.ModuleList()
                self.layer.append(A())
                self.layer.append(B())

            def forward(self, hidden_states, temb=None):
                hidden_states = self.resnets[0](hidden_states, temb)
                for resnet in self.resnets[1:]:
                    hidden_states = resnet(hidden_states, temb)
                out = self.layer[-1](hidden_states)
                return out
    """).lstrip("\n")
    path = folder / "model.py"
    path.write_text(model)
    found = beliefs(model, "pkg/model.py", path)
    assert found[(27, "hidden_states")]["tensor"] is True
    assert found[(29, "hidden_states")]["tensor"] is True
    assert found[(30, "out")]["tensor"] is True


def test_a_tensor_on_some_paths_only_is_not_reported_a_tensor_but_the_rules_still_see_it():
    source = textwrap.dedent("""
        import torch
        from torch import nn


        class Head(nn.Module):
            def forward(self, x: torch.Tensor, pool: bool):
                pooled = x[:, 0] if pool else None
                picked = x[:, 0] if pool else x.clone()
                return pooled.sum().item(), picked
    """).lstrip("\n")
    found = beliefs(source)
    assert found[(7, "pooled")]["tensor"] is None  # a tensor, or None
    assert (found[(8, "picked")]["tensor"], found[(8, "picked")]["view"]) == (True, None)  # a view on one path only
    # The rules read the "may": a sync of what may be a tensor in a forward is still reported.
    assert (9, "VL401") in lint_both_paths(source)


def test_an_abstract_method_returns_what_it_is_annotated_to_and_a_layer_of_one_of_two_kinds_gives_a_tensor():
    source = textwrap.dedent("""
        import torch
        from torch import nn


        class Layer:
            def update(self, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
                raise NotImplementedError

            def reset(self) -> None:
                raise NotImplementedError


        class Block(nn.Module):
            def __init__(self, linear: bool):
                super().__init__()
                self.layer = Layer()
                if linear:
                    self._linear()
                else:
                    self._conv()

            def _linear(self):
                self.proj_in = nn.Linear(4, 4)

            def _conv(self):
                self.proj_in = nn.Conv2d(4, 4, 1)

            def forward(self, x: torch.Tensor):
                k, v = self.layer.update(x)
                nothing = self.layer.reset()
                h = self.proj_in(x)
                return k, v, nothing, h
    """).lstrip("\n")
    found = beliefs(source)
    assert (found[(29, "k")]["tensor"], found[(29, "v")]["tensor"]) == (True, True)
    assert found[(30, "nothing")]["tensor"] is False
    assert found[(31, "h")]["tensor"] is True  # `nn.Linear` or `nn.Conv2d`: a tensor either way


def test_a_buffer_is_a_tensor_of_the_module_and_a_class_level_annotation_beats_a_guess_from_the_name():
    source = textwrap.dedent("""
        from dataclasses import dataclass

        import torch
        from torch import nn


        class Embeddings(nn.Module):
            def __init__(self, n: int):
                super().__init__()
                self.position_ids = nn.Buffer(torch.arange(n).expand((1, -1)), persistent=False)


        @dataclass
        class Config:
            feed_forward_proj: str = "relu"

            def __post_init__(self):
                act_info = self.feed_forward_proj.split("-")
                self.dense_act_fn = act_info[-1]
    """).lstrip("\n")
    found = beliefs(source)
    position_ids = found[(10, "self.position_ids")]
    assert (position_ids["tensor"], position_ids["view"], position_ids["device"]) == (True, None, "cpu")
    assert found[(19, "self.dense_act_fn")]["tensor"] is not True  # a piece of a string, not of a tensor


def test_a_submodule_of_an_instance_of_a_known_class_gives_what_its_layer_gives():
    source = textwrap.dedent("""
        from typing import Optional

        import torch
        from torch import nn


        class Attention(nn.Module):
            def __init__(self, dim: int):
                super().__init__()
                self.to_q = nn.Linear(dim, dim)
                self.to_out = nn.ModuleList([])
                self.to_out.append(nn.Linear(dim, dim))
                self.to_out.append(nn.Dropout(0.1))
                self.drop = nn.Dropout(0.1)


        class Processor:
            def __call__(self, attn: Attention, hidden_states, extra: Optional[torch.Tensor] = None):
                query = attn.to_q(hidden_states)
                out = attn.to_out[0](query)
                out = attn.to_out[1](out)
                dropped = attn.drop(extra)
                return out, dropped
    """).lstrip("\n")
    found = beliefs(source)
    # A linear layer with a bias returns a view of its product on a contiguous 3-D input, its product itself on a
    # 2-D one: of an input of unknown rank, which is not known.
    assert (found[(19, "query")]["tensor"], found[(19, "query")]["view"]) == (True, None)
    assert found[(20, "out")]["tensor"] is True and found[(21, "out")]["tensor"] is True
    # Dropout gives its input, which is a tensor on every path it runs on (it fails on `None`).
    assert found[(22, "dropped")]["tensor"] is True


def test_an_item_at_a_known_position_of_a_module_list_runs_that_class():
    source = textwrap.dedent("""
        import torch
        from torch import nn


        class SelfAttention(nn.Module):
            def forward(self, x: torch.Tensor):
                return x * 2, None


        class CrossAttention(nn.Module):
            def forward(self, x: torch.Tensor, memory: torch.Tensor):
                return x + memory, None


        class FeedForward(nn.Module):
            def forward(self, x: torch.Tensor):
                return x * 3


        class Block(nn.Module):
            def __init__(self, is_decoder: bool):
                super().__init__()
                self.layer = nn.ModuleList()
                self.layer.append(SelfAttention())
                if is_decoder:
                    self.layer.append(CrossAttention())
                self.layer.append(FeedForward())

            def forward(self, hidden_states, memory=None):
                hidden_states, bias = self.layer[0](hidden_states)
                if memory is not None:
                    middle = self.layer[1](hidden_states, memory)
                out = self.layer[-1](hidden_states)
                return out
    """).lstrip("\n")
    found = beliefs(source)
    assert found[(30, "hidden_states")]["tensor"] is True  # `SelfAttention`, always first
    assert found[(30, "bias")]["tensor"] is False
    assert found[(32, "middle")]["tensor"] is None  # cross-attention or the feed-forward: not known which
    assert (found[(33, "out")]["tensor"], found[(33, "out")]["view"]) == (True, False)  # `FeedForward`, always last


def test_a_module_list_item_appended_by_name_is_any_class_that_name_is_bound_to():
    source = textwrap.dedent("""
        import torch
        from torch import nn


        class GELU(nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return x * 2


        class GEGLU(nn.Module):
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return x * 3


        class FeedForward(nn.Module):
            def __init__(self, kind: str):
                super().__init__()
                if kind == "gelu":
                    act_fn = GELU()
                else:
                    act_fn = GEGLU()
                self.net = nn.ModuleList([])
                self.net.append(act_fn)
                self.net.append(nn.Dropout(0.1))
                self.net.append(nn.Linear(4, 4))

            def forward(self, hidden_states):
                for module in self.net:
                    hidden_states = module(hidden_states)
                return hidden_states
    """).lstrip("\n")
    found = beliefs(source)
    assert found[(29, "hidden_states")]["tensor"] is True


def test_an_object_whose_call_is_annotated_to_return_a_tensor_gives_one(tmp_path):
    folder = package(tmp_path, processors="""
        import torch


        class ProcessorList(list):
            def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
                for processor in self:
                    scores = processor(input_ids, scores)
                return scores


        class Plain:
            def __call__(self, x):
                return x
    """)
    model = textwrap.dedent("""
        import torch

        from .processors import Plain, ProcessorList


        def step(processors: ProcessorList, plain: Plain, ids: torch.Tensor, logits: torch.Tensor):
            scores = processors(ids, logits)
            other = plain(logits)
            return scores, other
    """).lstrip("\n")
    path = folder / "model.py"
    path.write_text(model)
    found = beliefs(model, "pkg/model.py", path)
    assert found[(7, "scores")]["tensor"] is True
    assert found[(8, "other")]["tensor"] is None  # not annotated: its own business


def test_an_integer_index_of_an_annotated_output_object_is_its_annotated_field(tmp_path):
    folder = package(tmp_path, outputs="""
        from dataclasses import dataclass
        from typing import Optional

        import torch


        @dataclass
        class Seq2SeqOutput:
            last_hidden_state: Optional[torch.FloatTensor] = None
            past_key_values: Optional[object] = None
    """)
    model = textwrap.dedent("""
        import torch
        from torch import nn

        from .outputs import Seq2SeqOutput


        class Classifier(nn.Module):
            def forward(self, model: nn.Module, input_ids: torch.Tensor):
                outputs: Seq2SeqOutput = model(input_ids)
                hidden_states = outputs[0]
                cache = outputs[1]
                return hidden_states, cache
    """).lstrip("\n")
    path = folder / "model.py"
    path.write_text(model)
    found = beliefs(model, "pkg/model.py", path)
    assert found[(10, "hidden_states")]["tensor"] is True
    assert found[(11, "cache")]["tensor"] is not True


def test_an_augmented_assignment_of_a_tensor_to_a_number_or_tensor_is_a_tensor_on_every_path():
    source = textwrap.dedent("""
        import torch


        def bucket(position: torch.Tensor, bidirectional: bool):
            buckets = 0
            if bidirectional:
                buckets += (position > 0).long() * 16
            joined = buckets
            buckets += torch.where(position < 8, position, position)
            counts = 0
            if bidirectional:
                counts += position.sum()
            counts += 1
            return buckets, joined, counts
    """).lstrip("\n")
    found = beliefs(source)
    assert found[(8, "joined")]["tensor"] is None  # `0` on one path
    assert found[(9, "buckets")]["tensor"] is True  # `0 + tensor` on that path, in place on the other
    assert found[(13, "counts")]["tensor"] is None  # `0 + 1` stays a number where the branch did not run


def test_a_value_filled_with_a_tensor_where_it_is_none_is_a_tensor_where_it_is_given():
    source = textwrap.dedent("""
        import torch


        def attend(scores: torch.Tensor, bias=None, scale=None, count: int | None = None):
            if bias is None:
                bias = torch.zeros(scores.shape[-1])
            with_bias = bias
            if scale is None:
                scale = 1.0
            with_scale = scale
            if count is None:
                count = torch.tensor(0)
            with_count = count
            return scores + with_bias, with_scale, with_count
    """).lstrip("\n")
    found = beliefs(source)
    assert found[(7, "with_bias")]["tensor"] is True  # the caller's tensor, or the zeros
    assert "where it is `None`" in found[(7, "with_bias")]["why"]
    assert found[(10, "with_scale")]["tensor"] is None  # filled with a number: nothing known where it is given
    assert found[(13, "with_count")]["tensor"] is None  # annotated `int`: what the annotation says is not overruled


def test_a_position_after_an_append_that_may_not_run_holds_either_class():
    source = textwrap.dedent("""
        import torch
        from torch import nn


        class Norm(nn.Module):
            def forward(self, x: torch.Tensor):
                return x * 2


        class Proj(nn.Module):
            def forward(self, x: torch.Tensor):
                return x + 1


        class Block(nn.Module):
            def __init__(self, normed: bool):
                super().__init__()
                self.parts = nn.ModuleList()
                self.parts.append(Proj())
                if normed:
                    self.parts.append(Norm())
                self.parts.append(Proj())

            def forward(self, hidden_states: torch.Tensor):
                second = self.parts[1](hidden_states)
                third = self.parts[2](hidden_states)
                return second, third
    """).lstrip("\n")
    found = beliefs(source)
    assert found[(25, "second")]["tensor"] is True  # `Norm` or the last `Proj`: each gives a tensor
    assert found[(26, "third")]["tensor"] is True  # only where the `if` ran: the last `Proj`


def test_an_attribute_of_an_object_narrowed_to_a_class_another_module_defines_is_of_the_class_it_names(tmp_path):
    folder = package(tmp_path, cache="""
        import torch


        class Cache:
            def update(self, k: torch.Tensor, v: torch.Tensor, i: int) -> tuple[torch.Tensor, torch.Tensor]:
                raise NotImplementedError


        class DynamicCache(Cache):
            pass


        class PairCache(Cache):
            def __init__(self, *caches):
                if len(caches) == 2:
                    self.self_cache = caches[0]
                else:
                    self.self_cache = DynamicCache()
    """)
    model = textwrap.dedent("""
        import torch

        from .cache import Cache, DynamicCache, PairCache


        def attend(k: torch.Tensor, v: torch.Tensor, past: Cache | None):
            if isinstance(past, PairCache):
                past = past.self_cache
            k2, v2 = past.update(k, v, 0)
            return k2, v2
    """).lstrip("\n")
    path = folder / "model.py"
    path.write_text(model)
    found = beliefs(model, "pkg/model.py", path)
    assert (found[(9, "k2")]["tensor"], found[(9, "v2")]["tensor"]) == (True, True)
    # Where this module does not import `DynamicCache`, the name the other module gives the attribute's class means
    # nothing here.
    unnamed = model.replace("Cache, DynamicCache, PairCache", "Cache, PairCache")
    path.write_text(unnamed)
    found = beliefs(unnamed, "pkg/model.py", path)
    assert found[(9, "k2")]["tensor"] is None


def test_a_helper_annotated_to_return_a_tensor_returns_one_where_its_walk_finds_one_only_on_some_paths():
    source = textwrap.dedent("""
        import torch


        def lengths(grid: torch.Tensor, kwargs: dict | None = None) -> torch.Tensor:
            if kwargs is not None and (found := kwargs.pop("lengths", None)) is not None:
                return found
            return torch.nn.functional.pad(grid.cumsum(0), (1, 0))


        def maybe(grid: torch.Tensor, kwargs: dict | None = None) -> torch.Tensor | None:
            if kwargs is not None:
                return kwargs.get("lengths")
            return grid.cumsum(0)


        def pair(grid: torch.Tensor, kwargs: dict) -> tuple[torch.Tensor, torch.Tensor]:
            if kwargs:
                return kwargs["lengths"], kwargs.get("weights")
            return grid.cumsum(0), kwargs.get("weights")


        def use(grid: torch.Tensor, kwargs: dict):
            cu = lengths(grid, kwargs=kwargs)
            other = maybe(grid, kwargs)
            first, weights = pair(grid, kwargs)
            return cu, other, first, weights
    """).lstrip("\n")
    found = beliefs(source)
    assert found[(23, "cu")]["tensor"] is True  # annotated so: the caller's value is one too
    assert found[(24, "other")]["tensor"] is None  # the annotation admits `None`
    assert found[(25, "first")]["tensor"] is True  # a tensor on one path, and the annotation says on every one
    # Nothing found on any path: an annotation alone does not claim an item (attention weights are `None` from most
    # kernels, whatever `-> tuple[Tensor, Tensor]` says).
    assert found[(25, "weights")]["tensor"] is None


def test_a_sequential_gives_what_its_last_layer_gives():
    source = textwrap.dedent("""
        import torch
        from torch import nn


        class Merger(nn.Module):
            def __init__(self, width: int, layers: list):
                super().__init__()
                self.mlp = nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Linear(width, 4))
                self.lstm_head = nn.Sequential(nn.Linear(width, width), nn.LSTM(width, width))
                self.listed = nn.Sequential(*layers)

            def forward(self, x: torch.Tensor):
                merged = self.mlp(x)
                recurrent = self.lstm_head(x)
                unknown = self.listed(x)
                return merged, recurrent, unknown
    """).lstrip("\n")
    found = beliefs(source)
    assert found[(13, "merged")]["tensor"] is True and found[(13, "merged")]["view"] is not True
    assert found[(14, "recurrent")]["tensor"] is False  # an LSTM gives a tuple
    assert found[(15, "unknown")]["tensor"] is None  # its layers are not listed here


def test_a_conditional_expression_taken_only_while_traced_gives_its_eager_branch():
    source = textwrap.dedent("""
        import torch


        def side(t: torch.Tensor):
            n = t.to(torch.int64) if torch.jit.is_tracing() else int(t.shape[-1])
            m = t.to(torch.int64) if t.dim() > 2 else int(t.shape[-1])
            return n, m
    """).lstrip("\n")
    found = beliefs(source)
    assert found[(5, "n")]["tensor"] is False
    assert found[(6, "m")]["tensor"] is None  # either, in an eager run


MADE_INSIDE = """
import torch


def row_of_sum(x: torch.Tensor):
    y = x + 1
    return y[:, 0]


def projected(x: torch.Tensor, w: torch.Tensor):
    x = torch.addmm(w[0], x, w)
    return x.view(-1)


def first_row(x: torch.Tensor):
    return x[0]


class Recorder:
    def __init__(self):
        self.rows = {}

    def record(self, h: torch.Tensor, w: torch.Tensor, y: torch.Tensor):
        a = row_of_sum(h)
        b = projected(h, w)
        c = first_row(h)
        self.rows["a"] = a
        self.rows["y"] = y[:, 0]
        return a, b, c
"""


def test_a_view_of_what_a_helper_made_is_named_for_the_helper_not_for_a_caller_name():
    # `y` and `x` are the helpers' own: the caller's `y` (a parameter) and `h` are not what the results view.
    found = beliefs(textwrap.dedent(MADE_INSIDE))
    assert (found[(24, "a")]["view"], found[(24, "a")]["base"]) == (True, "y made in row_of_sum")
    # All of the helper's own product (a `.view()` of an `addmm` result): storage of its own, through a view of it.
    assert (found[(25, "b")]["view"], found[(25, "b")]["base"], found[(25, "b")]["contiguous"]) == (True, None, True)
    assert (found[(26, "c")]["view"], found[(26, "c")]["base"]) == (True, "h")  # a view of what was passed
    # A row of the helper's own sum kept on the object pins that sum; the same rule on the caller's `y` still holds.
    assert lint_both_paths(textwrap.dedent(MADE_INSIDE)).count((27, "VL101")) == 1
    assert (28, "VL101") in lint_both_paths(textwrap.dedent(MADE_INSIDE))


def test_a_reshape_of_contiguous_memory_is_a_contiguous_view_of_it():
    found = beliefs(textwrap.dedent("""
    import torch


    def table(n: int):
        made = torch.arange(n * 4, dtype=torch.float32)
        square = made.reshape(n, 4)
        moved = made.t().reshape(-1)
        lifted = square.unsqueeze(0)
        return square, moved, lifted
    """))
    assert (found[(7, "square")]["view"], found[(7, "square")]["base"], found[(7, "square")]["contiguous"]) == (True, "made", True)
    assert found[(9, "lifted")]["contiguous"] is True  # an unsqueeze of contiguous memory
    assert found[(8, "moved")]["view"] is not True  # a reshape of a transposed view may copy


def test_a_union_of_a_tensor_and_numbers_may_be_either_in_any_spelling():
    found = beliefs(textwrap.dedent("""
        import torch


        def embed(timestep: torch.Tensor | float | int, other: int | float | torch.Tensor, sure: torch.Tensor | None):
            a = timestep
            b = other
            c = sure
            d = sure * 2
            return a, b, c, d
    """).lstrip("\n"))
    assert found[(5, "a")]["tensor"] is None and found[(6, "b")]["tensor"] is None
    # `Tensor | None`: a tensor wherever it is used (the use fails on `None`); a copy made before any test may be `None`.
    assert found[(7, "c")]["tensor"] is None and found[(8, "d")]["tensor"] is True


def test_a_parameter_annotated_a_tuple_that_every_caller_passes_a_tensor_is_a_tensor():
    found = beliefs(textwrap.dedent("""
        import torch
        from torch import nn


        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.ln = nn.LayerNorm(8)

            def forward(self, hidden_states: tuple[torch.Tensor] | None):
                residual = hidden_states
                return self.ln(hidden_states) + residual


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x: torch.Tensor):
                h = x * 2
                return self.block(h)
    """).lstrip("\n"))
    assert found[(11, "residual")]["tensor"] is True
