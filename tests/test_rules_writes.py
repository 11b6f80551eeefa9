"""Lost-write rules (VL201-VL205): what they flag, what they leave alone, and the edits they offer."""

from __future__ import annotations

import textwrap

import pytest

from conftest import lint_both_paths
from viewlint.diagnostics import Applicability
from viewlint.engine import lint_text
from viewlint.settings import Settings


def _src(body: str) -> str:
    """A module with `import torch` and `body` inside a function with a tensor `x` and index `idx`."""
    return "import torch\n\n\ndef f(x: torch.Tensor, n: int):\n" + textwrap.indent(textwrap.dedent(body), "    ")


def _rows(findings: list[tuple[int, str, str]], code: str) -> list[int]:
    return [row for row, c, _ in findings if c == code]


def _fixes(source: str, code: str) -> list[tuple[str, ...]]:
    diagnostics = lint_text(source, "snippet.py", Settings(select=(code,)))
    return [tuple(e.content for e in d.fix.edits) if d.fix else () for d in diagnostics]


# ---------------------------------------------------------------- VL201


@pytest.mark.parametrize(
    "line",
    [
        "buf[[3]].fill_(2.0)",
        "buf[idx].copy_(x)",
        "buf[buf > 0].zero_()",
        "buf[~(buf > 0)].zero_()",
        "buf[(buf > 0) & (buf < 1)].zero_()",
        "buf[buf.nonzero()].zero_()",
        "buf[torch.arange(2)].zero_()",
        "buf[torch.where(buf > 0)].zero_()",
        "buf[(idx,)].zero_()",
        "buf[idx, 1].uniform_()",
        "buf[idx][0].zero_()",
        "buf[idx][:, 0].copy_(x)",
        "buf[idx].view(-1).fill_(1.0)",
        "buf[idx].data.fill_(1.0)",
        "torch.nn.init.normal_(buf[idx])",
        "buf[x].zero_()",  # a tensor index of unknown rank: 0-dim ones are the rare case
    ],
)
def test_vl201_flags_inplace_on_gathered_copy(lint_source, line):
    source = _src(f"buf = torch.zeros(8, 4)\nidx = torch.tensor([1, 2])\n{line}\n")
    assert _rows(lint_source(source, select=("VL201",)), "VL201") == [7]


@pytest.mark.parametrize(
    "line",
    [
        "buf[3].fill_(1.0)",
        "buf[n].fill_(1.0)",
        "buf[1:3].copy_(x)",
        "buf[..., 0].zero_()",
        "buf[None][0].zero_()",
        "buf[2, 3].fill_(7.0)",
        "buf[torch.tensor(7)].fill_(9.0)",
        "buf[len(x)].zero_()",
        "buf[x.shape[0]].zero_()",
        "buf[int(x.sum().item())].zero_()",
        "buf[idx] = 1.0",
        "buf[idx] += 1.0",
        "y = buf[idx].add_(1.0)",
        "buf[x.sum()].zero_()",  # a full reduction is 0-dim: a select
        "buf[x[0]].zero_()",  # a row of a tensor of unknown rank may well be 0-dim
    ],
)
def test_vl201_leaves_views_and_index_put_alone(lint_source, line):
    source = _src(f"buf = torch.zeros(8, 4)\nidx = torch.tensor([1, 2])\n{line}\n")
    assert lint_source(source, select=("VL201",)) == []


def test_vl201_loop_variable_over_range_is_basic(lint_source):
    source = _src("buf = torch.zeros(8, 4)\nfor i in range(3):\n    buf[i].zero_()\n")
    assert lint_source(source, select=("VL201",)) == []


def test_vl201_seed_case_names_the_expression(lint_source):
    source = _src("buf = torch.zeros(8, 4)\nbuf[[3]].fill_(2.0)\nrow = buf[3]\nrow.fill_(1.0)\n")
    findings = lint_source(source, select=("VL201",))
    assert [(row, code) for row, code, _ in findings] == [(6, "VL201")]
    assert findings[0][2] == "`buf[[3]].fill_(…)` writes into a temporary copy: advanced indexing gathers, so `buf` is unchanged"


def test_vl201_local_never_read_again(lint_source):
    source = _src("buf = torch.zeros(8, 4)\ntmp = buf[[3]]\ntmp.fill_(2.0)\n")
    findings = lint_source(source, select=("VL201",))
    assert _rows(findings, "VL201") == [7]
    assert "`tmp` is a gathered copy of `buf`" in findings[0][2]


