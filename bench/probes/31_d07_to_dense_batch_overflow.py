# source: pyg-team/pytorch_geometric https://github.com/pyg-team/pytorch_geometric/pull/10660 — `to_dense_batch` still synced even when the caller passed both `batch_size` and `max_num_nodes`: it evaluated `num_nodes.max() > max_num_nodes` in a Python branch and then dropped overflow nodes with boolean masking (`x[mask], idx[mask]`, a data-dependent nonzero). The fix keeps shapes static: overflow nodes are routed to a scratch slot with torch.where and the slot is sliced off afterwards.
import torch


def cumsum(x, dim=0):
    out = x.new_zeros(x.size(0) + 1)
    torch.cumsum(x, dim=dim, out=out[1:])
    return out


def scatter_sum(src, index, dim_size):
    return src.new_zeros(dim_size).scatter_add_(0, index, src)


def to_dense_batch(x, batch, fill_value=0.0, max_num_nodes=None, batch_size=None):
    # static-shape call site: batch_size and max_num_nodes are provided by the caller
    num_nodes = scatter_sum(batch.new_ones(x.size(0)), batch, dim_size=batch_size)
    cum_nodes = cumsum(num_nodes)

    filter_nodes = False
    if num_nodes.max() > max_num_nodes:  # want: D
        filter_nodes = True

    tmp = torch.arange(batch.size(0), device=x.device) - cum_nodes[batch]
    idx = tmp + (batch * max_num_nodes)
    if filter_nodes:
        mask = tmp < max_num_nodes
        x, idx = x[mask], idx[mask]  # want: D

    size = [batch_size * max_num_nodes] + list(x.size())[1:]
    out = torch.as_tensor(fill_value, device=x.device)
    out = out.to(x.dtype).repeat(size)
    out[idx] = x
    out = out.view([batch_size, max_num_nodes] + list(x.size())[1:])

    mask = torch.zeros(batch_size * max_num_nodes, dtype=torch.bool, device=x.device)
    mask[idx] = 1
    mask = mask.view(batch_size, max_num_nodes)
    return out, mask


def to_dense_batch_fixed(x, batch, fill_value=0.0, max_num_nodes=None, batch_size=None):
    num_nodes = scatter_sum(batch.new_ones(x.size(0)), batch, dim_size=batch_size)
    cum_nodes = cumsum(num_nodes)

    tmp = torch.arange(batch.size(0), device=x.device) - cum_nodes[batch]
    idx = tmp + (batch * max_num_nodes)
    # Nodes beyond max_num_nodes go to one extra trailing row that is dropped below,
    # so no data-dependent shape (and no host read) is needed.
    overflow_slot = batch_size * max_num_nodes
    idx = torch.where(tmp < max_num_nodes, idx, torch.full_like(idx, overflow_slot))

    size = [batch_size * max_num_nodes + 1] + list(x.size())[1:]
    out = torch.as_tensor(fill_value, device=x.device)
    out = out.to(x.dtype).repeat(size)
    out[idx] = x
    out = out[:-1].view([batch_size, max_num_nodes] + list(x.size())[1:])

    mask = torch.zeros(batch_size * max_num_nodes + 1, dtype=torch.bool, device=x.device)
    mask[idx] = 1
    mask = mask[:-1].view(batch_size, max_num_nodes)
    return out, mask


class DenseGraphReadout(torch.nn.Module):
    def __init__(self, dense_fn, in_channels, max_num_nodes):
        super().__init__()
        self.dense_fn = dense_fn
        self.max_num_nodes = max_num_nodes
        self.lin = torch.nn.Linear(in_channels, in_channels)

    def forward(self, x, batch, batch_size):
        h, mask = self.dense_fn(self.lin(x), batch, max_num_nodes=self.max_num_nodes, batch_size=batch_size)
        return (h * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(11, 4)
    batch = torch.tensor([0, 0, 0, 0, 0, 0, 1, 1, 2, 2, 2])
    for max_nodes in (3, 6):
        a_out, a_mask = to_dense_batch(x, batch, max_num_nodes=max_nodes, batch_size=3)
        b_out, b_mask = to_dense_batch_fixed(x, batch, max_num_nodes=max_nodes, batch_size=3)
        assert torch.equal(a_out, b_out) and torch.equal(a_mask, b_mask)
    m1 = DenseGraphReadout(to_dense_batch, 4, 3)
    m2 = DenseGraphReadout(to_dense_batch_fixed, 4, 3)
    m2.load_state_dict(m1.state_dict())
    assert torch.allclose(m1(x, batch, 3), m2(x, batch, 3))
    print("dense batches identical, shape", tuple(b_out.shape))
