"""Property: on any mix of fixable and unfixable code, `--fix` gives valid Python, is idempotent,
and changes nothing but the fixed statements.

Second property, on real torch: a safe fix never changes what a program does (Ruff's rule).

For every rule with a fix (read from the registry), a seeded generator writes programs around the
rule's pattern: the tensor is rebound (`with … as`, walrus, `match … as`, `nonlocal`, loops, `try`,
branches), aliased, restrided in place (`t_()`, `transpose_()`, `set_()`, `.data =`), cast, or left
alone. Each program is a function; a batch of them is one module, linted and fixed in process
(`fix_text`, as `viewlint --fix` does) and run before and after with `exec`. Every function must
return the same values, dtypes and strides (or raise the same exception) after `--fix`.
Unsafe fixes are applied only with `--unsafe-fixes`, so plain `--fix` must leave their sites alone;
VL201's and VL307's unsafe rewrites change behaviour by design, but must never make a program raise.
"""

from __future__ import annotations

import ast
import random
import sys
from typing import Callable, Optional

import libcst as cst
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from viewlint.diagnostics import Applicability
from viewlint.file_fixes import engine_lint
from viewlint.fix import fix_text
from viewlint.registry import all_rules
from viewlint.settings import Settings

try:
    import torch
except ImportError:  # the first property needs no torch
    torch = None

HEADER = (
    "import torch\n"
    "buf = torch.zeros(8, 4)\n"
    "idx = torch.tensor([1, 2])\n"
    "v = torch.ones(2, 4)\n"
    "x = torch.zeros(4)\n"
    "i = 3\n"
)

# (line as written, line after --fix); the two are equal where VL201 offers no edit.
PATTERNS = [
    ("buf[idx].copy_(v)", "buf[idx] = v"),
    ("buf[[1, 2]].fill_(0.5)", "buf[[1, 2]] = 0.5"),
    ("buf[[3]].zero_()", "buf[[3]] = 0"),
    ("buf[idx].add_(v)", "buf[idx] += v"),
    ("buf[idx].div_(2)", "buf[idx] /= 2"),
    ("buf[[0]].fill_(1.0)  # keep me", "buf[[0]] = 1.0  # keep me"),
    ("buf[[2]].zero_(); buf[[4]].fill_(3)", "buf[[2]] = 0; buf[[4]] = 3"),
    # Flagged, but no exact rewrite exists: a hint only.
    ("buf[idx].add_(v, alpha=2)", None),
    ("buf[[1]].mul_(2).add_(1)", None),
    # Suppressed: never fixed.
    ("buf[[1]].zero_()  # noqa: VL201", None),
    # Look-alikes that write through (basic indexing) or do not write at all.
    ("x[i].fill_(1)", None),
    ("buf[1:3].zero_()", None),
    ("tmp = buf[[3]]", None),
    ("# buf[[3]].zero_() in a comment", None),
    ("s = 'buf[[3]].zero_()'", None),
    ("", None),
]
# A multi-line statement (at module level, so no block indentation is involved).
MULTILINE = ("buf[idx].copy_(torch.ones(\n    2, 4))", "buf[idx] = torch.ones(\n    2, 4)")

LINT = engine_lint(Settings(select=("VL201",)))
LINT_ALL = engine_lint(Settings(select=("ALL",)))


@st.composite
def snippets(draw: st.DrawFn) -> tuple[str, str]:
    """(source, the exact expected text after --fix)."""
    indexes = draw(st.lists(st.integers(0, len(PATTERNS)), min_size=1, max_size=14))
    indent = draw(st.booleans())
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    before, after = [HEADER.rstrip("\n")], [HEADER.rstrip("\n")]
    if indent:
        before.append("if True:")
        after.append("if True:")
        before.append("    pass")
        after.append("    pass")
    for n in indexes:
        if n == len(PATTERNS):
            if indent:  # keep the multi-line case at module level (see MULTILINE)
                continue
            line, fixed = MULTILINE
        else:
            line, fixed = PATTERNS[n]
        prefix = "    " if indent and line else ""
        before.append(prefix + line)
        after.append(prefix + (fixed if fixed is not None else line))
    source = "\n".join(before) + "\n"
    expected = "\n".join(after) + "\n"
    return source.replace("\n", newline), expected.replace("\n", newline)


