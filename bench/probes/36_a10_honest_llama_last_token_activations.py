# source: likenneth/honest_llama https://github.com/likenneth/honest_llama/issues/26 — get_activations.py appended `layer_wise_activations[:,-1,:]` and `head_wise_activations[:,-1,:]` (last-token slices of the per-prompt [layers, seq, hidden] stacks) to lists kept for the whole dataset, so every prompt's full activation stack stayed alive and RAM grew until OOM; fixed on master by appending `.copy()` of the slice. (The project holds numpy arrays from `.cpu().numpy()`; reconstructed here with the same code on torch tensors, where the equivalent fix is `.clone()`.)
import torch


class TinyLlama(torch.nn.Module):
    def __init__(self, num_layers=8, hidden=256, vocab=100):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.layers = torch.nn.ModuleList(torch.nn.Linear(hidden, hidden) for _ in range(num_layers))

    def forward(self, ids):
        h = self.embed(ids)
        hidden_states, head_outs = [h], []
        for layer in self.layers:
            head_outs.append(layer(h))  # stands in for TraceDict(model, HEADS) head_out
            h = h + head_outs[-1].tanh()
            hidden_states.append(h)
        return hidden_states, head_outs


def get_llama_activations_bau(model, prompt, device):
    with torch.no_grad():
        prompt = prompt.to(device)
        hidden_states, head_outs = model(prompt)
        hidden_states = torch.stack(hidden_states, dim=0).squeeze().detach().cpu()
        head_wise_hidden_states = torch.stack([h.squeeze().detach().cpu() for h in head_outs], dim=0).squeeze()
    return hidden_states, head_wise_hidden_states, None


def main(prompts, model, device="cpu"):
    all_layer_wise_activations = []
    all_head_wise_activations = []
    print("Getting activations")
    for prompt in prompts:
        layer_wise_activations, head_wise_activations, _ = get_llama_activations_bau(model, prompt, device)
        all_layer_wise_activations.append(layer_wise_activations[:, -1, :])  # want: A
        all_head_wise_activations.append(head_wise_activations[:, -1, :])  # want: A
    return all_layer_wise_activations, all_head_wise_activations


def main_fixed(prompts, model, device="cpu"):
    all_layer_wise_activations = []
    all_head_wise_activations = []
    for prompt in prompts:
        layer_wise_activations, head_wise_activations, _ = get_llama_activations_bau(model, prompt, device)
        all_layer_wise_activations.append(layer_wise_activations[:, -1, :].clone())
        all_head_wise_activations.append(head_wise_activations[:, -1, :].clone())
    return all_layer_wise_activations, all_head_wise_activations


def retained_bytes(tensors):
    return sum({t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in tensors}.values())


if __name__ == "__main__":
    torch.manual_seed(0)
    model = TinyLlama().eval()
    prompts = [torch.randint(0, 100, (1, 48)) for _ in range(20)]
    bl, bh = main(prompts, model)
    fl, fh = main_fixed(prompts, model)
    assert all(torch.equal(a, b) for a, b in zip(bl + bh, fl + fh))
    logical = sum(t.numel() * t.element_size() for t in fl + fh)
    print("logical bytes:", logical, "buggy retained:", retained_bytes(bl + bh), "fixed retained:", retained_bytes(fl + fh))
    assert retained_bytes(bl + bh) > 40 * logical and retained_bytes(fl + fh) == logical
