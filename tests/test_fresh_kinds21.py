"""Kinds of code met in pass twenty-one (the misses of the earlier blind rounds, read by kind): a view of a tensor this
call made, set as a field of objects the function hands back. Each lint kind is checked with the prefilter on and off;
the pinned storage with real torch."""

from __future__ import annotations

from conftest import lint_snippet as _lint, run_snippet as _run


# ---------------------------------------------------------------- a field of objects the function hands back
HYPOTHESES = """
    import torch


    class Hypothesis:
        def __init__(self, text):
            self.text = text
            self.y_sequence = None


    def decode(logits, lengths):
        return [Hypothesis(str(i)) for i in range(logits.shape[0])]


    def transcribe(model, batches):
        hypotheses = []
        for signal, lengths in batches:
            logits = model(signal).log_softmax(-1)
            current = decode(logits, lengths)
            for idx in range(logits.shape[0]):
                current[idx].y_sequence = logits[idx][: lengths[idx]]
            hypotheses += current
        return hypotheses
"""


def test_a_view_set_as_a_field_of_objects_added_to_the_returned_list_pins_the_batch():
    # NeMo PR #6243 (`EncDecCTCModel.transcribe`): every hypothesis kept the whole batch's log-probabilities alive.
    assert _lint(HYPOTHESES) == [(20, "VL101")]


def test_each_hypothesis_pins_the_whole_batch_at_run_time():
    scope = _run(HYPOTHESES)
    torch = scope["torch"]
    model = lambda signal: signal * 2  # noqa: E731 - a (batch, time, vocab) output made on each call
    batches = [(torch.randn(4, 10, 8), torch.tensor([3, 10, 5, 1])) for _ in range(2)]
    hypotheses = scope["transcribe"](model, batches)
    first = hypotheses[0].y_sequence
    assert first.numel() * first.element_size() == 3 * 8 * 4
    assert first.untyped_storage().nbytes() == 4 * 10 * 8 * 4  # the whole batch stays alive for one hypothesis


def test_the_objects_returned_directly_and_taken_in_a_loop_count_too():
    source = """
        def decode(model, signal, make):
            logits = model(signal).softmax(-1)
            hyps = make(logits.shape[0])
            for i, h in enumerate(hyps):
                h.scores = logits[i, :3]
            return hyps
    """
    assert _lint(source) == [(5, "VL101")]


def test_a_clone_or_objects_that_stay_inside_the_function_are_quiet():
    cloned = HYPOTHESES.replace("logits[idx][: lengths[idx]]", "logits[idx][: lengths[idx]].clone()")
    assert _lint(cloned) == []
    kept_here = HYPOTHESES.replace("            hypotheses += current\n", "            print(len(current))\n")
    assert _lint(kept_here) == []


def test_a_view_of_what_the_caller_passed_is_the_callers_business():
    # The objects keep a view of a tensor the caller holds anyway: nothing this call made is pinned.
    source = """
        def attach(logits, make):
            hyps = make(logits.shape[0])
            for i in range(logits.shape[0]):
                hyps[i].y_sequence = logits[i, :3]
            return hyps
    """
    assert _lint(source) == []


def test_an_object_given_the_base_too_pins_nothing_more():
    # sglang's graph runner: `graph.n = counts[1].view_as(...)` next to `graph.counts = counts`.
    source = """
        import torch


        def capture(record, rows):
            packed = torch.full((2,), rows, dtype=torch.int64)
            graph = record(rows)
            graph.global_rows = packed[1]
            graph.packed = packed
            return graph
    """
    assert _lint(source) == []
    assert _lint(source.replace("            graph.packed = packed\n", "")) == [(7, "VL101")]


# ---------------------------------------------------------------- a demo's helper builds its inputs on the CPU
TRAINER_DEMO = """
    import torch
    from torch import nn


    class Trainer:
        def __init__(self, loss_fn, optimizer):
            self.loss_fn = loss_fn
            self.optimizer = optimizer

        def train_step(self, batch):
            self.optimizer.zero_grad()
            loss = self.loss_fn(batch)
            loss.backward()
            self.optimizer.step()
            return loss.item()


    def run(steps):
        model = nn.Linear(4, 1)
        trainer = Trainer(lambda b: model(b).pow(2).mean(), torch.optim.SGD(model.parameters(), lr=0.1))
        return [trainer.train_step(torch.randn(8, 4)) for _ in range(steps)]


    if __name__ == "__main__":
        print(run(3))
"""