def _valid(text: str) -> bool:
    ast.parse(text)
    return cst.parse_module(text).code == text


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snippets())
def test_fix_is_exact_valid_and_idempotent(case: tuple[str, str]) -> None:
    source, expected = case
    outcome = fix_text(source, LINT, "snippet.py", unsafe_fixes=True)  # VL201's fix is unsafe
    # Exactly the fixable statements change: every other line (comments, blanks, look-alikes,
    # suppressed and hint-only findings, line endings) is byte-identical.
    assert outcome.text == expected
    assert _valid(outcome.text)
    again = fix_text(outcome.text, LINT, "snippet.py", unsafe_fixes=True)
    assert again.text == outcome.text and not again.fixed
    assert fix_text(source, LINT, "snippet.py").text == source  # plain --fix leaves VL201 sites alone


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snippets())
def test_fix_with_every_rule_and_unsafe_fixes_stays_valid_and_idempotent(case: tuple[str, str]) -> None:
    source, _ = case
    outcome = fix_text(source, LINT_ALL, "snippet.py", unsafe_fixes=True)
    assert _valid(outcome.text)
    if not outcome.fixed:
        assert outcome.text == source  # nothing changes without a fix
    again = fix_text(outcome.text, LINT_ALL, "snippet.py", unsafe_fixes=True)
    assert again.text == outcome.text


# ---------------------------------------------------------------------------- safe fixes on real torch
PROGRAMS_PER_RULE = 500
BATCH = 25  # functions per module
SEED = 20261203
PROGRAM_HEADER = "import contextlib\nimport io\nimport torch\n\n_CACHE = {}\n\n"


# ---------------------------------------------------------------------------- building blocks

# Ways to make `x`: contiguous, or not.
MAKERS = [
    "torch.arange(6.0).reshape(2, 3)", "torch.zeros(2, 3)", "torch.ones(3, 2) * 2", "torch.arange(6.0).reshape(2, 3).t()",
    "torch.cat([torch.zeros(1, 3), torch.ones(1, 3)])", "torch.arange(6.0).reshape(2, 3)[[1, 0]]",
    "torch.arange(12.0).reshape(2, 2, 3).permute(2, 0, 1)", "torch.zeros(2, 3).contiguous()",
]
# Statements that may rebind, alias or restride `x` (`{flag}` is a parameter: both paths run).
CHANGES = [
    "x = x.t()", "x = x + 1", "x.t_()", "x.transpose_(0, 1)", "x.unsqueeze_(0)", "x.squeeze_()",
    "y = x\ny.t_()", "with contextlib.nullcontext(x.t()) as x:\n    pass", "if (x := x.t()) is not None:\n    pass",
    "if flag:\n    x = x.t()", "for _ in range(2):\n    x = x.t()", "try:\n    x = x.t()\n    int('a')\nexcept ValueError:\n    pass",
    "x.data = torch.zeros(3, 2).t()", "x.set_(torch.zeros(3, 2).t())", "x = torch.cat([x, x])", "x = x[[0]]",
    "x = x.contiguous()", "def _g():\n    nonlocal x\n    x = x.t()\n_g()", "x = x.float()", "x = x.clone()",
    "x.as_strided_((2, 2), (1, 2))", "x = x.reshape(-1)", "x = x.transpose(0, -1)",
]
if sys.version_info >= (3, 10):
    CHANGES.append("match flag:\n    case True as x:\n        x = torch.zeros(3, 2).t()\n    case _:\n        pass")


def _indent(block: str, by: str = "    ") -> str:
    return "\n".join(by + line for line in block.splitlines())


def _function(name: str, body: list[str]) -> str:
    return f"def {name}(flag):\n" + "\n".join(_indent(part) for part in body) + "\n"


def _changes(rng: random.Random, most: int = 3) -> list[str]:
    return [rng.choice(CHANGES) for _ in range(rng.randint(0, most))]


