# source: daniilidis-group/neural_renderer https://github.com/daniilidis-group/neural_renderer/pull/52 — look() handled a tensor `direction` with a bare `direction.to(device)` statement; Tensor.to is not in-place, so the moved tensor was discarded and the camera axes were built from the tensor on its original device. The fix assigns the result (`direction = direction.to(device)`).
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def look(vertices, eye, direction=None, up=None):
    """
    "Look at" transformation of vertices.
    """
    assert (vertices.ndimension() == 3)
    device = vertices.device

    if direction is None:
        direction = torch.from_numpy(np.array([0, 1, 0], np.float32)).to(device)
    elif isinstance(direction, list) or isinstance(direction, tuple):
        direction = torch.from_numpy(np.array(direction, np.float32)).to(device)
    elif isinstance(direction, np.ndarray):
        direction = torch.from_numpy(direction).to(device)
    else:
        direction.to(device)  # want: B

    if up is None:
        up = torch.from_numpy(np.array([0, 1, 0], np.float32)).to(device)
    if isinstance(eye, list) or isinstance(eye, tuple):
        eye = torch.from_numpy(np.array(eye, np.float32)).to(device)
    elif isinstance(eye, np.ndarray):
        eye = torch.from_numpy(eye).to(device)
    else:
        eye = eye.to(device)
    if eye.ndimension() == 1:
        eye = eye[None, :]
    if direction.ndimension() == 1:
        direction = direction[None, :]
    if up.ndimension() == 1:
        up = up[None, :]

    # create new axes
    z_axis = F.normalize(direction, eps=1e-5)
    x_axis = F.normalize(torch.cross(up, z_axis, dim=-1), eps=1e-5)
    y_axis = F.normalize(torch.cross(z_axis, x_axis, dim=-1), eps=1e-5)

    # create rotation matrix: [bs, 3, 3]
    r = torch.cat((x_axis[:, None, :], y_axis[:, None, :], z_axis[:, None, :]), dim=1)

    if vertices.shape != eye.shape:
        eye = eye[:, None, :]
    vertices = vertices - eye
    vertices = torch.matmul(vertices, r.transpose(1, 2))
    return vertices


def look_fixed(vertices, eye, direction=None, up=None):
    assert (vertices.ndimension() == 3)
    device = vertices.device
    if direction is None:
        direction = torch.from_numpy(np.array([0, 1, 0], np.float32)).to(device)
    elif isinstance(direction, list) or isinstance(direction, tuple):
        direction = torch.from_numpy(np.array(direction, np.float32)).to(device)
    elif isinstance(direction, np.ndarray):
        direction = torch.from_numpy(direction).to(device)
    else:
        direction = direction.to(device)
    if up is None:
        up = torch.from_numpy(np.array([0, 1, 0], np.float32)).to(device)
    eye = eye.to(device) if torch.is_tensor(eye) else torch.from_numpy(np.array(eye, np.float32)).to(device)
    if eye.ndimension() == 1:
        eye = eye[None, :]
    if direction.ndimension() == 1:
        direction = direction[None, :]
    if up.ndimension() == 1:
        up = up[None, :]
    z_axis = F.normalize(direction, eps=1e-5)
    x_axis = F.normalize(torch.cross(up, z_axis, dim=-1), eps=1e-5)
    y_axis = F.normalize(torch.cross(z_axis, x_axis, dim=-1), eps=1e-5)
    r = torch.cat((x_axis[:, None, :], y_axis[:, None, :], z_axis[:, None, :]), dim=1)
    if vertices.shape != eye.shape:
        eye = eye[:, None, :]
    vertices = vertices - eye
    return torch.matmul(vertices, r.transpose(1, 2))


class Renderer(nn.Module):
    def __init__(self, look_fn, eye=(0.0, 0.0, -2.732), viewing_angle=30):
        super().__init__()
        self.look_fn = look_fn
        self.eye = list(eye)
        self.width = math.tan(math.radians(viewing_angle))

    def forward(self, vertices, camera_direction):
        vertices = self.look_fn(vertices, self.eye, camera_direction)
        return vertices[:, :, :2] / (vertices[:, :, 2:3] * self.width)


if __name__ == "__main__":
    verts = torch.rand(1, 8, 3, device="meta")  # stands in for a CUDA mesh on a CPU-only box
    cam_dir = torch.tensor([0.0, 0.3, 1.0])  # user passes a CPU tensor
    out = Renderer(look_fixed)(verts, cam_dir)
    print("fixed: projected vertices on", out.device, tuple(out.shape))
    try:
        Renderer(look)(verts, cam_dir)
        raise AssertionError("expected a device mismatch from the discarded .to()")
    except RuntimeError as e:
        print("buggy: direction never moved ->", str(e).splitlines()[0])
