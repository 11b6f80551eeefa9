"""VL101-VL104: views kept in long-lived places, ineffective ownership fixes, saved views, payload budgets."""

from __future__ import annotations

import textwrap

import pytest

from viewlint.diagnostics import Applicability
from viewlint.engine import lint_text
from viewlint.settings import Settings

VIEWS = ("VL101", "VL102", "VL103", "VL104")


def codes(found: list[tuple[int, str, str]]) -> list[tuple[int, str]]:
    return [(row, code) for row, code, _ in found]


def lint(lint_source, source: str, **settings) -> list[tuple[int, str, str]]:
    return lint_source(textwrap.dedent(source), select=VIEWS, **settings)


# ---------------------------------------------------------------- VL101
PR_39120_SHAPE = """\
import torch
from dataclasses import dataclass

@dataclass
class EmbeddingResult:
    embedding: torch.Tensor

class Cache:
    def __init__(self):
        self.mm_cache = {}

    def set(self, key, entry):
        self.mm_cache[key] = entry

cache = Cache()

def admit(batch: torch.Tensor, counts, keys):
    for key, piece in zip(keys, torch.split(batch, counts)):
        cache.set(key, EmbeddingResult(embedding=piece))
"""


def test_split_piece_wrapped_in_dataclass_and_cached(lint_source):
    found = lint(lint_source, PR_39120_SHAPE)
    assert codes(found) == [(19, "VL101")]
    message = found[0][2]
    assert "`EmbeddingResult(embedding=piece)`" in message
    assert "`piece`" in message and "`batch`" in message and "`cache.set(...)`" in message


def test_split_piece_fix_wraps_the_view_in_clone():
    diagnostics = lint_text(PR_39120_SHAPE, "snippet.py", Settings(select=("VL101",)))
    (fix,) = [d.fix for d in diagnostics]
    assert fix.applicability is Applicability.UNSAFE
    assert "clone" in fix.message
    assert [e.content for e in fix.edits] == ["piece.clone()"]
    assert (fix.edits[0].start.row, fix.edits[0].start.column) == (19, 50)


def test_method_summarised_as_retaining_its_argument(lint_source):
    # `keep` is not named like a store, but its body puts the argument into a self-held dict.
    found = lint(lint_source, """
        import torch

        class Holder:
            def __init__(self):
                self.items = {}

            def keep(self, key, value):
                self.items[key] = value

            def run(self, x: torch.Tensor):
                self.keep(0, x[0])
    """)
    assert codes(found) == [(12, "VL101")]


@pytest.mark.parametrize(
    "statement",
    [
        "self.cache[k] = x[:, 0]",
        "self.saved.append(x[1:].detach())",
        "self.saved.append(x.narrow(0, 0, 2))",
        "self.saved.extend(x.chunk(4)[:2])",
        "self.saved.append(x.unbind(0)[1])",
    ],
)
def test_views_of_parts_in_self_containers(lint_source, statement):
    assert codes(_recorded(lint_source, statement)) == [(10, "VL101")]


@pytest.mark.parametrize(
    "statement",
    ["self.saved.extend(x.chunk(2))", "self.cache[k] = list(x.split(4))", "self.cache[k] = (x, x[:2])"],
)
def test_all_pieces_or_the_base_stored_together_pin_nothing_more(lint_source, statement):
    assert codes(_recorded(lint_source, statement)) == []


def _recorded(lint_source, statement: str):
    """Lint `statement` placed in a method of a class that holds a dict and a list."""
    found = lint(lint_source, f"""
        import torch

        class Recorder:
            def __init__(self):
                self.cache = {{}}
                self.saved = []

            def record(self, k: int, x: torch.Tensor):
                {statement}
    """)
    return found


@pytest.mark.parametrize("stored, found", [("buf=buffer, key=buffer[:2]", []), ("other=x, key=buffer[:2]", [(6, "VL101")])])
def test_a_store_that_also_stores_the_base_pins_nothing_more(lint_source, stored, found):
    # One call puts the view and its base in the same container: the base is kept anyway.
    assert codes(lint(lint_source, f"""
        import torch

        def keep(cache, x):
            buffer = torch.zeros(8, 4)
            cache.update({stored})
    """)) == found


