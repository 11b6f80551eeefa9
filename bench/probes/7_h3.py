import torch


def index_documents(model, docs, tokenizer):
    index = {}
    for doc_id, text in docs.items():
        ids = tokenizer(text, return_tensors="pt").input_ids
        hidden = model(ids).last_hidden_state
        index[doc_id] = hidden[0, 0]  # want: A
    return index
