"""Kinds of code met in pass thirty-one, on a seventh blind set of reconstructed public bugs and a seventeenth audit
of libraries never read before (verl, bitsandbytes, sentence-transformers, Composer). Each lint kind is checked with
the prefilter on and off; what a finding claims, with real torch."""

from __future__ import annotations

from conftest import lint_snippet as _lint, run_snippet as _run

# ------------------------------------------- a `*_weight` attribute a method sets to a number is no parameter
SCHEDULED = """
    import torch


    class TrainerCallback:
        pass


    class WeightScheduler(TrainerCallback):
        def __init__(self, loss, warmup_steps=10):
            self.loss = loss
            self.max_query_weight = loss.query_weight
            self._current_query_weight = 0.0 if self.max_query_weight is not None else None
            self._current_doc_weight = 0.0
            self.warmup_steps = warmup_steps

        def _value(self, step: int, max_value: float) -> float:
            return max_value * min(step / self.warmup_steps, 1.0)

        def on_step_begin(self, step):
            new_query_weight = self._value(step, self.max_query_weight)
            if new_query_weight != self._current_query_weight or self._current_doc_weight > 0:
                self._current_query_weight = new_query_weight
                self.loss.query_weight = new_query_weight


    class Gate(torch.nn.Module):
        def forward(self, x):
            if self.gate_weight.any():
                return x * self.gate_weight
            return x
"""


def test_a_weight_named_attribute_some_method_sets_to_a_number_is_not_taken_for_a_parameter():
    from viewlint.beliefs import beliefs_of_text
    import textwrap

    # The callback's weights are numbers (`= 0.0` in `__init__`); the module's `gate_weight`, set nowhere here,
    # is still a parameter by its name, and testing it in `forward` is a sync.
    assert _lint(SCHEDULED) == [(28, "VL403")]
    source = textwrap.dedent(SCHEDULED).lstrip("\n")
    probe = source.replace("        new_query_weight = self._value",
                           "        w = self._current_query_weight\n        new_query_weight = self._value")
    believed = {r["target"]: r["tensor"] for r in beliefs_of_text(probe, "m.py")}
    assert believed["w"] is not True
    scope = _run(SCHEDULED)

    class Loss:
        query_weight = 5e-5

    loss = Loss()
    scheduler = scope["WeightScheduler"](loss)
    assert scheduler._current_query_weight == 0.0 and not isinstance(scheduler._current_doc_weight, scope["torch"].Tensor)
    scheduler.on_step_begin(5)
    assert loss.query_weight == 2.5e-5 and isinstance(loss.query_weight, float)


# ------------------------------------------- `list[str] | str` is one key or several, not an index that gathers
REGISTRY = """
    import torch


    class EngineRegistry:
        _engines = {}

        @classmethod
        def register(cls, model_type: str, backend: list[str] | str, device: list[str] | str = "cuda"):
            def decorator(engine_class):
                if model_type not in cls._engines:
                    cls._engines[model_type] = {}
                backends = backend if isinstance(backend, list) else [backend]
                devices = device if isinstance(device, list) else [device]
                for current_backend in backends:
                    if current_backend not in cls._engines[model_type]:
                        cls._engines[model_type][current_backend] = {}
                    for current_device in devices:
                        cls._engines[model_type][current_backend][current_device] = engine_class
                return engine_class

            return decorator


    def scatter_rows(buf: torch.Tensor, rows: list[int], col: int, v: float):
        buf[rows][:, col] = v
"""


def test_a_list_or_string_annotation_is_not_a_gathering_index_and_a_classmethods_cls_container_is_a_dict():
    import textwrap

    from viewlint.beliefs import beliefs_of_text

    # The registry's nested dicts are keyed by names; `buf[rows][:, col] = v` still loses its write.
    assert _lint(REGISTRY) == [(25, "VL202")]
    source = textwrap.dedent(REGISTRY).lstrip("\n")
    probe = source.replace("            for current_backend in backends:",
                           "            table = cls._engines\n            for current_backend in backends:")
    believed = {r["target"]: r for r in beliefs_of_text(probe, "m.py")}
    assert believed["table"]["tensor"] is False and believed["current_backend"]["tensor"] is not True
    scope = _run(REGISTRY)
    registry, torch = scope["EngineRegistry"], scope["torch"]
    registry.register("language_model", backend=["fsdp", "megatron"])(object)
    registry.register("language_model", backend="veomni", device=["cuda", "npu"])(int)
    assert registry._engines["language_model"] == {"fsdp": {"cuda": object}, "megatron": {"cuda": object},
                                                   "veomni": {"cuda": int, "npu": int}}
    buf = torch.zeros(3, 2)
    scope["scatter_rows"](buf, [0, 2], 1, 5.0)
    assert buf.sum().item() == 0.0  # the write went to a gathered copy


