"""How many dimensions a tensor has (`viewlint.analysis.ranks`), as `viewlint beliefs` reports it, and the fact a rank
decides: `nn.Linear`'s output on a contiguous input of three or more dimensions is a view of the product it computed.
What the analysis claims is checked against real torch where torch is installed."""

from __future__ import annotations

import textwrap

import pytest

from test_inference_calls import _long_body
from test_inference_objects import beliefs

RANKS = textwrap.dedent('''
    import torch
    from torch import nn


    def shapes(x: torch.Tensor, n: int):
        batch, length, _ = x.shape
        same = x
        made = torch.zeros(batch, length, 8)
        sized = torch.full((batch, 4), 0.0)
        heads = made.view(*made.shape[:-1], -1, 2)
        moved = heads.transpose(1, 2)
        lifted = made.unsqueeze(0)
        row = made[:, 0]
        widened = made[..., None]
        flat = made.flatten(1)
        summed = made.sum(-1)
        kept = made.sum(-1, keepdim=True)
        total = made.sum()
        joined = torch.cat([made, made], dim=1)
        stacked = torch.stack([made, made])
        product = made @ made.transpose(1, 2)
        rolled = x * 2 + made
        steps = torch.arange(n)
        table = torch.tensor([[1, 2], [3, 4]])
        unknown = x.view(n)
        return heads
''').lstrip("\n")


def test_ranks_follow_sizes_written_out_and_ops_that_keep_add_or_drop_dimensions():
    found = beliefs(RANKS)
    rank = {target: record["rank"] for (_, target), record in found.items()}
    assert rank["same"] == 3  # `batch, length, _ = x.shape`
    assert (rank["made"], rank["sized"], rank["heads"], rank["moved"], rank["lifted"]) == (3, 2, 4, 4, 4)
    assert (rank["row"], rank["widened"], rank["flat"]) == (2, 4, 2)
    assert (rank["summed"], rank["kept"], rank["total"]) == (2, 3, 0)
    assert (rank["joined"], rank["stacked"], rank["product"], rank["rolled"]) == (3, 4, 3, 3)
    assert (rank["steps"], rank["table"]) == (1, 2)
    assert rank["unknown"] == 1  # `view(n)` of an int: one size


def test_a_rank_not_shown_stays_unknown():
    found = beliefs(textwrap.dedent('''
        import torch


        def f(x, shape, idx):
            a = x.view(shape)
            b = x[idx]
            c = x.squeeze(1)
            return a, b, c
    ''').lstrip("\n"))
    assert all(found[(row, target)]["rank"] is None for row, target in ((5, "a"), (6, "b"), (7, "c")))


LAYERS = textwrap.dedent('''
    import torch
    from torch import nn


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(8, 8)
            self.plain = nn.Linear(8, 8, bias=False)
            self.norm = nn.LayerNorm(8)
            self.act_fn = nn.GELU()

        def forward(self, hidden_states: torch.Tensor, flat: torch.Tensor):
            """
            Args:
                hidden_states (`torch.Tensor`): input of shape `(batch, seq_len, hidden)`
                flat (`torch.Tensor` of shape `(tokens, hidden)`): the same, flattened
            """
            normed = self.norm(hidden_states)
            projected = self.proj(normed)
            unbiased = self.plain(normed)
            rows = self.proj(flat)
            strided = self.proj(normed.transpose(0, 1))
            activated = self.act_fn(self.proj(normed))
            again = self.proj(activated)
            return projected, unbiased, rows, strided, again
''').lstrip("\n")


def test_a_linear_layer_views_its_product_on_a_contiguous_input_of_three_dimensions():
    found = beliefs(LAYERS)
    view = {target: found[(row, target)]["view"] for (row, target) in found}
    assert found[(19, "normed")]["rank"] == 3  # from the docstring's shape, through a norm
    assert view["projected"] is True and found[(20, "projected")]["contiguous"] is True
    assert view["unbiased"] is False  # `bias=False`: the product itself
    assert view["rows"] is False  # a 2-D input: the product itself
    assert view["strided"] is None  # a transposed input: no claim
    assert view["again"] is True  # an activation keeps the rank and the layout


