"""Hot or cold by a function's own evidence, and step loops, are read once, off `ast` (`hotness.own_heat`,
`CallGraph.step_loop_reason`): the call graph, the prefilter and the walker all ask them. The walker reaches them
through each libcst node's `ast` twin (`viewlint.analysis.twins`)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from conftest import lint_snippet as _lint

from viewlint.analysis import twins
from viewlint.analysis.callgraph import callgraph_of
from viewlint.analysis.contexts import ContextStack
from viewlint.analysis.hotness import own_heat
from viewlint.analysis.module_index import build_index_from_ast

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


# ------------------------------------------------------------------ the twins
TREE = """
    import torch

    @torch.compile
    def step(x):
        for i in range(3):
            x = x + i
        return x

    class Outer:
        def method(self, xs):
            while xs:
                xs.pop()
            else:
                pass

            def inner(y):
                return y

            try:
                pass
            except ValueError:
                for _ in range(2):
                    pass
            return inner

    if __name__ == "__main__":
        for j in range(2):
            step(torch.ones(1))
"""


def _pairs(source: str, rows=None) -> list[tuple[str, str]]:
    text = textwrap.dedent(source).lstrip("\n")
    module = cst.parse_module(text)
    tree = ast.parse(text)
    memo: dict = {}
    twins.register(memo, module, tree, rows)
    found = []

    class Collect(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.For, cst.While, cst.If)):
                other = twins.twin(memo, node)
                found.append((type(node).__name__, type(other).__name__ if other is not None else "-"))
                if other is not None and hasattr(other, "name"):
                    assert other.name == node.name.value  # type: ignore[attr-defined]
            return True

    module.visit(Collect())
    return found


def test_every_function_class_and_loop_has_its_ast_twin():
    assert _pairs(TREE) == [("FunctionDef", "FunctionDef"), ("For", "For"), ("ClassDef", "ClassDef"),
                            ("FunctionDef", "FunctionDef"), ("While", "While"), ("FunctionDef", "FunctionDef"),
                            ("For", "For"), ("If", "If"), ("For", "For")]


def test_statements_the_prefilter_blanked_are_left_out_of_the_match_by_their_row():
    text = textwrap.dedent(TREE).lstrip("\n")
    kept = bytearray(b"\x01" * (text.count("\n") + 2))
    for row in range(3, 8):  # `@torch.compile def step(...)`, blanked: the walked text holds the rest only
        kept[row] = 0
    lines = text.split("\n")
    reduced = "\n".join("" if kept[n] == 0 else line for n, line in enumerate(lines, start=1))
    module = cst.parse_module(reduced)
    memo: dict = {}
    twins.register(memo, module, ast.parse(text), kept)
    outer = next(s for s in module.body if isinstance(s, cst.ClassDef))
    found = twins.twin(memo, outer)
    assert isinstance(found, ast.ClassDef) and found.name == "Outer"


def test_a_tree_that_does_not_agree_gets_no_twins():
    module = cst.parse_module("def f():\n    pass\n")
    memo: dict = {}
    twins.register(memo, module, ast.parse("def g():\n    pass\n"))
    assert twins.twin(memo, module.body[0]) is None


def test_an_if_tests_operands_are_paired_with_the_ast_parsing_them_gives():
    # The cold-guard readings ask of each operand of `and`/`or`: the pairs must be what parsing its text would give.
    text = ("if a and b.c and (d or not e(f)) or g == 1:\n    pass\n"
            "if (x and y) and z:\n    pass\n"
            "if not flag:\n    pass\n")
    module, tree = cst.parse_module(text), ast.parse(text)
    seen = 0
    for statement, own in zip(module.body, tree.body):
        for operand, parsed in twins.test_pairs(statement.test, own.test):
            alone = ast.parse("(" + module.code_for_node(operand) + ")", mode="eval").body
            assert ast.dump(parsed) == ast.dump(alone)
            seen += 1
    # The first test, its `and` chain, a, b.c, (d or ...), d, not e(f), g == 1; the second, (x and y), x, y, z; `not flag`.
    assert seen == 14
    assert twins.test_pairs(module.body[0].test, tree.body[2].test) == []  # not the same kind of expression: nothing


@pytest.mark.parametrize("prefilter", [True, False])
def test_the_walker_finds_the_twin_of_every_function_and_loop_of_the_fixtures(monkeypatch, prefilter):
    from viewlint.engine import lint_text
    from viewlint.settings import Settings

    entered: list[tuple[str, bool]] = []
    enter_function, enter_loop = ContextStack.enter_function, ContextStack.enter_loop

    def function(self, node):
        entered.append((node.name.value, self.ast_of(node) is not None))
        return enter_function(self, node)

    def loop(self, node):
        entered.append(("loop", self.ast_of(node) is not None))
        return enter_loop(self, node)

    monkeypatch.setattr(ContextStack, "enter_function", function)
    monkeypatch.setattr(ContextStack, "enter_loop", loop)
    paths = sorted(FIXTURES.rglob("*.py"))
    assert len(paths) > 50
    for path in paths:
        lint_text(path.read_text(encoding="utf-8"), str(path), Settings(select=("ALL",), prefilter=prefilter))
    missing = [name for name, found in entered if not found]
    assert len(entered) > 500 and missing == []


# ------------------------------------------------------------------ one reading for all three consumers
HEATS = """
    import os
    import functools
    import torch

    DEBUG = os.environ.get("MYLIB_DEBUG")


    def dump(x):
        if not DEBUG:
            return
        print(x.sum().item())


    class Scorer:
        def __call__(self, logits: "torch.Tensor"):
            return logits


    class Collator:
        def __call__(self, rows):
            return rows


    class Block(torch.nn.Module):
        def forward(self, x):
            dump(x)
            return x

        def load_weights(self, path):
            return path

        @functools.lru_cache
        def table(self, n: int):
            return n


    def make():
        class Head(torch.nn.Module):
            def forward(self, x):
                return x
        return Head()
