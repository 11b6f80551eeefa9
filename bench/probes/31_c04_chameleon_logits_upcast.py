# source: huggingface/transformers https://github.com/huggingface/transformers/pull/34147 — ChameleonForConditionalGeneration.forward still did `logits = logits.float()` right after lm_head (missed by #31292/#33902), materialising a full fp32 copy of [batch, seq, vocab] logits even during generation with no labels; the fix only upcasts inside `if labels is not None`.
import torch
from torch import nn
from torch.nn import CrossEntropyLoss


class ChameleonVocabularyMapping:
    def __init__(self, vocab_size, image_token_start):
        self.image_tokens = list(range(image_token_start, vocab_size))


class ChameleonModel(nn.Module):
    def __init__(self, vocab_size, hidden_size):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden_size)
        self.layer = nn.Linear(hidden_size, hidden_size)
        self.vocabulary_mapping = ChameleonVocabularyMapping(vocab_size, vocab_size - 8)

    def forward(self, input_ids):
        return (torch.tanh(self.layer(self.embed_tokens(input_ids))),)


class ChameleonForConditionalGeneration(nn.Module):
    def __init__(self, vocab_size=512, hidden_size=32):
        super().__init__()
        self.vocab_size = vocab_size
        self.model = ChameleonModel(vocab_size, hidden_size)
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)

    def forward(self, input_ids, labels=None):
        outputs = self.model(input_ids)
        hidden_states = outputs[0]
        logits = self.lm_head(hidden_states)
        logits = logits.float()  # want: C

        # Disallow image tokens which does not include special begin-image and end-image tokens
        image_tokens = self.model.vocabulary_mapping.image_tokens
        logits[:, :, image_tokens] = torch.finfo(logits.dtype).min

        loss = None
        if labels is not None:
            # Shift so that tokens < n predict n
            shift_logits = logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            loss_fct = CrossEntropyLoss()
            shift_logits = shift_logits.view(-1, self.vocab_size)
            shift_labels = shift_labels.view(-1)
            loss = loss_fct(shift_logits, shift_labels)
        return loss, logits


class ChameleonForConditionalGenerationFixed(ChameleonForConditionalGeneration):
    def forward(self, input_ids, labels=None):
        outputs = self.model(input_ids)
        hidden_states = outputs[0]
        logits = self.lm_head(hidden_states)

        # Disallow image tokens which does not include special begin-image and end-image tokens
        image_tokens = self.model.vocabulary_mapping.image_tokens
        logits[:, :, image_tokens] = torch.finfo(logits.dtype).min

        loss = None
        if labels is not None:
            # Upcast to float if we need to compute the loss to avoid potential precision issues
            logits = logits.float()
            shift_logits = logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            loss_fct = CrossEntropyLoss()
            shift_logits = shift_logits.view(-1, self.vocab_size)
            shift_labels = shift_labels.view(-1)
            loss = loss_fct(shift_logits, shift_labels)
        return loss, logits


if __name__ == "__main__":
    torch.manual_seed(0)
    bug = ChameleonForConditionalGeneration().to(torch.bfloat16)
    fix = ChameleonForConditionalGenerationFixed().to(torch.bfloat16)
    fix.load_state_dict(bug.state_dict())
    ids = torch.randint(0, 500, (4, 64))
    with torch.no_grad():
        _, lb = bug(ids)
        _, lf = fix(ids)
        lossb, _ = bug(ids, labels=ids)
        lossf, _ = fix(ids, labels=ids)
    print("generation logits dtype buggy/fixed:", lb.dtype, lf.dtype)
    print("generation logits bytes buggy/fixed:", lb.numel() * lb.element_size(), lf.numel() * lf.element_size())
    assert lb.element_size() == 2 * lf.element_size()
    torch.testing.assert_close(lossb, lossf)
