"""Safe fixes are safe: each program runs on real torch before and after `--fix`, with the same result.

Regression tests for fixes that changed behaviour (issue 29; VL201's applicability, issue 28):
VL301 dropping `.contiguous()` from a tensor rebound or restrided where the analysis did not look,
VL201 rewriting writes that then raise (another dtype, a leaf that requires grad), VL305 reading a
dtype as a device, and fixes deleting comments inside the code they replace.
"""

from __future__ import annotations

import contextlib
import io
import sys
from typing import Optional

import pytest

from viewlint.diagnostics import Applicability
from viewlint.file_fixes import engine_lint
from viewlint.fix import fix_text
from viewlint.settings import Settings

torch = pytest.importorskip("torch")

LINT = engine_lint(Settings(select=("ALL",)))
LINT_UNPREFILTERED = engine_lint(Settings(select=("ALL",), prefilter=False))


def behaviour(source: str) -> str:
    """What the program prints, and the exception it ends with (if any), run in a fresh namespace."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(source, "<program>", "exec"), {"__name__": "__main__"})
    except Exception as error:  # the behaviour under test: a fix must not introduce one
        return f"{out.getvalue()}raised {type(error).__name__}"
    return out.getvalue()


def fixes(source: str, code: str, lint=LINT) -> list[Applicability]:
    """The applicability of each of `code`'s fixes that carries edits."""
    return [d.fix.applicability for d in lint(source, "program.py") if d.code == code and d.fix is not None and d.fix.edits]


# ---------------------------------------------------------------------------- VL301

# Each program is contiguous where it was made, and not any more at `.contiguous()`: the call is needed.
RESTRIDED = {
    "with-as": """
import contextlib
import torch
x = torch.zeros(2, 3)
with contextlib.nullcontext(x.t()) as x:
    pass
print(x.contiguous().view(-1))
""",
    "with-as in a function": """
import contextlib
import torch
def f():
    x = torch.zeros(2, 3)
    with contextlib.nullcontext(x.t()) as x:
        pass
    return x.contiguous().view(-1)
print(f())
""",
    "match-as": """
import torch
def f(s):
    x = torch.zeros(2, 3)
    match s:
        case torch.Tensor() as x:
            pass
    return x.contiguous().view(-1)
print(f(torch.zeros(2, 3).t()))
""",
    "walrus at module level": """
import torch
x = torch.zeros(2, 3)
if (x := x.t()) is not None:
    pass
print(x.contiguous().view(-1))
""",
    "walrus in a function": """
import torch
def f():
    x = torch.zeros(2, 3)
    if (x := x.t()) is not None:
        pass
    return x.contiguous().view(-1)
print(f())
""",
    "walrus receiver": """
import torch
def f():
    x = torch.zeros(2, 3)
    return (x := x.t()).contiguous().view(-1)
print(f())
""",
    "global": """
import torch
x = torch.zeros(2, 3)
def g():
    global x
    x = x.t()
g()
print(x.contiguous().view(-1))
""",
    "nonlocal": """
import torch
def outer():
    x = torch.zeros(2, 3)
    def g():
        nonlocal x
        x = x.t()
    g()
    return x.contiguous().view(-1)
print(outer())
""",
    "closure read after a rebinding": """
import torch
x = torch.zeros(2, 3)
def f():
    return x.contiguous()
x = x.t()
print(f().view(-1))
""",
    "t_()": """
import torch
x = torch.zeros(2, 3)
x.t_()
print(x.contiguous().view(-1))
""",
    "transpose_()": """
import torch
x = torch.zeros(2, 3)
x.transpose_(0, 1)
print(x.contiguous().view(-1))
""",
    "as_strided_()": """
import torch
x = torch.zeros(2, 3)
x.as_strided_((3, 2), (1, 3))
print(x.contiguous().view(-1))
""",
    "data =": """
import torch
x = torch.zeros(2, 3)
x.data = torch.zeros(3, 2).t()
print(x.contiguous().view(-1))
""",
    "set_()": """
import torch
x = torch.zeros(2, 3)
x.set_(torch.zeros(3, 2).t())
print(x.contiguous().view(-1))
""",
    "alias restrided": """
import torch
x = torch.zeros(2, 3)
y = x
y.t_()
print(x.contiguous().view(-1))
""",
    "restrided by a callee": """
import torch
def h(t):
    t.t_()
x = torch.zeros(2, 3)
h(x)
print(x.contiguous().view(-1))
""",
    "loop's next run": """
import torch
def f():
    x = torch.zeros(2, 3)
    for _ in range(2):
        print(x.contiguous().view(-1))
        x = x.t()
f()
""",
    "while loop's next run": """
import torch
def f():
    x = torch.zeros(2, 3)
    n = 0
    while n < 2:
        print(x.contiguous().view(-1))
        x = x.t()
        n += 1
f()
""",
    "handler after half a try body": """
import torch
def f():
    x = torch.zeros(2, 3)
    try:
        x = x.t()
        int("not a number")
        x = x.contiguous()
    except ValueError:
        print(x.contiguous().view(-1))
f()
""",
    "after a try whose body stopped": """
import torch
def f():
    x = torch.zeros(2, 3).t()
    try:
        x = torch.zeros(2, 3)
        int("not a number")
        x = x.t()
    except ValueError:
        pass
    print(x.contiguous().view(-1))
f()
""",
}


