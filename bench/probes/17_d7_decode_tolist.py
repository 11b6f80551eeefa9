import torch


@torch.no_grad()
def sample(model, input_ids, max_new_tokens):
    generated = []
    past = None
    for _ in range(max_new_tokens):
        out = model(input_ids, past_key_values=past, use_cache=True)
        past = out.past_key_values
        input_ids = out.logits[:, -1:].argmax(-1)
        generated.extend(input_ids[:, 0].tolist())  # want: D
    return generated