PACKED_HELPER = """
    import torch

    class Attention:
        def _pack(self, x):
            if x.dim() != 2:
                return None
            buffer = torch.zeros(x.shape[0], 12)
            return buffer[:, 4:8], buffer

        def attend(self, cache, k=None, qkv=None):
            cache.update({stored})

        def forward(self, x, cache):
            packed = self._pack(x)
            qkv = None
            if packed is not None:
                k, qkv = packed
            else:
                k = None
            self.attend(cache, k=k, qkv=qkv)
"""


@pytest.mark.parametrize("stored, found", [("qkv=qkv, key=k[:2]", []), ("key=k[:2]", [(12, "VL101")])])
def test_a_view_and_its_base_through_a_helper_and_two_parameters(lint_source, stored, found):
    # The caller's `k` is a view of its `qkv` (both from one tuple, or `None`): inside `attend`, `k` is a view of
    # the parameter `qkv`, so storing both pins nothing more, and storing `k` alone pins all of it.
    found_here = lint(lint_source, PACKED_HELPER.format(stored=stored))
    assert codes(found_here) == found
    assert all("a view of `qkv`" in message for _, _, message in found_here)


@pytest.mark.parametrize("order", [("one", "two"), ("two", "one")])
def test_a_parameter_that_one_caller_passes_a_view_of_something_else_is_not_excused(lint_source, order):
    # `one` passes a view of what it passes as `qkv`, `two` a view of another tensor: storing `qkv` with `k`
    # still pins `other` on `two`'s calls, whichever caller is read first.
    callers = {
        "one": """
            def one(self, cache):
                buffer = torch.zeros(4, 12)
                self.attend(cache, k=buffer[:, 4:8], qkv=buffer)
        """,
        "two": """
            def two(self, cache):
                buffer = torch.zeros(4, 12)
                other = torch.zeros(4, 12)
                self.attend(cache, k=other[:, 4:8], qkv=buffer)
        """,
    }
    source = textwrap.dedent("""
        import torch

        class Attention:
            def attend(self, cache, k=None, qkv=None):
                cache.update(qkv=qkv, key=k[:2])
    """) + "".join(textwrap.indent(textwrap.dedent(callers[name]), "    ") for name in order)
    found = lint_source(source, select=VIEWS)
    assert [(row, code) for row, code, _ in found] == [(6, "VL101")]
    assert "a view of `other`" in found[0][2]


def _padded_helper(returned: str, lines: int) -> str:
    """A module-level helper of `lines` lines that returns `returned`, and a method that keeps its first value."""
    padding = "".join(f"    total = total + {i}\n" for i in range(lines - 3))
    return (
        "import torch\n\n\n"
        f"def _split(batch):\n    total = 0\n{padding}    return {returned}\n\n\n"
        "class Keeper:\n"
        "    def __init__(self):\n"
        "        self.saved = []\n\n"
        "    def keep(self, batch: torch.Tensor):\n"
        "        head, tail = _split(batch)\n"
        "        self.saved.append(head)\n"
    )


@pytest.mark.parametrize("returned, lines, flagged", [
    ("batch[:2], batch[2:]", 50, True),  # a tuple: read up to MAX_TUPLE_SUMMARY_LINES
    ("[batch[:2], batch[2:]]", 50, False),  # other values: up to MAX_SUMMARY_LINES
    ("batch[:2], batch[2:]", 70, False),
])
def test_longer_helpers_are_read_when_they_return_tuples(lint_source, returned, lines, flagged):
    source = _padded_helper(returned, lines)
    found = codes(lint_source(source, select=VIEWS))
    assert found == ([(len(source.splitlines()), "VL101")] if flagged else [])


def test_module_level_registry_and_lru_cache(lint_source):
    found = lint(lint_source, """
        import functools
        import torch

        REGISTRY = {}

        def register(name, w: torch.Tensor):
            REGISTRY[name] = w[:4]

        @functools.lru_cache(maxsize=None)
        def table(n):
            t = torch.arange(1000)
            return t[:n]
    """)
    assert codes(found) == [(8, "VL101"), (13, "VL101")]


