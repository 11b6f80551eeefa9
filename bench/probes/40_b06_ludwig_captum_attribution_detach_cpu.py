# source: ludwig-ai/ludwig https://github.com/ludwig-ai/ludwig/pull/3012 — In `get_total_attribution` (ludwig/explain/captum.py) each Captum attribution was detached and moved to CPU with `a_reduced = a.detach().cpu()`, but for embedding-level attributions the next line recomputed `a_reduced = a.sum(dim=-1)` from the original tensor. The detached CPU copy was thrown away, so the reduced attribution stayed on the GPU with its autograd graph and the later `np.stack` failed or held memory. The fix ("Fix assignment that undoes tensor move to CPU") sums the moved copy: `a_reduced = a_reduced.sum(dim=-1)`.
from collections import defaultdict

import numpy as np
import torch

TEXT = "text"


def get_token_attributions(name, inputs, attrs):
    return [[(f"{name}_{int(t)}", float(v)) for t, v in zip(row, attr_row)] for row, attr_row in zip(inputs, attrs)]


def reduce_attribution_batch(attribution, input_batch, feature_types, use_global=False):
    feat_to_token_attributions = defaultdict(list)

    attributions_reduced = []
    for a in attribution:
        a_reduced = a.detach().cpu()
        if a.ndim > 1:
            # Convert to token-level attributions by summing over the embedding dimension.
            a_reduced = a.sum(dim=-1)  # want: B
        if a_reduced.ndim == 2:
            # Normalize token-level attributions of shape [batch_size, sequence_length] by dividing by the
            # norm of the sequence.
            a_reduced = a_reduced / torch.norm(a_reduced)
        attributions_reduced.append(a_reduced)

    for inputs, attrs, (name, feat_type) in zip(input_batch, attributions_reduced, feature_types.items()):
        if feat_type == TEXT:
            feat_to_token_attributions[name].append(get_token_attributions(name, inputs, attrs))

    # Reduce attribution to [num_input_features, batch_size] by summing over the sequence dimension (if present).
    attribution = [a.sum(dim=-1) if a.ndim == 2 else a for a in attributions_reduced]
    attribution = np.stack(attribution)

    # Transpose to [batch_size, num_input_features]
    attribution = attribution.T
    if use_global:
        attribution = attribution.sum(axis=0, keepdims=True)
    return attribution, feat_to_token_attributions


def reduce_attribution_batch_fixed(attribution, input_batch, feature_types, use_global=False):
    feat_to_token_attributions = defaultdict(list)
    attributions_reduced = []
    for a in attribution:
        a_reduced = a.detach().cpu()
        if a.ndim > 1:
            # Convert to token-level attributions by summing over the embedding dimension.
            a_reduced = a_reduced.sum(dim=-1)
        if a_reduced.ndim == 2:
            a_reduced = a_reduced / torch.norm(a_reduced)
        attributions_reduced.append(a_reduced)

    for inputs, attrs, (name, feat_type) in zip(input_batch, attributions_reduced, feature_types.items()):
        if feat_type == TEXT:
            feat_to_token_attributions[name].append(get_token_attributions(name, inputs, attrs))

    attribution = [a.sum(dim=-1) if a.ndim == 2 else a for a in attributions_reduced]
    attribution = np.stack(attribution)
    attribution = attribution.T
    if use_global:
        attribution = attribution.sum(axis=0, keepdims=True)
    return attribution, feat_to_token_attributions


if __name__ == "__main__":
    torch.manual_seed(0)
    emb = torch.nn.Embedding(10, 4)
    tokens = torch.tensor([[1, 2, 3], [4, 5, 6]])
    text_attr = emb(tokens) * 0.5  # [batch, seq, emb], still attached to the graph
    number_attr = torch.tensor([0.1, -0.2])
    feature_types = {"review": TEXT, "price": "number"}

    fixed, tok = reduce_attribution_batch_fixed([text_attr, number_attr], [tokens, number_attr], feature_types)
    assert fixed.shape == (2, 2) and len(tok["review"][0]) == 2
    try:
        reduce_attribution_batch([text_attr, number_attr], [tokens, number_attr], feature_types)
        buggy_failed = False
    except RuntimeError:
        buggy_failed = True
    assert buggy_failed
    print("ok")
