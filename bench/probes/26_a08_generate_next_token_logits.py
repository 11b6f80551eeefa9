# source: huggingface/transformers https://github.com/huggingface/transformers/pull/30536 — the decoding loops took next_token_logits = outputs.logits[:, -1, :] (a view) and kept it in the scores/raw_logits tuples and across iterations, so the huge first-iteration (prefill) logits tensor was never freed; the PR changed it to outputs.logits[:, -1, :].clone() ("Clone is needed to avoid keeping a hanging ref to outputs.logits").
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch
import torch.nn as nn


@dataclass
class CausalLMOutputWithPast:
    logits: torch.Tensor
    past_key_values: Optional[torch.Tensor] = None


@dataclass
class GenerateDecoderOnlyOutput:
    sequences: torch.Tensor
    scores: Optional[Tuple[torch.Tensor]] = None
    logits: Optional[Tuple[torch.Tensor]] = None


class TemperatureLogitsWarper:
    def __init__(self, temperature: float):
        self.temperature = temperature

    def __call__(self, input_ids, scores):
        return scores / self.temperature


class LogitsProcessorList(list):
    def __call__(self, input_ids, scores):
        for processor in self:
            scores = processor(input_ids, scores)
        return scores


class GenerationMixin:
    def prepare_inputs_for_generation(self, input_ids, past_key_values=None, **kwargs):
        if past_key_values is not None:
            input_ids = input_ids[:, -1:]
        return {"input_ids": input_ids, "past_key_values": past_key_values}

    def _update_model_kwargs_for_generation(self, outputs, model_kwargs):
        model_kwargs["past_key_values"] = outputs.past_key_values
        return model_kwargs

    def _greedy_search(self, input_ids, logits_processor, max_length, pad_token_id=0, eos_token_id=None,
                       output_scores=False, output_logits=False, return_dict_in_generate=False,
                       **model_kwargs):
        scores = () if (return_dict_in_generate and output_scores) else None
        raw_logits = () if (return_dict_in_generate and output_logits) else None
        batch_size = input_ids.shape[0]
        unfinished_sequences = torch.ones(batch_size, dtype=torch.long, device=input_ids.device)
        while input_ids.shape[-1] < max_length:
            model_inputs = self.prepare_inputs_for_generation(input_ids, **model_kwargs)
            outputs = self(**model_inputs, return_dict=True)

            next_token_logits = outputs.logits[:, -1, :]  # want: A

            # pre-process distribution
            next_tokens_scores = logits_processor(input_ids, next_token_logits)

            # Store scores, attentions and hidden_states when required
            if return_dict_in_generate:
                if output_scores:
                    scores += (next_tokens_scores,)
                if output_logits:
                    raw_logits += (next_token_logits,)

            # argmax
            next_tokens = torch.argmax(next_tokens_scores, dim=-1)
            if eos_token_id is not None:
                next_tokens = next_tokens * unfinished_sequences + pad_token_id * (1 - unfinished_sequences)
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
            model_kwargs = self._update_model_kwargs_for_generation(outputs, model_kwargs)
            if eos_token_id is not None:
                unfinished_sequences = unfinished_sequences & (next_tokens != eos_token_id).long()
                if unfinished_sequences.max() == 0:
                    break

        if return_dict_in_generate:
            return GenerateDecoderOnlyOutput(sequences=input_ids, scores=scores, logits=raw_logits)
        return input_ids

    def _sample(self, input_ids, logits_processor, max_length, output_scores=False, output_logits=False,
                return_dict_in_generate=False, **model_kwargs):
        """Loop as it looks after the PR."""
        scores = () if (return_dict_in_generate and output_scores) else None
        raw_logits = () if (return_dict_in_generate and output_logits) else None
        while input_ids.shape[-1] < max_length:
            model_inputs = self.prepare_inputs_for_generation(input_ids, **model_kwargs)
            outputs = self(**model_inputs, return_dict=True)

            # Clone is needed to avoid keeping a hanging ref to outputs.logits which may be very large for first iteration
            # (the clone itself is always small)
            next_token_logits = outputs.logits[:, -1, :].clone().float()

            next_token_scores = logits_processor(input_ids, next_token_logits)
            if return_dict_in_generate:
                if output_scores:
                    scores += (next_token_scores,)
                if output_logits:
                    raw_logits += (next_token_logits,)
            probs = nn.functional.softmax(next_token_scores, dim=-1)
            next_tokens = torch.multinomial(probs, num_samples=1).squeeze(1)
            input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
            model_kwargs = self._update_model_kwargs_for_generation(outputs, model_kwargs)
            del outputs
        if return_dict_in_generate:
            return GenerateDecoderOnlyOutput(sequences=input_ids, scores=scores, logits=raw_logits)
        return input_ids


class ToyForCausalLM(nn.Module, GenerationMixin):
    def __init__(self, vocab_size=8000, hidden=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.lm_head = nn.Linear(hidden, vocab_size, bias=False)

    def forward(self, input_ids, past_key_values=None, return_dict=True):
        h = self.embed(input_ids)
        if past_key_values is not None:
            h = h + past_key_values
        new_past = h[:, -1:, :].detach()
        return CausalLMOutputWithPast(logits=self.lm_head(h), past_key_values=new_past)


if __name__ == "__main__":
    torch.manual_seed(0)
    model = ToyForCausalLM().eval()
    prompt = torch.randint(0, 8000, (2, 256))
    procs = LogitsProcessorList([TemperatureLogitsWarper(0.7)])
    with torch.no_grad():
        out = model._greedy_search(prompt, LogitsProcessorList(), max_length=264, output_scores=True,
                                   output_logits=True, return_dict_in_generate=True)
        print("greedy: first kept logits storage bytes:", out.logits[0].untyped_storage().nbytes())
        out2 = model._sample(prompt, procs, max_length=264, output_logits=True, return_dict_in_generate=True)
        print("sample: first kept logits storage bytes:", out2.logits[0].untyped_storage().nbytes())