@pytest.mark.parametrize(
    "body",
    [
        "tmp = buf[[3]]\ntmp.fill_(2.0)\nreturn tmp\n",
        "tmp = buf[[3]]\nkeep = [tmp]\ntmp.fill_(2.0)\nreturn keep\n",
        "tmp = buf[[3]]\nif n:\n    tmp = buf\ntmp.fill_(2.0)\n",
        "tmp = buf[[0]]\nfor i in range(3):\n    print(tmp)\n    tmp = buf[[i]]\n    tmp.fill_(2.0)\n",
        "tmp = buf[[3]]\ndef g():\n    return tmp\ntmp.fill_(2.0)\nreturn g\n",
    ],
)
def test_vl201_local_that_is_observed_is_not_flagged(lint_source, body):
    source = _src("buf = torch.zeros(8, 4)\n" + body)
    assert lint_source(source, select=("VL201",)) == []


def test_vl201_module_level_local_is_not_flagged(lint_source):
    # A module-level name may be imported elsewhere: never call it dead.
    assert lint_source("import torch\nbuf = torch.zeros(4)\ntmp = buf[[1]]\ntmp.zero_()\n", select=("VL201",)) == []


@pytest.mark.parametrize(
    ("line", "edit"),
    [
        ("buf[idx].copy_(x)", "buf[idx] = x"),
        ("buf[idx].fill_(2.0)", "buf[idx] = 2.0"),
        ("buf[idx].zero_()", "buf[idx] = 0"),
        ("buf[idx].add_(x)", "buf[idx] += x"),
        ("buf[idx].sub_(x)", "buf[idx] -= x"),
        ("buf[idx].mul_(2)", "buf[idx] *= 2"),
        ("buf[idx].div_(x + 1)", "buf[idx] /= x + 1"),
    ],
)
def test_vl201_fix_edits_are_unsafe(line, edit):
    """The rewrite makes the lost write land: a change of behaviour, so an unsafe fix (Ruff's rule)."""
    source = _src(f"buf = torch.zeros(8, 4)\nidx = torch.tensor([1, 2])\n{line}  # note\n")
    diagnostics = lint_text(source, "snippet.py", Settings(select=("VL201",)))
    assert len(diagnostics) == 1
    fix = diagnostics[0].fix
    assert fix is not None and fix.applicability is Applicability.UNSAFE
    assert [e.content for e in fix.edits] == [edit]
    assert (fix.edits[0].start.row, fix.edits[0].start.column) == (7, 5)


@pytest.mark.parametrize(
    "line",
    [
        "buf[idx].add_(x, alpha=2)",
        "buf[idx].copy_(x, non_blocking=True)",
        "buf[idx].clamp_(0, 1)",
        "buf[idx].add_(1).mul_(2)",
        "buf[idx][0].fill_(1.0)",
        "tmp = buf[idx]\ntmp.fill_(1.0)",
    ],
)
def test_vl201_no_edit_where_arguments_do_not_map(line):
    source = _src(f"buf = torch.zeros(8, 4)\nidx = torch.tensor([1, 2])\n{line}\n")
    assert _fixes(source, "VL201") == [()]


def test_vl201_a_list_that_may_hold_slices_is_not_a_gather(lint_source):
    # optimum's weight loading: `new_param.data[source_index].copy_(t)` with `source_index` a list of `slice`s, which
    # PyTorch reads as a tuple of them (a view: the write lands); a list of ints gathers.
    source = _src(
        "dims = [spec.to_slice() if d == n else slice(None) for d in range(x.ndim)]\n"
        "x[dims].copy_(torch.ones(2, 3))\n"
        "rows = [d if d == n else 0 for d in range(x.ndim)]\n"
        "x[rows].copy_(torch.ones(2, 3))\n"
    )
    assert _rows(lint_source(source, select=("VL201",)), "VL201") == [8]


# ---------------------------------------------------------------- VL202


@pytest.mark.parametrize("line", ["b[mask][:, 1] = 5.0", "b[idx][0] += 1", "b[[1, 2]][..., 0] = 0", "b[0][idx][1] = 2"])
def test_vl202_flags_assignment_into_gathered_copy(lint_source, line):
    source = _src(f"b = torch.zeros(4, 3)\nmask = b[:, 0] > 0\nidx = torch.tensor([1, 2])\n{line}\n")
    findings = lint_source(source, select=("VL202",))
    assert _rows(findings, "VL202") == [8]


