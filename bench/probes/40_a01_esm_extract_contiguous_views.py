# source: facebookresearch/esm https://github.com/facebookresearch/esm/commit/178d32166cd0b17085b45e1aed06e04674086b15 — extract.py wrote one .pt file per FASTA sequence, filling it with `t[i, 1 : len(strs[i]) + 1].contiguous()` / `t[i, 0].contiguous()` cut out of the batch-wide representation tensors. Those row slices of a contiguous [B, T, D] tensor are already contiguous, so `.contiguous()` returned the view itself and every file serialized the whole batch's representations. The fix (PR #14, "actually need .clone() not .contiguous()") replaces `.contiguous()` with `.clone()`.
import argparse
import pathlib
import tempfile

import torch


class ProteinBertModel(torch.nn.Module):
    def __init__(self, num_layers=2, embed_dim=16, alphabet_size=24):
        super().__init__()
        self.num_layers = num_layers
        self.embed_tokens = torch.nn.Embedding(alphabet_size, embed_dim)
        self.layers = torch.nn.ModuleList(torch.nn.Linear(embed_dim, embed_dim) for _ in range(num_layers))

    def forward(self, tokens, repr_layers=(), return_contacts=False):
        x = self.embed_tokens(tokens)
        hidden_representations = {}
        for layer_idx, layer in enumerate(self.layers):
            x = torch.tanh(layer(x))
            if (layer_idx + 1) in repr_layers:
                hidden_representations[layer_idx + 1] = x
        result = {"representations": hidden_representations}
        if return_contacts:
            result["contacts"] = torch.sigmoid(x @ x.transpose(1, 2))
        return result


def batch_converter(raw_batch, max_len):
    labels, strs = zip(*raw_batch)
    toks = torch.ones(len(raw_batch), max_len + 2, dtype=torch.long)
    for i, seq in enumerate(strs):
        toks[i, 1 : len(seq) + 1] = torch.tensor([ord(c) % 20 + 4 for c in seq])
    return list(labels), list(strs), toks


def main(args, model, batches):
    args.output_dir.mkdir(parents=True, exist_ok=True)
    return_contacts = "contacts" in args.include
    repr_layers = [(i + model.num_layers + 1) % (model.num_layers + 1) for i in args.repr_layers]

    with torch.no_grad():
        for labels, strs, toks in batches:
            out = model(toks, repr_layers=repr_layers, return_contacts=return_contacts)

            representations = {layer: t.to(device="cpu") for layer, t in out["representations"].items()}
            if return_contacts:
                contacts = out["contacts"].to(device="cpu")

            for i, label in enumerate(labels):
                args.output_file = args.output_dir / f"{label}.pt"
                result = {"label": label}
                # Call contiguous on tensors to ensure tensors are not views into a larger representation
                # See https://github.com/pytorch/pytorch/issues/1995
                if "per_tok" in args.include:
                    result["representations"] = {
                        layer: t[i, 1 : len(strs[i]) + 1].contiguous()  # want: A
                        for layer, t in representations.items()
                    }
                if "bos" in args.include:
                    result["bos_representations"] = {
                        layer: t[i, 0].contiguous() for layer, t in representations.items()  # want: A
                    }
                if return_contacts:
                    result["contacts"] = contacts[i, :len(strs[i]), :len(strs[i])].contiguous()  # maybe: A (contiguous() copies only when the sequence is shorter than the padded batch)

                torch.save(result, args.output_file)


def main_fixed(args, model, batches):
    args.output_dir.mkdir(parents=True, exist_ok=True)
    return_contacts = "contacts" in args.include
    repr_layers = [(i + model.num_layers + 1) % (model.num_layers + 1) for i in args.repr_layers]

    with torch.no_grad():
        for labels, strs, toks in batches:
            out = model(toks, repr_layers=repr_layers, return_contacts=return_contacts)

            representations = {layer: t.to(device="cpu") for layer, t in out["representations"].items()}
            if return_contacts:
                contacts = out["contacts"].to(device="cpu")

            for i, label in enumerate(labels):
                args.output_file = args.output_dir / f"{label}.pt"
                result = {"label": label}
                if "per_tok" in args.include:
                    result["representations"] = {
                        layer: t[i, 1 : len(strs[i]) + 1].clone()
                        for layer, t in representations.items()
                    }
                if "bos" in args.include:
                    result["bos_representations"] = {
                        layer: t[i, 0].clone() for layer, t in representations.items()
                    }
                if return_contacts:
                    result["contacts"] = contacts[i, :len(strs[i]), :len(strs[i])].clone()

                torch.save(result, args.output_file)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = ProteinBertModel().eval()
    raw = [(f"seq{k}", "MKTAYIAKQR"[: 6 + k]) for k in range(8)]
    batches = [batch_converter(raw, max_len=13)]
    with tempfile.TemporaryDirectory() as d:
        for fn, sub in ((main, "buggy"), (main_fixed, "fixed")):
            args = argparse.Namespace(output_dir=pathlib.Path(d) / sub, repr_layers=[-1], include=["per_tok", "bos"])
            fn(args, model, batches)
        buggy = torch.load(pathlib.Path(d) / "buggy" / "seq0.pt")
        fixed = torch.load(pathlib.Path(d) / "fixed" / "seq0.pt")
        rep_b, rep_f = buggy["representations"][2], fixed["representations"][2]
        assert torch.equal(rep_b, rep_f)
        view_bytes = rep_b.numel() * rep_b.element_size()
        assert rep_b.untyped_storage().nbytes() > view_bytes
        assert rep_f.untyped_storage().nbytes() == view_bytes
        size_b = (pathlib.Path(d) / "buggy" / "seq0.pt").stat().st_size
        size_f = (pathlib.Path(d) / "fixed" / "seq0.pt").stat().st_size
        assert size_b > size_f, (size_b, size_f)