# ------------------------------------------- what runs on a value gone bad, and a smoke check that steps once
ANOMALY = """
    import torch


    class Engine:
        def __init__(self, module, optimizer):
            self.module, self.optimizer = module, optimizer

        def optimizer_step(self):
            grad_norm = torch.nn.utils.clip_grad_norm_(self.module.parameters(), 1.0)
            if not torch.isfinite(grad_norm):
                print(f"WARN: grad_norm is not finite: {grad_norm}")
                self.optimizer.zero_grad()
            else:
                self.optimizer.step()
            return grad_norm.item()


    def train_step(model, optimizer, batch):
        loss = model(batch).sum()
        loss.backward()
        if torch.isnan(loss).any() or torch.isinf(loss).any():
            print("bad loss", loss.item())
        optimizer.step()
        return loss.detach()


    def sanity_check(device="cuda"):
        p = torch.nn.Parameter(torch.rand(10, 10, device=device))
        p1 = p.data.sum().item()
        adam = torch.optim.Adam([p])
        loss = (torch.rand(10, 10, device=device) * p).sum()
        loss.backward()
        adam.step()
        p2 = p.data.sum().item()
        assert p1 != p2
"""


def test_what_a_non_finite_test_guards_is_cold_and_a_function_that_builds_its_optimizer_is_no_training_step():
    # The tests themselves sync on every step (10, 21); the f-string and `.item()` they guard run on an anomaly
    # only; the `.item()` after the branch (15) runs every step; `sanity_check` builds its optimizer and steps once.
    assert _lint(ANOMALY) == [(10, "VL403"), (15, "VL401"), (21, "VL403"), (21, "VL403")]
    scope = _run(ANOMALY)
    torch = scope["torch"]
    model = torch.nn.Linear(4, 2)
    engine = scope["Engine"](model, torch.optim.SGD(model.parameters(), lr=0.1))
    model(torch.ones(3, 4)).sum().backward()
    before = model.weight.detach().clone()
    assert engine.optimizer_step() > 0 and not torch.equal(before, model.weight)  # finite: the step ran
    model.weight.grad.fill_(float("inf"))
    before = model.weight.detach().clone()
    engine.optimizer_step()
    assert torch.equal(before, model.weight)  # not finite: the warning branch, no step
    scope["sanity_check"]("cpu")


# ------------------------------------------- an entry grown through local aliases, once a call per key
ACCUMULATED = """
    import torch


    class RequestState(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.acc = None

        def forward(self, incoming):
            if self.acc is None:
                self.acc = dict(incoming)
                return
            for k, v in incoming.items():
                if k not in self.acc:
                    self.acc[k] = v
                    continue
                existing = self.acc[k]
                if isinstance(v, dict):
                    for sk, sv in v.items():
                        ev = existing[sk]
                        existing[sk] = torch.cat([ev, sv], dim=0)
                else:
                    self.acc[k] = torch.cat([existing, v], dim=0)

        def reset(self, incoming):
            for k, v in incoming.items():
                existing = v
                self.acc[k] = torch.cat([existing, v], dim=0)
"""


def test_an_entry_grown_through_a_local_alias_in_a_loop_over_its_keys_grows_once_a_call():
    # Both joins grow an entry of `self.acc` on every call (21, 23); `reset`'s alias is of the new piece, not of the
    # entry, so its join starts the entry over (a doubled piece), and `reset` is not hot anyway.
    assert _lint(ACCUMULATED) == [(21, "VL309"), (23, "VL309")]
    scope = _run(ACCUMULATED)
    torch = scope["torch"]
    state = scope["RequestState"]()
    for _ in range(3):
        state({"hidden": torch.ones(1, 4), "codes": {"audio": torch.zeros(1, 2)}})
    assert state.acc["hidden"].shape == (3, 4) and state.acc["codes"]["audio"].shape == (3, 2)


