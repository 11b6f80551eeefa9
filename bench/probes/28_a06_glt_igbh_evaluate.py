# source: alibaba/graphlearn-for-pytorch https://github.com/alibaba/graphlearn-for-pytorch/pull/81 — evaluate() appended batch['paper'].y[:batch_size].cpu().numpy() to a list for the whole epoch; on CPU .cpu() is a no-op and .numpy() shares memory, so every kept label array pinned the label tensor of the entire sampled subgraph; the fix inserted .clone() ("such that batch sampling results can be garbage-collected").
import numpy as np
import torch


torch.manual_seed(42)


# ---- minimal stand-ins for a GLT/PyG hetero mini-batch -----------------------------


class _NodeStore:
    def __init__(self, x, y, batch_size):
        self.x = x
        self.y = y
        self.batch_size = batch_size


class HeteroBatch:
    def __init__(self, stores, edge_index_dict):
        self._stores = stores
        self.edge_index_dict = edge_index_dict

    def __getitem__(self, node_type):
        return self._stores[node_type]

    @property
    def x_dict(self):
        return {k: v.x for k, v in self._stores.items()}


def neighbor_loader(num_batches, batch_size, sampled_nodes, feat_dim, num_classes):
    """Each mini-batch holds the seed nodes first, followed by many sampled neighbours."""
    for _ in range(num_batches):
        x = torch.randn(sampled_nodes, feat_dim)
        y = torch.randint(0, num_classes, (sampled_nodes,))
        edge_index = torch.randint(0, sampled_nodes, (2, 4 * sampled_nodes))
        yield HeteroBatch({"paper": _NodeStore(x, y, batch_size)}, {("paper", "cites", "paper"): edge_index})


class RGNN(torch.nn.Module):
    def __init__(self, in_channels, num_classes):
        super().__init__()
        self.lin = torch.nn.Linear(in_channels, num_classes)

    def forward(self, x_dict, edge_index_dict):
        return self.lin(x_dict["paper"])


def accuracy_score(labels, predictions):
    return float((labels == predictions).mean())


# ---- examples/igbh/dist_train_rgnn.py ------------------------------------------------


def evaluate(model, dataloader):
  predictions = []
  labels = []
  with torch.no_grad():
    for batch in dataloader:
      batch_size = batch['paper'].batch_size
      out = model(batch.x_dict, batch.edge_index_dict)[:batch_size]
      labels.append(batch['paper'].y[:batch_size].cpu().numpy())  # want: A
      predictions.append(out.argmax(1).cpu().numpy())

    predictions = np.concatenate(predictions)
    labels = np.concatenate(labels)
    acc = accuracy_score(labels, predictions)
    return acc


def evaluate_fixed(model, dataloader):
  """Post-fix version (look-alike, correct)."""
  predictions = []
  labels = []
  with torch.no_grad():
    for batch in dataloader:
      batch_size = batch['paper'].batch_size
      out = model(batch.x_dict, batch.edge_index_dict)[:batch_size]
      labels.append(batch['paper'].y[:batch_size].cpu().clone().numpy())
      predictions.append(out.argmax(1).cpu().clone().numpy())

    predictions = np.concatenate(predictions)
    labels = np.concatenate(labels)
    acc = accuracy_score(labels, predictions)
    return acc


if __name__ == "__main__":
  model = RGNN(16, 8).eval()

  # Show what the per-batch entries keep alive (same expression as in evaluate()).
  batch = next(neighbor_loader(1, batch_size=64, sampled_nodes=20000, feat_dim=16, num_classes=8))
  kept = batch['paper'].y[:64].cpu().numpy()
  kept_fixed = batch['paper'].y[:64].cpu().clone().numpy()
  base_bytes = batch['paper'].y.untyped_storage().nbytes()
  print("label rows kept:", kept.nbytes, "bytes; buffer pinned:", base_bytes, "bytes")
  assert np.shares_memory(kept, batch['paper'].y.numpy())
  assert not np.shares_memory(kept_fixed, batch['paper'].y.numpy())

  acc = evaluate(model, neighbor_loader(5, 64, 20000, 16, 8))
  acc_fixed = evaluate_fixed(model, neighbor_loader(5, 64, 20000, 16, 8))
  print(f"val acc (buggy) {acc*100:.2f} / (fixed) {acc_fixed*100:.2f}")
