# source: meta-pytorch/torchtune https://github.com/meta-pytorch/torchtune/pull/1390 — TransformerDecoder.forward returned self.output(h).float(), materialising an fp32 copy of the whole [b, s, vocab] logits tensor next to the bf16 one; the fix ("chunked cross entropy") returns bf16 logit chunks and upcasts one chunk at a time inside CEWithChunkedOutputLoss.
import torch
import torch.nn as nn
import torch.nn.functional as F


class TransformerDecoder(nn.Module):
    def __init__(self, tok_embeddings, layers, norm, output):
        super().__init__()
        self.tok_embeddings = tok_embeddings
        self.layers = nn.ModuleList(layers)
        self.norm = norm
        self.output = output

    def forward(self, tokens, mask=None, input_pos=None):
        # shape: [b, s, d]
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h)
        # shape: [b, s, d]
        h = self.norm(h)
        # shape: [b, s, out_dim] - out_dim is usually the vocab size
        output = self.output(h).float()  # want: C
        return output


def full_finetune_loss(model, tokens, labels, ignore_index=-100):
    logits = model(tokens)
    # Shift so that tokens < n predict n
    logits = logits[..., :-1, :].reshape(-1, logits.size(-1))
    labels = labels[..., 1:].reshape(-1)
    return F.cross_entropy(logits, labels, ignore_index=ignore_index)


class TransformerDecoderChunked(TransformerDecoder):
    num_output_chunks = 8

    def chunked_output(self, last_hidden_state):
        return [self.output(chunk) for chunk in last_hidden_state.chunk(self.num_output_chunks, dim=1)]

    def forward(self, tokens, mask=None, input_pos=None):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h)
        h = self.norm(h)
        # list of [b, s // num_chunks, out_dim] in the model dtype
        return self.chunked_output(h)


class CEWithChunkedOutputLoss(nn.Module):
    def __init__(self, num_output_chunks=8, ignore_index=-100):
        super().__init__()
        self.num_output_chunks = num_output_chunks
        self.ignore_index = ignore_index

    def compute_cross_entropy(self, logits, labels):
        # upcast one chunk at a time
        return F.cross_entropy(logits.float(), labels, ignore_index=self.ignore_index, reduction="sum")

    def forward(self, logits, labels):
        total_elements = (labels != self.ignore_index).sum()
        labels = [target_chunk.reshape(-1) for target_chunk in labels.chunk(self.num_output_chunks, dim=1)]
        logits = [logit_chunk.reshape(-1, logit_chunk.size(-1)) for logit_chunk in logits]
        total_loss = 0.0
        for logits_chunk, labels_chunk in zip(logits, labels):
            total_loss += self.compute_cross_entropy(logits_chunk, labels_chunk)
        return total_loss / total_elements


def chunked_finetune_loss(model, loss_fn, tokens, labels, ignore_index=-100):
    # the fixed recipe shifts the labels instead of the logits
    labels = torch.hstack((labels[..., 1:], torch.full_like(labels[..., :1], ignore_index)))
    logits = model(tokens)
    return loss_fn(logits, labels)


def build(cls, vocab=2048, dim=64, n_layers=2):
    torch.manual_seed(0)
    layers = [nn.Sequential(nn.Linear(dim, dim), nn.GELU()) for _ in range(n_layers)]
    model = cls(nn.Embedding(vocab, dim), layers, nn.LayerNorm(dim), nn.Linear(dim, vocab, bias=False))
    return model.to(torch.bfloat16)


if __name__ == "__main__":
    b, s = 2, 64
    tokens = torch.randint(0, 2048, (b, s))
    labels = tokens.clone()
    buggy, fixed = build(TransformerDecoder), build(TransformerDecoderChunked)
    with torch.no_grad():
        logits_fp32 = buggy(tokens)
        chunks = fixed(tokens)
        loss_b = full_finetune_loss(buggy, tokens, labels)
        loss_f = chunked_finetune_loss(fixed, CEWithChunkedOutputLoss(), tokens, labels)
    print("buggy logits dtype/bytes:", logits_fp32.dtype, logits_fp32.numel() * logits_fp32.element_size())
    print("fixed largest fp32 chunk bytes:", max(c.numel() for c in chunks) * 4)
    print("losses:", float(loss_b), float(loss_f))
    assert abs(float(loss_b) - float(loss_f)) < 1e-2
