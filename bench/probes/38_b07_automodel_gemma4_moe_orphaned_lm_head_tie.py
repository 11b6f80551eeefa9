# source: NVIDIA-NeMo/Automodel https://github.com/NVIDIA-NeMo/Automodel/pull/2601 — Gemma4ForConditionalGeneration let the HF parent __init__ tie `lm_head.weight` to the text `embed_tokens`, then on the MoE path replaced `self.model.language_model` with a fresh Gemma4MoETextModelBackend that owns its own embed_tokens. lm_head kept aliasing the orphaned embedding, so with tie_word_embeddings=True the head and the live embedding were trained as two separate tensors and drifted apart. The fix re-points lm_head at the active embedding through a tie_weights() override called right after the swap.
import torch
import torch.nn as nn


class TextConfig:
    def __init__(self, vocab_size=16, hidden_size=8, enable_moe_block=True):
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.enable_moe_block = enable_moe_block


class Gemma4Config:
    def __init__(self, tie_word_embeddings=True):
        self.text_config = TextConfig()
        self.tie_word_embeddings = tie_word_embeddings


class Gemma4TextModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.norm = nn.LayerNorm(config.hidden_size)

    def forward(self, input_ids):
        return self.norm(self.embed_tokens(input_ids))


class Gemma4MoETextModelBackend(Gemma4TextModel):
    def __init__(self, config, backend=None, moe_config=None):
        super().__init__(config)
        self.moe_config = moe_config or {"n_routed_experts": 4}
        self.experts = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, input_ids):
        h = self.embed_tokens(input_ids)
        return self.norm(h + self.experts(h))


class Gemma4Model(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.language_model = Gemma4TextModel(config.text_config)


class HFGemma4ForConditionalGeneration(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.model = Gemma4Model(config)
        self.lm_head = nn.Linear(config.text_config.hidden_size, config.text_config.vocab_size, bias=False)
        self.tie_weights()

    def tie_weights(self):
        if self.config.tie_word_embeddings:
            self.lm_head.weight = self.model.language_model.embed_tokens.weight

    def forward(self, input_ids):
        return self.lm_head(self.model.language_model(input_ids))


class Gemma4ForConditionalGeneration(HFGemma4ForConditionalGeneration):
    def __init__(self, config, moe_config=None, backend=None):
        super().__init__(config)
        self.backend = backend
        text_config = config.text_config
        if not text_config.enable_moe_block:
            return
        # --- MoE path: replace the text model ---
        self.model.language_model = Gemma4MoETextModelBackend(text_config, backend=self.backend, moe_config=moe_config)  # want: B
        self.model.moe_config = self.model.language_model.moe_config
        self.vocab_size = text_config.vocab_size


class Gemma4ForConditionalGenerationFixed(HFGemma4ForConditionalGeneration):
    def __init__(self, config, moe_config=None, backend=None):
        super().__init__(config)
        self.backend = backend
        text_config = config.text_config
        if not text_config.enable_moe_block:
            return
        self.model.language_model = Gemma4MoETextModelBackend(text_config, backend=self.backend, moe_config=moe_config)
        self.model.moe_config = self.model.language_model.moe_config
        self.tie_weights()
        self.vocab_size = text_config.vocab_size

    def tie_weights(self, *_args, **_kwargs):
        text_config = self.config.text_config if hasattr(self.config, "text_config") else self.config
        if getattr(self.config, "tie_word_embeddings", getattr(text_config, "tie_word_embeddings", False)):
            self.lm_head.weight = self.model.language_model.embed_tokens.weight


def _train_step(model_cls):
    torch.manual_seed(0)
    model = model_cls(Gemma4Config(tie_word_embeddings=True))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    ids = torch.randint(0, 16, (2, 5))
    loss = nn.functional.cross_entropy(model(ids).flatten(0, 1), ids.flatten())
    loss.backward()
    opt.step()
    embed = model.model.language_model.embed_tokens.weight
    return model.lm_head.weight, embed


if __name__ == "__main__":
    head, embed = _train_step(Gemma4ForConditionalGeneration)
    assert head is not embed and head.untyped_storage().data_ptr() != embed.untyped_storage().data_ptr()
    assert not torch.equal(head, embed), "buggy: tied head and live embedding drift apart"

    head, embed = _train_step(Gemma4ForConditionalGenerationFixed)
    assert head is embed, "fixed: lm_head shares the active embedding"
    print("ok")