@pytest.mark.parametrize(
    "statement",
    [
        "self.cache[k] = x[:, 0].clone()",  # an owned copy
        "self.cache[k] = x.detach()",  # a view of all of x: nothing extra is pinned
        "self.cache[k] = x.t()",
        "self.cache[k] = x[...]",
        "self.cache[k] = torch.cat([x[0], x[1]])",  # fresh
        "self.cache[k] = self.table[0]",  # self.table lives as long as self anyway
        "self.k_buffer = x[0]",  # a plain attribute: a view by design
        "local = {}; local[k] = x[0]",  # dies with the function
        "cache = {}; cache[k] = x[0]",
    ],
)
def test_look_alikes_are_quiet(lint_source, statement):
    found = lint(lint_source, f"""
        import torch

        class Recorder:
            def __init__(self):
                self.cache = {{}}
                self.table = torch.zeros(4, 4)

            def record(self, k: int, x: torch.Tensor):
                {statement}
    """)
    assert found == []


def test_designed_views_in_init_are_quiet(lint_source):
    found = lint(lint_source, """
        import torch

        class KVPool:
            def __init__(self, layers: int):
                raw = torch.zeros(2, layers, 16, 8)
                self.k_buffer = raw[0]
                self.v_buffer = raw[1]
    """)
    assert found == []


def test_long_lived_names_option(lint_source):
    source = """
        import torch

        class Recorder:
            def remember(self, x: torch.Tensor):
                self.lookup_table.put(0, x[0])
    """
    assert lint(lint_source, source) == []
    found = lint(lint_source, source, long_lived_names=("lookup_table",))
    assert codes(found) == [(6, "VL101")]


def test_parameters_named_like_caches_are_long_lived(lint_source):
    # A cache passed in (`def f(encoder_cache, ...)`) outlives the call: its caller keeps it.
    source = """
        import torch

        def remember(memo_cache, x: torch.Tensor):
            memo_cache.put(0, x[0])
    """
    assert codes(lint(lint_source, source)) == [(5, "VL101")]


def test_parameters_annotated_as_plain_dicts_belong_to_the_caller(lint_source):
    # A plain `dict` argument is a per-call container its caller owns; configuring the name says it
    # is long-lived wherever it appears.
    source = """
        import torch

        def remember(memo_table: dict, x: torch.Tensor):
            memo_table.setdefault(0, x[0])
    """
    assert lint(lint_source, source) == []
    found = lint(lint_source, source, long_lived_names=("memo_table",))
    assert codes(found) == [(5, "VL101")]


# ---------------------------------------------------------------- VL102
def test_contiguous_of_split_piece_is_vl102_not_vl101(lint_source):
    found = lint(lint_source, """
        import torch

        class Store:
            def __init__(self):
                self.entries = {}

            def admit(self, batch: torch.Tensor, counts, keys):
                for key, piece in zip(keys, torch.split(batch, counts)):
                    self.entries[key] = piece.contiguous()
    """)
    assert codes(found) == [(10, "VL102")]
    assert "`piece.contiguous()`" in found[0][2] and ".clone()" in found[0][2]


@pytest.mark.parametrize(
    "expression",
    ["x[:2].reshape(-1)", "torch.as_tensor(x[0])", "x[0].detach().contiguous()", "x[0].contiguous()"],
)
def test_ownership_fix_lookalikes_on_views(lint_source, expression):
    found = lint(lint_source, f"""
        import torch

        SAVED = []

        def keep(x: torch.Tensor):
            SAVED.append({expression})
    """)
    assert codes(found) == [(7, "VL102")]


@pytest.mark.parametrize("expression", ["x[0].float()", "x[0].to(torch.float32)", "x[0].half()", "x[0].to(dtype=torch.int32)"])
def test_casts_to_a_named_dtype_count_as_copies(lint_source, expression):
    """Code casts tensors that have another dtype (`seq_lens_cpu[:bs].to(torch.int32)` of int64 lengths): a copy."""
    found = lint(lint_source, f"""
        import torch

        SAVED = []

        def keep(x: torch.Tensor):
            SAVED.append({expression})
    """)
    assert codes(found) == []


def test_device_moves_copy_unless_the_view_is_known_on_the_cpu(lint_source):
    found = lint(lint_source, """
        import torch

        SAVED = []

        def keep(x: torch.Tensor):
            SAVED.append(x[0].cpu())  # code calls .cpu() on accelerator tensors: a copy
            SAVED.append(x[1:].to("cpu").to(torch.int32))
            SAVED.append(x[0].cuda())
            host = torch.zeros(8, 8)
            SAVED.append(host[0].cpu())  # already on the CPU: returned unchanged
    """)
    assert codes(found) == [(11, "VL102")]