@pytest.fixture(scope="module")
def layers_run():
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(compile(LAYERS, "layers.py", "exec"), namespace)  # noqa: S102 - the test's own snippet
    block = namespace["Block"]().eval()
    with torch.no_grad():
        return block(torch.randn(2, 5, 8), torch.randn(10, 8))


def test_what_the_analysis_claims_of_linear_outputs_is_what_torch_does(layers_run):
    projected, unbiased, rows, _strided, again = layers_run
    found = beliefs(LAYERS)
    for tensor, (row, target) in ((projected, (20, "projected")), (unbiased, (21, "unbiased")), (rows, (22, "rows")),
                                  (again, (25, "again"))):
        assert found[(row, target)]["view"] is (tensor._base is not None), target
        assert found[(row, target)]["rank"] == tensor.dim(), target


def test_a_long_layer_walked_once_per_shape_of_call_returns_its_input_rank():
    # `Attention.forward` is too long to walk once per call: it is walked with the rank its caller passes.
    source = (
        "import torch\n"
        "from torch import nn\n"
        "\n"
        "\n"
        "class Attention(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.o_proj = nn.Linear(8, 8)\n"
        "\n"
        "    def forward(self, hidden_states):\n"
        + _long_body(50)
        + "        input_shape = hidden_states.shape[:-1]\n"
        "        out = hidden_states.reshape(*input_shape, -1).contiguous()\n"
        "        return self.o_proj(out), None\n"
        "\n"
        "\n"
        "class Layer(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.attn = Attention()\n"
        "\n"
        "    def forward(self, x):\n"
        "        b, s, d = x.shape\n"
        "        h, _ = self.attn(x)\n"
        "        return h\n"
    )
    found = beliefs(source)
    h = next(record for (row, target), record in found.items() if target == "h")
    assert h["rank"] == 3


def test_an_elementwise_result_has_at_least_its_largest_operands_rank():
    # `hidden` is 3-D on one path only: after the join its rank is not known, but it is at least 3-D (a mask of 3-D
    # scales it on the other), which is enough for a linear layer's view of its product.
    found = beliefs(textwrap.dedent('''
        import torch
        from torch import nn


        class Embed(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(8, 8)
                self.norm = nn.LayerNorm(8)

            def forward(self, pixels: torch.Tensor, mask, scale):
                b, s, d = pixels.shape
                hidden = pixels * 2
                if mask is not None:
                    hidden = hidden * scale
                joined = torch.cat([hidden, scale], dim=1)
                out = self.proj(self.norm(hidden))
                return out, joined
    ''').lstrip("\n"))
    assert found[(15, "hidden")]["rank"] is None  # what `3-D * scale` broadcasts to: at least 3-D
    assert found[(16, "joined")]["rank"] is None
    assert found[(17, "out")]["view"] is True


def test_layouts_the_engine_now_knows_are_found_with_the_prefilter_on_too():
    # `.view()` of a contiguous tensor, a layer norm's output, an activation of it: each `.contiguous()` is redundant,
    # and the prefilter must not hide the function that says so.
    from conftest import lint_both_paths

    found = lint_both_paths(textwrap.dedent('''
        import torch
        from torch import nn


        def table(values, shape):
            return torch.tensor(data=values, dtype=torch.float).view(shape).contiguous()


        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.norm = nn.LayerNorm(8)
                self.act_fn = nn.GELU()

            def forward(self, x: torch.Tensor):
                normed = self.norm(x).contiguous()
                return self.act_fn(normed).contiguous()
    ''').lstrip("\n"))
    assert [row for row, code in found if code == "VL301"] == [6, 16, 17]


