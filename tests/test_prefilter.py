"""The fast path (ast features -> reduced source -> libcst) must never change what viewlint reports.

The fixture-by-fixture comparison lives in test_fixtures.py; here: the feature vocabulary,
the reduction itself, and the same comparison on a sample of the installed torch package.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import sys
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from conftest import fixture_files

from viewlint.analysis import bindings, features, nodes
from viewlint.analysis.callgraph import callgraph_of
from viewlint.analysis.elsewhere import walker as walk_elsewhere
from viewlint.analysis.module_index import build_index_from_ast
from viewlint.analysis.project import Project
from viewlint.analysis.summaries import ModuleSummaries
from viewlint.analysis.tensor_context import TensorContext
from viewlint.analysis.facts import Facts
from viewlint.analysis.walker import Walker
from viewlint.engine import lint_text, read_file
from viewlint.prefilter import reduce as reduce_text, reduce_source, rule_needs
from viewlint.registry import all_rules
from viewlint.settings import Settings


def found_in(source: str) -> features.Features:
    tree = ast.parse(textwrap.dedent(source))
    index = build_index_from_ast(tree, source)
    return features.collect(nodes.preorder(tree), features.RetentionContext(index))


@pytest.mark.parametrize(
    ("source", "present", "absent"),
    [
        ("buf[idx].copy_(v)", {"inplace-statement", "inplace-on-subscript", "inplace-on-name", "advanced-subscript"}, {"inplace-on-call"}),
        ("buf[:, 0].copy_(v)", {"inplace-statement", "inplace-on-name"}, {"inplace-on-subscript", "advanced-subscript"}),
        ("buf[..., None, -1].zero_()", {"inplace-statement"}, {"inplace-on-subscript", "advanced-subscript"}),
        ("x.float().add_(1).mul_(2)", {"inplace-on-call", "inplace-statement", "inplace-on-name"}, {"inplace-on-subscript"}),
        ("make().add_(1)", {"inplace-on-call"}, {"inplace-on-name"}),
        ("nn.init.zeros_(w[idx])", {"inplace-on-subscript", "inplace-call"}, set()),
        ("y = w.__init__(x)", set(), {"inplace-statement"}),
        ("x[idx][0] = 1", {"chained-subscript-store"}, set()),
        ("x[0][1] = 1", set(), {"chained-subscript-store"}),
        ("x[mask].T[0] += 1", {"chained-subscript-store"}, set()),
        ("x.add(1)", {"twin-statement"}, set()),
        ("y = x.add(1)", set(), {"twin-statement"}),
        ("cache = cache.index_copy(0, i, v)", {"update-assigned"}, set()),
        ("x.cuda().half()", {"conversion-chain"}, set()),
        ("x.to(d).to(torch.float16)", {"conversion-chain"}, set()),
        ("x.half().cuda()", set(), {"conversion-chain"}),
        ("w.t().contiguous()", {"transposed-contiguous"}, set()),
        ("w.T.contiguous()", {"transposed-contiguous"}, set()),
        ("w.contiguous()", set(), {"transposed-contiguous"}),
        ("x.to('cpu')", {"to-cpu"}, set()),
        ("x.to(device=torch.device('cpu'))", {"to-cpu"}, set()),
        ("x.to(device)", set(), {"to-cpu"}),
        ("x.numpy(force=True)", {"numpy-force"}, set()),
        ("a = b if t else c", {"truth-test"}, set()),
        ("[v for v in xs if v]", {"truth-test"}, set()),
        ("y = not x", {"truth-test"}, set()),
        ("y = x + 1", set(), {"truth-test"}),
        ("if x is None or k in d:\n    pass", set(), {"truth-test"}),
        ("if x is None or t.any():\n    pass", {"truth-test"}, set()),
        ("while not done:\n    pass", {"truth-test"}, set()),
        ("@functools.lru_cache(None)\ndef f(x): return x", {"cached-def"}, set()),
        # In-place writes into what may be a copy (VL203) or a gathered copy (VL201) ...
        ("x.float().add_(1)", {"inplace-on-maybe-copy"}, {"inplace-on-gather"}),
        ("x.reshape(-1)[0].zero_()", {"inplace-on-maybe-copy"}, set()),
        ("make().add_(1)", set(), {"inplace-on-maybe-copy", "inplace-on-gather"}),
        ("x.index_select(0, rows).add_(1)", {"inplace-on-gather"}, {"inplace-on-maybe-copy"}),
        ("flat = x.flatten()\nflat[:3] = 0", {"write-into-maybe-copy"}, set()),
        ("flat = x.reshape(-1)\nflat += 1", {"write-into-maybe-copy"}, set()),
        ("y = x.float()\nz = y[0]\nz.add_(1)", {"write-into-maybe-copy"}, set()),
        ("a, b = x.float().chunk(2)\na.zero_()", {"write-into-maybe-copy"}, set()),
        ("for i, row in enumerate(x.float()):\n    row.zero_()", {"write-into-maybe-copy"}, set()),
        ("rows = x[idx]\nrows.add_(1)", {"inplace-on-gathered-name"}, set()),
        ("picked = torch.gather(x, 1, idx)\npicked.view(-1).mul_(2)", {"inplace-on-gathered-name"}, set()),
        # ... and not into names made otherwise, or metadata and host values of a conversion.
        ("y = x.to(d)\nz = torch.zeros(3)\nz.add_(1)", set(), {"write-into-maybe-copy"}),
        ("y = x.float()\nshape = list(y.shape)\nshape[0] = 1", set(), {"write-into-maybe-copy"}),
        ("y = x.float()\nn = int(y.sum().item())\nn += 1", set(), {"write-into-maybe-copy"}),
        ("y = x.float()\nout = y.new_zeros(3)\nout[mask] = y", set(), {"write-into-maybe-copy"}),
        ("y = x.float()\nz = helper(y)\nz[0] = 1", set(), {"write-into-maybe-copy"}),
        # A subscript or augmented assignment into the conversion of an unnamed value (a Triton load): no name to
        # have meant the write for. An in-place method on it may still write into a dead copy.
        ("b = tl.load(p).to(tl.float32)\nb += 1\nc = helper(x).reshape(-1)\nc[0] = 1", set(), {"write-into-maybe-copy"}),
        ("b = tl.load(p).to(tl.float32)\nb.add_(1)", {"write-into-maybe-copy"}, set()),
        ("c = self.w.reshape(-1)\nc[0] = 1", {"write-into-maybe-copy"}, set()),
        ("def f(y):\n    z = x.float()\n    y[0] = 1", set(), {"write-into-maybe-copy"}),
        ("rows = x[idx]\nz = torch.zeros(3)\nz.add_(1)", set(), {"inplace-on-gathered-name"}),
    ],
)
def test_flags(source, present, absent):
    flags = found_in(source).flags
    assert present <= flags, f"missing {present - flags} in {sorted(flags)}"
    assert not (absent & flags), f"unexpected {absent & flags}"


def test_calls_and_attributes():
    found = found_in("y = torch.save(t.nbytes, f); z = x.contiguous(); sdpa(q, k, v)")
    assert {"save", "contiguous", "sdpa"} <= found.calls
    assert {"nbytes", "save", "contiguous"} <= found.attrs


@pytest.mark.parametrize(
    ("source", "retains"),
    [
        ("CACHE = {}\ndef put(k, t):\n    CACHE[k] = t", True),
        ("def put(k, t):\n    local = {}\n    local[k] = t", False),
        ("class C:\n    def __init__(self):\n        self.d = {}\n    def put(self, k, t):\n        self.d[k] = t", True),
        ("def f(pool, t):\n    pool.put(t)", True),  # named like a pool
        ("def f(items, t):\n    items.append(t)", False),  # a local or parameter list
        ("class C:\n    def f(self, t):\n        self.seen.append(t)", True),  # container-only method on self
    ],
)
def test_retention_flag(source, retains):
    assert ("retains" in found_in(source).flags) is retains


def tensor_flags(source: str) -> set[str]:
    source = textwrap.dedent(source)
    tree = ast.parse(source)
    index = build_index_from_ast(tree, source)
    context = TensorContext(index, ("seq_lens_cpu",))
    flags: set[str] = set()
    for statement in tree.body:  # the last top-level statement is the segment under test
        flags = features.collect(nodes.preorder(statement), features.RetentionContext(index), tensors=context).flags
    return flags & {"device-truth-test", "mask-subscript", "contiguous-of-contiguous", "retains-view", "cached-returns-view", "tensor-conversion-chain",
                    "tensor-scalar-read", "tensor-twin-statement", "strided-contiguous-assign", "write-into-maybe-copy",
                    "chained-subscript-store"}


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # `Optional[torch.Tensor]` is a tensor annotation too.
        ("def f(n: Optional[torch.Tensor]):\n    if n: pass", {"device-truth-test"}),
        # Truth tests of what the walker cannot know to be a tensor: plain or non-tensor parameters, unknown calls.
        ("def f(x, use_cache: bool, n: Optional[int]):\n    if x or use_cache or n: pass", set()),
        ("def f(x):\n    if isinstance(x, int) or len(x) == 0 or helper(x) or x.is_decode(): pass", set()),
        ("def f(a):\n    flag = a if a is not None else cfg.flag\n    assert flag, 'm'", set()),
        ("def f(self):\n    if self.training and not self.use_bias and x.shape[0] > 1: pass", set()),
        ("def f(a, b):\n    if a == b or a.dim() == 2: pass", set()),
        # Items of what is not known to hold tensors: counts, rows of unknown values, sizes, literals of plain values.
        ("def f(x):\n    for t in x:\n        assert t", set()),
        ("def f(x: torch.Tensor, n):\n    for i in range(n):\n        if i: pass", set()),
        ("def f(x: torch.Tensor, xs):\n    for i, (a, b) in enumerate(zip(xs, xs)):\n        if i or a: pass", set()),
        ("def f(x: torch.Tensor):\n    B, S = x.shape\n    rows, cols = 2, B\n    if B > 1 or cols or S != rows: pass", set()),
        ("def f(x: torch.Tensor, items):\n    for pair in zip(items, range(3)):\n        if pair: pass", set()),
        ("def f(x: torch.Tensor, pair):\n    a = (b, c) = pair\n    if b: pass", set()),
        # The walker binds in source order: an assignment made after a use (or around it) is not seen there ...
        ("def f(x):\n    x = x.contiguous()\n    y = x.contiguous()", {"contiguous-of-contiguous", "strided-contiguous-assign"}),
        ("def f(x):\n    y = x.contiguous()\n    x = x.contiguous()", {"strided-contiguous-assign"}),
        ("def f(x):\n    if x: pass\n    x = torch.ones(1)", set()),
        ("def f(x):\n    for i in range(3):\n        if x: pass\n        x = torch.ones(1)", set()),
        # ... nor a later loop or unpacking (they bind from the end of what they take from on) ...
        ("def f(xs):\n    for x in xs:\n        if x: pass\n    for x in torch.ones(2): pass", set()),
        ("def f(xs):\n    for x in torch.ones(2):\n        if x: pass", {"device-truth-test"}),
        ("def f(xs):\n    a, b = xs\n    if a: pass\n    a, b = torch.ones(2)", set()),
        ("def f(xs):\n    a, b = torch.ones(2)\n    if a: pass", {"device-truth-test"}),
        # ... but `:=`, comprehension targets and what the rest of the function does with a name are.
        ("def f(x):\n    if (y := torch.ones(1)) and y: pass", {"device-truth-test"}),
        ("def f():\n    return [1 if x else 0 for x in torch.ones(2)]", {"device-truth-test"}),
        ("def f():\n    return [1 if x else 0 for i, x in enumerate(torch.ones(2))]", {"device-truth-test"}),
        ("def f(x):\n    if x: pass\n    return x.masked_fill(x, 0)", {"device-truth-test"}),
        # A callable held in a parameter, a local name or an attribute the class assigns, applied to a tensor: the
        # walker reads a module's output (a tensor), unless its name asks a question.
        ("def f(x: torch.Tensor, fn):\n    if fn(x): pass", {"device-truth-test"}),
        ("class C:\n    def __init__(self, g):\n        self.gate = g\n    def f(self, x: torch.Tensor):\n"
         "        if self.gate(x): pass", {"device-truth-test"}),
        ("class C:\n    def __init__(self, g):\n        self.can_use = g\n    def f(self, x: torch.Tensor, is_ok):\n"
         "        if self.can_use(x) or is_ok(x) or self.gate(x) or fn(x) or len(x): pass", set()),
        ("def f(x, fn):\n    if fn(x): pass", set()),  # nothing known of `x`
        # A method's `self` is not what its callers pass; its other parameters are.
        ("class C:\n    def g(self):\n        self.f(1)\n    def f(self, n):\n        if self.ready(): pass", set()),
        ("class C:\n    def g(self):\n        self.f(torch.ones(1))\n    def f(self, n):\n        if n: pass", {"device-truth-test"}),
        # ... and of what it may know.
        ("def f(x: torch.Tensor):\n    if x: pass", {"device-truth-test"}),
        ("def f(x):\n    if torch.isnan(x).any(): pass", {"device-truth-test"}),
        ("def f(x):\n    y = x.float()\n    z = y\n    while z: pass", {"device-truth-test"}),
        ("def f(x: torch.Tensor):\n    for t in x:\n        assert t", {"device-truth-test"}),
        ("def f(xs, x: torch.Tensor):\n    for i, (a, t) in enumerate(zip(xs, x)):\n        assert t", {"device-truth-test"}),
        ("def f(x: torch.Tensor):\n    a, b = x\n    if b: pass", {"device-truth-test"}),
        ("def f(x):\n    a, b = x, torch.ones(1)\n    if b: pass", {"device-truth-test"}),
        ("def f(x):\n    for t in x:\n        if t.any(): pass", {"device-truth-test"}),  # used as a tensor
        ("def g():\n    f(torch.ones(2))\ndef f(x):\n    for t in x:\n        assert t", {"device-truth-test"}),
        ("def f(x):\n    return 1 if x.contiguous().sum() > 0 else 2", {"device-truth-test"}),
        ("def f(self, x):\n    self.m = torch.zeros(2)\n    if not (x and self.m == 0): pass", {"device-truth-test"}),
        ("def f(x):\n    if x[:, 0].all(): pass", {"device-truth-test"}),
        ("def f(x):\n    if Pair(x.t(), 1)[0]: pass", {"device-truth-test"}),
        ("def f(x: torch.Tensor):\n    return [y for y in x if y]", {"device-truth-test"}),
        ("def f(batch):\n    if batch.seq_lens_cpu.max() > 1: pass", {"device-truth-test"}),
        ("LIMIT = torch.tensor(3)\ndef f(x):\n    if LIMIT: pass", {"device-truth-test"}),
        ("LIMIT = 3\ndef f(x):\n    if LIMIT: pass", set()),
        ("def f(x):\n    x = x + 1\n    if x: pass", set()),  # a cycle adds nothing
        # Mask subscripts: receiver and index may both be tensors.
        ("def f(x, mask):\n    return x[mask]", set()),
        ("def f(x: torch.Tensor, i):\n    return x[i]", set()),
        ("def f(x: torch.Tensor):\n    return x[x > 0]", {"mask-subscript"}),
        ("def f(x):\n    m = x.t().isnan()\n    return x.t()[m]", {"mask-subscript"}),
        ("def f(x):\n    m = x.isnan()\n    return x.t()[m]", set()),  # `x` unknown: so is `x.isnan()`
        ("def f(self, x: torch.Tensor):\n    return self.weight[x != 0]", {"mask-subscript"}),
        # `.contiguous()` of what may be known contiguous (VL301) ...
        ("def f(x):\n    y = torch.empty(3)\n    return y.contiguous()", {"contiguous-of-contiguous"}),
        ("def f(x):\n    return x.t().clone().contiguous()", {"contiguous-of-contiguous"}),
        ("def f(x):\n    y = x.contiguous()\n    z = y.float() * 2\n    return z.contiguous()", {"contiguous-of-contiguous", "strided-contiguous-assign"}),
        ("def f(x: torch.Tensor, i):\n    return x[i].contiguous()", {"contiguous-of-contiguous"}),  # maybe a gather
        ("def f(x: torch.Tensor):\n    for y in x:\n        z = y.contiguous()", {"contiguous-of-contiguous", "strided-contiguous-assign"}),
        ("def f(x):\n    for y in x:\n        z = y.contiguous()", {"strided-contiguous-assign"}),  # rows of something unknown
        ("def f(a, b):\n    return (a @ b).contiguous()", {"contiguous-of-contiguous"}),
        # ... and not of views, parameters or unknown values.
        ("def f(x: torch.Tensor):\n    return x.contiguous(), x.transpose(1, 2).contiguous(), x[:, 0].contiguous()", set()),
        ("def f(self, x):\n    return self.weight.contiguous(), helper(x).contiguous(), x.view(-1).contiguous()", set()),
        ("def f(x):\n    y = torch.empty(3)\n    return y.contiguous(memory_format=torch.channels_last)", set()),
        ("def f(x):\n    y = torch.empty(3, 4)\n    return y[:, 1:].contiguous(), y[::2].contiguous()", set()),
        # Whole rows of a contiguous tensor are contiguous.
        ("def f(x):\n    y = torch.empty(3, 4)\n    return y[1:].contiguous()", {"contiguous-of-contiguous"}),
        ("def f(x):\n    y = torch.empty(3, 4)\n    parts = [y.contiguous()]\n    return parts[0].contiguous()", {"contiguous-of-contiguous"}),
        # Stores into long-lived places of what may be a partial view (VL101, VL102) ...
        ("_CACHE = {}\ndef f(k, x):\n    a, b = torch.split(x, 2)\n    _CACHE[k] = a", {"retains-view"}),
        ("_CACHE = {}\ndef f(k, x):\n    _CACHE[k] = x.narrow(0, 0, 1).contiguous()", {"retains-view"}),
        ("_CACHE = []\ndef f(x: torch.Tensor):\n    for row in x:\n        _CACHE.append(Entry(row))", {"retains-view"}),
        ("_CACHE = []\ndef f(x: torch.Tensor, keys):\n    for key, row in zip(keys, x):\n        _CACHE.append(row)", {"retains-view"}),
        ("_CACHE = []\ndef f(x):\n    for i, piece in enumerate(x.split(2)):\n        _CACHE.append(piece)", {"retains-view"}),
        # What the callers here pass (a tensor) is what an unannotated parameter may be.
        ("_CACHE = []\ndef g():\n    f(torch.ones(2, 2))\ndef f(x):\n    for row in x:\n        _CACHE.append(Entry(row))", {"retains-view"}),
        ("_CACHE = []\ndef f(x: torch.Tensor):\n    _CACHE.append(value=[x[:1]])", {"retains-view"}),
        ("def f(cache, x):\n    y = x.view(2, -1)\n    cache.put('k', y.real)", {"retains-view"}),
        # ... and not of owned or unknown values.
        ("_CACHE = {}\ndef f(k, x, y: torch.Tensor):\n    _CACHE[k] = x\n    _CACHE[k] = y.clone()\n    _CACHE[k] = y.t()", set()),
        ("_CACHE = {}\ndef f(k, x):\n    piece = x[0].clone()\n    _CACHE[k] = torch.zeros(2) + piece", set()),
        ("_CACHE = {}\ndef f(k, x):\n    _CACHE[k] = helper(x[0])", set()),
        ("_DONE = []\ndef f(queue: list[torch.Tensor], polls):\n    for i, (req, poll) in enumerate(zip(queue, polls)):\n"
         "        _DONE.append(req)", {"retains-view"}),
        ("class C:\n    def f(self, batch: torch.Tensor):\n        self.rows = batch[:2]\n        _CACHE.append(self.rows[0])",
         {"retains-view"}),
        ("@functools.cache\ndef f(n):\n    x = torch.ones(n, 4)\n    return x[:1]", {"cached-returns-view"}),
        # Double conversions (VL305) of a tensor a factory makes, not of other objects or of a named tensor (whose
        # dtype the rule does not read).
        ("def f(x):\n    return torch.arange(3).cuda().half()", {"tensor-conversion-chain"}),
        ("from torch import randn\ndef f(d):\n    return randn(3).to(d).to(torch.float16)", {"tensor-conversion-chain"}),
        ("def f(x):\n    y = torch.arange(3)\n    return y.cuda().half()", set()),
        ("def f(p):\n    return tl.load(p).to(tl.float32).to(tl.bfloat16)", set()),
        ("def f(self):\n    return self.model.cuda().half()", set()),
        # Truth tests of Python values a tensor gives (`x.dim()`), of flags of other objects.
        ("def f(x: torch.Tensor):\n    if x.dim() == 2 and x.size(0) > 1:\n        pass", set()),
        ("def f(x: torch.Tensor, items):\n    for c in items:\n        if c.decl.is_primary:\n            pass", set()),
        ("def f(x: torch.Tensor):\n    if (x.sum(dim=0) > 1).any():\n        pass", {"device-truth-test"}),
        # A count, a dict key, a part of what the object holds, what a cached function makes whole.
        ("class C:\n    def f(self, n):\n        _CACHE.append(self.ids[n:])", set()),
        ("@functools.cache\ndef f(n):\n    return torch.ones(n, 4)", set()),
        ("_DONE = []\ndef f(queue: list[torch.Tensor], polls):\n    for i, (req, poll) in enumerate(zip(queue, polls)):\n"
         "        _DONE.append(i)", set()),
        ("_SEEN = []\ndef f(tables: dict[str, torch.Tensor]):\n    for name, table in tables.items():\n        _SEEN.append(name)", set()),
        ("_REG = []\ndef f(mid, detectors):\n    for d in detectors:\n        _REG.append((mid, d))", set()),
        ("_CACHE = {}\ndef f(k, x):\n    _CACHE[k] = torch.empty((0,), device=x[0].device)", set()),
        ("_CACHE = {}\ndef f(k, x: torch.Tensor):\n    _CACHE[k] = torch.cat([x[:1], x[2:]])", set()),
        # Scalar reads (VL401) of what may be a tensor ...
        ("def f(x: torch.Tensor):\n    return int(x.sum())", {"tensor-scalar-read"}),
        ("def f(x):\n    n = x.max()\n    return n.item()", {"tensor-scalar-read"}),  # `.item()`: only tensors have it
        ("def f(x):\n    y = torch.arange(3)\n    return y.tolist(), float(y[0])", {"tensor-scalar-read"}),
        # ... and not of plain values.
        ("def f(cfg, n):\n    return int(cfg.heads), float(n), bool(len(n)), int('3')", set()),
        # Discarded out-of-place results (VL205) of what may be a tensor ...
        ("def f(x: torch.Tensor):\n    x.add(1)", {"tensor-twin-statement"}),
        ("import torch\ndef f(x):\n    torch.clamp(x, 0, 1)", {"tensor-twin-statement"}),
        ("def f(x):\n    x.index_add(0, i, v)", {"tensor-twin-statement"}),  # only tensors have it
        # ... and not `set.add` or a queue's `put`.
        ("def f(seen, q, k):\n    seen.add(k)\n    q.put(k)", set()),
        # The strided `.contiguous()` copies VL306 reads, assigned to a name ...
        ("def f(x):\n    y = x[..., :-1, :].contiguous()", {"strided-contiguous-assign"}),
        ("def f(x):\n    y = x[:, 1:].contiguous()", {"strided-contiguous-assign"}),
        ("def f(x):\n    y = x.transpose(1, 2).contiguous()", {"strided-contiguous-assign"}),
        # ... and of a name (whether it holds a transpose, the analysis says: `query = query.contiguous()` of the
        # transposes every caller passes); not a slice of the first dimension, nor one that is not assigned.
        ("def f(x):\n    y = x[1:].contiguous()\n    return x[:, 1:].contiguous()", set()),
        ("def f(x):\n    z = x.contiguous()", {"strided-contiguous-assign"}),
        # Python bools that torch gives (its predicates, under any alias), dtype comparisons and string tests ...
        ("import torch\nimport torch.distributed as dist\ndef f(x: torch.Tensor):\n"
         "    if torch.cuda.is_available() or dist.is_initialized() or torch.is_tensor(x): pass", set()),
        ("import torch\ndef f(x: torch.Tensor):\n    if x.dtype == torch.bfloat16 or torch.version.hip: pass", set()),
        ("def f(model):\n    for name, p in model.named_parameters():\n        if name.endswith('.bias'): pass", set()),
        # `.to(...)`, `.float()`, `.cuda()` of something unknown give a tensor only with a torch dtype or a device
        # (Triton's values, modules and arrays have them too); `.reshape()`, `.clone()` whatever they are called on.
        ("def f(self, p):\n    x = tl.load(p).to(tl.float32)\n    if x or self.model.float(): pass", set()),
        ("def f(p):\n    x = load(p).to(torch.float32)\n    if x: pass", {"device-truth-test"}),
        ("def f(p, d):\n    if p.to(dtype=d) or p.type(device=d): pass", {"device-truth-test"}),
        ("def f(p):\n    if p.reshape(-1) or p.clone(): pass", {"device-truth-test"}),
        # Writes into a conversion of a named tensor (VL203), as the walker reads the conversion.
        ("def f(x: torch.Tensor):\n    flat = x.float()\n    flat[0] = 1", {"write-into-maybe-copy"}),
        ("def f(p):\n    acc = tl.zeros(4)\n    acc = acc.to(tl.float32)\n    acc[0] = 1", set()),
        ("def f(a):\n    flat = a.reshape(-1)\n    flat += 1", {"write-into-maybe-copy"}),
        # Assignments through a subscript the walker may read as a gather (VL202): a list, a mask, a name that reads
        # as an index, a tensor or a sequence; not a count, a number or a key.
        ("def f(x, token_ids):\n    x[token_ids][0] = 1", {"chained-subscript-store"}),  # nothing known: by its name
        # ... not a subscript of a list or dict the function builds (the walker holds a container there) ...
        ("def f(n, token_ids):\n    rows = [[0] * 8 for _ in range(n)]\n    rows[token_ids][0] = 1", set()),
        ("def f(token_ids):\n    rows = {}\n    rows[token_ids] = []\n    rows[token_ids][0] = 1", set()),
        # ... unless it may be something else there: rebound, narrowed, bound outside the function, or bound later.
        ("def f(x: torch.Tensor, token_ids):\n    rows = []\n    rows = x\n    rows[token_ids][0] = 1", {"chained-subscript-store"}),
        ("def f(n, token_ids):\n    rows = [[0] * 8 for _ in range(n)]\n    if isinstance(rows, torch.Tensor):\n"
         "        rows[token_ids][0] = 1", {"chained-subscript-store"}),
        ("rows = torch.zeros(4, 4)\ndef f(token_ids):\n    rows[token_ids][0] = 1", {"chained-subscript-store"}),
        ("def f(token_ids):\n    rows[token_ids][0] = 1\n    rows = []", {"chained-subscript-store"}),
        ("def f(x, idx):\n    x[idx][0] = 1", set()),
        ("def f(x, m: torch.Tensor):\n    x[m > 0][:, 1] = 5", {"chained-subscript-store"}),
        ("def f(x, rows: list[int]):\n    x[rows][0] = 1", {"chained-subscript-store"}),
        ("def f(x):\n    sel = [1, 2]\n    x[sel].T[0] = 1", {"chained-subscript-store"}),
        ("def f(table, layer_id: int, name):\n    table[layer_id][name] = 1", set()),
        ("def f(grid, n):\n    for i in range(n):\n        for j in range(n):\n            grid[i][j] = 0", set()),
        ("import flydsl as fx\ndef f(acc, n):\n    for r in fx.range_constexpr(n):\n        acc[r][0] = 0", set()),
        ("def f(x, k):\n    x[k].weight[0] = 1", set()),  # `.weight` is not a view the walker follows
        # A container the function fills holds what is added to it (`pieces.append(p)`, `d[k] = v`), as the walker's
        # containers do; the container itself is no tensor (its truth, its methods).
        ("_CACHE = {}\ndef f(x: torch.Tensor):\n    pieces = []\n    pieces.append(x[:1])\n    _CACHE['k'] = pieces",
         {"retains-view"}),
        ("_CACHE = {}\ndef f(x: torch.Tensor):\n    d = {}\n    d['a'] = x[:1]\n    _CACHE['k'] = d", {"retains-view"}),
        ("def f(x: torch.Tensor):\n    outs = []\n    outs.append(x.sum())\n    if outs[0]: pass", {"device-truth-test"}),
        ("def f(x: torch.Tensor):\n    outs = []\n    outs.append(x.sum())\n    if outs or int(outs): pass", set()),
        ("def f(x: torch.Tensor):\n    seen = set()\n    seen.add(x)", set()),
        # A call of a function of this module gives what its returns may give, with any arguments: ...
        ("def n_rows(x):\n    return x.shape[0]\ndef f(x: torch.Tensor):\n    if n_rows(x): pass", set()),
        ("def ready(self):\n    return self.count > 0 and bool(self.queue)\ndef f(x):\n    if ready(x): pass", set()),
        ("def key(x):\n    return x.name.upper()\n_CACHE = {}\ndef f(x):\n    _CACHE[x] = key(x)", set()),
        ("def made(n):\n    return torch.ones(n)\ndef f(n):\n    return made(n).contiguous()", {"contiguous-of-contiguous"}),
        ("def made(n):\n    return torch.ones(n)\ndef f(n):\n    if made(n): pass", {"device-truth-test"}),
        ("def same(x):\n    return x\ndef f(x: torch.Tensor):\n    if same(x): pass", {"device-truth-test"}),
        ("def head(x):\n    y = x\n    return y[:2]\n_CACHE = {}\ndef f(k, x):\n    _CACHE[k] = head(x)", {"retains-view"}),
        ("def steps(x):\n    yield x\ndef f(x):\n    if steps(x): pass", {"device-truth-test"}),  # a generator: not read
        # ... through the functions it calls; the walker does not follow recursion.
        ("def made(n):\n    return torch.ones(n)\ndef outer(n):\n    return made(n)\ndef f(n):\n    if outer(n): pass",
         {"device-truth-test"}),
        ("def count(n):\n    return len(n)\ndef outer(n):\n    return count(n)\ndef f(n):\n    if outer(n): pass", set()),
        ("def r(n):\n    return r(n - 1) if n else 0\ndef f(n):\n    if r(n): pass", set()),
        ("def r(n):\n    return r(n - 1) if n else torch.ones(1)\ndef f(n):\n    if r(n): pass", set()),
        # A function longer than any summary walk reads gives nothing the walker knows.
        ("def long(n):\n" + "    n = n + 1\n" * 150 + "    return torch.ones(n)\ndef f(n):\n    if long(n): pass", set()),
        # ... and not the tensors torch gives or a tensor compared with one.
        ("import torch\ndef f(x):\n    if torch.isnan(x).any(): pass", {"device-truth-test"}),
        ("import torch\ndef f(x: torch.Tensor):\n    if x == torch.zeros(1): pass", {"device-truth-test"}),
        ("import numpy as np\ndef f(d):\n    if np.is_busday(d): pass", {"device-truth-test"}),
        # torch functions the walker knows no result of give nothing: device queries, process groups, predicates.
        ("import torch\ndef f():\n    major, minor = torch.cuda.get_device_capability()\n    if major * 10 + minor >= 90: pass", set()),
        ("import torch.distributed as dist\ndef f():\n    if dist.get_rank() == 0: pass", set()),
        ("from torch.cuda import get_device_capability as cap\ndef f():\n    if cap()[0] >= 9: pass", set()),
        ("import torch\ndef f(x):\n    if torch.is_tensor(x): pass", set()),
        ("import torch\ndef f():\n    if torch.cuda.is_available(): pass", set()),
        ("import torch\ndef f(x):\n    if torch.linalg.norm(x) > 1: pass", {"device-truth-test"}),
        ("import torch\ndef f(x):\n    if torch.frobnicate(x): pass", {"device-truth-test"}),  # any `torch.<op>`
        ("import torch\ndef f(n):\n    return torch.cuda.current_stream(n).contiguous()", set()),
        ("import torch\ndef f(n):\n    return torch.empty(n).contiguous()", {"contiguous-of-contiguous"}),
        ("def f():\n    if torch.cuda.is_available(): pass", set()),  # no import: read as torch all the same
        ("def f(n):\n    if torch.ones(n): pass", {"device-truth-test"}),
        # ... also through a helper of this module, whose unpacked names and loop targets are items of their source.
        ("import torch\ndef arch():\n    major, minor = torch.cuda.get_device_capability()\n    return major * 10 + minor\n"
         "def f():\n    if arch() >= 90: pass", set()),
        ("def first(xs):\n    a, b = xs\n    return a\ndef f(xs):\n    if first(xs): pass", {"device-truth-test"}),
        ("import torch\ndef row(x):\n    for r in torch.unbind(x):\n        return r\ndef f(x):\n    if row(x): pass",
         {"device-truth-test"}),
        ("def count(xs):\n    for i, x in enumerate(xs):\n        return i\ndef f(xs):\n    if count(xs): pass", set()),
        ("def f(q: torch.Tensor):\n    present = {n: t for n, t in {'q': q}.items()}\n    names = list(present.keys())\n"
         "    if names: pass", set()),  # a dict's keys: Python values
        # An unpacked call of a helper that returns tuples of that length: item by item, as the walker joins them.
        ("def split(x):\n    return x > 0, 1\ndef f(x):\n    m, n = split(x)\n    if n: pass", set()),
        ("def split(x):\n    return x > 0, 1\ndef f(x):\n    m, n = split(x)\n    if m: pass", {"device-truth-test"}),
        ("def pair(x):\n    if x is None:\n        return None\n    return x, 0\ndef f(x):\n    a, b = pair(x)\n    if b: pass", set()),
        ("def pair(x):\n    if x:\n        return x, 0\n    return x, 0, 1\ndef f(x):\n    a, b = pair(x)\n    if b: pass",
         {"device-truth-test"}),  # returns of other lengths: what any return may give
        ("import torch\ndef pair(x):\n    return 0, 1\ndef f(x):\n    a, b = torch.pair(x)\n    if b: pass", {"device-truth-test"}),
    ],
)
def test_tensor_flags(source, expected):
    assert tensor_flags(source) == expected


def test_preorder_is_source_order_and_skips_singletons():
    tree = ast.parse("a = b + c\nf(x)\n")
    names = [n.id for n in nodes.preorder(tree) if isinstance(n, ast.Name)]
    assert names == ["a", "b", "c", "f", "x"]
    assert not any(isinstance(n, (ast.Load, ast.Store, ast.Add)) for n in nodes.preorder(tree))


_EVERY_SYNTAX = """
import a.b as c
from .d import e as f, g
@dec(x, *ys, k=1, **kw)
async def h(p, /, q: int = 1, *r, s, t=2, u, **v) -> "T":
    global G
    async with m() as (n, o), w:
        async for i, *j in k:
            yield await z
    try:
        del d[i:j:2], e.f
    except (E, F) as err:
        raise G from err
    else:
        pass
    finally:
        assert x, f"{y!r:>{w}} {z=}"
    x = (yield from gen)
    x += -y @ z if not a < b <= c else ...
    print(a, b)
    nonlocal_q: list[int] = {i: j for i, j in zip(a, b)}
    return (a := b), t[1:, ..., None], (*s,), b"x" b"y"
