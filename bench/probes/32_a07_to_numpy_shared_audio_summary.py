# source: fgnt/padertorch https://github.com/fgnt/padertorch/pull/16 — pt.utils.to_numpy returned tensor.detach().cpu().numpy(), which on CPU shares memory with the input tensor, so pt.summary.audio's in-place normalisation (signal /= max) rewrote the model's input tensor kept for the review; the PR added a copy flag to to_numpy (read-only result by default) and copies in audio().
import numpy as np
import torch


def to_numpy(array, detach=False):
    """Transforms `array` to a numpy array (torch tensors are moved to cpu)."""
    if isinstance(array, np.ndarray):
        return array
    if isinstance(array, torch.Tensor):
        if detach:
            array = array.detach()
        array = array.cpu()
        return array.numpy()  # want: A
    return np.asarray(array)


def audio(signal, sampling_rate=16000, batch_first=False, normalize=True):
    signal = to_numpy(signal, detach=True)
    if signal.ndim == 2:
        signal = signal[0] if batch_first else signal[:, 0]
    if normalize:
        signal /= np.max(np.abs(signal))
        signal *= 0.95
    return signal, sampling_rate


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Linear(1, 1)

    def review(self, example, output):
        return dict(
            loss=output.pow(2).mean(),
            audios=dict(observation=audio(example['observation'], batch_first=True)),
        )


# ---------------------------------------------------------------- fixed version
def to_numpy_fixed(array, detach=False, copy=False):
    if isinstance(array, np.ndarray):
        return array.copy() if copy else array
    if isinstance(array, torch.Tensor):
        if detach:
            array = array.detach()
        array = array.cpu()
        array = np.array(array.numpy(), copy=copy)
        if not copy:
            array.setflags(write=False)
        return array
    return np.array(array, copy=copy)


def audio_fixed(signal, sampling_rate=16000, batch_first=False, normalize=True):
    signal = to_numpy_fixed(signal, detach=True, copy=True)
    if signal.ndim == 2:
        signal = signal[0] if batch_first else signal[:, 0]
    if normalize:
        signal = signal / np.max(np.abs(signal))
        signal *= 0.95
    return signal, sampling_rate


class ModelFixed(Model):
    def review(self, example, output):
        return dict(
            loss=output.pow(2).mean(),
            audios=dict(observation=audio_fixed(example['observation'], batch_first=True)),
        )


if __name__ == "__main__":
    torch.manual_seed(0)
    for cls in (Model, ModelFixed):
        example = {'observation': 3 * torch.randn(2, 16000)}
        before = example['observation'].clone()
        model = cls()
        out = model.enc(example['observation'][:, :8, None])
        review = model.review(example, out)
        changed = not torch.equal(example['observation'], before)
        print(cls.__name__, "input tensor modified by summary:", changed)
        assert changed == (cls is Model)
        assert np.isclose(np.abs(review['audios']['observation'][0]).max(), 0.95)