@pytest.mark.parametrize("lint", [LINT, LINT_UNPREFILTERED], ids=["prefilter", "no-prefilter"])
@pytest.mark.parametrize("name", sorted(RESTRIDED))
def test_vl301_offers_no_safe_fix_where_the_layout_may_have_changed(name: str, lint) -> None:
    if name.startswith("match") and sys.version_info < (3, 10):
        pytest.skip("`match` needs Python 3.10 to run")
    source = RESTRIDED[name].lstrip()
    assert "raised" not in behaviour(source)  # the program runs as written
    assert Applicability.SAFE not in fixes(source, "VL301", lint)
    fixed = fix_text(source, lint, "program.py").text
    assert behaviour(fixed) == behaviour(source)


def test_vl301_still_fixes_what_is_proven_and_the_fixed_program_behaves_the_same() -> None:
    source = (
        "import torch\n"
        "def f():\n"
        "    x = torch.zeros(2, 3)\n"
        "    x.unsqueeze_(0)\n"  # squeeze_/unsqueeze_ keep a contiguous tensor contiguous
        "    with torch.no_grad():\n"
        "        y = x.contiguous()\n"
        "    for _ in range(2):\n"
        "        z = torch.ones(3).contiguous()\n"
        "    return y.view(-1), z.view(-1)\n"
        "print(f())\n"
    )
    assert fixes(source, "VL301") == [Applicability.SAFE, Applicability.SAFE]
    fixed = fix_text(source, LINT, "program.py").text
    assert ".contiguous()" not in fixed
    assert behaviour(fixed) == behaviour(source) and "raised" not in behaviour(source)


def test_vl301_is_not_silenced_by_an_attribute_named_data() -> None:
    """`self.data = …` sets an attribute; only `tensor.data = …` restrides a tensor in place."""
    source = (
        "import torch\nclass Rows:\n    def __init__(self):\n        self.data = [1, 2]\n"
        "def f():\n    x = torch.zeros(2, 3)\n    return x.contiguous().view(-1)\nprint(f())\n"
    )
    assert fixes(source, "VL301") == [Applicability.SAFE]
    assert behaviour(fix_text(source, LINT, "program.py").text) == behaviour(source)


# ---------------------------------------------------------------------------- VL201


def test_vl201_fix_is_unsafe_and_plain_fix_leaves_the_site_alone() -> None:
    source = "import torch\nbuf = torch.zeros(4, 2)\nbuf[[1]].fill_(2.0)\nprint(buf.sum())\n"
    assert fixes(source, "VL201") == [Applicability.UNSAFE]
    assert fix_text(source, LINT, "program.py").text == source
    fixed = fix_text(source, LINT, "program.py", unsafe_fixes=True).text
    assert "buf[[1]] = 2.0" in fixed
    assert behaviour(source) == "tensor(0.)\n" and behaviour(fixed) == "tensor(4.)\n"  # the write lands: a change


# The rewrite `buf[idx] = v` would raise where the in-place call ran: no fix at all, even unsafe.
VL201_REFUSED = {
    "copy_ of another dtype": "buf = torch.zeros(8, 4)\nbuf[idx].copy_(torch.ones(2, 4, dtype=torch.float64))\n",
    "copy_ of a cast": "buf = torch.zeros(8, 4)\nv = torch.ones(2, 4).double()\nbuf[idx].copy_(v)\n",
    "fill_ with a tensor of another dtype": "buf = torch.zeros(8, 4)\nbuf[idx].fill_(torch.tensor(2, dtype=torch.int64))\n",
    "nn.Parameter": "buf = torch.nn.Parameter(torch.zeros(8, 4))\nbuf[idx].fill_(1.0)\n",
    "requires_grad=True": "buf = torch.zeros(8, 4, requires_grad=True)\nbuf[idx].zero_()\n",
    "parameters()": "m = torch.nn.Linear(4, 8)\nfor buf in m.parameters():\n    buf[idx].zero_()\n",
    "named_parameters()": "m = torch.nn.Linear(4, 8)\nfor _, buf in m.named_parameters():\n    buf[idx].add_(1.0)\n",
    "module attribute": "m = torch.nn.Linear(4, 8)\nm.weight[idx].copy_(torch.ones(2, 4))\n",
}


