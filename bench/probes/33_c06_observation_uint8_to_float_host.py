# source: huggingface/lerobot https://github.com/huggingface/lerobot/pull/4433 — prepare_observation_for_inference widened every camera frame uint8 -> float32 (/255) and did permute(2, 0, 1).contiguous() on the host, then moved the 4x larger float tensor to the device on every control tick; the PR transfers the uint8 frame first and does the cast/normalise/permute on the device.
import numpy as np
import torch


def prepare_observation_for_inference(observation, device, task=None, robot_type=None):
    for name in observation:
        observation[name] = torch.from_numpy(observation[name])
        if "image" in name:
            observation[name] = observation[name].type(torch.float32) / 255  # want: C
            observation[name] = observation[name].permute(2, 0, 1).contiguous()  # maybe: C (full host-side copy of the widened frame, also moved by the fix)
        observation[name] = observation[name].unsqueeze(0)
        observation[name] = observation[name].to(device)  # maybe: C (ships the already-widened float32 frame; the fix moved the transfer before the cast)

    observation["task"] = task if task else ""
    observation["robot_type"] = robot_type if robot_type else ""
    return observation


def prepare_observation_for_inference_fixed(observation, device, task=None, robot_type=None):
    for name in observation:
        tensor = torch.from_numpy(observation[name]).to(device)
        if "image" in name:
            tensor = tensor.type(torch.float32) / 255
            tensor = tensor.permute(2, 0, 1).contiguous()
        observation[name] = tensor.unsqueeze(0)

    observation["task"] = task if task else ""
    observation["robot_type"] = robot_type if robot_type else ""
    return observation


def predict_action(observation, policy, device, prepare):
    with torch.inference_mode():
        observation = prepare(observation, device, task="pick", robot_type="so101")
        return policy(observation)


class TinyPolicy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(3 + 6, 6)

    def forward(self, batch):
        img = batch["observation.images.front"].mean(dim=(2, 3))
        return self.head(torch.cat([img, batch["observation.state"]], dim=-1))


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    frame = rng.integers(0, 256, size=(480, 640, 3), dtype=np.uint8)
    state = rng.standard_normal(6).astype(np.float32)
    policy = TinyPolicy().eval()
    device = torch.device("cpu")

    obs_b = {"observation.images.front": frame.copy(), "observation.state": state.copy()}
    obs_f = {"observation.images.front": frame.copy(), "observation.state": state.copy()}
    a_b = predict_action(obs_b, policy, device, prepare_observation_for_inference)
    a_f = predict_action(obs_f, policy, device, prepare_observation_for_inference_fixed)
    assert torch.allclose(a_b, a_f)
    print("bytes shipped to the device per frame: buggy (float32 CHW)", frame.size * 4, "fixed (uint8 HWC)", frame.nbytes)