"""


def test_own_heat_is_one_reading_of_names_kinds_annotations_switches_and_caches():
    text = textwrap.dedent(HEATS).lstrip("\n")
    tree = ast.parse(text)
    index = build_index_from_ast(tree, text)
    graph = callgraph_of(index)
    classes = {c.name: c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)}
    functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}

    def method(owner: str, name: str) -> ast.AST:
        return next(m for m in classes[owner].body if isinstance(m, ast.FunctionDef) and m.name == name)

    assert own_heat(index, None, functions["dump"], (), graph) is False  # its body runs behind a debug switch
    assert own_heat(index, "Scorer", method("Scorer", "__call__"), (), graph) is True  # given a tensor
    assert own_heat(index, "Collator", method("Collator", "__call__"), (), graph) is None  # a collator's
    assert own_heat(index, "Block", method("Block", "forward"), (), graph) is True
    assert own_heat(index, "Block", method("Block", "load_weights"), (), graph) is False
    assert own_heat(index, "Block", method("Block", "load_weights"), ("Block.load_weights",), graph) is True
    assert own_heat(index, "Block", method("Block", "table"), (), graph) is False  # once per key (an int)
    assert own_heat(index, "Head", method("Head", "forward"), (), graph) is True
    assert own_heat(index, None, functions["make"], (), graph) is None


NESTED_MODULE = """
    import torch


    def make():
        class Head(torch.nn.Module):
            def forward(self, x: torch.Tensor):
                return x.sum().item()
        return Head()


    class Scorer:
        def __call__(self, logits: "torch.Tensor"):
            return logits.max().item()
"""


def test_a_module_class_defined_in_a_function_and_a_string_annotated_call_are_hot_on_both_paths():
    # The prefilter asks the same reading as the walker, with the class of a nested class's methods: neither
    # segment is blanked (`lint_snippet` asserts both paths agree).
    found = _lint(NESTED_MODULE)
    assert (7, "VL401") in found and (13, "VL401") in found


def test_a_function_whose_body_runs_behind_a_debug_switch_is_cold_for_the_walker_and_the_call_graph():
    from viewlint.analysis.callgraph import hot_reasons

    # `dump` runs on every forward, but its body only when debugging: `print(x.sum().item())` is no finding.
    assert [f for f in _lint(HEATS) if f[1].startswith("VL4")] == []
    text = textwrap.dedent(HEATS).lstrip("\n")
    index = build_index_from_ast(ast.parse(text), text)
    assert not any(key.name == "dump" for key in hot_reasons(callgraph_of(index)))


TOP_LEVEL_STEP = """
    import torch

    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


    def train_step(batch):
        loss = model(batch).sum()
        loss.backward()
        optimizer.step()
        return loss


    for batch in [torch.randn(2, 4) for _ in range(3)]:
        loss = train_step(batch)
        print(loss.item())
