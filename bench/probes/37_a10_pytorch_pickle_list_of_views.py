# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/145665 — Pickling a container that holds a tensor and a view of it (`pickle.dumps([x, x[:]])`) serializes the shared storage once per tensor, so the payload is about twice the data (4000402 vs 8000697 bytes in the report). Any view placed in a pickled message carries its whole base storage again; the workaround is to clone the view so it owns only its own elements.
import io
import pickle
from typing import List

import torch


class Outbox:
    """Collects pickled messages the way a queue feeder thread would."""

    def __init__(self):
        self.sent: List[bytes] = []

    def put(self, obj) -> None:
        buf = io.BytesIO()
        pickle.Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
        self.sent.append(buf.getvalue())


def publish_step(outbox: Outbox, state: torch.Tensor, head: int) -> None:
    preview = state[:head]  # maybe: A (the view is made here)
    outbox.put([state, preview])  # want: A


def publish_step_fixed(outbox: Outbox, state: torch.Tensor, head: int) -> None:
    preview = state[:head].clone()
    outbox.put([state, preview])


if __name__ == "__main__":
    x = torch.zeros(1_000_000)
    single = len(pickle.dumps(x))

    outbox, outbox_fixed = Outbox(), Outbox()
    for step in range(2):
        x[step] = float(step)
        publish_step(outbox, x, head=1000)
        publish_step_fixed(outbox_fixed, x, head=1000)

    assert all(len(m) > 1.9 * single for m in outbox.sent)
    assert all(len(m) < 1.1 * single for m in outbox_fixed.sent)
    for m, mf in zip(outbox.sent, outbox_fixed.sent):
        a, b = pickle.loads(m)
        c, d = pickle.loads(mf)
        assert torch.equal(a, c) and torch.equal(b, d)
        assert b.untyped_storage().nbytes() > b.numel() * b.element_size()
    print("ok")