@pytest.mark.parametrize("line", ["b[:, 1][mask] = 5.0", "b[1:][b[1:] > 0] = 1", "b[idx] = 1", "b[idx] += 1", "b[1][2] = 0"])
def test_vl202_basic_first_writes_through(lint_source, line):
    source = _src(f"b = torch.zeros(4, 3)\nmask = b[:, 0] > 0\nidx = torch.tensor([1, 2])\n{line}\n")
    assert lint_source(source, select=("VL202",)) == []


def test_vl202_message_names_the_gather(lint_source):
    source = _src("b = torch.zeros(4, 3)\nb[[1]][0] = 1.0\n")
    ((_, _, message),) = lint_source(source, select=("VL202",))
    assert message == "assignment to `b[[1]][0]` lands in a temporary copy: `b[[1]]` gathers (advanced indexing), so `b` is unchanged"


def test_vl202_a_container_of_the_class_body_is_looked_up_by_key(lint_source):
    # deepspeed's `Allocator`: `cache = defaultdict(dict)` in the class body, keyed by tensors.
    source = (
        "import torch\n"
        "from collections import defaultdict\n"
        "class Allocator:\n"
        "    cache = defaultdict(dict)\n"
        "    def empty_from(tensor: torch.Tensor, shape):\n"
        "        Allocator.cache[tensor][shape] = tensor.flatten()[:4].view(shape)\n"
        "        return Allocator.cache[tensor][shape]\n"
    )
    assert lint_source(source, select=("VL202",)) == []
    assert _rows(lint_source(source.replace("cache = defaultdict(dict)", "cache = torch.zeros(4, 4)"), select=("VL202",)),
                 "VL202") == [6]


def test_vl201_a_dict_attribute_named_for_the_cpu_is_still_the_dict_its_class_builds(lint_source):
    # megatron's `HybridDeviceOptimizer`: `self.cpu_copy_map_grad = defaultdict(torch.Tensor)`, keyed by parameters;
    # its name says where its tensors live, not that it is one.
    source = (
        "import torch\n"
        "from collections import defaultdict\n"
        "class Hybrid:\n"
        "    def sync(self, params):\n"
        "        for param in params:\n"
        "            self.cpu_copy_map_grad[param] = torch.empty(param.shape, device='cpu')\n"
        "            self.cpu_copy_map_grad[param].data.copy_(param.grad, non_blocking=True)\n"
        "    def build(self):\n"
        "        self.cpu_copy_map_grad = defaultdict(torch.Tensor)\n"
    )
    assert lint_source(source, select=("VL201",)) == []


# ---------------------------------------------------------------- VL203


@pytest.mark.parametrize(
    "line",
    ["x.reshape(-1).zero_()", "x.float().add_(1)", "x.contiguous().fill_(0)", "x.to('cuda').copy_(x)", "torch.flatten(x).zero_()", "x.half().add_(1).mul_(2)"],
)
def test_vl203_flags_discarded_conversion(lint_source, line):
    findings = lint_source(_src(line + "\n"), select=("VL203",))
    assert _rows(findings, "VL203") == [5]


def test_vl203_local_never_read_again(lint_source):
    findings = lint_source(_src("y = x.float()\ny.add_(1)\n"), select=("VL203",))
    assert findings == [(6, "VL203", "`y` is `x.float()`, never read again: `y.add_(…)` reaches `x` only when `.float()` did not copy")]


@pytest.mark.parametrize(
    "body",
    [
        "y = x.float().add_(1)\n",
        "y = x.float()\ny.add_(1)\nreturn y\n",
        "buf = torch.zeros(4, 3)\nbuf.reshape(-1).zero_()\n",  # contiguous: reshape is a view
        "buf = torch.zeros(4, 3)\nbuf.contiguous().zero_()\n",  # contiguous() returns buf
        "buf = torch.zeros(4, 3)\nbuf.cpu().zero_()\n",  # cpu() of a CPU tensor returns it
        "x.view(-1).zero_()\n",
        "x.float().requires_grad_()\n",
        "obj = make()\nobj.reshape(-1).add_(1.0)\n",  # not known to be a tensor (`zero_` would say it is)
    ],
)
def test_vl203_leaves_used_or_non_copying_conversions(lint_source, body):
    assert lint_source(_src(body), select=("VL203",)) == []


# ---------------------------------------------------------------- VL204