class C(Base, metaclass=M):
    type_alias: "int"
    def method(self): return super().method()
"""
# Syntax the running Python may not have, and the node kinds each brings.
_NEWER_SYNTAX = [
    ((3, 10), """
match pt:
    case [1, *rest] | {"k": V(), **kw} if rest:
        pass
    case Point(x=0, y=yy) as p2:
        return lambda *a, b=1, **c: {**c, "k": a} or {x for x in a if x} or [y async for y in b]
""", {"MatchOr", "MatchClass", "MatchMapping", "MatchStar", "match_case"}),
    ((3, 11), """
try:
    pass
except* (E, F) as err:
    raise G from err
""", {"TryStar"}),
    ((3, 12), """
type Pair[K, *Ks, **P] = tuple[K, K]
def first[T: int](items: list[T]) -> T:
    return items[0]
class Box[T]:
    pass
""", {"TypeAlias", "TypeVar", "TypeVarTuple", "ParamSpec"}),
]


def test_preorder_lists_every_node_ast_walk_finds():
    """The child fields come from the `ast` classes' signatures: check them against `ast.walk` on every kind of syntax."""
    newer = [(source, kinds) for version, source, kinds in _NEWER_SYNTAX if sys.version_info >= version]
    tree = ast.parse(_EVERY_SYNTAX + "".join(source for source, _ in newer))
    singletons = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
    expected = [n for n in ast.walk(tree) if not isinstance(n, singletons)]
    listed = nodes.preorder(tree)
    assert sorted(map(id, listed)) == sorted(map(id, expected))
    assert len(listed) == len(set(map(id, listed)))
    kinds = {type(n).__name__ for n in listed}
    assert {"AsyncFor", "NamedExpr", "arguments", "keyword", "withitem", "FormattedValue", "Starred", "DictComp",
            *(kind for _, newer_kinds in newer for kind in newer_kinds)} <= kinds
    for kind in {type(n) for n in listed}:  # every class's signature named exactly its fields
        assert all(many is not None for _, many in nodes._child_fields(kind)), kind.__name__


