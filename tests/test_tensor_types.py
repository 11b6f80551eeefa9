"""One reading of the names a tensor is annotated with (`viewlint.analysis.tensor_types`): the walker's `Value` of an
annotation (libcst) and the call graph's and summaries' yes or no (`ast`) agree on every spelling of a name."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
import pytest

from viewlint.analysis.annotations import annotation_value
from viewlint.analysis.bindings import tensor_annotation
from viewlint.analysis.module_index import build_index_from_ast
from viewlint.analysis.values import Kind

IMPORTS = textwrap.dedent("""\
    import numpy as np
    import torch
    from torch import Tensor, nn
    import cutlass.cute as cute
    from jax import Array as JaxTensor
    from mylib import Tensor as MyTensor
    from torch import LongTensor as Ids
""")
INDEX = build_index_from_ast(ast.parse(IMPORTS), IMPORTS)


@pytest.mark.parametrize("spelling, tensor", [
    ("torch.Tensor", True),
    ("Tensor", True),
    ("torch.LongTensor", True),
    ("nn.Parameter", True),
    ('"torch.Tensor"', True),
    ("cute.Tensor", False),  # a CuTe DSL tensor
    ("JaxTensor", False),  # a JAX array imported under a tensor's name
    ("MyTensor", False),  # another library's class
    ("Ids", True),  # torch's, imported under another name
    ('"Ids"', True),  # and so in a string
    ("int", False),
    ("np.ndarray", False),  # an array, not a torch tensor
])
def test_both_trees_read_a_name_alike(spelling, tensor):
    value = annotation_value(cst.parse_expression(spelling), INDEX)
    assert (value.kind is Kind.TENSOR) is tensor
    assert tensor_annotation(ast.parse(spelling, mode="eval").body, arrays=False, index=INDEX) is tensor


@pytest.mark.parametrize("spelling", ["Optional[torch.Tensor]", "torch.Tensor | None", "list[Tensor]",
                                      'Optional["torch.LongTensor"]', "dict[str, torch.Tensor]"])
def test_a_tensor_inside_an_optional_a_union_or_a_container_is_found_in_both(spelling):
    value = annotation_value(cst.parse_expression(spelling), INDEX)
    assert value.is_tensor or any(e.is_tensor for e in value.elements)
    assert tensor_annotation(ast.parse(spelling, mode="eval").body, arrays=False, index=INDEX)


def test_arrays_count_only_where_asked():
    array = ast.parse("np.ndarray", mode="eval").body
    assert tensor_annotation(array, arrays=True, index=INDEX)
    assert not tensor_annotation(array, arrays=False, index=INDEX)
    assert annotation_value(cst.parse_expression("np.ndarray"), INDEX).kind is Kind.ARRAY


def test_a_cute_kernel_parameter_does_not_make_a_call_hot():
    # `__call__(self, x: cute.Tensor)` of a CuTe DSL kernel's launcher is not a torch module's call.
    from conftest import lint_both_paths

    source = textwrap.dedent("""\
        import cutlass.cute as cute


        class Launcher:
            def __call__(self, x: cute.Tensor, n):
                if x.any():
                    return x
    """)
    assert lint_both_paths(source) == []
    assert lint_both_paths(source.replace("x: cute.Tensor", "x: torch.Tensor").replace(
        "import cutlass.cute as cute", "import torch")) == [(6, "VL403")]
