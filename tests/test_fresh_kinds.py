"""Kinds of code written fresh for pass thirteen (not tuned on before): a bank of features built per batch, a model
switched to eval mode in the same expression, masks that say so by their name or their `.bool()`, functions that run
as module hooks, lists of ids turned into tensors. Each kind is checked with the prefilter on and off."""

from __future__ import annotations

import textwrap

from conftest import lint_both_paths


def _lint(source: str) -> list[tuple[int, str]]:
    return lint_both_paths(textwrap.dedent(source).lstrip("\n"))


# ---------------------------------------------------------------- VL101: a list a loop fills with views of each batch
def test_a_feature_bank_built_by_a_function_named_build_is_no_object_layout():
    # `build_*` names set-up code for what it stores into `self`; a list it fills per batch and returns is no part of
    # an object, whatever the function is called.
    found = _lint("""
        import torch


        @torch.no_grad()
        def build_bank(model, loader):
            bank = []
            for images, targets in loader:
                feats = model(images)
                bank.append(feats[:, 0])
            return bank


        class Store:
            def __init__(self, model, x):
                self.first = []
                self.first.append(model(x)[:, 0])
    """)
    assert found == [(9, "VL101")]


def test_a_view_of_a_call_made_in_the_added_expression_itself_pins_each_iteration():
    found = _lint("""
        import torch


        @torch.no_grad()
        def bank(model, loader):
            rows = []
            for images in loader:
                rows.append(model(images)[:, 0])
            return rows


        def same_tensor(model, loader, x):
            rows = []
            first = model(x)[:, 0]
            for images in loader:
                rows.append(first)
            return rows
    """)
    assert found == [(8, "VL101")]


def test_a_list_read_after_a_loop_over_a_data_source_holds_every_batch_until_then():
    source = textwrap.dedent("""
        import torch


        @torch.no_grad()
        def embed(model, loader):
            bank = []
            for batch in loader:
                out = model(**batch)
                bank.append(out.last_hidden_state[:, 0])
            return torch.cat(bank)


        @torch.no_grad()
        def embed_rebound(model, batches):
            bank = []
            for i, batch in enumerate(batches):
                bank.append(model(batch)[:, 0])
            bank = torch.cat(bank)
            return bank


        def decode(model, x, steps: int):
            outs = []
            for _ in range(steps):
                h = model(x)
                outs.append(h[:, -1])
            outs = torch.cat(outs, dim=1)
            return outs
    """).lstrip("\n")
    assert lint_both_paths(source) == [(9, "VL101"), (17, "VL101")]
    from viewlint.engine import lint_text
    from viewlint.settings import Settings

    messages = [d.message for d in lint_text(source, "snippet.py", Settings(select=("VL101",)))]
    assert all("keeps, until the loop ends, every iteration's whole" in m for m in messages), messages


# ---------------------------------------------------------------- modules: methods that give the module itself
def test_a_module_switched_to_eval_mode_in_its_constructor_expression_is_still_that_module():
    source = """
        import torch
        from torch import nn


        class Extractor(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)

            def forward(self, x):
                return self.conv(x)


        def dump(images, path):
            extractor = Extractor().eval()
            out = extractor(images)
            torch.save(out[0], path)


        def dump_moved(images, path):
            extractor = Extractor().to("cuda").requires_grad_(False)
            out = extractor(images)
            torch.save(out[1:3], path)
    """
    assert _lint(source) == [(17, "VL103"), (23, "VL103")]
    # Not so for an object of another class: its `eval` is its own business.
    other = source.replace("class Extractor(nn.Module):", "class Extractor:").replace("super().__init__()", "pass")
    assert (17, "VL103") not in _lint(other)


def test_a_torchvision_model_factory_builds_a_module(lint_source):
    from test_inference_objects import beliefs

    found = beliefs(textwrap.dedent("""
        import torchvision


        def features(images):
            backbone = torchvision.models.resnet18().eval()
            weights = torchvision.models.get_weight("ResNet18_Weights.DEFAULT")
            return backbone, weights
    """))
    held = {target: b for (_, target), b in found.items()}
    assert held["backbone"]["why"] == "made by `torchvision.models.resnet18`"
    assert held["weights"]["why"] is None


# ---------------------------------------------------------------- VL404: what only arrays can be indexed by
def test_a_forward_input_indexed_by_a_boolean_tensor_or_a_mask_is_a_tensor():
    found = _lint("""
        import torch
        from torch import nn


        class Unpad(nn.Module):
            def forward(self, hidden, attention_mask):
                lengths = attention_mask.sum(-1)
                return hidden[attention_mask.bool()], lengths


        class Keep(nn.Module):
            def forward(self, tokens, keep_mask):
                kept = tokens[keep_mask]  # named a mask: an integer tensor of 0s and 1s would gather rows 0 and 1
                return kept, tokens[keep_mask.bool()]


        class Choose(nn.Module):
            def forward(self, options, choice):
                return options[choice]
    """)
    assert found == [(8, "VL404"), (13, "VL404"), (14, "VL404")]


# ---------------------------------------------------------------- hot paths: module hooks
def test_a_function_registered_as_a_module_hook_runs_on_every_pass():
    source = """
        import functools

        import torch

        stats = []


        def record(module, inputs, output: torch.Tensor):
            stats.append(output.abs().max().item())


        def record_named(module, inputs, output: torch.Tensor, name: str = ""):
            stats.append((name, output.abs().max().item()))


        def attach(model):
            for name, m in model.named_modules():
                m.register_forward_hook(record)
                m.register_forward_hook(functools.partial(record_named, name=name))
    """
    assert _lint(source) == [(9, "VL401"), (13, "VL401")]
    from viewlint.engine import lint_text
    from viewlint.settings import Settings

    message = lint_text(textwrap.dedent(source).lstrip("\n"), "snippet.py", Settings(select=("VL401",)))[0].message
    assert "a hook `attach` registers with `.register_forward_hook()`" in message
    unregistered = source.replace("m.register_forward_hook(record)", "m.train()").replace(
        "m.register_forward_hook(functools.partial(record_named, name=name))", "pass")
    assert _lint(unregistered) == []


