# source: pytorch/pytorch https://github.com/pytorch/pytorch/issues/828 (fixed in https://github.com/pytorch/pytorch/pull/852) — Index.backward did grad_input.index(self.index).copy_(grad_output): the LongTensor index gathers a copy, so the gradient was copied into a temporary and grad_input stayed all zeros; the fix wrote through grad_input._set_index(self.index, grad_output) (i.e. grad_input[index] = grad_output). (2017's `tensor.index(LongTensor)` is spelled `index_select(0, idx)` here.)
import torch
from torch.autograd import Function


class Index(Function):

    @staticmethod
    def forward(ctx, i, index):
        ctx.input_size = i.size()
        ctx.index = index
        result = i.index_select(0, index)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        # TODO: this won't have to be zeroed
        grad_input = grad_output.new(ctx.input_size).zero_()
        grad_input.index_select(0, ctx.index).copy_(grad_output)  # want: B
        return grad_input, None


class IndexFixed(Function):

    @staticmethod
    def forward(ctx, i, index):
        ctx.input_size = i.size()
        ctx.index = index
        return i.index_select(0, index)

    @staticmethod
    def backward(ctx, grad_output):
        grad_input = grad_output.new(ctx.input_size).zero_()
        grad_input[ctx.index] = grad_output
        return grad_input, None


if __name__ == "__main__":
    a = torch.randn(3, 5, requires_grad=True)
    idx = torch.LongTensor([0, 2])

    Index.apply(a, idx).sum().backward()
    print("buggy grad (should have ones in rows 0 and 2):\n", a.grad)

    a.grad = None
    IndexFixed.apply(a, idx).sum().backward()
    print("fixed grad:\n", a.grad)