def test_a_function_only_the_main_block_calls_is_the_demo_and_says_nothing_of_the_device():
    # The demo's `torch.randn(8, 4)` is on the CPU because the demo has no GPU at hand, not because the trainer's
    # callers keep batches there: `loss.item()` once per training step waits for the GPU where there is one.
    assert _lint(TRAINER_DEMO) == [(15, "VL401")]


def test_a_helper_other_code_calls_too_keeps_its_evidence():
    # `smoke()` calls `run` as well: `run` is not the demo's alone, and its CPU batches are what the trainer gets.
    source = TRAINER_DEMO.replace('    if __name__ == "__main__":', "    def smoke():\n        return run(1)\n\n\n    if __name__ == \"__main__\":")
    assert "def smoke" in source
    assert _lint(source) == []


# ---------------------------------------------------------------- what prepares each step's metadata or batch
STEP_METADATA = """
    import torch


    class PagedCache:
        def __init__(self, device):
            self.block_table = torch.zeros(8, 4, dtype=torch.int32, device=device)

        def build_attn_metadata(self, query_lens: torch.Tensor, seq_lens: torch.Tensor):
            starts = []
            for i in range(query_lens.shape[0]):
                starts.append(int(seq_lens[i].item()) - int(query_lens[i].item()))
            return starts


    class Mamba2Metadata:
        def __init__(self, n, device):
            self.cu_seqlens = torch.zeros(n + 1, dtype=torch.int, device=device)

        def prepare(self, seq_lens: torch.Tensor):
            torch.cumsum(seq_lens, dim=0, out=self.cu_seqlens[1:])
            return self.cu_seqlens[-1].item()


    class LoRAManager:
        def prepare_lora_batch(self, forward_batch):
            return int(torch.max(forward_batch.extend_seq_lens))


    class Tokenizer:
        def prepare(self, seq_lens: torch.Tensor):
            return seq_lens.max().item()
"""


def test_what_builds_a_steps_attention_metadata_or_takes_a_forward_batch_runs_every_step():
    # vLLM PR #51738 and TensorRT-LLM's `Mamba2Metadata.prepare`: host reads in what runs once per scheduler step;
    # SGLang hands every step's batch (`forward_batch`) to what prepares it (its LoRA manager's batch info).
    assert _lint(STEP_METADATA) == [(11, "VL401"), (11, "VL401"), (21, "VL401"), (26, "VL401")]


def test_the_same_reads_elsewhere_are_not_per_step():
    # A tokenizer's `prepare` and a metadata class's set-up run once per request or once at start.
    source = STEP_METADATA.replace("def build_attn_metadata(", "def describe_layout(").replace(
        "class Mamba2Metadata:", "class Mamba2Config:").replace("def prepare_lora_batch(self, forward_batch)", "def prepare_lora_batch(self, batch)").replace(
        "forward_batch.extend_seq_lens", "batch.extend_seq_lens")
    assert _lint(source) == []


# ---------------------------------------------------------------- a loop that calls what runs the step, a closure
STEP_BY_METHOD = """
    import torch


    class Trainer:
        def __init__(self, model, optimizer):
            self.model = model
            self.optimizer = optimizer

        def update_weights(self, batch):
            loss = self.model(batch).mean()
            loss.backward()
            self.optimizer.step()
            return loss.detach()

        def fit(self, loader):
            total = 0.0
            for batch in loader:
                loss = self.update_weights(batch)
                total += loss.item()
            return total

        def fit_per_epoch(self, loader, epochs):
            for epoch in range(epochs):
                losses = [self.update_weights(batch) for batch in loader]
                print(epoch, torch.stack(losses).mean().item())
"""


def test_a_loop_that_calls_a_method_running_the_step_is_a_step_loop():
    # A trainer's `fit` loop runs the optimizer's step through `self.update_weights(batch)`: reading the loss on the
    # host there waits for the GPU once per step (Lightning's `run_training_batch`, through `optimizer_step`).
    assert _lint(STEP_BY_METHOD) == [(19, "VL401")]


def test_an_epoch_loop_around_a_comprehension_of_steps_is_not():
    # `fit_per_epoch`: the comprehension runs the steps; the epoch's one read after it is once per epoch.
    assert (26, "VL401") not in _lint(STEP_BY_METHOD)


CLOSURE = """
    import torch
    from torch import nn


    class Loop:
        def __init__(self, model, optimizer):
            self.model = model
            self.optimizer = optimizer
            self.running = 0.0

        def run_batch(self, batch):
            def closure():
                x, y = batch
                loss = nn.functional.mse_loss(self.model(x), y)
                loss.backward()
                return loss

            loss = closure()
            self.running += loss.item()
            self.optimizer.step()
"""


