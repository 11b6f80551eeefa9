"""Kinds of code met in pass thirty-four, on an eighth blind set of reconstructed public bugs and an eighteenth audit
of libraries never read before (tianshou, pytorch-metric-learning, optimum-quanto, pykeen, hqq). Each lint kind is
checked with the prefilter on and off; what a finding claims, with real torch."""

from __future__ import annotations

from conftest import lint_snippet as _lint, run_snippet as _run

# ------------------------------------------- a chain of tensor tests waits once; `kl_divergence` gives a tensor
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
                new_actor_loss = -(new_dist.log_prob(obs) * adv).mean()
                kl = kl_divergence(old_dist, new_dist).mean()
                if kl < self.max_kl and new_actor_loss < actor_loss:
                    return i
                if new_actor_loss.isnan() or kl.isnan():
                    return -1
            return None
"""


def test_a_chain_of_tensor_tests_is_reported_once_at_its_first_tensor_operand():
    # Line 15: `kl` is a tensor (`kl_divergence(...).mean()`), and the chain waits there; its second operand is
    # not a second finding. Line 17: the same for `or`.
    found = _lint(LINE_SEARCH)
    assert found.count((15, "VL403")) == 1 and found.count((17, "VL403")) == 1
    scope = _run(LINE_SEARCH)
    torch = scope["torch"]
    old = scope["Normal"](torch.zeros(3), torch.ones(3))
    search = scope["TRPO"](lambda obs: scope["Normal"](torch.zeros(3) + 0.01, torch.ones(3)))
    kl = scope["kl_divergence"](old, search.policy(None)).mean()
    assert isinstance(kl, torch.Tensor) and kl.dim() == 0
    assert search.line_search(torch.zeros(3), old, torch.tensor(1.0), torch.ones(3)) == 0


def test_columns_of_the_finding_are_the_first_operand():
    from viewlint.engine import lint_text
    from viewlint.settings import Settings
    import textwrap

    source = textwrap.dedent(LINE_SEARCH).lstrip("\n")
    columns = [d.start.column for d in lint_text(source, "m.py", Settings(select=("VL403",))) if d.start.row == 15]
    assert columns == [source.splitlines()[14].index("kl < self.max_kl") + 1]
