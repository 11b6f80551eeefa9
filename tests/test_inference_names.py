"""What a call gives where only names say what is called: a callable named as a model (`model(batch)`,
`text_model(ids)`, the same reading that makes a loop running it a step loop) gives a tensor or a tuple of them,
whatever it is given; `<ModelClass>.from_pretrained(...)` loads a module. And what a pickle keeps of a view."""

from __future__ import annotations

import textwrap

import pytest

from conftest import lint_both_paths
from test_inference_objects import beliefs

_COLLECT = textwrap.dedent("""\
    def cls_token(hidden):
        return hidden[:, 0, :]


    def collect({callee}, loader):
        pooled = []
        for batch in loader:
            out = {callee}(batch)
            h = cls_token(out)
            pooled.append(h)
        return pooled
""")


def test_a_view_of_what_a_model_returns_each_iteration_kept_in_the_returned_list_is_reported():
    source = _COLLECT.format(callee="model")
    row = source.splitlines().index("        pooled.append(h)") + 1
    assert (row, "VL101") in lint_both_paths(source)
    found = beliefs(source)
    bound = source.splitlines().index("        h = cls_token(out)") + 1
    assert found[(bound, "h")]["view"] is True
    assert found[(bound, "h")]["base"] == "out"  # the caller's name, not the helper's parameter


def test_a_callable_not_named_as_a_model_gives_nothing_known():
    source = _COLLECT.format(callee="scorer")
    assert not [code for _, code in lint_both_paths(source) if code == "VL101"]
    found = beliefs(source)
    bound = source.splitlines().index("        out = scorer(batch)") + 1
    assert found[(bound, "out")]["tensor"] is None


def test_the_kept_view_pins_its_iterations_whole_output_at_run_time():
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(compile(_COLLECT.format(callee="model"), "snippet.py", "exec"), namespace)  # noqa: S102 - our own snippet
    pooled = namespace["collect"](lambda batch: torch.randn(8, 16, 32), range(3))
    row_bytes = pooled[0].numel() * pooled[0].element_size()
    assert pooled[0].untyped_storage().nbytes() == 16 * row_bytes  # each entry keeps all 16 positions of its batch


_PRETRAINED = textwrap.dedent("""\
    import torch
    from transformers import {loader}


    def embed(prompts, ids, out):
        encoder = {loader}.from_pretrained("checkpoint")
        with torch.no_grad():
            for prompt, emb in zip(prompts, encoder(ids)[0]):
                torch.save(emb, f"{{out}}/{{prompt}}.pt")
""")


def test_rows_of_what_a_pretrained_model_returns_saved_one_by_one_are_reported():
    source = _PRETRAINED.format(loader="AutoModel")
    row = next(i for i, line in enumerate(source.splitlines(), 1) if "torch.save(emb" in line)
    assert (row, "VL103") in lint_both_paths(source)
    found = beliefs(source)
    loaded = next(i for i, line in enumerate(source.splitlines(), 1) if "from_pretrained" in line)
    assert found[(loaded, "encoder")]["tensor"] is False
    assert found[(row - 1, "emb")]["view"] is True


@pytest.mark.parametrize("loader", ["AutoTokenizer", "AutoProcessor", "AutoConfig", "DiffusionPipeline"])
def test_what_is_loaded_the_same_way_but_is_not_a_model_gives_nothing_known(loader):
    source = _PRETRAINED.format(loader=loader)
    assert not [code for _, code in lint_both_paths(source) if code == "VL103"]


def test_a_pickled_view_is_reported_and_a_pickled_copy_is_not():
    source = textwrap.dedent("""\
        import pickle

        import torch


        def dump(path):
            window = torch.randn(1000, 64)[:10]
            with open(path, "wb") as f:
                pickle.dump(window, f)
            return pickle.dumps(window.clone())
    """)
    rows = [row for row, code in lint_both_paths(source) if code == "VL103"]
    assert rows == [source.splitlines().index("        pickle.dump(window, f)") + 1]


def test_a_view_of_a_tensor_field_of_what_a_model_returns_kept_in_the_returned_list_is_reported():
    source = textwrap.dedent("""\
        def embed_all(model, loader):
            feats = []
            for batch in loader:
                out = model(**batch)
                feats.append(out.last_hidden_state[:, 0])
            return feats
    """)
    row = source.splitlines().index("        feats.append(out.last_hidden_state[:, 0])") + 1
    assert (row, "VL101") in lint_both_paths(source)


def test_a_field_of_something_not_a_models_output_is_not_taken_for_a_new_tensor():
    source = textwrap.dedent("""\
        def embed_all(store, loader):
            feats = []
            for batch in loader:
                out = store.lookup(batch)
                feats.append(out.last_hidden_state[:, 0])
            return feats
    """)
    assert not [code for _, code in lint_both_paths(source) if code == "VL101"]