@pytest.mark.parametrize(
    "body",
    [
        "x.expand(4, 3).add_(1)\n",
        "e = x.expand_as(y)\ne.copy_(y)\n",
        "torch.broadcast_to(x, (4, 3)).mul_(2)\n",
        "x.expand(4, 3).masked_fill_(m, 0)\n",
        "torch.nn.init.normal_(x.expand(4, 3))\n",
        "z = x.expand(4, 3).add_(1)\n",
    ],
)
def test_vl204_flags_inplace_on_expanded(lint_source, body):
    source = "import torch\n\n\ndef f(x: torch.Tensor, y: torch.Tensor, m: torch.Tensor):\n" + textwrap.indent(body, "    ")
    findings = lint_source(source, select=("VL204",))
    assert len(findings) == 1 and findings[0][1] == "VL204"


@pytest.mark.parametrize(
    "body",
    [
        "x.expand(4, 3).fill_(1)\n",
        "x.expand(4, 3).zero_()\n",
        "torch.nn.init.zeros_(x.expand(4, 3))\n",
        "x.expand(4, 3).clone().add_(1)\n",
        "x.expand(4, 3).requires_grad_()\n",
        "e = x.expand(4, 3)\nz = e + 1\nz.add_(1)\n",
        "rows.expand(3).add_(1)\n",  # `rows` is not known to be a tensor: `expand` is a common method name
    ],
)
def test_vl204_leaves_uniform_fills_and_copies_alone(lint_source, body):
    source = "import torch\n\n\ndef f(x: torch.Tensor, rows):\n" + textwrap.indent(body, "    ")
    assert lint_source(source, select=("VL204",)) == []


def test_vl204_message_says_what_happens(lint_source):
    source = "import torch\n\n\ndef f(x: torch.Tensor):\n    x.expand(4, 3).add_(1)\n"
    ((_, _, message),) = lint_source(source, select=("VL204",))
    assert message.startswith("`x.expand(4, 3).add_(…)` writes into a `.expand()` view: this raises")


# ---------------------------------------------------------------- VL205


@pytest.mark.parametrize(
    "line",
    [
        "x.index_copy(0, i, x)",
        "x.masked_fill(m, 0)",
        "x.scatter(0, i, x)",
        "x.clamp(0, 1)",
        "x.add(1)",
        "x.abs()",
        "torch.clamp(x, 0, 1)",
        "obj.index_add(0, i, x)",  # only tensors have index_add
        "self.cache.masked_fill(m, 0)",
    ],
)
def test_vl205_flags_discarded_result(lint_source, line):
    source = "import torch\n\n\ndef f(self, x: torch.Tensor, i, m, obj):\n    " + line + "\n"
    findings = lint_source(source, select=("VL205",))
    assert _rows(findings, "VL205") == [5]


@pytest.mark.parametrize(
    "line",
    [
        "y = x.index_copy(0, i, x)",
        "x.index_copy_(0, i, x)",
        "torch.add(x, 1, out=x)",
        "s.add(1)",  # a set
        "obj.add(1)",  # unknown receiver, generic name
        "obj.scatter(x)",  # comm groups have scatter too
        "dist.scatter(x, [x])",
        "self.masked_fill(m, 0)",
        "return x.add(1)",
    ],
)
def test_vl205_leaves_used_results_and_other_objects(lint_source, line):
    source = (
        "import torch\nimport torch.distributed as dist\n\n\ndef f(self, x: torch.Tensor, i, m, obj, s: set):\n    "
        + line + "\n"
    )
    assert lint_source(source, select=("VL205",)) == []


def test_vl205_reads_a_weight_replaced_by_an_unknown_object_as_that_object(lint_source):
    """litgpt's LoRA merge: `self.linear.weight` is replaced by a bitsandbytes `Params4bit`, whose `.cuda()` quantizes
    it in place; after the assignment it is no longer what a submodule's `.weight` is by its name. Before the
    assignment, and for a weight nothing replaced, the name still says it."""
    source = (
        "import torch\nimport bitsandbytes as bnb\n\n\n"
        "class LoRALinear(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.linear = torch.nn.Linear(4, 4)\n\n"
        "    def merge(self, lora_data, layer: torch.nn.Linear):\n"
        "        weight = self.linear.weight\n"
        "        self.linear.weight.cuda(weight.device)\n"
        "        self.linear.weight = bnb.nn.Params4bit(weight.data + lora_data, requires_grad=False)\n"
        "        self.linear.weight.cuda(weight.device)\n"
        "        layer.weight = bnb.nn.Params4bit(layer.weight.data, requires_grad=False)\n"
        "        layer.weight.cuda(weight.device)\n"
    )
    assert _rows(lint_source(source, select=("VL205",)), "VL205") == [12]


