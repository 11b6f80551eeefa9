# source: BindsNET/bindsnet https://github.com/BindsNET/bindsnet/pull/310 — Monitor.record() kept each state-variable recording as one tensor and rebuilt it with torch.cat((recording, data), 0) (or torch.cat((recording[1:], data), 0) for a fixed window) on every simulation timestep, copying the whole history each step; the fix keeps a Python list per variable, appends a copy of the new frame and concatenates once in get().
import torch


class Nodes:
    def __init__(self, n, batch_size=1):
        self.v = torch.zeros(batch_size, n)
        self.s = torch.zeros(batch_size, n, dtype=torch.bool)

    def step(self, inpts):
        self.v = 0.9 * self.v + inpts
        self.s = self.v > 1.0
        self.v.masked_fill_(self.s, 0.0)


class Monitor:
    """Records state variables of interest."""

    def __init__(self, obj, state_vars, time=None, batch_size=1, device="cpu"):
        self.obj = obj
        self.state_vars = state_vars
        self.time = time
        self.batch_size = batch_size
        self.device = device
        self.recording = []
        self.reset_state_variables()

    def get(self, var):
        return_logs = self.recording[var]
        if self.time is None:
            self.recording[var] = torch.empty(0)
        return return_logs

    def record(self):
        for v in self.state_vars:
            data = getattr(self.obj, v).float().unsqueeze(0)
            if self.time is None:
                self.recording[v] = torch.cat((self.recording[v], data), 0)  # want: C
            else:
                self.recording[v] = torch.cat((self.recording[v][1:], data), 0)  # want: C

    def reset_state_variables(self):
        if self.time is None:
            self.recording = {v: torch.empty(0) for v in self.state_vars}
        else:
            self.recording = {
                v: torch.zeros(self.time, *getattr(self.obj, v).size()) for v in self.state_vars
            }


class MonitorFixed(Monitor):
    def get(self, var):
        if self.clean:
            return torch.empty(0, device=self.device)
        entries = [e for e in self.recording[var] if torch.is_tensor(e)]
        return_logs = torch.cat(entries, 0)
        if self.time is None:
            self.recording[var] = []
        return return_logs

    def record(self):
        self.clean = False
        for v in self.state_vars:
            data = getattr(self.obj, v).float().unsqueeze(0)
            record = torch.empty_like(data, device=self.device, requires_grad=False).copy_(data, non_blocking=True)
            self.recording[v].append(record)
            # remove the oldest element (first in the list)
            if self.time is not None:
                self.recording[v].pop(0)

    def reset_state_variables(self):
        if self.time is None:
            self.recording = {v: [] for v in self.state_vars}
        else:
            self.recording = {v: [[] for i in range(self.time)] for v in self.state_vars}
        self.clean = True


def run(monitor_cls, layer, steps, time=None):
    mon = monitor_cls(layer, state_vars=("v", "s"), time=time)
    g = torch.Generator().manual_seed(0)
    layer.v.zero_()
    copied = 0
    for _ in range(steps):
        layer.step(torch.rand(layer.v.shape, generator=g))
        mon.record()
        if isinstance(mon.recording["v"], torch.Tensor):
            copied += mon.recording["v"].numel()
    return mon.get("v"), copied


if __name__ == "__main__":
    layer = Nodes(100)
    for time in (None, 50):
        a, na = run(Monitor, layer, 200, time)
        b, _ = run(MonitorFixed, layer, 200, time)
        assert torch.equal(a, b), (a.shape, b.shape)
        print(f"time={time}: buggy copied {na} elements over 200 steps for a {a.numel()}-element recording")
