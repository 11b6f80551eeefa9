# source: pytorch/torchtitan https://github.com/pytorch/torchtitan/pull/2410 — the RL generator updated weights through vLLM's reload_weights, which first swaps every parameter for a meta placeholder; load_weights then did `param.data.copy_(loaded_weight)` into those meta tensors (a silent no-op) so trainer->generator weight sync never happened; the fix copies each new tensor directly into the live model parameters.
import torch
import torch.nn as nn


class TinyDecoder(nn.Module):
    def __init__(self, vocab=32, dim=16):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.wq = nn.Linear(dim, dim, bias=False)
        self.output = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        return self.output(torch.tanh(self.wq(h)))


def initialize_layerwise_reload(model):
    """Mimics vLLM layerwise reload: stash kernel tensors, install meta placeholders."""
    kernel_tensors = {}
    for mod_name, mod in model.named_modules():
        for pname, p in list(mod.named_parameters(recurse=False)):
            kernel_tensors[(mod_name, pname)] = p
            mod._parameters[pname] = nn.Parameter(
                torch.empty_like(p, device="meta"), requires_grad=False)
    return kernel_tensors


def finalize_layerwise_reload(model, kernel_tensors):
    for (mod_name, pname), kt in kernel_tensors.items():
        model.get_submodule(mod_name)._parameters[pname] = kt


class VLLMGenerator:
    def __init__(self, model):
        self.model = model

    @torch.no_grad()
    def load_weights(self, weights_iter):
        params = dict(self.model.named_parameters())
        for name, loaded_weight in weights_iter:
            param = params[name]
            param.data.copy_(loaded_weight)  # want: B

    def update_weights(self, state_dict):
        kernel_tensors = initialize_layerwise_reload(self.model)
        self.load_weights(state_dict.items())
        finalize_layerwise_reload(self.model, kernel_tensors)


class VLLMGeneratorFixed(VLLMGenerator):
    @torch.no_grad()
    def update_weights(self, state_dict):
        model = self.model  # driver_worker.get_model()
        for name, param in model.named_parameters():
            if name in state_dict:
                param.data.copy_(state_dict[name].to(param.dtype))


if __name__ == "__main__":
    torch.manual_seed(0)
    trainer = TinyDecoder()
    torch.manual_seed(1)
    gen = VLLMGenerator(TinyDecoder())
    gen.update_weights(trainer.state_dict())
    synced = torch.equal(gen.model.wq.weight, trainer.wq.weight)
    print("buggy generator synced:", synced)
    assert not synced

    torch.manual_seed(1)
    gen2 = VLLMGeneratorFixed(TinyDecoder())
    gen2.update_weights(trainer.state_dict())
    synced = torch.equal(gen2.model.wq.weight, trainer.wq.weight)
    print("fixed generator synced:", synced)
    assert synced
