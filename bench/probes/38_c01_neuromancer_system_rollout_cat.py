# source: pnnl/neuromancer https://github.com/pnnl/neuromancer/pull/291 — System.forward rolls a graph of Nodes out for nsteps and feeds every node output back through System.cat, which rebuilt each trajectory with torch.cat([data3d[k], data2d[k][:, None, :]], dim=1) on every step. That reallocates and copies the whole trajectory accumulated so far each step, making a rollout O(n^2) in time and allocations. The fix keeps per-step outputs in a list-backed RolloutBuffer (reads stay index-based) and collapses it once at the end of the rollout.
import torch
import torch.nn as nn
from torch.utils._python_dispatch import TorchDispatchMode


class Node(nn.Module):
    def __init__(self, callable, input_keys, output_keys, name=None):
        super().__init__()
        self.input_keys, self.output_keys = input_keys, output_keys
        self.callable, self.name = callable, name

    def forward(self, data):
        inputs = [data[k] for k in self.input_keys]
        output = self.callable(*inputs)
        if not isinstance(output, tuple):
            output = [output]
        return {k: v for k, v in zip(self.output_keys, output)}


class System(nn.Module):
    def __init__(self, nodes, name='', nstep_key='X', init_func=None, nsteps=None):
        super().__init__()
        self.nstep_key = nstep_key
        self.nsteps = nsteps
        self.nodes, self.name = nn.ModuleList(nodes), name
        if init_func is not None:
            self.init = init_func

    def cat(self, data3d, data2d):
        for k in data2d:
            if k not in data3d:
                data3d[k] = data2d[k][:, None, :]
            else:
                data3d[k] = torch.cat([data3d[k], data2d[k][:, None, :]], dim=1)  # want: C
        return data3d

    def init(self, data):
        return data

    def forward(self, data):
        nsteps = self.nsteps if self.nsteps is not None else data[self.nstep_key].shape[1]
        data = self.init(data)
        for i in range(nsteps):
            for node in self.nodes:
                indata = {k: data[k][:, i] for k in node.input_keys}
                outdata = node(indata)
                data = self.cat(data, outdata)
        return data


class RolloutBuffer:
    def __init__(self, initial=None):
        self.steps = [] if initial is None else list(initial.unbind(1))

    def __getitem__(self, idx):
        return self.steps[idx[1]]

    def append(self, step):
        self.steps.append(step)

    def collapse(self):
        return torch.stack(self.steps, dim=1)


class SystemFixed(System):
    def forward(self, data):
        nsteps = self.nsteps if self.nsteps is not None else data[self.nstep_key].shape[1]
        data = dict(self.init(data))
        buffers = {}
        for i in range(nsteps):
            for node in self.nodes:
                indata = {k: (buffers[k] if k in buffers else data[k])[:, i] for k in node.input_keys}
                outdata = node(indata)
                for k, v in outdata.items():
                    if k not in buffers:
                        buffers[k] = RolloutBuffer(data.get(k))
                    buffers[k].append(v)
        for k, buf in buffers.items():
            data[k] = buf.collapse()
        return data


class CopiedBytes(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.nbytes = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func in (torch.ops.aten.cat.default, torch.ops.aten.stack.default):
            self.nbytes += out.numel() * out.element_size()
        return out


if __name__ == "__main__":
    torch.manual_seed(0)
    nx, nu, batch, nsteps = 3, 2, 4, 16
    A = torch.randn(nx, nx) * 0.3
    B = torch.randn(nu, nx) * 0.3

    def dynamics(xn, u):
        return xn @ A + u @ B

    def init(data):
        data = dict(data)
        data['xn'] = data['X'][:, :1, :]
        return data

    data = {'X': torch.randn(batch, nsteps, nx), 'U': torch.randn(batch, nsteps, nu)}
    node = Node(dynamics, ['xn', 'U'], ['xn'], name='ssm')
    buggy, fixed = System([node], init_func=init), SystemFixed([node], init_func=init)

    with torch.no_grad(), CopiedBytes() as cb:
        out_b = buggy(data)
    with torch.no_grad(), CopiedBytes() as cf:
        out_f = fixed(data)

    assert out_b['xn'].shape == out_f['xn'].shape == (batch, nsteps + 1, nx)
    assert torch.allclose(out_b['xn'], out_f['xn'])
    step_bytes = batch * nx * 4
    assert cf.nbytes == (nsteps + 1) * step_bytes
    assert cb.nbytes == sum((t + 2) * step_bytes for t in range(nsteps))
    assert cb.nbytes > 4 * cf.nbytes
    print("ok", cb.nbytes, cf.nbytes)