"""


def test_a_loop_at_the_top_of_a_script_that_calls_a_step_function_is_a_step_loop_for_every_consumer():
    text = textwrap.dedent(TOP_LEVEL_STEP).lstrip("\n")
    tree = ast.parse(text)
    index = build_index_from_ast(tree, text)
    loop = next(s for s in tree.body if isinstance(s, ast.For))
    assert "train_step" in (callgraph_of(index).step_loop_reason(loop) or "")
    assert (16, "VL401") in _lint(TOP_LEVEL_STEP)


CUTE = """
    import cutlass.cute as cute
    import torch


    class RowNorm:
        @cute.kernel
        def kernel(self, mX: cute.Tensor, shape):
            row = mX[(0, None), None][0]
            if row < shape[0]:
                pass

        def __call__(self, mX: cute.Tensor, shape):
            self.kernel(mX, shape)


    class Scaler:
        def __call__(self, x: torch.Tensor):
            self.check(x)

        def check(self, x):
            if x.abs().max() > 1:
                raise ValueError("too large")
"""


def test_a_kernel_language_and_its_tensors_are_not_eager_pytorch():
    # A CuTe DSL tensor is not a torch tensor: `__call__` given one is no hot path; a `@cute.kernel` (or `@triton.jit`)
    # body compiles to one device kernel, cold whatever calls it. A torch-annotated `__call__` stays hot, and the
    # methods it calls with it.
    text = textwrap.dedent(CUTE).lstrip("\n")
    tree = ast.parse(text)
    index = build_index_from_ast(tree, text)
    graph = callgraph_of(index)
    methods = {(c.name, m.name): m for c in tree.body if isinstance(c, ast.ClassDef) for m in c.body
               if isinstance(m, ast.FunctionDef)}
    assert own_heat(index, "RowNorm", methods[("RowNorm", "kernel")], (), graph) is False
    assert own_heat(index, "RowNorm", methods[("RowNorm", "__call__")], (), graph) is None
    assert own_heat(index, "Scaler", methods[("Scaler", "__call__")], (), graph) is True
    assert _lint(CUTE) == [(21, "VL403")]


PREPARED = """
    import torch


    class Biaser:
        def __init__(self, biases):
            self.biases = biases
            self.prepared = False

        def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor):
            if not self.prepared:
                self._prepare(scores)
            return scores + self.bias

        def _prepare(self, scores):
            self.bias = torch.tensor(self.biases, device=scores.device)
            self.prepared = True
"""


def test_a_block_whose_flag_a_method_sets_runs_once_for_the_walker_and_the_call_graph():
    # transformers' `SequenceBiasLogitsProcessor`: `if not self.prepared_bias_variables: self._prepare_bias_variables(...)`
    # builds the bias tensors on the first call only. Without the method setting the flag, it would build them on
    # every decode step.
    assert _lint(PREPARED) == []
    assert _lint(PREPARED.replace("            self.prepared = True\n", "")) == [(15, "VL405")]


def test_the_scripts_entry_block_is_one_reading():
    from viewlint.analysis.callgraph import MAIN_BLOCK
    from viewlint.analysis.guards import main_guard
    from viewlint.verify.layout import runs_anything

    def test(source: str) -> ast.AST:
        return ast.parse(source, mode="eval").body

    assert main_guard(test('__name__ == "__main__"')) and main_guard(test('"__main__" == __name__'))
    assert main_guard(test('__name__ == "__main__" and torch.cuda.is_available()'))
    assert not main_guard(test('__name__ != "__main__"')) and not main_guard(test('__name__ == "__main__" or debug'))
    script = textwrap.dedent("""
        import torch

        if __name__ == "__main__" and torch.cuda.is_available():
            model = torch.nn.Linear(3, 1).cuda()
            for step in range(3):
                loss = model(torch.ones(2, 3, device="cuda")).sum()
                loss.backward()
                print(loss.item())
    """).lstrip("\n")
    index = build_index_from_ast(ast.parse(script), script)
    assert any(key.name == MAIN_BLOCK for key in callgraph_of(index).functions)  # its calls are call-site evidence
    assert runs_anything(script)  # `--verify` runs the file
    # A demo's training loop is not the library's hot path: silent there, a finding in a script's own loop.
    assert _lint(script) == []
    assert _lint(script.replace('__name__ == "__main__" and ', "")) == [(8, "VL401")]