_INDEXED = textwrap.dedent("""\
    def index_documents(model, docs, tokenizer):
        index = {{}}
        for doc_id, text in docs.items():
            ids = tokenizer(text, return_tensors="pt").input_ids
            hidden = model(ids).last_hidden_state
            index[doc_id] = {stored}
        return {returned}
""")


def test_a_view_stored_by_key_in_a_returned_dict_each_iteration_is_reported():
    source = _INDEXED.format(stored="hidden[0, 0]", returned="index")
    row = next(i for i, line in enumerate(source.splitlines(), 1) if "index[doc_id] =" in line)
    assert (row, "VL101") in lint_both_paths(source)


@pytest.mark.parametrize("stored, returned", [("hidden[0, 0].clone()", "index"), ("hidden[0, 0]", "len(index)")])
def test_a_copy_stored_by_key_or_a_dict_that_is_not_returned_is_not_reported(stored, returned):
    source = _INDEXED.format(stored=stored, returned=returned)
    assert not [code for _, code in lint_both_paths(source) if code == "VL101"]


def test_methods_modules_share_with_tensors_do_not_make_a_name_a_tensor():
    source = textwrap.dedent("""\
        def prepare(net, mask):
            net.cuda()
            net.half()
            mask.bool()
            mask.cuda()
            return net, mask
    """)
    # `.bool()` is a tensor's alone, so `mask` is a tensor and its discarded `.cuda()` is lost; `net` may be a module,
    # which `.cuda()` and `.half()` convert in place.
    assert [row for row, code in lint_both_paths(source) if code == "VL205"] == [4, 5]


@pytest.mark.parametrize("holder, expected", [("model", ["VL103"]), ("optimizer", [])])
def test_slices_of_a_models_state_dict_saved_are_reported(holder, expected):
    source = textwrap.dedent(f"""\
        import torch


        def export_pruned({holder}, keep, path):
            sd = {{k: v[:keep] for k, v in {holder}.state_dict().items()}}
            torch.save(sd, path)
    """)
    assert [code for _, code in lint_both_paths(source) if code == "VL103"] == expected


def test_a_saved_slice_of_a_state_dict_writes_the_whole_parameter_at_run_time(tmp_path):
    torch = pytest.importorskip("torch")
    model = torch.nn.Embedding(1000, 16)
    sliced, copied = tmp_path / "sliced.pt", tmp_path / "copied.pt"
    torch.save({k: v[:10] for k, v in model.state_dict().items()}, sliced)
    torch.save({k: v[:10].clone() for k, v in model.state_dict().items()}, copied)
    assert sliced.stat().st_size > 1000 * 16 * 4 > 10 * copied.stat().st_size


_KEPT_ON_SELF = textwrap.dedent("""\
    import torch.nn as nn


    class Generator(nn.Module):
        def __init__(self, lm):
            super().__init__()
            self.lm = lm
            self.last_logits = None

        def {method}(self, ids):
            logits = self.lm(ids)
            self.last_logits = {kept}
            return logits
""")


def test_a_view_of_a_tensor_the_call_made_kept_on_self_is_reported():
    source = _KEPT_ON_SELF.format(method="forward", kept="logits[:, -1]")
    row = source.splitlines().index("        self.last_logits = logits[:, -1]") + 1
    assert (row, "VL101") in lint_both_paths(source)


@pytest.mark.parametrize("method, kept", [
    ("forward", "logits[:, -1].clone()"),  # a copy owns its storage
    ("forward", "logits[None]"),  # a view of all of it
    ("forward", "ids[:, -1]"),  # the caller's tensor: the caller may well keep it
    ("_init_cache", "logits[:, -1]"),  # a set-up method lays the object out
])
def test_copies_whole_views_the_callers_tensors_and_set_up_methods_are_not_reported(method, kept):
    source = _KEPT_ON_SELF.format(method=method, kept=kept)
    assert not [code for _, code in lint_both_paths(source) if code == "VL101"]


def test_a_docstring_sentence_that_mentions_a_tensor_does_not_make_the_parameter_one():
    # liger-kernel's `get_optimal_block_size(n_cols, ...)`: "n_cols: Number of columns in the tensor", an int.
    source = '''
    import torch


    def block(n_cols, mask, ids, is_forward: bool):
        """
        Args:
            n_cols: Number of columns in the tensor
            mask: the attention mask tensor
            ids: LongTensor of shape (batch, seq)
        """
        if n_cols <= 2048:
            return mask, ids
        return None


    class F(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return block(x.shape[-1], x > 0, x.long(), True)
    '''
    assert [(row, code) for row, code in lint_both_paths(textwrap.dedent(source)) if code == "VL403"] == []
    from viewlint.analysis.annotations import docstring_value

    doc = textwrap.dedent(source).split('"""')[1]
    assert [docstring_value(doc, name).is_tensor for name in ("n_cols", "mask", "ids")] == [False, True, True]
