# source: diegoantognini/pyGAT https://github.com/diegoantognini/pyGAT/pull/63 — GraphAttentionLayer._prepare_attentional_mechanism_input built every (i, j) node pair explicitly with Wh.repeat_interleave(N, dim=0), Wh.repeat(N, 1) and a torch.cat into an (N, N, 2 * out_features) tensor, just to multiply it by the attention vector a. That materializes O(N^2 * F) memory per layer and head although a^T [Wh_i || Wh_j] splits into two (N, 1) products. The PR ("Reduce memory usage ... use broadcast add to avoid expanding the tensors") computes Wh @ a[:F] and Wh @ a[F:] and adds them with broadcasting.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode


class GraphAttentionLayer(nn.Module):
    """
    Simple GAT layer, similar to https://arxiv.org/abs/1710.10903
    """
    def __init__(self, in_features, out_features, dropout, alpha, concat=True):
        super(GraphAttentionLayer, self).__init__()
        self.dropout = dropout
        self.in_features = in_features
        self.out_features = out_features
        self.alpha = alpha
        self.concat = concat

        self.W = nn.Parameter(torch.empty(size=(in_features, out_features)))
        nn.init.xavier_uniform_(self.W.data, gain=1.414)
        self.a = nn.Parameter(torch.empty(size=(2*out_features, 1)))
        nn.init.xavier_uniform_(self.a.data, gain=1.414)

        self.leakyrelu = nn.LeakyReLU(self.alpha)

    def forward(self, h, adj):
        Wh = torch.mm(h, self.W)  # h.shape: (N, in_features), Wh.shape: (N, out_features)
        a_input = self._prepare_attentional_mechanism_input(Wh)
        e = self.leakyrelu(torch.matmul(a_input, self.a).squeeze(2))

        zero_vec = -9e15*torch.ones_like(e)
        attention = torch.where(adj > 0, e, zero_vec)
        attention = F.softmax(attention, dim=1)
        attention = F.dropout(attention, self.dropout, training=self.training)
        h_prime = torch.matmul(attention, Wh)

        if self.concat:
            return F.elu(h_prime)
        else:
            return h_prime

    def _prepare_attentional_mechanism_input(self, Wh):
        N = Wh.size()[0]  # number of nodes

        Wh_repeated_in_chunks = Wh.repeat_interleave(N, dim=0)  # want: C
        Wh_repeated_alternating = Wh.repeat(N, 1)  # want: C

        all_combinations_matrix = torch.cat([Wh_repeated_in_chunks, Wh_repeated_alternating], dim=1)  # maybe: C (materializes the (N * N, 2 * out_features) pair matrix)

        return all_combinations_matrix.view(N, N, 2 * self.out_features)

    def __repr__(self):
        return self.__class__.__name__ + ' (' + str(self.in_features) + ' -> ' + str(self.out_features) + ')'


class GraphAttentionLayerFixed(GraphAttentionLayer):
    def forward(self, h, adj):
        Wh = torch.mm(h, self.W)  # h.shape: (N, in_features), Wh.shape: (N, out_features)
        e = self._prepare_attentional_mechanism_input(Wh)

        zero_vec = -9e15*torch.ones_like(e)
        attention = torch.where(adj > 0, e, zero_vec)
        attention = F.softmax(attention, dim=1)
        attention = F.dropout(attention, self.dropout, training=self.training)
        h_prime = torch.matmul(attention, Wh)

        if self.concat:
            return F.elu(h_prime)
        else:
            return h_prime

    def _prepare_attentional_mechanism_input(self, Wh):
        # Wh.shape (N, out_feature)
        # self.a.shape (2 * out_feature, 1)
        # Wh1&2.shape (N, 1)
        # e.shape (N, N)
        Wh1 = torch.matmul(Wh, self.a[:self.out_features, :])
        Wh2 = torch.matmul(Wh, self.a[self.out_features:, :])
        # broadcast add
        e = Wh1 + Wh2.T
        return self.leakyrelu(e)


class PeakElems(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.largest = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor):
            self.largest = max(self.largest, out.numel())
        return out


if __name__ == "__main__":
    torch.manual_seed(0)
    n_nodes, nfeat, nhid = 12, 10, 8
    layer = GraphAttentionLayer(nfeat, nhid, dropout=0.6, alpha=0.2).eval()
    layer_fixed = GraphAttentionLayerFixed(nfeat, nhid, dropout=0.6, alpha=0.2).eval()
    layer_fixed.load_state_dict(layer.state_dict())
    h = torch.randn(n_nodes, nfeat)
    adj = (torch.rand(n_nodes, n_nodes) > 0.5).float() + torch.eye(n_nodes)

    with torch.no_grad(), PeakElems() as pb:
        out_b = layer(h, adj)
    with torch.no_grad(), PeakElems() as pf:
        out_f = layer_fixed(h, adj)
    assert torch.allclose(out_b, out_f, atol=1e-5)
    assert pb.largest == n_nodes * n_nodes * 2 * nhid
    assert pf.largest == n_nodes * n_nodes
    print("ok", pb.largest, pf.largest)
