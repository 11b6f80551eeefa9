"""Kinds of code met in pass thirty-four, on an eighth blind set of reconstructed public bugs and an eighteenth audit
of libraries never read before (tianshou, pytorch-metric-learning, optimum-quanto, pykeen, hqq). Each lint kind is
checked with the prefilter on and off; what a finding claims, with real torch."""

from __future__ import annotations

import pytest

from conftest import lint_snippet as _lint, run_snippet as _run

# ------------------------------------------- `kl_divergence` gives a tensor: a line search's test waits for the GPU
LINE_SEARCH = """
    import torch
    from torch.distributions import Normal, kl_divergence


    class TRPO:
        def __init__(self, policy, max_kl=0.01):
            self.policy = policy
            self.max_kl = max_kl

        def line_search(self, obs, old_dist, actor_loss, adv):
            for i in range(10):
                new_dist = self.policy(obs)
                kl = kl_divergence(old_dist, new_dist).mean()
                if kl < self.max_kl and actor_loss > 0:
                    return i
            return None
"""


def test_a_kl_divergence_is_a_tensor_and_testing_it_in_a_line_search_waits_for_the_gpu():
    # Line 14: `kl` is a tensor (`kl_divergence(...).mean()`), tested once per try of the search that runs the policy.
    assert _lint(LINE_SEARCH) == [(14, "VL403")]
    scope = _run(LINE_SEARCH)
    torch = scope["torch"]
    old = scope["Normal"](torch.zeros(3), torch.ones(3))
    search = scope["TRPO"](lambda obs: scope["Normal"](torch.zeros(3) + 0.01, torch.ones(3)))
    kl = scope["kl_divergence"](old, search.policy(None)).mean()
    assert isinstance(kl, torch.Tensor) and kl.dim() == 0
    assert search.line_search(torch.zeros(3), old, 1.0, torch.ones(3)) == 0


# ------------------------------------------- a classmethod that returns `cls(...)` makes an instance, as the class does
PROMPT_CACHE = """
    import os

    import torch
    import torch.nn as nn


    class TextEncoder(nn.Module):
        def __init__(self, hidden=8):
            super().__init__()
            self.embed = nn.Embedding(100, hidden)

        @classmethod
        def load(cls, name, hidden=8):
            if name is None:
                return None
            return cls(hidden)

        def forward(self, ids):
            hidden = self.embed(ids)
            return hidden, hidden[:, 0]


    class Cached(TextEncoder):
        pass


    def cache_prompts(name, prompts, ids, cache_dir):
        encoder = Cached.load(name)
        with torch.no_grad():
            embeddings = encoder(ids)[0]
        for prompt, embedding in zip(prompts, embeddings):
            torch.save(embedding, os.path.join(cache_dir, prompt + ".pt"))
"""


def test_an_inherited_classmethod_that_returns_cls_makes_an_instance_of_the_class_it_is_called_on(tmp_path):
    # Line 32: each file gets the whole batch of embeddings, as if the module had been built by `Cached()`.
    assert _lint(PROMPT_CACHE) == [(32, "VL103")]
    scope = _run(PROMPT_CACHE)
    torch = scope["torch"]
    scope["cache_prompts"]("m", ["a", "b"], torch.zeros(2, 5, dtype=torch.long), str(tmp_path))
    saved = torch.load(tmp_path / "a.pt")
    assert saved.untyped_storage().nbytes() == 2 * 5 * 8 * 4 > saved.numel() * saved.element_size()


def test_a_classmethod_that_returns_something_else_makes_nothing_known():
    source = PROMPT_CACHE.replace("            return cls(hidden)", "            return torch.zeros(2, 5, 8)")
    assert _lint(source) == []


def test_a_model_class_of_transformers_loaded_by_from_pretrained_is_a_module_and_a_tokenizer_is_not():
    from viewlint.analysis.constructors import library_model_factory

    assert library_model_factory("transformers.CLIPTextModel.from_pretrained")
    assert library_model_factory("diffusers.AutoencoderKL.from_pretrained")
    assert library_model_factory("transformers.AutoModelForCausalLM.from_config")
    assert not library_model_factory("transformers.AutoTokenizer.from_pretrained")
    assert not library_model_factory("transformers.CLIPImageProcessor.from_pretrained")
    assert not library_model_factory("diffusers.StableDiffusionPipeline.from_pretrained")
    assert not library_model_factory("diffusers.DDIMScheduler.from_pretrained")
    source = """
        import os
        import torch
        from transformers import CLIPTextModel


        def cache_prompts(name, prompts, ids, cache_dir):
            encoder = CLIPTextModel.from_pretrained(name)
            embeddings = encoder(ids)[0]
            for prompt, embedding in zip(prompts, embeddings):
                torch.save(embedding, os.path.join(cache_dir, prompt + ".pt"))
    """
    assert _lint(source) == [(10, "VL103")]