def test_a_redundant_contiguous_of_a_layer_output_names_the_layer_as_the_reason():
    from viewlint.engine import lint_text
    from viewlint.settings import Settings

    source = textwrap.dedent('''
        import torch
        from torch import nn


        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.lm_head = nn.Linear(8, 16)

            def forward(self, x: torch.Tensor):
                logits = self.lm_head(x).contiguous()
                return self.lm_head(x).reshape(-1, 4).contiguous(), logits
    ''').lstrip("\n")
    messages = {d.start.row: d.message for d in lint_text(source, "head.py", Settings(select=("VL301",)))}
    assert "returned by `Linear` module, a new contiguous tensor" in messages[11]
    assert "`.reshape()` of a contiguous tensor" in messages[12]  # the reshape's receiver, not the layer, is the reason


SHAPES_AT_LEAST = textwrap.dedent('''
    import torch
    from torch import nn


    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.o_proj = nn.Linear(4, 4)

        def forward(self, x):
            h = x * torch.ones(3, 4)
            input_shape = h.shape[:-1]
            heads = h.view(*input_shape, -1, 2).transpose(-3, -2)
            merged = heads.transpose(-3, -2).reshape(*input_shape, -1).contiguous()
            out = self.o_proj(merged)
            return out
''').lstrip("\n")


def test_a_shape_of_a_tensor_of_at_least_some_rank_has_at_least_so_many_sizes():
    """`x.shape[:-1]` of an at least 2-D tensor holds at least one size, so `reshape(*shape, -1)` is at least 2-D; of
    an at least 3-D one (`h` here, when `x` is), at least 3-D: a linear layer's view of its product either way it is
    not 2-D. Here `h` is only known to be at least 2-D: no claim."""
    found = beliefs(SHAPES_AT_LEAST)
    assert found[(14, "merged")]["rank"] is None and found[(15, "out")]["view"] is None
    three_d = SHAPES_AT_LEAST.replace("torch.ones(3, 4)", "torch.ones(1, 3, 4)")
    found = beliefs(three_d)
    assert found[(14, "merged")]["contiguous"] is True and found[(15, "out")]["view"] is True
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(compile(three_d, "shapes.py", "exec"), namespace)  # noqa: S102 - the test's own snippet
    attention = namespace["Attention"]().eval()
    with torch.no_grad():
        for x in (torch.randn(2, 3, 4), torch.randn(5, 2, 3, 4)):  # 3-D and 4-D: a view of the product both times
            assert attention(x)._base is not None


DROPPED = textwrap.dedent('''
    import torch
    from torch import nn
    from torch.nn import functional as F


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(8, 8)
            self.dropout = nn.Dropout(0.1)
            self.norm = nn.LayerNorm(8)

        def forward(self, hidden_states: torch.Tensor, flat: torch.Tensor):
            """
            Args:
                hidden_states (`torch.Tensor`): input of shape `(batch, seq_len, hidden)`
                flat (`torch.Tensor` of shape `(tokens, hidden)`): the same, flattened
            """
            projected = self.proj(self.norm(hidden_states))
            dropped = self.dropout(projected)
            functional = F.dropout(projected, p=0.1, training=self.training)
            rows = self.dropout(self.proj(self.norm(flat)))
            return dropped, functional, rows
''').lstrip("\n")


def test_a_dropout_keeps_its_inputs_base_as_in_eval_mode_and_torch_agrees():
    # In eval mode a dropout hands back its input: the view `F.linear` made of its product on 3-D input stays one.
    found = beliefs(DROPPED)
    assert found[(19, "projected")]["view"] is True
    assert found[(20, "dropped")]["view"] is True
    assert found[(21, "functional")]["view"] is True
    assert found[(22, "rows")]["view"] is False
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(compile(DROPPED, "dropped.py", "exec"), namespace)  # noqa: S102 - the test's own snippet
    with torch.no_grad():
        outputs = namespace["Block"]().eval()(torch.randn(2, 5, 8), torch.randn(10, 8))
    for tensor, (row, target) in zip(outputs, ((20, "dropped"), (21, "functional"), (22, "rows"))):
        assert found[(row, target)]["view"] is (tensor._base is not None), target
