# source: HumanCompatibleAI/eirli https://github.com/HumanCompatibleAI/eirli/pull/47 — RepresentationLearner.learn called loss.item() plus gradient_norm.item()/weight_norm.item() and recorded them on every batch (item() calls were ~35% of learn() time); the fix adds calc_log_interval and only pulls those scalars to the host on batches where the log record is computed.
import numpy as np
import torch
import torch.nn as nn


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n


class Recorder:
    def __init__(self):
        self.rows = []

    def record_mean(self, key, value):
        self.rows.append((key, value))

    def record(self, key, value):
        self.rows.append((key, value))


def weight_grad_norms(params):
    params = [p for p in params if p.grad is not None]
    grad_norm = torch.norm(torch.stack([torch.norm(p.grad.detach()) for p in params]))
    weight_norm = torch.norm(torch.stack([torch.norm(p.detach()) for p in params]))
    return grad_norm, weight_norm


class RepresentationLearner:
    def __init__(self, encoder, decoder, batch_size=32):
        self.encoder, self.decoder = encoder, decoder
        self.optimizer = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=1e-3)
        self.batch_size = batch_size
        self.logger = Recorder()

    def loss_calculator(self, decoded_contexts, targets):
        return ((decoded_contexts - targets) ** 2).mean()

    def batch_forward(self, batch):
        encoded = self.encoder(batch["context"])
        decoded = self.decoder(encoded)
        return self.loss_calculator(decoded, batch["target"])

    def learn(self, batches, epoch_num=0):
        loss_meter = AverageMeter()
        batches_trained = 0
        for step, batch in enumerate(batches):
            loss = self.batch_forward(batch)
            loss_item = loss.item()  # want: D
            assert not np.isnan(loss_item), "Loss is not NAN"
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            del loss  # so we don't use again

            gradient_norm, weight_norm = weight_grad_norms(
                list(self.encoder.parameters()) + list(self.decoder.parameters()))
            loss_meter.update(loss_item)
            self.logger.record_mean('loss', loss_item)
            self.logger.record_mean('gradient_norm', gradient_norm.item())  # want: D
            self.logger.record_mean('weight_norm', weight_norm.item())  # want: D
            self.logger.record('epoch', epoch_num)
            self.logger.record('within_epoch_step', step)
            batches_trained += 1
        return loss_meter


class RepresentationLearnerFixed(RepresentationLearner):
    def learn(self, batches, epoch_num=0, calc_log_interval=10):
        loss_meter = AverageMeter()
        batches_trained = 0
        for step, batch in enumerate(batches):
            loss = self.batch_forward(batch)
            if batches_trained % calc_log_interval == 0:
                loss_item = loss.item()
                assert not np.isnan(loss_item), "Loss is NaN"
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            del loss  # so we don't use again

            if batches_trained % calc_log_interval == 0:
                gradient_norm, weight_norm = weight_grad_norms(
                    list(self.encoder.parameters()) + list(self.decoder.parameters()))
                loss_meter.update(loss_item)
                self.logger.record_mean('loss', loss_item)
                self.logger.record_mean('gradient_norm', gradient_norm.item())
                self.logger.record_mean('weight_norm', weight_norm.item())
                self.logger.record('epoch', epoch_num)
                self.logger.record('within_epoch_step', step)
            batches_trained += 1
        return loss_meter


if __name__ == "__main__":
    torch.manual_seed(0)
    batches = [{"context": torch.randn(32, 16), "target": torch.randn(32, 16)} for _ in range(40)]
    enc, dec = nn.Linear(16, 8), nn.Linear(8, 16)
    a = RepresentationLearner(enc, dec)
    m = a.learn(batches)
    b = RepresentationLearnerFixed(nn.Linear(16, 8), nn.Linear(8, 16))
    m2 = b.learn(batches)
    print("log rows per-batch:", len(a.logger.rows), " interval-gated:", len(b.logger.rows))
    print("meter counts:", m.count, m2.count)