def test_what_a_function_defined_here_returns_is_what_calling_it_gives():
    # `loss = closure()`: the closure's own return, a loss tensor, read on the host on every step.
    assert _lint(CLOSURE) == [(19, "VL401")]


def test_a_closure_returning_a_number_gives_a_number():
    # The closure reads the loss itself (its own finding); what the loop gets back is a Python float.
    source = CLOSURE.replace("                return loss\n", "                return loss.item()\n").replace(
        "self.running += loss.item()", "self.running += loss")
    assert _lint(source) == [(16, "VL401")]


# ---------------------------------------------------------------- a field of the dict a model here returns
DICT_LOGITS = """
    import torch
    from torch import nn


    class TinyLM(nn.Module):
        def __init__(self, vocab=16, hidden=8):
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden)
            self.lm_head = nn.Linear(hidden, vocab, bias=False)

        def forward(self, input_ids):
            return {"logits": self.lm_head(self.embed(input_ids))}


    def sample(model: TinyLM, input_ids, steps):
        raw_logits = ()
        for _ in range(steps):
            outputs = model(input_ids)
            next_token_logits = outputs["logits"][:, -1, :]
            raw_logits += (next_token_logits,)
            input_ids = torch.cat([input_ids, next_token_logits.argmax(-1)[:, None]], dim=-1)
        return raw_logits
"""


def test_a_slice_of_a_field_of_what_the_model_returned_this_step_pins_the_step():
    # transformers PR #31292: `outputs["logits"][:, -1, :]` kept per step keeps that step's whole logits alive.
    assert (20, "VL101") in _lint(DICT_LOGITS)


def test_the_pinned_logits_at_run_time():
    scope = _run(DICT_LOGITS)
    torch = scope["torch"]
    kept = scope["sample"](scope["TinyLM"](), torch.zeros(2, 5, dtype=torch.long), 3)
    assert kept[0].numel() * kept[0].element_size() == 2 * 16 * 4
    assert kept[0].untyped_storage().nbytes() == 2 * 5 * 16 * 4  # every position of the first step's logits


# ---------------------------------------------------------------- an environment's step
ENVIRONMENT = """
    import torch


    class Go2Env:
        def __init__(self, num_envs, device):
            self.reset_buf = torch.zeros(num_envs, dtype=torch.bool, device=device)
            self.episode_length_buf = torch.zeros(num_envs, dtype=torch.long, device=device)

        def reset_idx(self, envs_idx):
            self.episode_length_buf[envs_idx] = 0

        def step(self, actions):
            self.episode_length_buf += 1
            self.reset_buf = self.episode_length_buf > 100
            self.reset_idx(self.reset_buf.nonzero(as_tuple=False).reshape((-1,)))
            return actions


    class SettingsEnv:
        def __init__(self, device):
            self.flags = torch.zeros(4, dtype=torch.bool, device=device)

        def step(self, actions):
            return self.flags.nonzero()
"""


def test_a_simulators_step_runs_every_environment_step():
    # Genesis PR #2092: `nonzero()` of the reset mask in `Go2Env.step` waited for the GPU on every step. A class named
    # `*Env` without `reset*` (environment settings) says nothing of steps.
    assert _lint(ENVIRONMENT) == [(15, "VL404")]


def test_a_nested_function_with_parameters_returns_what_its_arguments_make():
    # `def scale(t): return t.exp()` is on the device of each call's argument, which its walk does not know: a call
    # with a CPU tensor is no device tensor. A closure over the forward's own input is one.
    source = """
        import torch
        from torch import nn


        class Gate(nn.Module):
            def forward(self, x: torch.Tensor):
                def scale(t):
                    return t.exp()

                def own():
                    return x.exp().sum()

                if scale(torch.ones(1)) > 0:
                    x = x * 2
                if own() > 0:
                    return x
                return -x
    """
    assert _lint(source) == [(15, "VL403")]


def test_a_return_inside_a_nested_function_hands_back_nothing_of_the_outer_one():
    # The objects stay inside `decode`: only the closure returns the list, and nothing calls it.
    source = HYPOTHESES.replace("            hypotheses += current\n        return hypotheses\n",
                                "        def keep():\n            return current\n\n        return len(hypotheses)\n")
    assert "def keep" in source
    assert _lint(source) == []