# ------------------------------------------- VL314: a device tensor taken to the host and straight back
ROUND_TRIPS = """
    import numpy as np
    import torch
    from scipy import ndimage


    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor, lengths: list, cpu_mask: torch.Tensor) -> torch.Tensor:
            a = torch.from_numpy(x.detach().cpu().numpy().T.copy()).cuda()
            b = torch.tensor(x.tolist(), device=x.device)
            c = torch.as_tensor(np.ascontiguousarray(x.cpu().numpy()[:, ::2])).to(device=x.device)
            e = torch.tensor(lengths).to(x.device)
            f = torch.tensor(cpu_mask.cpu().numpy()).to(torch.float32)
            return a + b + c + e + f


    class Filtered(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.tensor(ndimage.median_filter(x.cpu().numpy(), 3)).to(x.device)


    def export(x: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(x.cpu().numpy().copy()).to(x.device)
"""


def test_round_trips_through_passive_steps_only_in_hot_paths():
    # 8-10: only copies, reorders and casts on the way (`.T`, a slice, `np.ascontiguousarray`, `.tolist()`), each
    # also a sync (VL402, VL401); 11: a list never on the device; 12: a cast, not a move. 18: a SciPy filter the device
    # lacks (and a forward that hands its input to another library is no per-layer hot path); 22: not a hot path.
    found = _lint(ROUND_TRIPS)
    assert [row for row, code in found if code == "VL314"] == [8, 9, 10]
    assert not [row for row, code in found if row >= 16]
    torch = _run("import torch")["torch"]
    x = torch.arange(6.0).reshape(2, 3)
    np = pytest.importorskip("numpy")  # (torch runs without NumPy)

    detoured = torch.as_tensor(np.ascontiguousarray(x.cpu().numpy()[:, ::2]))
    assert torch.equal(detoured, x[:, ::2]) and detoured.data_ptr() != x.data_ptr()


def test_a_detour_names_the_tensor_and_a_first_input_brought_back_is_no_hand_over():
    from viewlint.engine import lint_text
    from viewlint.settings import Settings
    import textwrap

    source = textwrap.dedent(ROUND_TRIPS).lstrip("\n")
    messages = [d.message for d in lint_text(source, "m.py", Settings(select=("VL314",))) if d.start.row == 8]
    assert len(messages) == 1 and "takes `x` to the host and back" in messages[0]


# ------------------------------------------- a compile-only branch: what an eager run never takes, nor returns
COMPILE_ONLY = """
    import torch


    def _get_value(x):
        if not torch.jit.is_scripting() and torch.compiler.is_compiling():
            return x
        return x.item() if isinstance(x, torch.Tensor) else x


    class Scaled(torch.nn.Module):
        def forward(self, x: torch.Tensor, n: torch.Tensor, lr: float) -> torch.Tensor:
            if torch.compiler.is_compiling():
                k = n.item()
            else:
                k = n.sum().item()
            step = _get_value(n)
            x.add_(x, alpha=-lr / (1 - 0.9**step))
            return x * k
"""


def test_a_compile_only_branch_is_no_eager_hot_path_and_its_return_is_no_eager_result():
    # 7: `.item()` of a tensor in the eager path; 13: only under `torch.compile`; 15: the eager branch; 17: `step` is
    # the `.item()` of the eager path, a number, not the tensor the compile-only `return x` gives.
    assert _lint(COMPILE_ONLY) == [(7, "VL401"), (15, "VL401")]
    scope = _run(COMPILE_ONLY)
    torch = scope["torch"]
    assert isinstance(scope["_get_value"](torch.tensor(3.0)), float)
    out = scope["Scaled"]()(torch.ones(2), torch.tensor(2.0), 0.1)
    assert torch.allclose(out, torch.full((2,), 2.0 * (1 - 0.1 / (1 - 0.81))))


# ------------------------------------------- a callable named `generator` is a sampler as often as a GAN's generator
RETRY = """
    import torch


    def gen_initial_conditions(acq_function, bounds, n, q, generator=None, seed=None):
        factor, max_factor = 1, 5
        while factor < max_factor:
            X_rnd = generator(n * factor, q, seed) if generator is not None else torch.rand(n * factor, q, 2)
            values = acq_function(X_rnd)
            if torch.any(values == 0):
                factor += 1
                continue
            return X_rnd[values.argmax()]
        return None


    def train_gan(generator, discriminator, optimizer, batches):
        for z in batches:
            fake = generator(z)
            loss = discriminator(fake).mean()
            loss.backward()
            optimizer.step()
            print(loss.item())
"""


def test_a_retry_loop_that_calls_a_sampler_named_generator_is_not_a_step_loop():
    # 9: the retry loop draws candidates a few times per call (botorch's `gen_batch_initial_conditions`); 22: the GAN
    # loop runs a training step, whatever its model is called.
    assert _lint(RETRY) == [(22, "VL401")]
    scope = _run(RETRY)
    torch = scope["torch"]
    best = scope["gen_initial_conditions"](lambda x: x.sum(dim=(-1, -2)) + 1, None, 4, 1,
                                           generator=lambda n, q, seed: torch.ones(n, q, 2))
    assert best.shape == (1, 2)


