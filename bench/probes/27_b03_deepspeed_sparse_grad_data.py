# source: microsoft/DeepSpeed https://github.com/microsoft/DeepSpeed/pull/1914 — the engine wrapped `param.grad.data` (a fresh alias tensor object) in SparseTensor and later assigned the all-reduced result with `orig_dense_tensor.data = ...`, which rebinds the throw-away alias so param.grad never received the reduced sparse gradient; the fix wraps `param.grad` itself.
import torch


class SparseTensor(object):
    """ Compressed Sparse Tensor """
    def __init__(self, dense_tensor=None):
        self.orig_dense_tensor = dense_tensor
        self.is_sparse = dense_tensor.is_sparse
        if dense_tensor is not None:
            if dense_tensor.is_sparse:
                dense_tensor = dense_tensor.coalesce()
                self.indices = dense_tensor.indices().flatten()
                self.values = dense_tensor.values()
            else:
                result = torch.sum(dense_tensor, dim=1)
                self.indices = result.nonzero().flatten()
                self.values = dense_tensor[self.indices]
            self.dense_size = list(dense_tensor.size())
        else:
            self.indices = None
            self.values = None
            self.dense_size = None

    def to_coo_tensor(self):
        return torch.sparse_coo_tensor(self.indices.unsqueeze(0), self.values, self.dense_size)

    def to_dense(self):
        it = self.indices.unsqueeze(1)
        full_indices = torch.cat([it for _ in range(self.dense_size[1])], dim=1)
        return self.values.new_zeros(self.dense_size).scatter_add_(0, full_indices, self.values)


class FakeDPGroup:
    """Stands in for torch.distributed: rank 1's sparse grad is pre-recorded."""
    def __init__(self, remote_indices, remote_values):
        self.world_size = 2
        self.remote = {"indices": remote_indices, "values": remote_values}

    def all_gather(self, value, kind):
        return [value, self.remote[kind].to(value.dtype)]


class DeepSpeedEngine:
    def __init__(self, module, dp_group):
        self.module = module
        self.dp_group = dp_group
        self.sparse_tensor_module_names = set()

    def allreduce_gradients(self):
        non_expert_grads = []
        for param_name, param in self.module.named_parameters():
            if param.grad is None:
                continue
            grad_data = param.grad.data
            if param_name in self.sparse_tensor_module_names or grad_data.is_sparse:
                grad_data = SparseTensor(grad_data)  # want: B
            non_expert_grads.append(grad_data)
        self._reduce_non_expert_gradients(non_expert_grads)

    def _reduce_non_expert_gradients(self, grads):
        sparse_bucket = [g for g in grads if isinstance(g, SparseTensor)]
        if sparse_bucket:
            self.sparse_allreduce_no_retain(sparse_bucket, self.dp_group)

    def sparse_allreduce_no_retain(self, bucket, dp_group):
        allreduced_sparses = self.sparse_allreduce_bucket(bucket, dp_group)
        # Densify sparse tensor and copy back to original location
        for tensor in allreduced_sparses:
            if tensor.is_sparse:
                tensor.orig_dense_tensor.data = tensor.to_coo_tensor()
            else:
                tensor.orig_dense_tensor.copy_(tensor.to_dense())

    def sparse_allreduce_bucket(self, bucket, dp_group):
        sparse_list = []
        for sparse in bucket:
            sparse_list.append(self.sparse_allreduce(sparse, dp_group))
        return sparse_list

    def sparse_allreduce(self, sparse, dp_group):
        # Pre-divide for fp16 stability
        sparse.values.mul_(1.0 / dp_group.world_size)
        original_data_type = sparse.values.dtype
        indices_device_list = dp_group.all_gather(sparse.indices, "indices")
        values_device_list = dp_group.all_gather(sparse.values, "values")
        sparse.indices = torch.cat(indices_device_list).to(torch.long)
        sparse.values = torch.cat(values_device_list).to(original_data_type)
        return sparse


class DeepSpeedEngineFixed(DeepSpeedEngine):
    def allreduce_gradients(self):
        non_expert_grads = []
        for param_name, param in self.module.named_parameters():
            if param.grad is None:
                continue
            grad_data = param.grad.data
            if param_name in self.sparse_tensor_module_names or grad_data.is_sparse:
                # Call param.grad without data to avoid problem with setting of updated grads
                grad_data = SparseTensor(param.grad)
            non_expert_grads.append(grad_data)
        self._reduce_non_expert_gradients(non_expert_grads)


def run(engine_cls):
    torch.manual_seed(0)
    model = torch.nn.Embedding(6, 2, sparse=True)
    model(torch.tensor([1, 3])).sum().backward()
    # rank 1 touched row 4 with gradient 4.0 (its values are already pre-divided by world size)
    group = FakeDPGroup(torch.tensor([4]), torch.full((1, 2), 2.0))
    engine = engine_cls(model, group)
    engine.allreduce_gradients()
    return model.weight.grad.to_dense()


if __name__ == "__main__":
    print("buggy: param.grad after sparse allreduce (row 4 should be 2, rows 1/3 should be 0.5):\n", run(DeepSpeedEngine))
    print("fixed:\n", run(DeepSpeedEngineFixed))
