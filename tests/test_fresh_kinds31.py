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
