# source: espnet/espnet https://github.com/espnet/espnet/pull/6599 — in BatchBeamSearch a finished Hypothesis was moved to `ended_hyps` with scorer states (and yseq) that are slices of the running `(n_utt * beam, ...)` batch tensors, so every ended hypothesis pinned a whole step's batch storage until decoding finished; the fix added `_release`, which `_replace`s the hypothesis with `_compact`ed (cloned) states before it is kept.
from typing import Any, NamedTuple

import torch


class Hypothesis(NamedTuple):
    yseq: torch.Tensor
    score: float = 0.0
    scores: dict = dict()
    states: dict = dict()


class BatchHypothesis(NamedTuple):
    yseq: torch.Tensor  # (N, L)
    score: torch.Tensor  # (N,)
    length: torch.Tensor  # (N,)
    states: dict  # scorer name -> (N, L, D) decoder cache


class CacheScorer:
    """Decoder scorer whose per-step state is a (N, L, D) self-attention cache."""

    def __init__(self, dim=256):
        self.dim = dim

    def select_state(self, state, i):
        return state[i]

    def batch_step(self, state, n):
        new = torch.randn(n, 1, self.dim)
        return new if state is None else torch.cat([state, new], dim=1)


class BatchBeamSearch:
    def __init__(self, beam_size=8, eos=0, vocab=32):
        self.scorers = {"decoder": CacheScorer()}
        self.beam_size, self.eos, self.vocab = beam_size, eos, vocab

    def _select(self, hyps, i):
        return Hypothesis(
            yseq=hyps.yseq[i, : hyps.length[i]],
            score=float(hyps.score[i]),
            states={k: self.scorers[k].select_state(v, i) for k, v in hyps.states.items()},  # maybe: A (view is fine while the hypothesis is still running)
        )

    def _keep_ended(self, ended_hyps, hyp):
        ended_hyps.append(hyp)  # want: A

    def search(self, running, step):
        n = running.yseq.size(0)
        states = {k: self.scorers[k].batch_step(running.states.get(k), n) for k in self.scorers}
        tokens = torch.randint(1, self.vocab, (n, 1))
        tokens[step % n] = self.eos  # one hypothesis ends every step
        yseq = torch.cat([running.yseq, tokens], dim=1)
        return BatchHypothesis(yseq, running.score - 1.0, running.length + 1, states)

    def post_process(self, running, ended_hyps):
        is_eos = running.yseq[:, -1] == self.eos
        for i in torch.nonzero(is_eos).view(-1).tolist():  # maybe: D (nonzero + tolist sync each step; not the bug studied here)
            self._keep_ended(ended_hyps, self._select(running, i))
        # finished slots are refilled so the batch keeps beam_size hypotheses
        return running

    def forward(self, maxlen):
        running = BatchHypothesis(torch.ones(self.beam_size, 1, dtype=torch.long), torch.zeros(self.beam_size),
                                  torch.ones(self.beam_size, dtype=torch.long), {})
        ended_hyps = []
        for step in range(maxlen):
            running = self.search(running, step)
            running = self.post_process(running, ended_hyps)
        return ended_hyps


def _compact(obj: Any) -> Any:
    if torch.is_tensor(obj):
        if obj.untyped_storage().nbytes() > obj.numel() * obj.element_size():
            return obj.clone()
        return obj
    if isinstance(obj, dict):
        return {k: _compact(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_compact(o) for o in obj)
    return obj


class BatchBeamSearchFixed(BatchBeamSearch):
    @staticmethod
    def _release(hyp):
        return hyp._replace(yseq=_compact(hyp.yseq), states=_compact(hyp.states))

    def _keep_ended(self, ended_hyps, hyp):
        ended_hyps.append(self._release(hyp))


def held_bytes(hyps):
    seen = {}
    for h in hyps:
        for t in [h.yseq, *h.states.values()]:
            st = t.untyped_storage()
            seen[st.data_ptr()] = st.nbytes()
    return sum(seen.values())


if __name__ == "__main__":
    torch.manual_seed(0)
    bad = BatchBeamSearch().forward(maxlen=24)
    torch.manual_seed(0)
    good = BatchBeamSearchFixed().forward(maxlen=24)
    payload = sum(t.numel() * t.element_size() for h in good for t in [h.yseq, *h.states.values()])
    print(f"{len(bad)} ended hyps  payload {payload} B  buggy holds {held_bytes(bad)} B  fixed holds {held_bytes(good)} B")
    assert all(torch.equal(a.states["decoder"], b.states["decoder"]) for a, b in zip(bad, good))
    assert held_bytes(bad) > 4 * held_bytes(good)