def test_collect_reads_every_kind_it_binds_from():
    """`collect` skips node kinds it does not read; the ones that bind names must not be among them."""
    assert bindings.BINDING_KINDS <= features._COLLECTED
    assert {ast.If, ast.While, ast.Assert, ast.IfExp, ast.BoolOp, ast.Call, ast.Subscript} <= features._COLLECTED


def test_descent_skips_only_whitespace_and_punctuation():
    """The walk reads only the fields whose declared type may hold a node it enters: on every kind of
    syntax, it meets exactly the nodes libcst's own visitor meets, less whitespace and punctuation."""
    from viewlint.analysis.tree import _UNWALKED, descendants

    class Every(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[cst.CSTNode] = []

        def on_visit(self, node: cst.CSTNode) -> bool:
            self.seen.append(node)
            return not isinstance(node, _UNWALKED)  # the walk does not enter them: neither do we

    kinds: set[type] = set()
    for source in [_EVERY_SYNTAX, *(source for _, source, _ in _NEWER_SYNTAX)]:
        module = cst.parse_module(source)
        every = Every()
        module.visit(every)
        expected = [node for node in every.seen if not isinstance(node, _UNWALKED)]
        assert list(descendants(module)) == expected
        kinds.update(type(node) for node in expected)
    assert {cst.Name, cst.Call, cst.Param, cst.Lambda, cst.FormattedString, cst.Match, cst.TypeParam} <= kinds
    assert len(kinds) > 80


def reduce(source: str, select: tuple[str, ...] = ("ALL",), **settings) -> str | None:
    source = textwrap.dedent(source)
    tree = ast.parse(source)
    index = build_index_from_ast(tree, source)
    chosen = Settings(select=select, **settings)
    rules = [all_rules()[code] for code in sorted(chosen.enabled_codes)]
    return reduce_source(source, tree, rules, chosen, index)


def test_reduction_keeps_rows_and_columns():
    source = textwrap.dedent(
        """\
        import torch


        def quiet(x):
            return x + 1


        def loud(buf, v):
            idx = torch.tensor([1, 2])
            buf[idx].copy_(v)
        """
    )
    tree = ast.parse(source)
    settings = Settings(select=("ALL",))
    rules = [all_rules()[code] for code in sorted(settings.enabled_codes)]
    reduction = reduce_text(source, tree, rules, settings, build_index_from_ast(tree, source))
    assert reduction is not None
    # Only the kept lines are parsed (imports too are dropped: names resolve through the module
    # index, built from the full tree); the line map gives each its row in the file.
    assert reduction.text == "\n\ndef loud(buf, v):\n    idx = torch.tensor([1, 2])\n    buf[idx].copy_(v)\n"
    assert reduction.line_map == [6, 7, 8, 9, 10]
    assert [row for row in range(1, 11) if reduction.rows[row]] == [8, 9, 10]
    assert reduction.file_row(5) == 10
    # A finding's position is the file's, not the reduced text's.
    assert [(d.start.row, d.start.column, d.code) for d in lint_text(source, "f.py", settings)] == [(10, 5, "VL201")]


def test_a_view_put_in_a_container_the_function_fills_is_found_on_both_paths():
    """`pieces = []; pieces.append(x[:1]); _CACHE[k] = pieces`: the walker knows the list holds a view; the
    prefilter must keep the function for VL101 (it once read `pieces` as the empty list it is bound to)."""
    source = textwrap.dedent(
        """\
        import torch
        _CACHE = {}


        def keep(x: torch.Tensor, k):
            pieces = []
            pieces.append(x[:1])
            _CACHE[k] = pieces


        def keep_dict(x: torch.Tensor, k):
            d = {}
            d["a"] = x[:1]
            _CACHE[k] = d
        """
    )
    settings = Settings(select=("VL101",))
    found = lint_text(source, "f.py", settings)
    assert [(d.code, d.start.row) for d in found] == [("VL101", 8), ("VL101", 14)]
    assert found == lint_text(source, "f.py", dataclasses.replace(settings, prefilter=False))


def test_small_assignments_kept_only_when_a_kept_statement_reads_them():
    """Module and class assignments feed the walker's scopes, which a walk reads only by name: one is kept
    when a kept statement (or an assignment kept for one) mentions a name it binds or changes."""
    source = textwrap.dedent(
        """\
        import logging
        import torch
        logger = logging.getLogger(__name__)
        BASE = 2
        ROWS = BASE * 4
        _CACHE = {}
        _CACHE["warm"] = None
        torch.backends.cudnn.benchmark = True
        settings.flag = True
        UNUSED = torch.zeros(3)


        class Store:
            size = ROWS
            label = "store"
            other = 1

            def put(self, k, x):
                a, b = torch.split(x, size)
                _CACHE[k] = a


        def loud(buf, v):
            idx = torch.tensor([1, 2])
            buf[idx].copy_(v)
        """
    )
    reduced = reduce(source)
    assert reduced is not None
    kept = {line.strip() for line in reduced.splitlines() if line.strip()}
    # (`torch.backends...` changes `torch`, which the kept functions read.)
    assert {"BASE = 2", "ROWS = BASE * 4", "_CACHE = {}", '_CACHE["warm"] = None', "size = ROWS",
            "torch.backends.cudnn.benchmark = True"} <= kept
    assert not kept & {"logger = logging.getLogger(__name__)", "settings.flag = True", "UNUSED = torch.zeros(3)",
                       'label = "store"', "other = 1"}
    settings = Settings(select=("ALL",))
    full = dataclasses.replace(settings, prefilter=False)
    found = lint_text(source, "f.py", settings)
    assert {d.code for d in found} >= {"VL101", "VL201"}
    assert found == lint_text(source, "f.py", full)


@pytest.mark.parametrize(
    "head",
    ["", "# license\n\n", "import os\n\n", "import os\n# viewlint: hot\n\n\n", "x = 1  # viewlint: hot\n"],
)
def test_hot_marker_above_the_first_statement(head):
    """The marker works wherever the function lands: first in the parsed text or not."""
    marker = "" if "viewlint: hot" in head else "# viewlint: hot\n"
    source = f'{head}{marker}def f():\n    t = torch.arange(4, device="cuda")\n    return t.item()\n\n\nimport torch\n'
    fast = lint_text(source, "f.py", Settings(select=("VL401",)))
    full = lint_text(source, "f.py", Settings(select=("VL401",), prefilter=False))
    assert fast == full
    assert [d.code for d in fast] == ([] if head.startswith("x = 1") else ["VL401"])


def test_comments_above_kept_segments_stay():
    source = '# license\n\nimport torch\n\n# viewlint: hot\ndef f():\n    t = torch.arange(4, device="cuda")\n    return t.item()\n'
    tree = ast.parse(source)
    settings = Settings(select=("VL401",))
    reduction = reduce_text(source, tree, [all_rules()["VL401"]], settings, build_index_from_ast(tree, source))
    assert reduction is not None and reduction.line_map == [4, 5, 6, 7, 8]
    assert [(d.start.row, d.code) for d in lint_text(source, "f.py", settings)] == [(8, "VL401")]


def test_nothing_to_parse_gives_none():
    assert reduce("import torch\n\ndef f(x):\n    return x * 2\n") is None


def test_hot_only_rules_need_a_hot_function():
    cold = "import torch\n\ndef helper(t):\n    return t.item()\n"
    hot = "import torch\n\nclass M(torch.nn.Module):\n    def forward(self, t):\n        return t.item()\n"
    assert reduce(cold, select=("VL401",)) is None
    assert reduce(hot, select=("VL401",)) is not None
    assert reduce("# viewlint: hot\ndef helper(t):\n    return t.item()\n", select=("VL401",)) is not None


def test_setup_methods_do_not_count_as_stores():
    source = "class C:\n    def __init__(self, t: torch.Tensor):\n        self.d = {}\n        self.d['k'] = t[:1]\n"
    assert reduce(source, select=("VL101",)) is None
    assert reduce(source.replace("__init__", "put"), select=("VL101",)) is not None


def test_aliases_of_trigger_calls_count():
    source = "from torch.nn.functional import scaled_dot_product_attention as sdpa\n"
    tree = ast.parse(source)
    needs = rule_needs(all_rules()["VL303"], build_index_from_ast(tree, source), Settings())
    assert (("call", "sdpa"),) in needs


def test_payload_size_needs_name_the_store_classes_and_helpers():
    source = textwrap.dedent(
        """\
        def tensor_bytes(t):
            return t.numel() * t.element_size()

        class Cache:
            def __init__(self):
                self.entries = {}
                self.used = 0

            def put(self, key, t):
                self.entries[key] = t
                self.used += tensor_bytes(t)

        class Other:
            def size(self, t):
                return t.nbytes
        """
    )
    tree = ast.parse(source)
    needs = rule_needs(all_rules()["VL104"], build_index_from_ast(tree, source), Settings())
    assert ((("flag", "class:Cache"), ("call", "tensor_bytes"))) in needs
    assert not any(("flag", "class:Other") in conjunction for conjunction in needs)
    reduced = reduce(source, select=("VL104",))
    assert reduced is not None and "class Cache" in reduced and "class Other" not in reduced


def test_walk_matches_libcst_visit_on_every_fixture():
    """The walker's own descent reports exactly what libcst's generic visitor reports (with the module's summaries, as
    a lint has them: what a function of the module returns)."""
    settings = Settings(select=("ALL",))
    for path in fixture_files():
        text = path.read_text(encoding="utf-8")
        results = []
        for use_visit in (False, True):
            module = cst.parse_module(text)
            index = build_index_from_ast(ast.parse(text), text)
            summaries = ModuleSummaries(index, module, settings, callgraph_of(index), Project(str(path), walk_elsewhere(settings)))
            facts = Facts(module, settings, index, summaries)
            rules = [cls(facts, {}) for code, cls in sorted(all_rules().items())]
            walker = Walker(facts, rules)
            if use_visit:
                module.visit(walker)
            else:
                walker.walk(module)
            results.append([(r.rule.code, r.message) for r in facts.reports])
        assert results[0] == results[1], path
        assert results[0] or path.name.startswith("negative"), path


def torch_sample(count: int = 60) -> list[Path]:
    spec = importlib.util.find_spec("torch")  # finds the package without importing it
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    files = sorted(Path(next(iter(spec.submodule_search_locations))).rglob("*.py"))
    step = max(1, len(files) // count)
    return files[::step][:count]


def test_same_findings_without_prefilter_on_a_torch_sample():
    fast_settings = Settings(select=("ALL",))
    full_settings = dataclasses.replace(fast_settings, prefilter=False)
    checked = 0
    for path in torch_sample():
        text, problem = read_file(path, str(path))
        if text is None:
            continue
        assert lint_text(text, str(path), fast_settings) == lint_text(text, str(path), full_settings), path
        checked += 1
    assert checked >= 30


def _table(element=None, head="TABLE: list = [  # comment", tail="]", count=250):
    """A module with a long literal: `element(k, expression)` writes element k; every 97th
    expression makes a redundant `.contiguous()` (VL301)."""
    element = element or (lambda k, expression: f"    {expression},")
    lines = [
        element(k, f"Entry('op{k}', lambda x: x + {k})" if k % 97 else f"Entry('op{k}', lambda: torch.zeros(4).contiguous())")
        for k in range(count)
    ]
    return "\n".join([
        "import torch", "", "", "class Entry:", "    def __init__(self, *a): pass", "", "", "# the table", head, "    # first",
        *lines, "    # last", tail, "", "", "def f(x):", "    return x.t().contiguous()", "",
    ])


def _fast_and_full(source):
    settings = Settings(select=("ALL",))
    tree = ast.parse(source)
    rules = [all_rules()[code] for code in sorted(settings.enabled_codes)]
    reduction = reduce_text(source, tree, rules, settings, build_index_from_ast(tree, source))
    fast = lint_text(source, "t.py", settings)
    assert fast == lint_text(source, "t.py", dataclasses.replace(settings, prefilter=False))
    return reduction, fast


@pytest.mark.parametrize(
    ("element", "head", "tail"),
    [
        (None, "TABLE: list = [  # comment", "]"),
        (lambda k, e: f"    {e[:-1]}," + "\n" + "          1),  # a second row", "TABLE = [", "]"),
        (lambda k, e: f"    'k{k}': {e},  # {k}", "TABLE = {", "}  # done"),
        (lambda k, e: f"    **{{'k{k}': {e}}},", "TABLE = {", "}"),
        (lambda k, e: f"    {e},", "TABLE = (", ")"),
    ],
    ids=["list", "multi-row elements", "dict", "dict spread", "tuple"],
)
def test_long_literals_are_kept_element_by_element(element, head, tail):
    source = _table(element, head, tail)
    reduction, fast = _fast_and_full(source)
    assert reduction is not None and reduction.partial == {9}
    assert len(reduction.text) < len(source) / 10
    ast.parse(reduction.text)
    assert sum(1 for d in fast if d.code == "VL301") == 3
    rows = source.splitlines()
    for d in fast:
        assert ".contiguous()" in rows[d.start.row - 1]
        if d.start.row < 300 and "TABLE" not in rows[d.start.row - 1]:
            assert d.statement_rows == (9, rows.index(tail) + 1)  # the whole statement, for `# noqa`


@pytest.mark.parametrize(
    ("element", "head", "tail"),
    [
        (lambda k, e: f"    {e}, Entry('b{k}', lambda x: x),", "TABLE = [", "]"),  # two per row
        (lambda k, e: f"    {e}" + "\n" + "    ,", "TABLE = [", "]"),  # comma on its own row
        (lambda k, e: f"    ({e}\n     ),", "TABLE = [", "]"),  # parenthesised element
        (lambda k, e: f"    {e[:-1]}, (y := {k})),", "TABLE = [", "]"),  # binds a module name
        (None, "TABLE = [Entry('first', lambda x: x),", "]"),  # an element on the opening row
        (None, "TABLE = [", "]; OTHER = 1"),  # another statement on the closing row
        (None, "TABLE = [", "] + EXTRA"),  # not a literal
        (None, "TABLE = [", "Entry('last', lambda x: x)]"),  # an element on the closing row
        (lambda k, e: f"    {e}" + ("," if k < 249 else ""), "TABLE = (", ")"),  # a tuple's last without comma
    ],
    ids=["two per row", "comma below", "parenthesised", "walrus", "opening row", "closing row", "binop",
         "element on closing row", "tuple without trailing comma"],
)
def test_literals_that_cannot_be_cut_are_kept_whole(element, head, tail):
    source = _table(element, head, tail)
    if "EXTRA" in source:
        source = source.replace("# the table", "EXTRA = []")
    reduction, fast = _fast_and_full(source)
    assert reduction is not None and not reduction.partial
    kept = reduction.text.splitlines()
    assert sum("torch.zeros(4).contiguous()" in line for line in kept) == 3  # the whole statement is there
    assert sum(1 for d in fast if d.code == "VL301") >= 1


def test_a_literal_whose_elements_cannot_fire_is_dropped():
    """VL204 needs an in-place call and an `expand` in one segment: here they are in different elements."""
    element = lambda k, e: f"    Entry('op{k}', lambda x: x.add_(1))," if k % 2 else f"    Entry('op{k}', lambda x: x.expand(3)),"  # noqa: E731
    source = _table(element).replace("torch.zeros(4).contiguous()", "torch.zeros(4)").replace("x.t().contiguous()", "x")
    reduction, fast = _fast_and_full(source)
    assert reduction is None and fast == []


TRICKY = '''\
"""Module docstring."""
# a header comment
import functools; import torch


@functools.lru_cache(maxsize=None)
def table(n):
    t = torch.arange(64).reshape(8, 8)
    return t[:n]


@decorate
class Recorder:  # a comment
    """Docstring."""
    size = 0; limit = 4

    def __init__(self):
        self.cache = {}

    @staticmethod
    def helper(x): return x

    async def put(self, k, x):
        y = torch.zeros(8, 8)
        self.cache[k] = y[:1]

    def take(self, buf,
             v):
        idx = torch.tensor([1, 2])
        (
            buf[idx]
        ).copy_(v)


def f(buf, idx, v): buf[idx].copy_(v)
'''


@pytest.mark.parametrize("path", [None, *fixture_files()], ids=lambda p: "tricky" if p is None else p.name)
def test_positions_from_single_statements_match_the_whole_module(path):
    """Rows and columns computed per module-level statement equal those of the whole module."""
    from libcst.metadata import MetadataWrapper, PositionProvider

    from viewlint.positions import statement_positions

    text = TRICKY if path is None else path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    for prefilter in (True, False):
        settings = Settings(select=("ALL",), prefilter=prefilter)
        index = build_index_from_ast(tree, text)
        rules = [all_rules()[code] for code in sorted(settings.enabled_codes)]
        reduction = reduce_text(text, tree, rules, settings, index) if prefilter else None
        if prefilter and reduction is None:
            continue
        parsed = reduction.text if reduction is not None else text
        module = cst.parse_module(parsed)
        facts = Facts(module, settings, index)
        Walker(facts, [cls(facts, {}) for cls in rules]).walk(module)
        if not facts.reports:
            continue
        whole = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        file_row = reduction.file_row if reduction is not None else (lambda row: row)
        rows = reduction.rows if reduction is not None else None
        alone = statement_positions(module, facts.reports, tree, rows)
        assert alone is not None
        if path is None:
            assert {r.rule.code for r in facts.reports} >= {"VL101", "VL201"}
            assert sum(r.member is not None for r in facts.reports) >= 2  # positions from class members alone
        for report in facts.reports:
            for node in (report.node, *(n for n, _ in report.edits)):
                expected = whole[node]
                assert (alone[node].start.line, alone[node].start.column) == (file_row(expected.start.line), expected.start.column)
                assert (alone[node].end.line, alone[node].end.column) == (file_row(expected.end.line), expected.end.column)


@pytest.mark.parametrize("text", ["", "a", "a\n", "a\nb", "\n\n", "x\n\ny\n", "a\r\nb\rc\n", "a\r", "\x0c\n\u2028x\n"])
def test_split_lines_follows_python_line_endings(text):
    """Only \\r\\n, \\r and \\n end a line of Python source (not \\x0c or \\u2028, as str.splitlines has it)."""
    from viewlint.prefilter import split_lines

    lines = split_lines(text)
    assert "".join(content + ending for content, ending in lines) == text
    assert all(ending in ("\n", "\r\n", "\r") for _, ending in lines[:-1])
    assert all("\n" not in content and "\r" not in content for content, _ in lines)
    assert len(lines) == len(text.replace("\r\n", "\n").replace("\r", "\n").split("\n")) - (text.endswith(("\n", "\r")) or not text)


@pytest.mark.parametrize(
    ("body", "code"),
    [
        # Subscript and augmented assignments into a conversion (the needs once asked for an in-place call).
        ("def clear(hidden: torch.Tensor):\n    flat = hidden.flatten()\n    flat[:3] = 0\n    return hidden", "VL203"),
        ("def bump(hidden: torch.Tensor):\n    flat = hidden.flatten()\n    flat += 1\n    return hidden", "VL203"),
        # Rows of a tensor met in a loop, through `enumerate` and `zip`.
        ("_CACHE = []\n\n\ndef keep(x: torch.Tensor, keys):\n    for key, row in zip(keys, x):\n        _CACHE.append(row)", "VL101"),
        ("_CACHE = []\n\n\ndef keep(x: torch.Tensor):\n    for i, row in enumerate(x):\n        _CACHE.append(row)", "VL101"),
    ],
)
def test_the_prefilter_keeps_what_the_rules_find(body, code):
    _, fast = _fast_and_full(f"import torch\n\n\n{body}\n")
    assert [d.code for d in fast] == [code]


def test_host_predicates_in_a_forward_leave_nothing_to_parse():
    # The walker reads these tests as Python bools too: with nothing else in the file, no rule can fire.
    source = (
        "import torch\nimport torch.distributed as dist\n\n\nclass M(torch.nn.Module):\n"
        "    def forward(self, x: torch.Tensor):\n"
        "        if torch.cuda.is_available() and dist.is_initialized():\n            x = x + 1\n"
        "        if x.dtype == torch.bfloat16 or torch.compiler.is_compiling():\n            x = x + 1\n"
        "        for name, p in self.named_parameters():\n"
        "            if name.endswith('.bias'):\n                x = x + 1\n"
        "        return x\n"
    )
    reduction, fast = _fast_and_full(source)
    assert reduction is None and fast == []


def test_only_hot_path_rules_read_the_flags_judged_only_where_code_may_be_hot():
    """`collect` leaves `HOT_PATH_FLAGS` out of segments that are not hot: a rule that fires outside hot paths
    must not need them, and each of them is needed by some rule."""
    source = "import torch\nx = 1\n"
    index = build_index_from_ast(ast.parse(source), source)
    needed_by: dict[str, set[bool]] = {}
    for rule in all_rules().values():
        for conjunction in rule_needs(rule, index, Settings()) or ():
            for kind, value in conjunction:
                if kind == "flag" and value in features.HOT_PATH_FLAGS:
                    needed_by.setdefault(value, set()).add(rule.hot_path_only)
    assert needed_by == {flag: {True} for flag in features.HOT_PATH_FLAGS}


def test_a_cold_segment_skips_the_hot_path_flags_and_keeps_the_others():
    source = "def f(x: torch.Tensor):\n    if x.sum():\n        pass\n    n = x.item()\n    y = x[x > 0]\n    return x.contiguous()\n"
    tree = ast.parse(source)
    index = build_index_from_ast(tree, source)
    context = TensorContext(index)
    hot = features.collect(nodes.preorder(tree.body[0]), features.RetentionContext(index), tensors=context,
                           cold=lambda: False).flags
    cold = features.collect(nodes.preorder(tree.body[0]), features.RetentionContext(index), tensors=context,
                            cold=lambda: True).flags
    assert features.HOT_PATH_FLAGS <= hot
    assert not features.HOT_PATH_FLAGS & cold
    assert hot - features.HOT_PATH_FLAGS == cold


# Module classes of this module held by `self.<attr>`, and lists handed back inside an object built in the
# `return`: the walker reads both (a submodule's `forward`, `Output(preds=feats)`); the prefilter must too.
HEAD_OF_STACKED_LINEARS = '''
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n, 8, 8))

    def forward(self, hidden):
        parts = [nn.functional.linear(hidden[:, i, :], self.weight[i].T) for i in range(self.weight.shape[0])]
        return torch.stack(parts, dim=1)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = Head(4)

    def forward(self, hidden):
        logits = self.head(hidden)
        return logits.contiguous()
'''

FEATURES_HANDED_BACK_IN_AN_OBJECT = '''
import torch
from torch import nn


class Output:
    def __init__(self, feats):
        self.feats = feats


def collect(model: nn.Module, loader):
    feats = []
    for batch in loader:
        act = model(batch)
        feats.append(act[:, 0, :])
    return Output(feats=feats)


def collect_then_join(model: nn.Module, loader):
    feats = []
    for batch in loader:
        act = model(batch)
        feats.append(act[:, 0, :])
    feats = torch.cat(feats)
    return Output(feats=feats)
'''


@pytest.mark.parametrize(("source", "expected"), [
    (HEAD_OF_STACKED_LINEARS, [(22, "VL301")]),
    # The list joined after the loop holds no view once the function returns, but until the join it holds every
    # batch's whole `act` (a loop over the data the caller hands in): both pin batches, the second one until the join.
    (FEATURES_HANDED_BACK_IN_AN_OBJECT, [(14, "VL101"), (22, "VL101")]),
])
def test_what_the_walker_reads_through_submodules_and_returned_objects_the_prefilter_keeps(source, expected):
    from conftest import lint_both_paths

    assert lint_both_paths(source.lstrip("\n")) == expected


def test_a_kept_statement_that_ends_in_a_line_continuation_keeps_the_blank_line_that_ends_it():
    # DeepSpeed's `return qkvw, \` ... `bias, \` then a blank line: kept alone, the continuation ran into the end of
    # the reduced text (or into the next kept statement), and libcst could not read the class.
    source = textwrap.dedent(
        """\
        import torch


        class Policy:
            def attention(self, qw, kw):
                qkvw = torch.cat((qw, kw), dim=0)
                idx = torch.tensor([0])
                qkvw[idx].fill_(0)
                return qkvw, \\
                       qw, \\

            def mlp(self):
                return 1
        """
    )
    reduced = reduce(source)
    assert reduced is not None and "qw, \\\n\n" in reduced
    cst.parse_module(reduced)
    found = [(d.start.row, d.code) for d in lint_text(source, "f.py", Settings(select=("ALL",)))]
    assert found == [(8, "VL201")]  # and no VL000 "statement not analysed"