def test_vl205_not_under_pytest_raises(lint_source):
    source = (
        "import pytest\nimport torch\n\n\ndef test(x: torch.Tensor):\n"
        "    with pytest.raises(IndexError):\n        x.index_copy(0, torch.tensor([9]), x)\n"
    )
    assert lint_source(source, select=("VL205",)) == []


def test_vl205_same_named_method_defined_in_module(lint_source):
    source = "import torch\n\n\nclass C:\n    def index_add(self, v):\n        pass\n\n\ndef f(c):\n    c.index_add(1)\n"
    assert lint_source(source, select=("VL205",)) == []


def test_vl205_unsafe_fix_renames_the_method():
    source = "import torch\n\n\ndef f(x: torch.Tensor, i):\n    x.index_copy(0, i, x)\n"
    (diagnostic,) = lint_text(source, "snippet.py", Settings(select=("VL205",)))
    assert diagnostic.fix is not None and diagnostic.fix.applicability is Applicability.UNSAFE
    (edit,) = diagnostic.fix.edits
    assert edit.content == "index_copy_"
    assert (edit.start.row, edit.start.column, edit.end.column) == (5, 7, 17)


def test_a_loop_variable_over_tensors_rebound_and_dropped_is_a_lost_update():
    source = textwrap.dedent("""\
        import torch


        def clip(critic, c):
            for p in critic.parameters():
                p = p.clamp(-c, c)


        def read_after(model):
            total = 0
            for p in model.parameters():
                p = p.float()
                total += p.sum()
            return total


        def not_tensors(path):
            for line in open(path):
                line = line.strip()


        def nested(model, on):
            for p in model.parameters():
                if on:
                    p = p * 0


        def gather_shards(shards: torch.Tensor, out):
            for send_tensor in shards.unbind(0):
                out.append(send_tensor.sum())
                send_tensor = None  # allow mem deallocation (megatron's checkpoint gather)
    """)
    # `nested`: a rebind in an `if` block, read by nothing after it in the iteration, is lost too (accelerate PR #3985:
    # `if param.dtype != torch.float32: param = param.to(torch.float32)` left the model in bf16).
    assert [(row, code) for row, code in lint_both_paths(source) if code == "VL205"] == [(6, "VL205"), (25, "VL205")]


def test_a_write_into_a_conversion_a_module_would_also_have_is_of_a_tensor():
    source = textwrap.dedent("""\
        import torch
        import torch.nn.functional as F


        def scale(x):
            x.float().div_(255)


        def freeze(net):
            net.float().requires_grad_(False)


        def act(x: torch.Tensor):
            F.relu(x)
            F.relu(x, inplace=True)
    """)
    assert [(row, code) for row, code in lint_both_paths(source) if code in ("VL203", "VL205")] == [(6, "VL203"), (14, "VL205")]


def test_a_list_of_unknown_items_indexes_by_gathering():
    # `tok.convert_tokens_to_ids(toks)` of a class here returns a list comprehension of lookups: whatever its items
    # are, a list index gathers, so the write lands in a copy.
    source = textwrap.dedent("""
        import torch
        from torch import nn

        class Tok:
            def __init__(self, vocab):
                self.vocab = vocab

            def convert_tokens_to_ids(self, toks):
                return [self.vocab[t] for t in toks]

        def init_rows(w, ids):
            w[ids].copy_(torch.zeros(len(ids), w.size(1)))

        def resize(model: nn.Module, tok: Tok, toks):
            init_rows(model.embed.weight.data, tok.convert_tokens_to_ids(toks))
    """)
    assert [(row, code) for row, code in lint_both_paths(source) if code.startswith("VL2")] == [(13, "VL201")]


def test_a_tuple_of_slices_built_from_a_generator_is_a_basic_index():
    # `tuple(slice(0, s) for s in shape)` indexes dimension by dimension: a view, the write lands (sglang
    # qwen3_next.py's weight loader); the same built as a list comprehension of ints gathers.
    source = textwrap.dedent("""
        import torch

        def load(param: torch.Tensor, loaded_weight: torch.Tensor, order):
            slices = tuple(slice(0, s) for s in loaded_weight.shape)
            param.data[slices].copy_(loaded_weight)
            rows = [order[i] for i in range(len(order))]
            param.data[rows].copy_(loaded_weight)
    """)
    assert [(row, code) for row, code in lint_both_paths(source) if code.startswith("VL2")] == [(8, "VL201")]

