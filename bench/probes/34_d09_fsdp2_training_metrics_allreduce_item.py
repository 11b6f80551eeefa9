# source: EvolvingLMMs-Lab/lmms-engine https://github.com/EvolvingLMMs-Lab/lmms-engine/pull/181 — the FSDP2 trainer's calculate_training_metrics ran five separate scalar all_reduce calls every step (AVG mfu, SUM total seq len, AVG/MIN/MAX seq len) and pulled each result back with .item(), one blocking GPU->CPU sync per metric; the fix does a single all_gather_into_tensor of [mfu_local, seq_len_sum_local] and reads all five values with one batched .tolist().
import torch
import torch.distributed as dist
import torch.nn as nn


def _dist_on():
    return dist.is_available() and dist.is_initialized()


class FSDP2Trainer:
    def __init__(self, model, device, peak_flops=1e12):
        self.model = model
        self.device = device
        self.peak_flops = peak_flops
        self.world_size = dist.get_world_size() if _dist_on() else 1
        self.optimizer = torch.optim.SGD(model.parameters(), lr=1e-2)

    def estimate_flops(self, seq_lens):
        n_params = sum(p.numel() for p in self.model.parameters())
        return 6.0 * n_params * sum(seq_lens)

    def _reduce_scalar(self, value, op):
        t = value if torch.is_tensor(value) else torch.tensor(float(value), device=self.device)
        if _dist_on():
            if op == "avg":
                dist.all_reduce(t, op=dist.ReduceOp.SUM)
                t = t / self.world_size
            else:
                dist.all_reduce(t, op={"sum": dist.ReduceOp.SUM, "min": dist.ReduceOp.MIN,
                                       "max": dist.ReduceOp.MAX}[op])
        return t.item()  # want: D

    def calculate_training_metrics(self, flops, seq_lens, step_time):
        mfu_local = flops / step_time / self.peak_flops
        seq_len_local = torch.tensor(float(sum(seq_lens)), device=self.device)
        metrics = {
            "mfu": self._reduce_scalar(mfu_local, "avg"),
            "total_seq_len": self._reduce_scalar(seq_len_local.clone(), "sum"),
            "seq_len_avg": self._reduce_scalar(seq_len_local.clone(), "avg"),
            "seq_len_min": self._reduce_scalar(seq_len_local.clone(), "min"),
            "seq_len_max": self._reduce_scalar(seq_len_local.clone(), "max"),
        }
        return metrics

    def training_step(self, batch, step_time=0.5):
        loss = self.model(batch["input"]).pow(2).mean()
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        seq_lens = batch["seq_lens"]
        flops = torch.tensor(self.estimate_flops(seq_lens), device=self.device)  # maybe: D (tensor wrapper around a host float; dropped by the fix)
        return self.calculate_training_metrics(flops, seq_lens, step_time)


class FSDP2TrainerFixed(FSDP2Trainer):
    def calculate_training_metrics(self, flops, seq_lens, step_time):
        mfu_local = flops / step_time / self.peak_flops
        local = torch.tensor([mfu_local, float(sum(seq_lens))], device=self.device)
        if _dist_on():
            gathered = torch.empty(self.world_size, 2, device=self.device)
            dist.all_gather_into_tensor(gathered, local)
        else:
            gathered = local.unsqueeze(0)
        mfu_all, seq_all = gathered[:, 0], gathered[:, 1]
        stats = torch.stack([mfu_all.mean(), seq_all.sum(), seq_all.mean(), seq_all.min(), seq_all.max()])
        mfu, total, avg, mn, mx = stats.tolist()
        return {"mfu": mfu, "total_seq_len": total, "seq_len_avg": avg, "seq_len_min": mn, "seq_len_max": mx}

    def training_step(self, batch, step_time=0.5):
        loss = self.model(batch["input"]).pow(2).mean()
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        seq_lens = batch["seq_lens"]
        flops = self.estimate_flops(seq_lens)
        return self.calculate_training_metrics(flops, seq_lens, step_time)


if __name__ == "__main__":
    torch.manual_seed(0)
    batch = {"input": torch.randn(4, 16), "seq_lens": [128, 96, 200, 64]}
    m0 = FSDP2Trainer(nn.Linear(16, 16), "cpu").training_step(batch)
    m1 = FSDP2TrainerFixed(nn.Linear(16, 16), "cpu").training_step(batch)
    print({k: round(v, 6) for k, v in m0.items()})
    print({k: round(v, 6) for k, v in m1.items()})
    print("same metrics:", all(abs(m0[k] - m1[k]) <= 1e-6 * max(1.0, abs(m0[k])) for k in m0))
