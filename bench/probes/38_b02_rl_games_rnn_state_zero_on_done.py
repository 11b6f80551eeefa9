# source: Denys88/rl_games https://github.com/Denys88/rl_games/commit/4120be3d7963f944c7d94ecae92720bdf3f2447f — In the PPO rollout loop (A2CBase.play_steps_rnn) and in CentralValueTrain.post_step_rnn the recurrent states of finished environments were reset with `s[:, all_done_indices, :].zero_()`. `all_done_indices` comes from `dones.nonzero()`, so this is advanced indexing that returns a copy and the zeroing never reached the LSTM/GRU state, leaking hidden state across episode boundaries. The commit "Reverted .zero_() change" goes back to index assignment `s[:, all_done_indices, :] = 0`.
import torch
import torch.nn as nn


class CentralValueTrain(nn.Module):
    def __init__(self, num_agents, num_actors, seq_length, rnn_states):
        super().__init__()
        self.num_agents = num_agents
        self.num_actors = num_actors
        self.seq_length = seq_length
        self.is_rnn = True
        self.zero_rnn_on_done = True
        self.rnn_states = rnn_states

    def post_step_rnn(self, all_done_indices, zero_rnn_on_done=True):
        if not self.is_rnn:
            return
        if not self.zero_rnn_on_done:
            return
        all_done_indices = all_done_indices[::self.num_agents] // self.num_agents
        for s in self.rnn_states:
            s[:, all_done_indices, :].zero_()  # want: B


class A2CBase:
    def __init__(self, num_actors, num_agents, rnn_states, central_value_net=None):
        self.num_actors = num_actors
        self.num_agents = num_agents
        self.zero_rnn_on_done = True
        self.rnn_states = rnn_states
        self.has_central_value = central_value_net is not None
        self.central_value_net = central_value_net
        self.current_lengths = torch.zeros(num_actors * num_agents)

    def env_step(self, step):
        # every third env finishes on this step
        dones = torch.zeros(self.num_actors * self.num_agents, dtype=torch.uint8)
        dones[step % 3::3] = 1
        return dones

    def play_steps_rnn(self, step):
        self.dones = self.env_step(step)
        self.current_lengths.add_(1)
        all_done_indices = self.dones.nonzero(as_tuple=False)
        env_done_indices = all_done_indices[::self.num_agents]

        if len(all_done_indices) > 0:
            if self.zero_rnn_on_done:
                for s in self.rnn_states:
                    s[:, all_done_indices, :].zero_()  # want: B
            if self.has_central_value:
                self.central_value_net.post_step_rnn(all_done_indices)
        self.current_lengths[env_done_indices] = 0


class CentralValueTrainFixed(CentralValueTrain):
    def post_step_rnn(self, all_done_indices, zero_rnn_on_done=True):
        if not self.is_rnn:
            return
        if not self.zero_rnn_on_done:
            return
        all_done_indices = all_done_indices[::self.num_agents] // self.num_agents
        for s in self.rnn_states:
            s[:, all_done_indices, :] = 0


class A2CBaseFixed(A2CBase):
    def play_steps_rnn(self, step):
        self.dones = self.env_step(step)
        self.current_lengths.add_(1)
        all_done_indices = self.dones.nonzero(as_tuple=False)
        env_done_indices = all_done_indices[::self.num_agents]

        if len(all_done_indices) > 0:
            if self.zero_rnn_on_done:
                for s in self.rnn_states:
                    s[:, all_done_indices, :] = 0
            if self.has_central_value:
                self.central_value_net.post_step_rnn(all_done_indices)
        self.current_lengths[env_done_indices] = 0


def _run(agent_cls, cv_cls):
    torch.manual_seed(0)
    n_envs = 6
    actor_states = [torch.randn(1, n_envs, 4) + 5.0, torch.randn(1, n_envs, 4) + 5.0]  # (h, c)
    cv_states = [torch.randn(1, n_envs, 4) + 5.0]
    cv = cv_cls(num_agents=1, num_actors=n_envs, seq_length=4, rnn_states=cv_states)
    agent = agent_cls(num_actors=n_envs, num_agents=1, rnn_states=actor_states, central_value_net=cv)
    agent.play_steps_rnn(step=0)  # envs 0 and 3 are done
    return actor_states, cv_states


if __name__ == "__main__":
    actor_states, cv_states = _run(A2CBase, CentralValueTrain)
    assert (actor_states[0][:, [0, 3], :] != 0).all(), "buggy reset leaves the done envs' hidden state"
    assert (cv_states[0][:, [0, 3], :] != 0).all()

    actor_states, cv_states = _run(A2CBaseFixed, CentralValueTrainFixed)
    assert (actor_states[0][:, [0, 3], :] == 0).all() and (actor_states[1][:, [0, 3], :] == 0).all()
    assert (cv_states[0][:, [0, 3], :] == 0).all()
    assert (actor_states[0][:, [1, 2, 4, 5], :] != 0).all()
    print("ok")