@pytest.mark.parametrize("name", sorted(VL201_REFUSED))
def test_vl201_refuses_a_rewrite_that_would_raise(name: str) -> None:
    source = "import torch\nidx = torch.tensor([1, 2])\n" + VL201_REFUSED[name] + "print('ran')\n"
    assert behaviour(source) == "ran\n"
    assert [d.code for d in LINT(source, "program.py")].count("VL201") == 1  # still reported
    assert fixes(source, "VL201") == []
    fixed = fix_text(source, LINT, "program.py", unsafe_fixes=True).text
    assert behaviour(fixed) == "ran\n"


def test_vl201_keeps_its_unsafe_fix_on_data_and_same_dtype() -> None:
    source = (
        "import torch\nidx = torch.tensor([1, 2])\np = torch.nn.Parameter(torch.zeros(8, 4))\n"
        "p.data[idx].zero_()\nbuf = torch.zeros(8, 4)\nbuf[idx].copy_(torch.ones(2, 4))\nprint(float(buf.sum()))\n"
    )
    assert fixes(source, "VL201") == [Applicability.UNSAFE, Applicability.UNSAFE]
    assert behaviour(fix_text(source, LINT, "program.py", unsafe_fixes=True).text) == "8.0\n"


# ---------------------------------------------------------------------------- VL305


def _vl305(body: str, signature: str = "") -> str:
    return f"import torch\ndef upload({signature}):\n{body}    return torch.randn(4).to(dev).half()\n"


def test_vl305_reads_no_dtype_as_a_device() -> None:
    source = _vl305("    dev = torch.float64\n", "dev=None") + "print(upload().dtype)\n"
    assert behaviour(source) == "torch.float16\n"
    assert fixes(source, "VL305") == []
    assert behaviour(fix_text(source, LINT, "program.py", unsafe_fixes=True).text) == "torch.float16\n"


def test_vl305_fix_is_unsafe_for_a_name_that_only_looks_like_a_device() -> None:
    assert fixes(_vl305("", "dev"), "VL305") == [Applicability.UNSAFE]
    assert fix_text(_vl305("", "dev"), LINT, "program.py").text == _vl305("", "dev")


@pytest.mark.parametrize("signature, body", [
    ("dev: torch.device", ""),
    ("", "    dev = torch.device('cuda')\n"),
    ("x", "    dev = x.device\n"),
    ("", "    dev = 'cuda:0'\n"),
])
def test_vl305_fix_is_safe_for_a_proven_device(signature: str, body: str) -> None:
    assert fixes(_vl305(body, signature), "VL305") == [Applicability.SAFE]


# ---------------------------------------------------------------------------- comments


def test_a_fix_that_would_delete_a_comment_is_a_hint_only() -> None:
    source = "import torch\ny = (torch.zeros(3)  # type: ignore[arg-type]\n     .contiguous())\nprint(y)\n"
    [finding] = [d for d in LINT(source, "program.py") if d.code == "VL301"]
    assert finding.fix is not None and not finding.fix.edits and "comment" in finding.fix.message
    for unsafe in (False, True):
        assert fix_text(source, LINT, "program.py", unsafe_fixes=unsafe).text == source


def test_a_fix_that_carries_the_comment_along_is_applied() -> None:
    source = "import torch\nbuf = torch.zeros(4)\nbuf[[1]].copy_(torch.ones(  # keep me\n    1))\nprint(buf)\n"
    fixed = fix_text(source, LINT, "program.py", unsafe_fixes=True).text
    assert fixed == "import torch\nbuf = torch.zeros(4)\nbuf[[1]] = torch.ones(  # keep me\n    1)\nprint(buf)\n"


def test_a_fix_keeps_a_trailing_comment_outside_the_edit() -> None:
    source = "import torch\ny = torch.zeros(3).contiguous()  # type: ignore[attr-defined]\n"
    assert fix_text(source, LINT, "program.py").text == "import torch\ny = torch.zeros(3)  # type: ignore[attr-defined]\n"


def _comment_scanner_examples() -> list[tuple[str, Optional[list[str]]]]:
    return [("a('#', \"#\")  # real", ["# real"]), ("'''# not\n'''  # yes", ["# yes"]), ("x", [])]


@pytest.mark.parametrize("code, expected", _comment_scanner_examples())
def test_comments_are_found_outside_strings(code: str, expected: list[str]) -> None:
    from viewlint.fix import comments_in

    assert comments_in(code) == expected


@pytest.mark.parametrize("name", ["with-as", "walrus at module level"])
def test_vl301_in_a_file_linted_piece_by_piece(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large file is parsed a run of statements at a time: the statements blanked there bind names too."""
    import viewlint.engine

    monkeypatch.setattr(viewlint.engine, "PIECE_BYTES", 1)
    source = RESTRIDED[name].lstrip()
    assert Applicability.SAFE not in fixes(source, "VL301", engine_lint(Settings(select=("ALL",))))
