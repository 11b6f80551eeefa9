# source: Substra/substrafl https://github.com/Substra/substrafl/pull/171 — TorchAlgo._local_predict grew the prediction tensor with `predictions = torch.cat((predictions, self._model(x)), 0)` inside the dataloader loop, re-copying every earlier batch on each iteration; the fix appends batch outputs to a list and concatenates once after the loop.
import numpy as np
import torch


class BatchSizeNotFoundError(Exception):
    pass


class IndexGenerator:
    def __init__(self, batch_size):
        self.batch_size = batch_size


class TorchAlgo:
    def __init__(self, model, index_generator, use_gpu=True):
        self._device = self._get_torch_device(use_gpu=use_gpu)
        self._model = model.to(self._device)
        self._index_generator = index_generator

    def _get_torch_device(self, use_gpu):
        device = torch.device("cpu")
        if use_gpu and torch.cuda.is_available():
            device = torch.device("cuda")
        return device

    def _save_predictions(self, predictions, predictions_path):
        if predictions_path is not None:
            np.save(predictions_path, predictions)

    def _local_predict(self, predict_dataset, predictions_path):
        if self._index_generator is not None:
            predict_loader = torch.utils.data.DataLoader(predict_dataset, batch_size=self._index_generator.batch_size)
        else:
            raise BatchSizeNotFoundError(
                "No default batch size has been found to perform local prediction. "
                "Please overwrite the _local_predict function of your algorithm."
            )

        self._model.eval()

        predictions = torch.Tensor([]).to(self._device)
        with torch.inference_mode():
            for x in predict_loader:
                x = x.to(self._device)
                predictions = torch.cat((predictions, self._model(x)), 0)  # want: C

        predictions = predictions.cpu().detach()
        self._save_predictions(predictions, predictions_path)
        return predictions


class TorchAlgoFixed(TorchAlgo):
    def _local_predict(self, predict_dataset, predictions_path):
        if self._index_generator is not None:
            predict_loader = torch.utils.data.DataLoader(predict_dataset, batch_size=self._index_generator.batch_size)
        else:
            raise BatchSizeNotFoundError(
                "No default batch size has been found to perform local prediction. "
                "Please overwrite the _local_predict function of your algorithm."
            )

        self._model.eval()

        predictions = []
        with torch.inference_mode():
            for x in predict_loader:
                x = x.to(self._device)
                predictions.append(self._model(x))

        predictions = torch.cat(predictions, 0)
        predictions = predictions.cpu().detach()
        self._save_predictions(predictions, predictions_path)
        return predictions


if __name__ == "__main__":
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 8)
    dataset = torch.randn(2048, 16)

    buggy = TorchAlgo(model, IndexGenerator(batch_size=32), use_gpu=False)
    fixed = TorchAlgoFixed(model, IndexGenerator(batch_size=32), use_gpu=False)
    pred_b = buggy._local_predict(dataset, predictions_path=None)
    pred_f = fixed._local_predict(dataset, predictions_path=None)

    n_batches = len(dataset) // 32
    row_bytes = 8 * 4
    copied_buggy = sum(i * 32 * row_bytes for i in range(1, n_batches + 1))
    print("bytes copied by cat-in-loop:", copied_buggy, "vs single cat:", n_batches * 32 * row_bytes)
    assert torch.equal(pred_b, pred_f)