# ---------------------------------------------------------------------------- one generator per rule


def gen_vl301(rng: random.Random, name: str) -> str:
    body = [f"x = {rng.choice(MAKERS)}", *_changes(rng)]
    use = rng.choice([
        "r = x.contiguous()\nreturn r.view(-1), r",
        "r = x.clone().contiguous()\nreturn r.view(-1), r",
        "out = []\nfor _ in range(2):\n    out.append(x.contiguous().view(-1))\n    x = x.t()\nreturn out",
        "with torch.no_grad():\n    r = x.contiguous()\nreturn r.view(-1)",
        "y = torch.zeros(2, 3)\n" + "\n".join(_changes(rng, 2)) + "\nreturn y.contiguous().view(-1), x.contiguous()",
        "return torch.cat([x, x]).contiguous().view(-1)",
    ])
    return _function(name, body + [use])


def gen_vl305(rng: random.Random, name: str) -> str:
    source = rng.choice(["torch.arange(4, dtype=torch.float64)", "torch.zeros(4)", "torch.ones(2, 2, dtype=torch.float64)",
                         "torch.arange(6)", "torch.randint(0, 5, (4,), generator=torch.Generator().manual_seed(1))"])
    device = rng.choice(["dev = torch.zeros(1).device", "dev = torch.float64", "dev = torch.device('cpu')",
                         "dev = torch.zeros(1).device\nif flag:\n    dev = torch.float64", "dev = torch.ones(1).dtype",
                         "dev = (torch.zeros(1).device if flag else torch.float64)"])
    cast = rng.choice([".half()", ".float()", ".to(torch.bfloat16)", ".to(dtype=torch.float16)", ".int()", ".to(torch.int32)"])
    move = rng.choice([".to(dev)", ".to(device=dev)", ".to(torch.zeros(1).device)"])
    return _function(name, [f"x = {rng.choice(MAKERS)}", device, *_changes(rng, 1), f"r = {source}{move}{cast}",
                            "return r, r.dtype, r.device, x"])


def gen_vl201(rng: random.Random, name: str) -> str:
    buffer = rng.choice(["torch.zeros(4, 3)", "torch.zeros(4, 3, dtype=torch.float64)", "torch.zeros(4, 3, dtype=torch.int64)",
                         "torch.nn.Parameter(torch.zeros(4, 3))", "torch.zeros(4, 3, requires_grad=True)",
                         "torch.nn.Linear(3, 4).weight", "torch.zeros(4, 3).half()"])
    value = rng.choice(["torch.ones(2, 3)", "torch.ones(2, 3, dtype=torch.float64)", "torch.ones(2, 3).half()",
                        "torch.arange(3)", "torch.ones(2, 3, dtype=torch.int64)", "torch.full((2, 3), 2.0)"])
    index = rng.choice(["torch.tensor([1, 2])", "[1, 2]", "torch.tensor([True, False, True, False])"])
    write = rng.choice(["buf[idx].copy_(v)", "buf[idx].fill_(2.0)", "buf[idx].zero_()", "buf[idx].add_(v)",
                        "buf[idx].mul_(2)", "buf[idx].fill_(v[0, 0])", "buf[idx].div_(2)", "buf[idx].sub_(v)"])
    loop = rng.random() < 0.2
    body = [f"buf = {buffer}", f"idx = {index}", f"v = {value}"]
    if loop:
        body += ["m = torch.nn.Linear(3, 4)", "for buf in m.parameters():\n    if buf.dim() == 2:\n        " + write]
    else:
        body.append(write)
    return _function(name, body + ["return buf.detach().clone()"])


def gen_vl101(rng: random.Random, name: str) -> str:
    stored = rng.choice(["big[:2]", "big.split(2)[0]", "big[0]", "big.chunk(2)[1]"])
    return _function(name, [f"x = {rng.choice(MAKERS)}", *_changes(rng, 1), "big = x", f"_CACHE[flag] = {stored}", "return _CACHE[flag]"])


