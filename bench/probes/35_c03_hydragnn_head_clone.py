# source: ORNL/HydraGNN https://github.com/ORNL/HydraGNN/pull/140 — Base.forward cloned the shared encoder output for every output head (`x_graph.clone()` for graph heads, `x.clone()` for node heads) before feeding it to out-of-place head modules, an extra full copy of the node/graph features per head per step; the fix ("remove unnecessary clones") passes x_graph / x straight to the heads.
import torch
import torch.nn.functional as F
from torch.nn import Linear, Module, ModuleList, ReLU, Sequential


def global_mean_pool(x, batch, num_graphs):
    out = x.new_zeros(num_graphs, x.size(1)).index_add_(0, batch, x)
    cnt = torch.bincount(batch, minlength=num_graphs).clamp(min=1).to(x.dtype)
    return out / cnt[:, None]


class MeanConv(Module):
    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.lin = Linear(in_dim, out_dim)

    def forward(self, x, edge_index):
        src, dst = edge_index
        agg = torch.zeros_like(x).index_add_(0, dst, x[src])
        return self.lin(x + agg)


class MLPNode(Module):
    def __init__(self, input_dim, output_dim):
        super().__init__()
        self.mlp = ModuleList([Sequential(Linear(input_dim, 32), ReLU(), Linear(32, output_dim))])

    def forward(self, x, batch):
        return self.mlp[0](x)


class Base(Module):
    def __init__(self, input_dim=8, hidden_dim=64, head_dims=(1, 3), head_type=("graph", "node")):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.head_dims, self.head_type = head_dims, head_type
        self.graph_convs = ModuleList([MeanConv(input_dim, hidden_dim), MeanConv(hidden_dim, hidden_dim)])
        self.feature_layers = ModuleList([torch.nn.BatchNorm1d(hidden_dim) for _ in range(2)])
        self.graph_shared = Sequential(Linear(hidden_dim, 32), ReLU())
        self.heads_NN = ModuleList()
        for dim, t in zip(head_dims, head_type):
            self.heads_NN.append(Linear(32, dim) if t == "graph" else MLPNode(hidden_dim, dim))

    def forward(self, data):
        x, edge_index, batch, num_graphs = data["x"], data["edge_index"], data["batch"], data["num_graphs"]
        ### encoder part ####
        for conv, feat_layer in zip(self.graph_convs, self.feature_layers):
            c = conv(x=x, edge_index=edge_index)
            x = F.relu(feat_layer(c))
        #### multi-head decoder part####
        x_graph = global_mean_pool(x, batch, num_graphs)
        outputs = []
        for head_dim, headloc, type_head in zip(self.head_dims, self.heads_NN, self.head_type):
            if type_head == "graph":
                x_graph_head = x_graph.clone()  # want: C
                x_graph_head = self.graph_shared(x_graph_head)
                outputs.append(headloc(x_graph_head))
            else:
                x_node = x.clone()  # want: C
                x_node = headloc(x=x_node, batch=batch)
                outputs.append(x_node)
        return outputs


class BaseFixed(Base):
    def forward(self, data):
        x, edge_index, batch, num_graphs = data["x"], data["edge_index"], data["batch"], data["num_graphs"]
        for conv, feat_layer in zip(self.graph_convs, self.feature_layers):
            c = conv(x=x, edge_index=edge_index)
            x = F.relu(feat_layer(c))
        x_graph = global_mean_pool(x, batch, num_graphs)
        outputs = []
        for head_dim, headloc, type_head in zip(self.head_dims, self.heads_NN, self.head_type):
            if type_head == "graph":
                x_graph_head = self.graph_shared(x_graph)
                outputs.append(headloc(x_graph_head))
            else:
                x_node = headloc(x=x, batch=batch)
                outputs.append(x_node)
        return outputs


if __name__ == "__main__":
    torch.manual_seed(0)
    n, g = 2000, 20
    data = {"x": torch.randn(n, 8), "edge_index": torch.randint(0, n, (2, 8000)),
            "batch": torch.arange(n) // (n // g), "num_graphs": g}
    m1 = Base().eval()
    m2 = BaseFixed().eval()
    m2.load_state_dict(m1.state_dict())
    with torch.no_grad():
        o1, o2 = m1(data), m2(data)
    assert all(torch.allclose(a, b) for a, b in zip(o1, o2))
    from torch.profiler import profile, ProfilerActivity
    with torch.no_grad():
        for m in (m1, m2):
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                m(data)
            n_clone = sum(e.count for e in prof.key_averages() if e.key == "aten::clone")
            print(f"{type(m).__name__}: aten::clone calls per forward = {n_clone}")