# ---------------------------------------------------------------- VL201: ids made into a tensor
def test_a_tensor_made_of_a_list_of_ids_gathers_when_it_indexes():
    found = _lint("""
        import torch
        from torch import nn


        class Embedding(nn.Module):
            def __init__(self, n, d, pad_ids, pad_id: int):
                super().__init__()
                self.embed = nn.Embedding(n, d)
                ids = torch.tensor(pad_ids)
                nn.init.zeros_(self.embed.weight[ids])
                one = torch.tensor(pad_id)
                nn.init.zeros_(self.embed.weight[one])
    """)
    assert found == [(10, "VL201")]


# ---------------------------------------------------------------- tensors a class makes for itself
def test_an_attribute_every_assignment_of_which_is_a_factory_call_is_a_tensor_where_the_factory_puts_it():
    found = _lint("""
        import torch


        class Runner:
            def __init__(self, max_bs: int, device):
                self.seq_lens = torch.zeros(max_bs, dtype=torch.int32, device="cuda")
                self.positions = torch.empty(max_bs, dtype=torch.int64).cuda()
                self.host_lens = torch.zeros(max_bs, dtype=torch.int32)
                self.moved = torch.zeros(max_bs, device=device)
                self.mixed = torch.zeros(max_bs, device="cuda")
                self.staged = torch.zeros(max_bs).to(device="cpu")

            def reset(self):
                self.mixed = None

            def forward_decode(self, bs: int):
                a = int(self.seq_lens[:bs].max())
                b = self.positions.max().item()
                c = self.host_lens.max().item()
                d = self.moved.sum().item()
                e = self.mixed.sum().item()
                f = self.staged.sum().item()
                return a, b, c, d, e, f
    """)
    # The host tensors are read without a sync; an attribute also set to `None` is not known to be a tensor.
    assert found == [(17, "VL401"), (18, "VL401"), (20, "VL401")]


# ---------------------------------------------------------------- scripts: a module-level loop
def test_a_script_loop_keeps_views_of_what_each_iteration_makes_in_a_module_level_list():
    source = """
        import torch
        from torch import nn


        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(16, 32)

            def forward(self, x):
                return self.proj(x).unsqueeze(1).expand(-1, 4, -1).contiguous()


        model = Encoder().eval()
        table = torch.randn(8, 16)
        bank = []
        rows = []
        with torch.no_grad():
            for x in torch.randn(10, 8, 16):
                out = model(x)
                bank.append(out[:, 0])
                rows.append(table[:2])
    """
    # `out` is bound anew on each iteration: each entry keeps a whole `out`; `table` lives anyway.
    assert _lint(source) == [(21, "VL101")]


# ---------------------------------------------------------------- hot paths: training callbacks
def test_a_training_callbacks_per_step_methods_are_hot():
    source = """
        from transformers import TrainerCallback


        class GradNormCallback(TrainerCallback):
            def on_step_end(self, args, state, control, model=None, **kwargs):
                total = 0.0
                for p in model.parameters():
                    if p.grad is not None:
                        total += p.grad.norm().item() ** 2
                state.log_history.append({"grad_norm": total ** 0.5})

            def on_train_end(self, args, state, control, model=None, **kwargs):
                print(sum(p.norm().item() for p in model.parameters()))
    """
    assert _lint(source) == [(9, "VL401")]
    assert _lint(source.replace("class GradNormCallback(TrainerCallback):", "class GradNormLogger:")) == []


def test_whole_rows_of_a_row_major_tensor_are_row_major():
    source = """
        import torch


        def rows(n: int, i: int):
            buf = torch.zeros(n, 4, 8)
            a = buf[i].contiguous()
            b = buf[1:3].contiguous()
            c = buf[:, 0].contiguous()
            d = buf[::2].contiguous()
            return a, b, c, d


        class Staging:
            def __init__(self, n: int):
                self.buf = torch.empty(n, 4, 8)

            def read(self, slot: int):
                return self.buf[slot].contiguous()
    """
    assert _lint(source) == [(6, "VL301"), (7, "VL301"), (18, "VL301")]
    # A tensor restrided in place anywhere in the module may be any of them (through an alias, or a call).
    restrided = source.replace("return self.buf[slot].contiguous()", "self.buf.t_()\n        return self.buf[slot].contiguous()")
    assert _lint(restrided) == []


# ---------------------------------------------------------------- VL401: comparisons that answer with a Python bool
def test_a_comparison_that_answers_with_a_python_bool_waits_for_the_device():
    source = """
        import numpy as np
        import torch


        @torch.no_grad()
        def verify(target_model, draft: torch.Tensor, ids: torch.Tensor, host: np.ndarray):
            accepted = []
            for step in range(draft.shape[1]):
                pred = target_model(ids)[:, -1].argmax(-1)
                if not torch.equal(pred, draft[:, step]):
                    break
                if pred.allclose(draft[:, step]) and np.allclose(host, host):
                    accepted.append(pred)
                check(pred, equal=lambda a, b: torch.equal(a, b))
            return accepted
    """
    # A predicate handed over in a lambda runs when whoever holds it decides (a harness, once per signature).
    assert _lint(source) == [(10, "VL401"), (12, "VL401")]
