# source: DeepLabCut/DeepLabCut https://github.com/DeepLabCut/DeepLabCut/pull/3099 — InferenceRunner._prepare_inputs appended every preprocessed image to the pending batch with `self._batch = torch.cat([self._batch, inputs], dim=0)`, re-copying everything queued so far on each image (O(n^2) memory traffic when many images wait for a batch); the fix keeps a Python list of image tensors and stacks only when a batch is processed.
import torch
from torch import nn


class InferenceRunner:
    def __init__(self, model, batch_size):
        self.model = model.eval()
        self.batch_size = batch_size
        self._batch = None
        self._predictions = []

    @torch.inference_mode()
    def predict(self, batch):
        return self.model(batch)

    def _prepare_inputs(self, data):
        inputs = torch.as_tensor(data)
        if len(inputs) == 0:
            return
        if self._batch is None:
            self._batch = inputs
        else:
            self._batch = torch.cat([self._batch, inputs], dim=0)  # want: C

    def _process_batch(self):
        batch = self._batch[: self.batch_size]
        self._predictions.append(self.predict(batch))
        if len(self._batch) <= self.batch_size:
            self._batch = None
        else:
            self._batch = self._batch[self.batch_size:]

    def inference(self, images):
        for data in images:
            self._prepare_inputs(data)
            while self._batch is not None and len(self._batch) >= self.batch_size:
                self._process_batch()
        if self._batch is not None and len(self._batch) > 0:
            self._process_batch()
        return torch.cat(self._predictions, dim=0)


class InferenceRunnerFixed(InferenceRunner):
    def __init__(self, model, batch_size):
        super().__init__(model, batch_size)
        self._batch_list = []

    def _prepare_inputs(self, data):
        inputs = torch.as_tensor(data)
        if len(inputs) == 0:
            return
        # extend the list with individual image tensors (slice along first dim)
        self._batch_list.extend(list(inputs))

    def _process_batch(self):
        batch = torch.stack(self._batch_list[: self.batch_size], dim=0)
        self._predictions.append(self.predict(batch))
        self._batch_list = self._batch_list[self.batch_size:]

    def inference(self, images):
        for data in images:
            self._prepare_inputs(data)
            while len(self._batch_list) >= self.batch_size:
                self._process_batch()
        if len(self._batch_list) > 0:
            self._process_batch()
        return torch.cat(self._predictions, dim=0)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.AdaptiveAvgPool2d(1), nn.Flatten())
    images = [torch.rand(1, 3, 16, 16) for _ in range(40)]
    copied = {"n": 0}
    real_cat = torch.cat

    def counting_cat(tensors, dim=0):
        copied["n"] += sum(t.numel() for t in tensors)
        return real_cat(tensors, dim=dim)

    torch.cat = counting_cat
    out_bug = InferenceRunner(model, batch_size=32).inference(images)
    n_bug, copied["n"] = copied["n"], 0
    out_fix = InferenceRunnerFixed(model, batch_size=32).inference(images)
    n_fix = copied["n"]
    torch.cat = real_cat
    assert torch.allclose(out_bug, out_fix, atol=1e-6)
    assert n_bug > 10 * n_fix
    print("elements copied by torch.cat: buggy", n_bug, "fixed", n_fix)