def test_contiguous_fix_edit_replaces_it_with_clone():
    source = textwrap.dedent("""
        import torch

        SAVED = []

        def keep(x: torch.Tensor):
            SAVED.append(x[0].contiguous())
    """)
    (diagnostic,) = lint_text(source, "snippet.py", Settings(select=("VL102",)))
    assert diagnostic.fix.applicability is Applicability.UNSAFE
    assert [e.content for e in diagnostic.fix.edits] == ["x[0].clone(memory_format=torch.contiguous_format)"]


def test_contiguous_of_owned_tensors_is_quiet(lint_source):
    found = lint(lint_source, """
        import torch

        SAVED = []

        def keep(x: torch.Tensor):
            SAVED.append((x * 2).contiguous())
            SAVED.append(x.t().contiguous())
            SAVED.append(x[0].clone())
            SAVED.append(x.contiguous())
    """)
    assert found == []


def test_vl102_on_torch_save(lint_source):
    found = lint(lint_source, """
        import torch

        def dump(x: torch.Tensor, path):
            torch.save(x[:1].contiguous(), path)
    """)
    assert codes(found) == [(5, "VL102")]


# ---------------------------------------------------------------- VL103
def test_torch_save_of_views(lint_source):
    found = lint(lint_source, """
        import torch

        def dump(hidden: torch.Tensor, keys, path):
            torch.save(hidden[:, -1], path)
            for key, row in zip(keys, hidden):
                torch.save({"row": row}, f"{key}.pt")
            torch.save({k: r for k, r in zip(keys, hidden)}, path)
    """)
    assert codes(found) == [(5, "VL103"), (7, "VL103"), (8, "VL103")]
    assert "whole storage of `hidden`" in found[0][2]


def test_torch_save_of_an_annotated_parameter_every_caller_passes_views():
    # The annotation says what `emb` is (a dict of tensors, a tensor); this module's callers say what storage it
    # shares: rows of the batch, so each file gets the whole batch. Callers that pass copies pin nothing.
    from conftest import lint_both_paths
    source = textwrap.dedent("""
        from typing import Dict
        import torch

        class Store:
            def _save_entry(self, emb: Dict[str, torch.Tensor], path: str) -> None:
                torch.save(emb, path)

            def _save_row(self, row: torch.Tensor, path: str) -> None:
                torch.save(row, path)

            def _save_copy(self, row: torch.Tensor, path: str) -> None:
                torch.save(row, path)

            def run(self, texts, cats):
                per = {c: torch.randn(len(texts), 8) for c in cats}
                for i, text in enumerate(texts):
                    self._save_entry({c: per[c][i] for c in cats}, f"{i}.pt")
                    batch = torch.randn(len(texts), 8)
                    self._save_row(batch[i], f"{i}.row")
                    self._save_copy(batch[i].clone(), f"{i}.copy")
    """)
    assert [found for found in lint_both_paths(source) if found[1] == "VL103"] == [(7, "VL103"), (10, "VL103")]


def test_torch_save_fix_edit():
    source = "import torch\n\ndef dump(h: torch.Tensor, path):\n    torch.save(h[:, -1], path)\n"
    (diagnostic,) = lint_text(source, "snippet.py", Settings(select=("VL103",)))
    assert [e.content for e in diagnostic.fix.edits] == ["h[:, -1].clone()"]


def test_torch_save_of_copies_and_whole_tensors_is_quiet(lint_source):
    found = lint(lint_source, """
        import torch

        def dump(hidden: torch.Tensor, model, path):
            torch.save(hidden[:, -1].clone(), path)
            torch.save(hidden, path)
            torch.save(hidden.detach(), path)
            torch.save(model.state_dict(), path)
            torch.save([r.clone() for r in hidden], path)
    """)
    assert found == []


# ---------------------------------------------------------------- VL104
def test_budget_charged_through_helper(lint_source):
    found = lint(lint_source, """
        import torch

        def _get_tensor_size(t):
            return t.element_size() * t.numel()

        class Cache:
            def __init__(self):
                self.entries = {}
                self.current_size = 0

            def set(self, key, t):
                size = _get_tensor_size(t)
                self.entries[key] = t
                self.current_size += size
    """)
    assert codes(found) == [(15, "VL104")]
    assert "`self.current_size += size`" in found[0][2] and "_get_tensor_size" in found[0][2]


