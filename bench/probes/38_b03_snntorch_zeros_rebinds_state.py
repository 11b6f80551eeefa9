# source: jeshraghian/snntorch https://github.com/jeshraghian/snntorch/issues/423 — `SpikingNeuron.zeros(*args)` is documented to clear global hidden-state tensors, but it did `state = torch.zeros_like(state)`, which builds a fresh zero tensor and only rebinds the loop variable, so the caller's membrane potential is never touched. Confirmed in the issue; PR #443 (superseding #424) fixes it by zeroing the caller's storage in place with `state.detach().zero_()`.
import torch
import torch.nn as nn


class SpikingNeuron(nn.Module):
    """Parent class for spiking neuron models."""

    instances = []

    def __init__(self, threshold=1.0, init_hidden=False, reset_mechanism="subtract"):
        super().__init__()
        SpikingNeuron.instances.append(self)
        self.init_hidden = init_hidden
        self.reset_mechanism = reset_mechanism
        self.register_buffer("threshold", torch.as_tensor(threshold))

    def fire(self, mem):
        mem_shift = mem - self.threshold
        return (mem_shift > 0).float()

    @staticmethod
    def detach(*args):
        """Used to detach input arguments from the current graph.
        Intended for use in truncated backpropagation through time where
        hidden state variables are global variables."""
        for state in args:
            state.detach_()

    @staticmethod
    def zeros(*args):
        """Used to clear hidden state variables to zero.
        Intended for use where hidden state variables are global variables."""
        for state in args:
            state = torch.zeros_like(state)  # want: B


class Leaky(SpikingNeuron):
    def __init__(self, beta, threshold=1.0, init_hidden=False):
        super().__init__(threshold, init_hidden)
        self.register_buffer("beta", torch.as_tensor(beta))
        self.mem = torch.zeros(0)

    def forward(self, input_):
        if self.mem.shape != input_.shape:
            self.mem = torch.zeros_like(input_)
        self.reset = self.fire(self.mem)
        self.mem = self.beta * self.mem + input_ - self.reset * self.threshold
        return self.fire(self.mem)


class SpikingNeuronFixed(SpikingNeuron):
    @staticmethod
    def zeros(*args):
        """Used to clear hidden state variables to zero.
        Intended for use where hidden state variables are global variables."""
        for state in args:
            state.detach().zero_()


def _train_two_sequences(zeros_fn):
    torch.manual_seed(0)
    lif = Leaky(beta=0.5, init_hidden=True)
    x = torch.rand(4, 2, 5)
    for _ in range(4):
        lif(x[_])
    mem_before = lif.mem.clone()
    zeros_fn(lif.mem)  # clear between sequences
    return mem_before, lif.mem


if __name__ == "__main__":
    before, after = _train_two_sequences(SpikingNeuron.zeros)
    assert before.abs().sum() > 0
    assert torch.equal(before, after), "buggy zeros() leaves the membrane potential untouched"

    before, after = _train_two_sequences(SpikingNeuronFixed.zeros)
    assert torch.equal(after, torch.zeros_like(after)), "fixed zeros() clears the caller's tensor"
    print("ok")
