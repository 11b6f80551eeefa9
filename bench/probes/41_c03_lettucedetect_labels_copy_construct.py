# source: KRLabsOrg/LettuceDetect https://github.com/KRLabsOrg/LettuceDetect/pull/18 — `TransformerDetector._predict` builds the answer-token label mask with `torch.full_like(..., device=self.device)` and then, on every prediction, runs `labels = torch.tensor(labels, device=self.device)` on that tensor, copy-constructing it again (and raising the "To copy construct from a tensor" UserWarning). The PR ("Fix/Copying tensor") removes the line, since `labels` is already a tensor on the right device.
import warnings

import torch
import torch.nn as nn


class HallucinationDataset:
    @staticmethod
    def prepare_tokenized_input(tokenizer, context: str, answer: str, max_length: int):
        ids = [tokenizer.get(w, 1) for w in (context + " [SEP] " + answer).split()][:max_length]
        encoding = {"input_ids": torch.tensor([ids]), "attention_mask": torch.ones(1, len(ids), dtype=torch.long)}
        answer_start_token = len(context.split()) + 1
        offsets = torch.stack([torch.arange(len(ids)), torch.arange(len(ids)) + 1], dim=1)
        return encoding, None, offsets, answer_start_token


class TinyTokenClassifier(nn.Module):
    def __init__(self, vocab: int = 64, dim: int = 16):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.cls = nn.Linear(dim, 2)

    def forward(self, input_ids, attention_mask):
        return type("Out", (), {"logits": self.cls(self.emb(input_ids))})()


class TransformerDetector:
    def __init__(self, model, tokenizer, max_length: int = 4096, device=None):
        self.tokenizer = tokenizer
        self.model = model
        self.max_length = max_length
        self.device = device or torch.device("cpu")
        self.model.to(self.device)
        self.model.eval()

    def _predict(self, context: str, answer: str, output_format: str = "tokens") -> list:
        encoding, labels, offsets, answer_start_token = (
            HallucinationDataset.prepare_tokenized_input(
                self.tokenizer, context, answer, self.max_length
            )
        )

        # Create a label tensor: mark tokens before answer as -100 (ignored) and answer tokens as 0.
        labels = torch.full_like(encoding["input_ids"][0], -100, device=self.device)
        labels[answer_start_token:] = 0
        # Move encoding to the device
        encoding = {key: value.to(self.device) for key, value in encoding.items()}
        labels = torch.tensor(labels, device=self.device)  # want: C

        return self._decode(encoding, labels, output_format)

    def _decode(self, encoding, labels, output_format):
        with torch.no_grad():
            outputs = self.model(**encoding)
        logits = outputs.logits
        token_preds = torch.argmax(logits, dim=-1)[0]
        probabilities = torch.softmax(logits, dim=-1)[0]

        # Mask out predictions for context tokens.
        token_preds = torch.where(labels == -100, labels, token_preds)

        token_probs = []
        input_ids = encoding["input_ids"][0]
        for i, (token, pred, prob) in enumerate(zip(input_ids, token_preds, probabilities)):
            if not labels[i].item() == -100:
                token_probs.append({"token": int(token), "pred": pred.item(), "prob": prob[1].item()})
        return token_probs


class TransformerDetectorFixed(TransformerDetector):
    def _predict(self, context: str, answer: str, output_format: str = "tokens") -> list:
        encoding, labels, offsets, answer_start_token = (
            HallucinationDataset.prepare_tokenized_input(
                self.tokenizer, context, answer, self.max_length
            )
        )

        # Create a label tensor: mark tokens before answer as -100 (ignored) and answer tokens as 0.
        labels = torch.full_like(encoding["input_ids"][0], -100, device=self.device)
        labels[answer_start_token:] = 0
        # Move encoding to the device
        encoding = {key: value.to(self.device) for key, value in encoding.items()}

        return self._decode(encoding, labels, output_format)


if __name__ == "__main__":
    torch.manual_seed(0)
    words = "paris is the capital of france population is 67 million [SEP]".split()
    tokenizer = {w: i + 2 for i, w in enumerate(words)}
    model = TinyTokenClassifier()
    context, answer = "paris is the capital of france", "population is 69 million"

    with warnings.catch_warnings(record=True) as caught_a:
        warnings.simplefilter("always")
        preds_a = TransformerDetector(model, tokenizer)._predict(context, answer)
    with warnings.catch_warnings(record=True) as caught_b:
        warnings.simplefilter("always")
        preds_b = TransformerDetectorFixed(model, tokenizer)._predict(context, answer)

    assert preds_a == preds_b and len(preds_a) == 4
    assert any("copy construct" in str(w.message) for w in caught_a)
    assert not any("copy construct" in str(w.message) for w in caught_b)
    print("ok")