# ------------------------------------------- a cache keyed by a tensor runs once per new tensor: every step
TENSOR_CACHED = """
    import functools

    import torch


    def tensor_cache(fn):
        last = {}

        @functools.wraps(fn)
        def wrapper(*args):
            if last.get("args") is not None and all(a is b for a, b in zip(args, last["args"])):
                return last["result"]
            last["args"], last["result"] = args, fn(*args)
            return last["result"]

        return wrapper


    @tensor_cache
    def prepare_lens(cu_seqlens):
        return torch.diff(cu_seqlens)


    @tensor_cache
    def prepare_position_ids(cu_seqlens):
        return torch.cat([torch.arange(n, device=cu_seqlens.device) for n in prepare_lens(cu_seqlens).unbind()])


    @tensor_cache
    def prepare_sequence_ids(cu_seqlens):
        return prepare_position_ids(cu_seqlens).eq(0).cumsum(0) - 1


    @functools.lru_cache
    def window_sizes(n: int):
        return torch.arange(n).tolist()


    @functools.lru_cache
    def block_sizes(n: int, device: torch.device):
        return torch.full((n,), 3, device=device)


    @functools.lru_cache
    def non_pad_index(sizes: torch.Tensor, block: int):
        index = torch.arange(sizes.shape[0] * block, device=sizes.device).view(-1, block)
        return index[torch.arange(block, device=sizes.device)[None, :] < sizes[:, None]]


    class Conv(torch.nn.Module):
        def forward(self, x, cu_seqlens):
            seq_idx = prepare_sequence_ids(cu_seqlens)
            sizes = block_sizes(2, x.device)
            kept = non_pad_index(sizes, 4)
            return x * seq_idx[:, None] + len(window_sizes(4)) + kept.numel()
"""


def test_a_cache_keyed_by_a_tensor_runs_on_every_new_tensor_and_one_keyed_by_ints_once():
    # `prepare_position_ids` is keyed by `cu_seqlens` (through `prepare_sequence_ids`, which hands it on): its
    # per-sequence `torch.arange(n)` reads each length on the host, once per packed batch. `window_sizes(4)` runs once,
    # and so does `non_pad_index`'s mask read: the tensor it is keyed by comes from another cache, the same each time.
    assert _lint(TENSOR_CACHED) == [(26, "VL401")]
    scope = _run(TENSOR_CACHED)
    torch = scope["torch"]
    ids = scope["prepare_sequence_ids"](torch.tensor([0, 2, 5]))
    assert ids.tolist() == [0, 0, 1, 1, 1]
    assert scope["prepare_sequence_ids"](torch.tensor([0, 1, 2])).tolist() == [0, 1]  # a new tensor: computed again
    sizes = scope["block_sizes"](2, torch.device("cpu"))
    assert scope["block_sizes"](2, torch.device("cpu")) is sizes  # the same object: `non_pad_index` hits its cache
    assert scope["non_pad_index"](sizes, 4).tolist() == [0, 1, 2, 4, 5, 6]


# ------------------------------------------- a method the demo calls keeps where its values live: `.cpu()` fixes nothing
SERIALIZED = """
    from io import BytesIO

    import torch


    def tensor2bytes(t: torch.Tensor):
        buf = BytesIO()
        torch.save(t.detach().cpu(), buf)
        return buf.getvalue()


    class Server:
        def __init__(self, model):
            self.model = model

        def encode(self, images, spans):
            all_embeds = self.model(images).to(torch.device("cpu"))
            return [tensor2bytes(all_embeds[start:end]) for start, end in spans]


    if __name__ == "__main__":
        server = Server(torch.nn.Flatten())
        blobs = server.encode(torch.randn(4, 8), [(0, 1), (1, 4)])
"""


def test_a_method_only_the_demo_calls_keeps_what_it_passes_and_cpu_of_its_host_view_fixes_nothing():
    # `encode` moves the batch to the host itself; `.cpu()` of the row view it hands the helper returns that view, so
    # the file gets the whole batch (a helper that only saves: the prefilter keeps it without a view of its own).
    assert _lint(SERIALIZED) == [(8, "VL102")]
    scope = _run(SERIALIZED)
    torch = scope["torch"]
    base = torch.randn(4, 8)
    assert base[0:1].cpu().data_ptr() == base.data_ptr()  # `.cpu()` of a host tensor: the same view
    server = scope["Server"](torch.nn.Identity())
    blob = server.encode(base, [(0, 1)])[0]
    loaded = torch.load(scope["BytesIO"](blob))
    assert loaded.shape == (1, 8) and loaded.untyped_storage().nbytes() == base.untyped_storage().nbytes()


