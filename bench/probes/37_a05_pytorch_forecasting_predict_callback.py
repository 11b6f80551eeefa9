# source: sktime/pytorch-forecasting https://github.com/sktime/pytorch-forecasting/issues/2224 — The v2 PredictCallback.on_predict_batch_end appended each processed batch output to self.predictions without detaching or moving it to CPU, and with mode="prediction" the processed output is the median-quantile select of the full [batch, horizon, n_quantiles] network output. Every stored prediction is a view that keeps the whole per-batch output tensor (and its device memory) alive until on_predict_epoch_end. The fix restores the v1 guard and stores move_to_device(detach(out), "cpu") per batch.
import torch


def detach(x):
    return x.detach() if isinstance(x, torch.Tensor) else x


def move_to_device(x, device):
    return x.to(device) if isinstance(x, torch.Tensor) else x


class QuantileLoss:
    quantiles = [0.02, 0.1, 0.25, 0.5, 0.75, 0.9, 0.98]

    def to_prediction(self, y_pred):
        idx = self.quantiles.index(0.5)
        return y_pred[..., idx]


class TimeSeriesModel(torch.nn.Module):
    def __init__(self, horizon=24):
        super().__init__()
        self.loss = QuantileLoss()
        self.proj = torch.nn.Linear(8, horizon * len(self.loss.quantiles))
        self.horizon = horizon

    def forward(self, x):
        return self.proj(x["encoder_cont"]).view(-1, self.horizon, len(self.loss.quantiles))

    def to_prediction(self, out, **kwargs):
        return self.loss.to_prediction(out)


class PredictCallback:
    def __init__(self, mode="prediction", return_info=None, mode_kwargs=None):
        self.mode = mode
        self.return_info = return_info or []
        self.mode_kwargs = mode_kwargs or {}
        self.predictions = []
        self.info = {key: [] for key in self.return_info}

    def on_predict_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        if self.mode == "raw":
            processed_output = outputs
        else:
            processed_output = pl_module.to_prediction(outputs, **self.mode_kwargs)  # maybe: A (median-quantile select view of the full output)
        self.predictions.append(processed_output)  # want: A
        if "x" in self.return_info:
            self.info["x"].append(x)

    def result(self):
        return torch.cat(self.predictions, dim=0)


class PredictCallbackFixed(PredictCallback):
    def on_predict_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        if self.mode == "raw":
            processed_output = outputs
        else:
            processed_output = pl_module.to_prediction(outputs, **self.mode_kwargs)
        processed_output = move_to_device(detach(processed_output), "cpu")
        self.predictions.append(processed_output)
        if "x" in self.return_info:
            self.info["x"].append(move_to_device(detach(x), "cpu"))


def run_predict(model, callback, batches):
    with torch.no_grad():
        for batch_idx, batch in enumerate(batches):
            out = model(batch[0])
            callback.on_predict_batch_end(None, model, out, batch, batch_idx)
    return callback.result()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TimeSeriesModel().eval()
    batches = [({"encoder_cont": torch.randn(16, 8)}, torch.randn(16, 24)) for _ in range(5)]
    cb = PredictCallback()
    preds = run_predict(model, cb, batches)
    first = cb.predictions[0]
    assert first.untyped_storage().nbytes() == 7 * first.numel() * first.element_size()
    cb_fixed = PredictCallbackFixed()
    preds_fixed = run_predict(model, cb_fixed, batches)
    assert torch.equal(preds, preds_fixed)
    print("ok")