def test_budget_charged_with_nbytes(lint_source):
    found = lint(lint_source, """
        import torch

        class Pool:
            def __init__(self):
                self.items = []
                self.used_bytes = 0

            def add(self, t: torch.Tensor):
                self.items.append(t)
                self.used_bytes += t.nbytes
    """)
    assert codes(found) == [(11, "VL104")]


@pytest.mark.parametrize(
    "body",
    [
        # a storage-based budget
        "self.entries[k] = t\n        self.current_size += t.untyped_storage().nbytes()",
        # clone on admit: the payload is what is held
        "self.entries[k] = t.clone()\n        self.current_size += t.numel() * t.element_size()",
        # a size for logging: not a budget attribute
        "self.entries[k] = t\n        self.calls += t.numel() * t.element_size()",
        # not a budget: a local
        "self.entries[k] = t\n        total = 0\n        total += t.nbytes",
    ],
)
def test_payload_size_look_alikes_are_quiet(lint_source, body):
    source = (
        "import torch\n\nclass Cache:\n    def __init__(self):\n        self.entries = {}\n"
        "        self.current_size = 0\n        self.calls = 0\n\n    def set(self, k, t):\n        " + body + "\n"
    )
    assert lint_source(source, select=VIEWS) == []


def test_statistics_without_stored_tensors_are_quiet(lint_source):
    found = lint(lint_source, """
        import torch

        class Stats:
            def __init__(self):
                self.bytes_seen = 0

            def observe(self, t):
                self.bytes_seen += t.numel() * t.element_size()
    """)
    assert found == []


# ---------------------------------------------------------------- look-alikes found on real code
def test_keyword_calls_named_like_list_methods_are_not_stores(lint_source):
    # sglang's kernel dispatchers have an `extend(q=..., k=...)` method: list.extend takes no keywords.
    found = lint(lint_source, """
        import torch

        class Backend:
            def __init__(self, dispatcher):
                self.kernel_dispatcher = dispatcher

            def forward_extend(self, qkv: torch.Tensor):
                q, k, v = qkv.split([4, 4, 4], dim=-1)
                return self.kernel_dispatcher.extend(q=q.unsqueeze(0), k=k, v=v)
    """)
    assert found == []


def test_views_stored_while_building_the_object_are_its_layout(lint_source):
    found = lint(lint_source, """
        import torch

        class HostPool:
            def __init__(self, pools):
                self.page_views = []
                self._init_page_views(pools)

            def _init_page_views(self, pools):
                for pool in pools:
                    state: torch.Tensor = pool.buffer
                    self.page_views.append(state[:8].reshape(-1, 4))
                    self.page_views.append(state[8:])
    """)
    assert found == []


def test_contiguous_of_a_last_dim_select_always_copies(lint_source):
    found = lint(lint_source, """
        import torch

        TABLES = {}

        def cos_sin(freqs_cis: torch.Tensor, device, dtype):
            fr = torch.view_as_real(freqs_cis)
            cos = fr[..., 0].to(device=device, dtype=dtype).contiguous()
            sin = fr[..., 1].contiguous()
            TABLES[0] = (cos, sin)
            TABLES[1] = fr[..., 1].to(dtype)
    """)
    assert codes(found) == [(11, "VL102")]


def test_storage_aware_size_helpers_are_not_payload_sizes(lint_source):
    found = lint(lint_source, """
        import torch

        def estimate_size(value):
            def visit(item):
                if isinstance(item, torch.Tensor):
                    return item.untyped_storage().nbytes()
                return int(item.nbytes)  # numpy arrays
            return visit(value)

        class PreprocessCache:
            def __init__(self):
                self.entries = {}
                self.current_size_bytes = 0

            def put(self, key, value):
                size_bytes = estimate_size(value)
                self.entries[key] = value
                self.current_size_bytes += size_bytes
    """)
    assert found == []


def test_a_module_that_hands_back_views_is_named_not_the_argument_it_was_given(lint_source):
    found = lint(lint_source, """
        import torch
        from torch import nn


        class Layer(nn.Module):
            def __init__(self):
                super().__init__()
                self.to_qkv = nn.Linear(8, 24)

            def forward(self, hidden):
                qkv = self.to_qkv(hidden)
                return hidden * 2, qkv[..., 16:]


        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = Layer()
                self.cached_kv = {}

            def forward(self, ids: torch.Tensor, key: str):
                tokens = ids[:, 1:]
                self.cached_kv[key] = self.layer(tokens)
                return self.cached_kv[key]
    """)
    assert codes(found) == [(24, "VL101")]
    message = found[0][2]
    assert "view of `qkv` made in `Layer.forward`" in message and "holds `tokens`" not in message