def gen_vl102(rng: random.Random, name: str) -> str:
    op = rng.choice([".contiguous()", ".detach()", ".reshape(-1)", ".to(torch.float32)"])
    return _function(name, [f"x = {rng.choice(MAKERS)}", *_changes(rng, 1), "big = x", f"_CACHE[flag] = big[:1]{op}", "return _CACHE[flag]"])


def gen_vl103(rng: random.Random, name: str) -> str:
    saved = rng.choice(["big[:1]", "big.split(1)[0]", "[big[:1], big[1:]]"])
    return _function(name, [f"x = {rng.choice(MAKERS)}", *_changes(rng, 1), "big = x", "f = io.BytesIO()", f"torch.save({saved}, f)",
                            "f.seek(0)", "return torch.load(f)"])


def gen_vl205(rng: random.Random, name: str) -> str:
    call = rng.choice(["x.add(1)", "x.mul(2)", "x.masked_fill(x > 1, 0.0)", "x.index_fill(0, torch.tensor([0]), 5.0)", "x.clamp(0, 1)"])
    return _function(name, [f"x = {rng.choice(MAKERS)}", *_changes(rng, 1), call, "return x"])


def gen_vl304(rng: random.Random, name: str) -> str:
    update = rng.choice(["buf = buf.index_copy(0, idx, src)", "buf = buf.index_put((idx,), src)", "buf = buf.masked_fill(buf > 0, 1.0)",
                         "buf = buf.scatter(0, idx.unsqueeze(1).expand(-1, 3), src)"])
    return _function(name, [f"x = {rng.choice(MAKERS)}", *_changes(rng, 1), "buf = torch.zeros(4, 3)", "buf += x.sum()",
                            "idx = torch.tensor([1, 2])", "src = torch.ones(2, 3)",
                            "for _ in range(2):\n    " + update, "return buf"])


def gen_vl306(rng: random.Random, name: str) -> str:
    sliced = rng.choice(["x[:, 1:]", "x[..., :-1]", "x.transpose(0, 1)", "x[1:]"])
    use = rng.choice(["return y.sum(), y.shape", "return (y * 2).sum()", "return y.view(-1)", "z = y + 1\nreturn z"])
    return _function(name, [f"x = {rng.choice(MAKERS)}", *_changes(rng, 1), f"y = {sliced}.contiguous()", use])


def gen_vl307(rng: random.Random, name: str) -> str:
    keywords = rng.choice(["", ", dtype=torch.float64", ", device='cpu'", ", dtype=torch.float32, device=x.device",
                           ", requires_grad=True", ", dtype=torch.float64, pin_memory=False"])
    use = rng.choice(["return r, r.dtype, x", "r.add_(1)\nreturn r, x", "return r.sum(), r.shape"])
    return _function(name, ["import warnings", "warnings.simplefilter('ignore')", f"x = {rng.choice(MAKERS)}",
                            *_changes(rng, 1), f"r = torch.tensor(x{keywords})", use])


def gen_vl308(rng: random.Random, name: str) -> str:
    device = rng.choice(["dev = torch.zeros(1).device", "dev = torch.device('cpu')", "dev = 'cpu'", "dev = torch.float64",
                         "dev = torch.zeros(1, dtype=torch.float64)"])
    chain = rng.choice(["x.clone().float()", "x.clone().half()", "x.clone().double()", "x.detach().clone().to(dev)",
                        "x.clone().to(torch.float16)", "x.clone().to(dtype=torch.float64)", "x.clone().cpu()",
                        "x.float().clone()", "x.to(dev).clone()", "x.cpu().clone()", "x.to(torch.int64).clone()",
                        "x.clone().to(dev, non_blocking=False)", "x[0].clone().long()", "x.t().clone().to(dev)"])
    use = rng.choice(["return r, r.dtype, r.device, x", "r.add_(1)\nreturn r, x", "return r.is_contiguous(), r.stride(), x"])
    return _function(name, [f"x = {rng.choice(MAKERS)}", device, *_changes(rng, 1), f"r = {chain}", use])