# ------------------------------------------- clones appended to a list that only a join reads
STACKED = """
    import torch


    class MoE(torch.nn.Module):
        def __init__(self, layers=2):
            super().__init__()
            self.gates = torch.nn.ModuleList(torch.nn.Linear(8, 4) for _ in range(layers))

        def forward(self, hidden_list):
            router_logits_list = [{} for _ in hidden_list]
            for idx, gate in enumerate(self.gates):
                for i, hidden in enumerate(hidden_list):
                    router_logits_list[i][f"layer{idx}"] = gate(hidden)
            stacked = {}
            for layer_name in list(router_logits_list[0].keys()):
                layer_logits = []
                for i in range(len(hidden_list)):
                    layer_logits.append(router_logits_list[i][layer_name].clone().detach())
                stacked[layer_name] = torch.stack(layer_logits, dim=0)
            history = []
            for hidden in hidden_list:
                history.append(hidden.clone())
                hidden.mul_(2)
            return stacked, torch.stack(history)
"""


def test_a_clone_appended_to_a_list_only_a_join_reads_protects_nothing():
    # The router logits are cloned, then stacked (18); the hidden states are written in place after their clone (22):
    # there the clone keeps the values the stack must see.
    assert [line for line, code in _lint(STACKED) if code == "VL313"] == [18]
    scope = _run(STACKED)
    torch = scope["torch"]
    model = scope["MoE"]()
    hidden = [torch.randn(3, 8), torch.randn(3, 8)]
    kept = [h.clone() for h in hidden]
    stacked, history = model(hidden)
    assert torch.equal(history, torch.stack(kept))  # the clones kept the values from before `mul_`
    # Without the clone the stack holds the same values: it copies them itself.
    assert torch.equal(torch.stack([t.detach() for t in [model.gates[0](h) for h in kept]]),
                       torch.stack([t.clone().detach() for t in [model.gates[0](h) for h in kept]]))


# ------------------------------------------- a module object handed to a constructor: calls of it run its class's
INJECTED = """
    import torch


    class Head(torch.nn.Module):
        def forward(self, x):
            return x[:, 0]


    class Runner:
        def __init__(self, model):
            self.model = model
            self.kept = []

        def run(self, batches):
            for batch in batches:
                out = self.model(batch)
                self.kept.append(out)
            return len(self.kept)


    if __name__ == "__main__":
        Runner(Head()).run([torch.randn(4, 8)])
"""


def test_a_module_every_construction_hands_over_runs_its_forward_when_called():
    # `Runner(Head())`: `self.model(batch)` runs `Head.forward`, a row view of each batch, kept across the loop.
    assert [(line, code) for line, code in _lint(INJECTED) if code == "VL101"] == [(17, "VL101")]
    scope = _run(INJECTED)
    torch = scope["torch"]
    runner = scope["Runner"](scope["Head"]())
    batch = torch.randn(4, 8)
    runner.run([batch])
    assert runner.kept[0]._base is batch and runner.kept[0].untyped_storage().nbytes() == batch.untyped_storage().nbytes()


# ------------------------------------------- a method named `*_forward` runs in a forward pass
NAMED_FORWARD = """
    import torch


    class CacheHook:
        def pre_forward(self, module, hidden: torch.Tensor):
            ratio = (hidden.abs().mean() / module.prev.abs().mean()).item()
            return ratio < 0.05

        def describe(self, hidden: torch.Tensor):
            return hidden.abs().mean().item()
"""


def test_a_method_named_like_a_forward_pass_is_hot():
    # A hook's `pre_forward` runs before every forward of the module it wraps; `describe` is no forward.
    assert _lint(NAMED_FORWARD) == [(6, "VL401")]
    scope = _run(NAMED_FORWARD)
    torch = scope["torch"]
    module = torch.nn.Module()
    module.prev = torch.ones(2, 2)
    assert scope["CacheHook"]().pre_forward(module, torch.ones(2, 2)) is False


# ------------------------------------------- an `if`'s test runs in the context around it, short circuits aside
TESTED = """
    import torch


    class Ransac(torch.nn.Module):
        def forward(self, model, step, loss):
            if not bool(torch.isfinite(model).all()):
                return None
            if step % 100 == 0 and loss.item() > 1.0:
                print("large loss")
            if step % 100 == 0 or loss.item() > 1.0:
                print("logged")
            return model
"""


def test_an_if_test_runs_where_the_if_is_and_the_right_of_a_cold_and_runs_with_the_guard():
    # The non-finite test syncs on every call (6), though what it guards runs on an anomaly only; `loss.item()` after
    # `step % 100 == 0 and` runs once per hundred steps (8); after `or` it runs whenever the guard does not hold (10).
    assert _lint(TESTED) == [(6, "VL401"), (10, "VL401")]
    scope = _run(TESTED)
    torch = scope["torch"]
    model = scope["Ransac"]()
    assert model(torch.ones(2), 1, torch.tensor(0.5)) is not None
    assert model(torch.tensor([float("nan")]), 1, torch.tensor(0.5)) is None
