# source: pyg-team/pytorch_geometric https://github.com/pyg-team/pytorch_geometric/pull/9896 — the DistributedDataParallel example's test() did `total_correct += int((pred == y).sum())` for every eval batch (a D2H sync per iteration) and then re-uploaded the Python result with torch.tensor(..., device=rank) just to all_reduce it. The fix keeps total_correct as a device tensor and returns it directly for dist.all_reduce.
import os
import tempfile
from types import SimpleNamespace

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import Tensor
from torch.nn.parallel import DistributedDataParallel


class SAGEConv(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.lin_l = torch.nn.Linear(in_channels, out_channels)
        self.lin_r = torch.nn.Linear(in_channels, out_channels, bias=False)

    def forward(self, x, edge_index):
        src, dst = edge_index
        agg = torch.zeros_like(x).index_add_(0, dst, x[src])
        deg = torch.zeros(x.size(0), device=x.device).index_add_(0, dst, torch.ones_like(dst, dtype=x.dtype))
        return self.lin_l(agg / deg.clamp(min=1).unsqueeze(-1)) + self.lin_r(x)


class SAGE(torch.nn.Module):
    def __init__(self, in_channels, hidden_channels, out_channels, num_layers=2):
        super().__init__()
        self.convs = torch.nn.ModuleList([SAGEConv(in_channels, hidden_channels)])
        for _ in range(num_layers - 2):
            self.convs.append(SAGEConv(hidden_channels, hidden_channels))
        self.convs.append(SAGEConv(hidden_channels, out_channels))

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        for i, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if i < len(self.convs) - 1:
                x = F.dropout(x.relu_(), p=0.5, training=self.training)
        return x


@torch.no_grad()
def test(loader, model, device):
    model.eval()
    total_correct = total_examples = 0
    for batch in loader:
        out = model.module(batch.x, batch.edge_index.to(device))[:batch.batch_size]
        pred = out.argmax(dim=-1)
        y = batch.y[:batch.batch_size].to(device)
        total_correct += int((pred == y).sum())  # want: D
        total_examples += batch.batch_size
    return torch.tensor(total_correct / total_examples, device=device)  # maybe: D (host float re-uploaded each eval; blocking H2D copy, removed by the fix)


@torch.no_grad()
def test_fixed(loader, model, device):
    model.eval()
    total_correct = total_examples = 0
    for batch in loader:
        out = model.module(batch.x, batch.edge_index.to(device))[:batch.batch_size]
        pred = out.argmax(dim=-1)
        y = batch.y[:batch.batch_size].to(device)
        total_correct += (pred == y).sum()
        total_examples += batch.batch_size
    return total_correct / total_examples


def make_loader(num_batches, device, batch_size=32, num_nodes=96, num_features=16, num_classes=5):
    loader = []
    for _ in range(num_batches):
        edge_index = torch.randint(0, num_nodes, (2, 4 * num_nodes))
        loader.append(SimpleNamespace(x=torch.randn(num_nodes, num_features, device=device), edge_index=edge_index,
                                      y=torch.randint(0, num_classes, (num_nodes,), device=device),
                                      batch_size=batch_size))
    return loader


def run(rank, world_size, device, eval_fn):
    torch.manual_seed(12345)
    model = DistributedDataParallel(SAGE(16, 32, 5).to(device))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    train_loader, val_loader = make_loader(6, device), make_loader(4, device)
    for epoch in range(1, 3):
        model.train()
        for batch in train_loader:
            optimizer.zero_grad()
            out = model(batch.x, batch.edge_index.to(device))[:batch.batch_size]
            loss = F.cross_entropy(out, batch.y[:batch.batch_size])
            loss.backward()
            optimizer.step()
        train_acc = eval_fn(train_loader, model, device)
        val_acc = eval_fn(val_loader, model, device)
        if world_size > 1:
            dist.all_reduce(train_acc, op=dist.ReduceOp.SUM)
            dist.all_reduce(val_acc, op=dist.ReduceOp.SUM)
        train_acc = train_acc / world_size
        val_acc = val_acc / world_size
    return train_acc, val_acc


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        store = dist.FileStore(os.path.join(tmp, "store"), 1)
        dist.init_process_group("gloo", store=store, rank=0, world_size=1)
        dev = torch.device("cpu")
        torch.manual_seed(0)
        a = run(0, dist.get_world_size(), dev, test)
        torch.manual_seed(0)
        b = run(0, dist.get_world_size(), dev, test_fixed)
        assert all(torch.allclose(x.float(), y.float()) for x, y in zip(a, b))
        print("accuracies match:", tuple(t.shape for t in a))
        dist.destroy_process_group()
