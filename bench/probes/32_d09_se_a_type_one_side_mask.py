# source: deepmodeling/deepmd-kit https://github.com/deepmodeling/deepmd-kit/pull/3361 — With type_one_side the se_a descriptor block still built an all-True `ti_mask` and indexed `exclude_mask[ti_mask, ...]`, `dmatrix[ti_mask, ...]` and `xyz_scatter[ti_mask] += gr` with it; boolean-mask indexing goes through nonzero() and a host-device sync (~3 ms/step); the fix sets `ti_mask = None` and uses plain slices.
import torch
import torch.nn as nn


class DescrptBlockSeA(nn.Module):
    def __init__(self, sel, ntypes, neuron=(8, 16), type_one_side=True):
        super().__init__()
        self.sel = sel
        self.ntypes = ntypes
        self.nnei = sum(sel)
        self.sec = [0]
        for s in sel:
            self.sec.append(self.sec[-1] + s)
        self.filter_neuron = list(neuron)
        self.type_one_side = type_one_side
        n_nets = ntypes if type_one_side else ntypes * ntypes
        self.networks = nn.ModuleList(
            nn.Sequential(nn.Linear(1, neuron[0]), nn.Tanh(), nn.Linear(neuron[0], neuron[1]))
            for _ in range(n_nets)
        )

    def forward(self, dmatrix, exclude_mask, atype):
        dmatrix = dmatrix.view(-1, self.nnei, 4)
        nfnl = dmatrix.shape[0]
        # pre-allocate a shape to pass jit
        xyz_scatter = torch.zeros([nfnl, 4, self.filter_neuron[-1]], dtype=dmatrix.dtype, device=dmatrix.device)
        exclude_mask = exclude_mask.view(nfnl, -1)
        for embedding_idx, ll in enumerate(self.networks):
            ii = embedding_idx
            # torch.jit is not happy with slice(None)
            ti_mask = torch.ones(nfnl, dtype=torch.bool, device=dmatrix.device)
            # nfnl x nt
            mm = exclude_mask[ti_mask, self.sec[ii] : self.sec[ii + 1]]  # want: D
            # nfnl x nt x 4
            rr = dmatrix[ti_mask, self.sec[ii] : self.sec[ii + 1], :]  # want: D
            rr = rr * mm[:, :, None]
            ss = rr[:, :, :1]
            # nfnl x nt x ng
            gg = ll(ss)
            # nfnl x 4 x ng
            gr = torch.matmul(rr.permute(0, 2, 1), gg)
            xyz_scatter[ti_mask] += gr  # want: D
        xyz_scatter /= self.nnei
        return xyz_scatter


class DescrptBlockSeAFixed(DescrptBlockSeA):
    def forward(self, dmatrix, exclude_mask, atype):
        dmatrix = dmatrix.view(-1, self.nnei, 4)
        nfnl = dmatrix.shape[0]
        xyz_scatter = torch.zeros([nfnl, 4, self.filter_neuron[-1]], dtype=dmatrix.dtype, device=dmatrix.device)
        exclude_mask = exclude_mask.view(nfnl, -1)
        for embedding_idx, ll in enumerate(self.networks):
            ii = embedding_idx
            # applying a mask seems to cause performance degradation
            mm = exclude_mask[:, self.sec[ii] : self.sec[ii + 1]]
            rr = dmatrix[:, self.sec[ii] : self.sec[ii + 1], :]
            rr = rr * mm[:, :, None]
            ss = rr[:, :, :1]
            gg = ll(ss)
            gr = torch.matmul(rr.permute(0, 2, 1), gg)
            xyz_scatter += gr
        xyz_scatter /= self.nnei
        return xyz_scatter


if __name__ == "__main__":
    torch.manual_seed(0)
    nf, nloc, sel = 2, 5, [3, 4]
    ref = DescrptBlockSeA(sel, ntypes=2)
    fixed = DescrptBlockSeAFixed(sel, ntypes=2)
    fixed.load_state_dict(ref.state_dict())
    dmatrix = torch.randn(nf, nloc, sum(sel) * 4)
    exclude_mask = (torch.rand(nf, nloc, sum(sel)) > 0.1).to(dmatrix.dtype)
    atype = torch.randint(0, 2, (nf, nloc))
    torch.testing.assert_close(ref(dmatrix, exclude_mask, atype), fixed(dmatrix, exclude_mask, atype))
    print("descriptor outputs match")
