# source: pytorch/rl https://github.com/pytorch/rl/pull/4261 — AsyncEnvPool's per-env receive path (async_*_recv with env_index) returned the tensordict taken off the multiprocessing queue as-is, so each retained transition kept its own shared-memory mapping of the worker's whole storage; the fix copies per-env queue results out of shared memory before returning them.
import torch
import torch.multiprocessing as mp


class AsyncEnvPool:
    _env_idx_key = "_env_idx"

    def __init__(self, num_envs, obs_shape=(3, 32, 32)):
        ctx = mp.get_context("spawn")
        self.num_envs = num_envs
        self.obs_shape = obs_shape
        self._per_env_step_queues = [ctx.Queue() for _ in range(num_envs)]
        self._per_env_reset_queues = [ctx.Queue() for _ in range(num_envs)]
        self._busy = set()
        # the worker renders every env of its batch into one big pixel buffer
        self._worker_frames = torch.zeros(num_envs, 16, *obs_shape)

    # --- worker side (runs in the env process in torchrl; inline here) ---
    def _env_exec_step(self, i, step):
        frames = self._worker_frames
        frames[i, step % frames.shape[1]].fill_(float(step))
        data = {
            "pixels": frames[i, step % frames.shape[1]],
            "reward": frames[i, :, 0, 0, :1].sum(0),
            self._env_idx_key: torch.tensor(i),
        }
        self._per_env_step_queues[i].put(data)

    def async_step_send(self, env_index, step):
        self._busy.add(env_index)
        self._env_exec_step(env_index, step)

    # --- consumer side ---
    def async_step_recv(self, env_index):
        self._busy.discard(env_index)
        return self._per_env_step_queues[env_index].get()  # want: A

    def async_reset_recv(self, env_index):
        return self._per_env_reset_queues[env_index].get()  # want: A


def _own(td):
    return {k: v.clone() for k, v in td.items()}


class AsyncEnvPoolFixed(AsyncEnvPool):
    def async_step_recv(self, env_index):
        self._busy.discard(env_index)
        result = self._per_env_step_queues[env_index].get()
        return _own(result)

    def async_reset_recv(self, env_index):
        return _own(self._per_env_reset_queues[env_index].get())


def collect(pool, steps):
    # AsyncBatchedCollector-style consumer: keeps every transition it receives
    kept = []
    for step in range(steps):
        for env_index in range(pool.num_envs):
            pool.async_step_send(env_index, step)
            kept.append(pool.async_step_recv(env_index))
    return kept


if __name__ == "__main__":
    for cls in (AsyncEnvPool, AsyncEnvPoolFixed):
        pool = cls(num_envs=2)
        kept = collect(pool, steps=4)
        shared = sum(td["pixels"].is_shared() for td in kept)
        held = sum(td["pixels"].untyped_storage().nbytes() for td in kept)
        payload = sum(td["pixels"].numel() * td["pixels"].element_size() for td in kept)
        print(f"{cls.__name__}: {len(kept)} transitions, shm-backed={shared}, "
              f"bytes held={held}, payload={payload}")
        assert torch.equal(kept[-1]["pixels"], torch.full(pool.obs_shape, 3.0))