GENERATORS: dict[str, Callable[[random.Random, str], str]] = {
    "VL101": gen_vl101, "VL102": gen_vl102, "VL103": gen_vl103, "VL201": gen_vl201, "VL205": gen_vl205,
    "VL301": gen_vl301, "VL304": gen_vl304, "VL305": gen_vl305, "VL306": gen_vl306,
    "VL307": gen_vl307, "VL308": gen_vl308,
}


# ---------------------------------------------------------------------------- running


def describe(value: object) -> object:
    """What a result is, as `==` can compare it: values, dtype, shape and strides of tensors."""
    if isinstance(value, torch.Tensor):
        # The stride of a size-1 dimension is never read (PyTorch's `is_contiguous` ignores it): `.contiguous()`
        # of a clone keeps whatever it was, `clone(memory_format=torch.contiguous_format)` writes the canonical one.
        strides = tuple(st if n > 1 else None for n, st in zip(value.shape, value.stride()))
        return ("tensor", str(value.dtype), tuple(value.shape), strides, str(value.device), value.detach().tolist())
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(describe(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((repr(k), describe(v)) for k, v in value.items())))
    return repr(value)


def run_module(source: str, names: list[str]) -> dict[str, object]:
    namespace: dict[str, object] = {"__name__": "generated"}
    exec(compile(source, "<generated>", "exec"), namespace)
    results: dict[str, object] = {}
    for name in names:
        for flag in (False, True):
            try:
                results[f"{name}({flag})"] = describe(namespace[name](flag))  # type: ignore[operator]
            except Exception as error:
                results[f"{name}({flag})"] = f"raised {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    return results


def batches(code: str) -> list[tuple[str, list[str]]]:
    rng = random.Random(f"{SEED}-{code}")
    made = []
    for start in range(0, PROGRAMS_PER_RULE, BATCH):
        names = [f"case_{i}" for i in range(start, min(start + BATCH, PROGRAMS_PER_RULE))]
        made.append((PROGRAM_HEADER + "\n\n".join(GENERATORS[code](rng, name) for name in names), names))
    return made


def fixable_rules() -> list[str]:
    return [code for code, rule in all_rules().items() if rule.fix_applicability in (Applicability.SAFE, Applicability.UNSAFE)]


def test_every_rule_with_a_fix_has_a_generator() -> None:
    assert sorted(GENERATORS) == sorted(fixable_rules())


@pytest.mark.parametrize("code", sorted(GENERATORS))
def test_safe_fixes_never_change_behaviour(code: str) -> None:
    if torch is None:
        pytest.skip("needs torch")
    lint = engine_lint(Settings(select=(code,)))
    safe_rule = all_rules()[code].fix_applicability is Applicability.SAFE
    findings = safe_applied = 0
    for source, names in batches(code):
        outcome = fix_text(source, lint, "generated.py")  # what `viewlint --fix` writes
        findings += outcome.fixed[code] + sum(d.code == code for d in outcome.diagnostics)
        safe_applied += outcome.fixed[code]
        assert safe_rule or not outcome.fixed[code], f"plain --fix applied {code}'s unsafe fix"
        before: Optional[dict[str, object]] = None
        if outcome.text != source:
            before, after = run_module(source, names), run_module(outcome.text, names)
            changed = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
            assert not changed, f"a safe fix changed behaviour:\n{outcome.text}\n{changed}"
        if code in ("VL201", "VL307"):  # their unsafe rewrites change aliasing by design, but must never make a program raise
            unsafe = fix_text(source, lint, "generated.py", unsafe_fixes=True)
            before = before or run_module(source, names)
            after = run_module(unsafe.text, names)
            raised = {k: after[k] for k in before if str(after[k]).startswith("raised") and not str(before[k]).startswith("raised")}
            assert not raised, f"{code}'s rewrite made programs raise:\n{unsafe.text}\n{raised}"
    assert findings >= PROGRAMS_PER_RULE // 10, f"the generator hardly exercises {code}: {findings} findings"
    if safe_rule:
        assert safe_applied >= PROGRAMS_PER_RULE // 20, f"few safe fixes of {code} were exercised: {safe_applied}"