# ------------------------------------------- `map(self.to_torch, data)` calls it; a base class calls its subclass's
REPLAY = """
    import numpy as np
    import torch as th


    class BaseBuffer:
        def __init__(self, device):
            self.device = device

        def sample(self, batch_size):
            batch_inds = np.random.randint(0, 10, size=batch_size)
            return self._get_samples(batch_inds)

        def to_torch(self, array: np.ndarray) -> th.Tensor:
            return th.tensor(array).to(self.device)


    class ReplayBuffer(BaseBuffer):
        def __init__(self, device):
            super().__init__(device)
            self.observations = np.zeros((10, 4), dtype=np.float32)
            self.rewards = np.zeros((10, 1), dtype=np.float32)

        def _get_samples(self, batch_inds):
            data = (self.observations[batch_inds], self.rewards[batch_inds])
            return tuple(map(self.to_torch, data))


    def train(q_net, optimizer, replay_buffer, gradient_steps):
        for _ in range(gradient_steps):
            observations, rewards = replay_buffer.sample(32)
            loss = (q_net(observations) - rewards).square().mean()
            loss.backward()
            optimizer.step()
"""


def test_a_method_mapped_over_a_batch_from_a_subclass_hook_a_base_class_calls_is_hot():
    # stable-baselines3's replay buffer (PR #1218): the base class's `sample` calls `_get_samples`, which only the
    # subclass defines, and that maps `to_torch` over the sampled arrays on every gradient step.
    assert _lint(REPLAY) == [(14, "VL314")]
    pytest.importorskip("numpy")  # (torch runs without NumPy)
    scope = _run(REPLAY)
    torch = scope["torch"]
    net = torch.nn.Linear(4, 1)
    scope["train"](net, torch.optim.SGD(net.parameters(), lr=0.1), scope["ReplayBuffer"]("cpu"), 2)
    observations, _ = scope["ReplayBuffer"]("cpu").sample(3)
    assert isinstance(observations, torch.Tensor) and observations.shape == (3, 4)


# ------------------------------------------- VL104: a cache whose callers hand it clones counts what it holds
CLONED_ADMISSIONS = """
    from collections import OrderedDict
    from typing import NamedTuple

    import torch


    class CachedEmbedding(NamedTuple):
        tensor: torch.Tensor


    class EmbeddingCache:
        def __init__(self, capacity_bytes):
            self._cache = OrderedDict()
            self._capacity_bytes = capacity_bytes
            self._current_bytes = 0

        @staticmethod
        def _tensor_size(tensor):
            return tensor.element_size() * tensor.numel()

        def set(self, key, entry):
            self._cache[key] = entry
            self._current_bytes += self._tensor_size(entry.tensor)


    class Encoder:
        def __init__(self):
            self.cache = EmbeddingCache(1 << 20)

        def store(self, keys, embeddings):
            for key, piece in zip(keys, embeddings.split(1)):
                self.cache.set(key, CachedEmbedding(tensor=piece.clone()))
"""


def test_a_cache_whose_callers_hand_it_clones_counts_what_it_holds():
    # dynamo's encode worker (PR #14452): the split views are cloned where they are admitted.
    assert [code for _, code in _lint(CLONED_ADMISSIONS)] == []
    assert _lint(CLONED_ADMISSIONS.replace("tensor=piece.clone()", "tensor=piece")) == [(23, "VL104"), (32, "VL101")]
    scope = _run(CLONED_ADMISSIONS)
    torch = scope["torch"]
    encoder = scope["Encoder"]()
    encoder.store(["a", "b"], torch.zeros(2, 8))
    entry = encoder.cache._cache["a"].tensor
    assert entry.untyped_storage().nbytes() == encoder.cache._current_bytes // 2 == 8 * 4


# ------------------------------------------- VL205: a torch function given its tensor as `input=`
DARE = """
    import torch


    def random_pruning(tensor: torch.Tensor, density: float, rescale: bool) -> torch.Tensor:
        mask = torch.bernoulli(torch.full_like(input=tensor, fill_value=density))
        pruned_tensor = tensor * mask
        if rescale:
            torch.div(input=pruned_tensor, other=density)
        return pruned_tensor
"""


def test_a_dropped_torch_function_given_its_tensor_by_keyword_is_reported():
    # PEFT's DARE pruning (PR #3152): the rescaled weights are thrown away.
    assert _lint(DARE) == [(8, "VL205")]
    torch = _run(DARE)["torch"]
    torch.manual_seed(0)
    pruned = _run(DARE)["random_pruning"](torch.ones(1000), 0.25, True)
    assert 0.15 < pruned.mean().item() < 0.35  # not rescaled back to about 1
