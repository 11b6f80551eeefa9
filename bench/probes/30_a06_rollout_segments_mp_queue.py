# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/65604 — "pytorch serializes entire tensor when you try to pickle a slice": sending `t[:1]`-style slices between processes pickled (or shared) the whole underlying storage, "unexpectedly caus[ing] poor performance"; the workaround in the report is `.clone()` before pickling. Reconstructed as an RL actor that ships per-environment columns of its rollout buffers through a multiprocessing queue.
import multiprocessing as mp
import pickle

import torch


class RolloutBuffer:
    def __init__(self, n_steps, n_envs, obs_dim):
        self.obs = torch.zeros(n_steps, n_envs, obs_dim)
        self.rew = torch.zeros(n_steps, n_envs)
        self.done = torch.zeros(n_steps, n_envs, dtype=torch.bool)

    def add(self, t, obs, rew, done):
        self.obs[t] = obs
        self.rew[t] = rew
        self.done[t] = done


def collect(buf, policy, n_steps, n_envs, obs_dim):
    obs = torch.randn(n_envs, obs_dim)
    for t in range(n_steps):
        act = policy(obs)
        rew = act.sum(-1)
        done = rew > 2.0
        buf.add(t, obs, rew, done)
        obs = torch.randn(n_envs, obs_dim)
    return buf


def send_segments(buf, out_queue, actor_id):
    # the learner consumes one environment's trajectory at a time
    for env in range(buf.obs.shape[1]):
        segment = {"actor": actor_id, "env": env, "obs": buf.obs[:, env], "rew": buf.rew[:, env],  # want: A
                   "done": buf.done[:, env]}  # want: A
        out_queue.put(segment)


def send_segments_fixed(buf, out_queue, actor_id):
    for env in range(buf.obs.shape[1]):
        segment = {"actor": actor_id, "env": env, "obs": buf.obs[:, env].clone(), "rew": buf.rew[:, env].clone(),
                   "done": buf.done[:, env].clone()}
        out_queue.put(segment)


def drain(q, n):
    return [q.get(timeout=10) for _ in range(n)]


if __name__ == "__main__":
    n_steps, n_envs, obs_dim = 128, 32, 64
    policy = torch.nn.Linear(obs_dim, 4)
    with torch.no_grad():
        buf_bad = collect(RolloutBuffer(n_steps, n_envs, obs_dim), policy, n_steps, n_envs, obs_dim)
        buf_good = RolloutBuffer(n_steps, n_envs, obs_dim)
        buf_good.obs.copy_(buf_bad.obs)

    payload = n_steps * obs_dim * 4
    seg_bad = {"obs": buf_bad.obs[:, 0]}
    seg_good = {"obs": buf_good.obs[:, 0].clone()}
    print(f"obs payload {payload} B  pickled buggy {len(pickle.dumps(seg_bad))} B  fixed {len(pickle.dumps(seg_good))} B")
    assert len(pickle.dumps(seg_bad)) > 16 * len(pickle.dumps(seg_good))

    q = mp.Queue()
    send_segments(buf_bad, q, actor_id=0)
    got_bad = drain(q, n_envs)
    send_segments_fixed(buf_good, q, actor_id=1)
    got_good = drain(q, n_envs)
    sb = got_bad[0]["obs"].untyped_storage().nbytes()
    sg = got_good[0]["obs"].untyped_storage().nbytes()
    print(f"received obs storage: buggy {sb} B  fixed {sg} B  (buggy rollout moved to shm: {buf_bad.obs.is_shared()})")
    assert torch.equal(got_bad[0]["obs"], got_good[0]["obs"])
    assert sb == buf_bad.obs.numel() * 4 and sg == payload
