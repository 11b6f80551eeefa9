# source: NVIDIA/TensorRT-LLM https://github.com/NVIDIA/TensorRT-LLM/pull/10488 — PPCommNCCL.send cached the caller's tensor (a slice of the executor's reusable hidden-state buffer) and issued the NCCL send on a side stream, so the next micro-batch overwrote the buffer before the in-flight send read it; the fix sends `tensor.clone()` and makes the send stream wait on the producer stream.
import torch


class SideStream:
    """CPU stand-in for a CUDA stream: kernels launched on it run at synchronize()."""

    def __init__(self):
        self.pending = []

    def launch(self, kernel):
        self.pending.append(kernel)

    def wait_stream(self, other):
        pass

    def synchronize(self):
        for kernel in self.pending:
            kernel()
        self.pending.clear()


class NcclCommunicatorOp:
    def __init__(self, stream):
        self.stream = stream
        self.delivered = []

    def send(self, tensor, dest):
        # The NCCL kernel reads `tensor` when it executes, not when it is enqueued.
        self.stream.launch(lambda: self.delivered.append((dest, tensor.clone())))


class PPCommNCCL:
    def __init__(self, next_pp_rank=1):
        self.next_pp_rank = next_pp_rank
        self.send_stream = SideStream()
        self.nccl_comm = NcclCommunicatorOp(self.send_stream)
        self.tensor_cache = {}

    def _cache_tensor(self, tensor):
        self.tensor_cache[id(tensor)] = tensor

    def _release_tensor(self, tensor):
        self.send_stream.launch(lambda: self.tensor_cache.pop(id(tensor), None))

    def send(self, tensor, dest=None):
        if dest is None:
            dest = self.next_pp_rank
        self._cache_tensor(tensor)  # want: A
        self.nccl_comm.send(tensor, dest)
        self._release_tensor(tensor)


class PPCommNCCLFixed(PPCommNCCL):
    def send(self, tensor, dest=None):
        if dest is None:
            dest = self.next_pp_rank
        tensor = tensor.clone()
        self.send_stream.wait_stream(None)
        self._cache_tensor(tensor)
        self.nccl_comm.send(tensor, dest)
        self._release_tensor(tensor)


class PyExecutor:
    def __init__(self, pp_comm, max_num_tokens=16, hidden=8):
        self.dist = pp_comm
        self.hidden_states_buffer = torch.zeros(max_num_tokens, hidden)

    def _forward_step(self, microbatch):
        num_tokens = microbatch.shape[0]
        torch.mul(microbatch, 2.0, out=self.hidden_states_buffer[:num_tokens])
        return num_tokens

    def executor_loop_pp(self, microbatches):
        for mb in microbatches:
            num_tokens = self._forward_step(mb)
            self.dist.send(self.hidden_states_buffer[:num_tokens])  # maybe: A (slice of a reused buffer handed to an async send)
        self.dist.send_stream.synchronize()
        return [t for _, t in self.dist.nccl_comm.delivered]


if __name__ == "__main__":
    torch.manual_seed(0)
    mbs = [torch.randn(6, 8) for _ in range(3)]
    expected = [mb * 2.0 for mb in mbs]
    got_bad = PyExecutor(PPCommNCCL()).executor_loop_pp(mbs)
    got_good = PyExecutor(PPCommNCCLFixed()).executor_loop_pp(mbs)
    ok_bad = all(torch.equal(a, b) for a, b in zip(got_bad, expected))
    ok_good = all(torch.equal(a, b) for a, b in zip(got_good, expected))
    print("send of buffer slice -> next stage receives right activations:", ok_bad)
    print("send of owned clone  -> next stage receives right activations:", ok_good)
    assert not ok_bad and ok_good