def test_a_sequence_grown_with_plus_equals_in_a_loop_keeps_each_iterations_tensor(lint_source):
    # `raw += (logits[:, -1, :],)` as `generate()` keeps the raw logits: like an `append`, each step's row pins
    # the step's whole logits; a tuple rebuilt each iteration, or a row of what lives anyway, pins nothing more.
    found = lint(lint_source, """
        import torch

        def greedy(model, ids, steps: int):
            raw = ()
            for _ in range(steps):
                logits = model(ids)
                raw += (logits[:, -1, :],)
            return raw

        def greedy_rows(model, ids, steps: int):
            rows = []
            for _ in range(steps):
                logits = model(ids)
                rows += [logits[:, -1, :]]
            return rows

        def rebuilt(model, ids, steps: int, table: torch.Tensor):
            kept = []
            for i in range(steps):
                logits = model(ids)
                last = ()
                last += (logits[:, -1, :],)
                kept += [table[i]]
            return kept, last

        def two_streams(layers, h, n: int):
            main, ngram = (), ()
            for layer in layers:
                main += (h[:, :n],)
                ngram += (h[:, n:],)
                h = layer(h)
            return main, ngram
    """)
    assert codes(found) == [(8, "VL101"), (15, "VL101")]  # `two_streams` keeps both parts of each `h`: all of it
    assert "added by `raw += ...`" in found[0][2] and "the returned `raw` keeps" in found[0][2]


def test_a_store_through_an_object_its_callers_pass_reads_that_objects_class(lint_source):
    # `cache` is unannotated, but the one caller passes a `MultiModalStaticCache`, whose `set` clones a view before
    # keeping it: nothing extra is pinned. A class whose `set` keeps what it is given is still reported.
    source = """
        import torch

        class MultiModalStaticCache:
            def __init__(self):
                self.mm_cache = {}

            def set(self, key, embedding):
                if embedding.untyped_storage().nbytes() > embedding.numel() * embedding.element_size():
                    embedding = embedding.clone()
                self.mm_cache[key] = embedding

        def fill(encoder, cache, keys, x, sizes):
            for key, piece in zip(keys, torch.split(encoder(x), sizes)):
                cache.set(key, piece)

        if __name__ == "__main__":
            fill(torch.nn.Linear(4, 4), MultiModalStaticCache(), ["a"], torch.randn(2, 4), [2])
    """
    assert codes(lint(lint_source, source)) == []
    keeping = source.replace("embedding = embedding.clone()", "pass")
    assert codes(lint(lint_source, keeping)) == [(15, "VL101")]


def test_a_mixin_calling_self_model_keeps_rows_of_its_output_fields(lint_source):
    # `GenerationMixin._greedy_search`: `self.model` is set by the subclasses, and `outputs["logits"]` is a field of
    # the model's output, as `outputs.logits` is. A row of it kept per step pins the step's whole logits.
    found = lint(lint_source, """
        class GenerationMixin:
            def greedy(self, ids, steps, keep=False):
                raw = () if keep else None
                for _ in range(steps):
                    outputs = self.model(ids)
                    next_logits = outputs["logits"][:, -1, :]
                    if keep:
                        raw += (next_logits,)
                return {"logits": raw}

            def other(self, ids):
                return self.helper(ids)[:, -1]
    """)
    assert codes(found) == [(9, "VL101")]


def test_an_annotated_parameter_its_callers_pass_a_row_of_a_tensor_is_found_with_the_prefilter_on(lint_source):
    # `src` is annotated a tensor; the only caller passes `src_all[i : i + 1]`: keeping it keeps all of `src_all`.
    from conftest import lint_both_paths

    source = textwrap.dedent("""
        import torch


        class Pool:
            def __init__(self):
                self._history = []

            def _move(self, src: torch.Tensor, dst: torch.Tensor) -> None:
                self._history.append((src, dst))

            def compact(self, pairs: list[int]):
                src_all = torch.tensor(pairs)
                for i in range(len(pairs)):
                    self._move(src_all[i : i + 1], src_all[i : i + 1] + 1)
    """).lstrip("\n")
    assert (9, "VL101") in lint_both_paths(source)
