# source: huggingface/accelerate https://github.com/huggingface/accelerate/issues/2251 — a guided-diffusion style TrainLoop drew timesteps with `t, weights = self.schedule_sampler.sample(batch.shape[0])` and then wrote `t.to(batch.device)` / `weights.to(batch.device)` as bare statements, so both tensors stayed on the CPU while the batch was on the accelerator. A maintainer answered that `.to` is not in-place and the result must be assigned (`t = t.to(batch.device)`); the reporter's working version passes the device into `sample` and moves the tensors there.
import numpy as np
import torch as th


class UniformSampler:
    def __init__(self, num_timesteps):
        self._weights = np.ones([num_timesteps])

    def weights(self):
        return self._weights

    def sample(self, batch_size, device=None):
        w = self.weights()
        p = w / np.sum(w)
        indices_np = np.random.choice(len(p), size=(batch_size,), p=p)
        indices = th.from_numpy(indices_np).long()
        weights_np = 1 / (len(p) * p[indices_np])
        weights = th.from_numpy(weights_np).float()
        if device is not None:
            indices = indices.to(device)
            weights = weights.to(device)
        return indices, weights


class TrainLoop:
    def __init__(self, schedule_sampler, microbatch):
        self.schedule_sampler = schedule_sampler
        self.microbatch = microbatch

    def forward_backward(self, batch):
        out = []
        for i in range(0, batch.shape[0], self.microbatch):
            micro = batch[i : i + self.microbatch]
            t, weights = self.schedule_sampler.sample(micro.shape[0])
            t.to(micro.device)  # want: B
            weights.to(micro.device)  # want: B
            out.append((t, weights))
        return out


class TrainLoopFixed(TrainLoop):
    def forward_backward(self, batch):
        out = []
        for i in range(0, batch.shape[0], self.microbatch):
            micro = batch[i : i + self.microbatch]
            t, weights = self.schedule_sampler.sample(micro.shape[0], micro.device)
            out.append((t, weights))
        return out


if __name__ == "__main__":
    batch = th.empty(4, 3, 8, 8, device="meta")
    np.random.seed(0)
    buggy = TrainLoop(UniformSampler(1000), microbatch=2).forward_backward(batch)
    np.random.seed(0)
    fixed = TrainLoopFixed(UniformSampler(1000), microbatch=2).forward_backward(batch)
    assert all(t.device.type == "cpu" and w.device.type == "cpu" for t, w in buggy)
    assert all(t.device.type == "meta" and w.device.type == "meta" for t, w in fixed)
    assert all(t.shape == tf.shape for (t, _), (tf, _) in zip(buggy, fixed))
    print("ok")
