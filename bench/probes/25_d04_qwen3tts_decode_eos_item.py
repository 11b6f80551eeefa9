# source: andimarafioti/faster-qwen3-tts PR #110 ("perf: deferred EOS check — remove the per-step GPU sync in decode loops") — fast_generate (faster_qwen3_tts/generate.py) and the streaming variant began every decode iteration with `if token.item() == eos_id: break`, a hard device sync that drains the launch queue between CUDA-graph replays; the PR copies each sampled token non_blocking into a pinned host slot and checks the previous step's copy instead (one overshoot step at EOS)
import time
from typing import Iterable, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn


def apply_repetition_penalty(logits: torch.Tensor, token_history: torch.Tensor, repetition_penalty: float) -> torch.Tensor:
    if repetition_penalty == 1.0 or token_history.numel() == 0:
        return logits
    unique_toks = token_history.unique()  # maybe: D (device-side unique each step; the stacked rep-penalty-history PR of the same series targets it)
    tok_logits = logits[..., unique_toks]
    logits[..., unique_toks] = torch.where(tok_logits > 0, tok_logits / repetition_penalty, tok_logits * repetition_penalty)
    return logits


def sample_logits(logits, *, temperature, top_k, top_p, do_sample, suppress_mask=None, suppress_tokens: Optional[Iterable[int]] = None):
    logits = logits.clone()
    if suppress_mask is not None:
        logits[..., suppress_mask] = float("-inf")  # maybe: D (boolean-mask setitem; may lower to masked_fill)
    if suppress_tokens:
        logits[..., list(suppress_tokens)] = float("-inf")
    if not do_sample:
        return torch.argmax(logits, dim=-1)
    logits = logits / temperature
    if top_k > 0:
        topk_vals, _ = torch.topk(logits, min(top_k, logits.size(-1)))
        logits = torch.where(logits < topk_vals[..., -1:], torch.full_like(logits, float("-inf")), logits)
    return torch.multinomial(F.softmax(logits, dim=-1), 1).squeeze(-1)


class TalkerGraph(nn.Module):
    """Stand-in for the CUDA-graphed talker decode step with a static KV buffer."""

    def __init__(self, hidden: int, max_seq_len: int = 64):
        super().__init__()
        self.max_seq_len = max_seq_len
        self.cell = nn.GRUCell(hidden, hidden)
        self.register_buffer("state", torch.zeros(1, hidden))
        self.register_buffer("out", torch.zeros(1, 1, hidden))

    def prefill_kv(self, prefill_hidden: torch.Tensor) -> int:
        self.state.copy_(prefill_hidden[:, -1])
        return prefill_hidden.shape[1]

    def run(self, inputs_embeds: torch.Tensor, position: int) -> torch.Tensor:
        self.state.copy_(self.cell(inputs_embeds[:, 0], self.state))
        self.out.copy_(self.state[:, None])
        return self.out


class PredictorGraph(nn.Module):
    """Stand-in for the CUDA-graphed code predictor: 15 residual codebooks from the talker hidden state."""

    def __init__(self, hidden: int, vocab: int, groups: int):
        super().__init__()
        self.heads = nn.Linear(hidden, vocab * (groups - 1))
        self.vocab = vocab

    def run(self, pred_input: torch.Tensor) -> torch.Tensor:
        return self.heads(pred_input[:, -1]).view(-1, self.vocab).argmax(-1)


class Talker(nn.Module):
    def __init__(self, hidden=32, vocab=64, groups=4):
        super().__init__()
        self.codec_embed = nn.Embedding(vocab, hidden)
        self.codec_head = nn.Linear(hidden, vocab)
        self.predictor_embeds = nn.ModuleList([nn.Embedding(vocab, hidden) for _ in range(groups - 1)])
        self.prefill = nn.GRU(hidden, hidden, batch_first=True)


@torch.inference_mode()
def fast_generate(talker, talker_input_embeds, trailing_text_hiddens, tts_pad_embed, eos_id, num_code_groups,
                  predictor_graph, talker_graph, max_new_tokens=64, min_new_tokens=2, temperature=0.9, top_k=50,
                  do_sample=True, repetition_penalty=1.05) -> Tuple[Optional[torch.Tensor], dict]:
    vocab_size = talker.codec_head.out_features
    suppress_mask = torch.zeros(vocab_size, dtype=torch.bool, device=talker_input_embeds.device)
    suppress_mask[vocab_size - 4:] = True
    suppress_mask[eos_id] = False

    t_start = time.time()
    out, _ = talker.prefill(talker_input_embeds)
    past_hidden = out[:, -1:]
    gen_step = 0
    token = sample_logits(talker.codec_head(out[:, -1]), temperature=temperature, top_k=top_k, top_p=1.0, do_sample=do_sample,
                          suppress_mask=suppress_mask, suppress_tokens=[eos_id] if min_new_tokens > 0 else None)
    prefill_len = talker_graph.prefill_kv(out)

    all_codec_ids = []
    for step_idx in range(max_new_tokens):
        if token.item() == eos_id:  # want: D
            break

        last_id_hidden = talker.codec_embed(token.unsqueeze(1))  # [1, 1, H]
        pred_input = torch.cat((past_hidden, last_id_hidden), dim=1)
        codebook_token_ids = predictor_graph.run(pred_input)
        all_cb = torch.cat([token.view(1), codebook_token_ids])
        all_codec_ids.append(all_cb.detach())

        codec_hiddens = [last_id_hidden]
        for i in range(num_code_groups - 1):
            codec_hiddens.append(talker.predictor_embeds[i](codebook_token_ids[i].unsqueeze(0).unsqueeze(0)))
        inputs_embeds = torch.cat(codec_hiddens, dim=1).sum(1, keepdim=True)
        if gen_step < trailing_text_hiddens.shape[1]:  # python ints
            inputs_embeds = inputs_embeds + trailing_text_hiddens[:, gen_step].unsqueeze(1)
        else:
            inputs_embeds = inputs_embeds + tts_pad_embed

        current_pos = prefill_len + step_idx
        if current_pos >= talker_graph.max_seq_len - 1:
            break
        hidden_states = talker_graph.run(inputs_embeds, position=current_pos)
        logits = talker.codec_head(hidden_states[:, -1, :]).unsqueeze(0)
        if repetition_penalty != 1.0 and len(all_codec_ids) > 0:
            history = torch.stack([c[0] for c in all_codec_ids])
            logits = apply_repetition_penalty(logits, history, repetition_penalty)
        suppress_eos = len(all_codec_ids) < min_new_tokens
        token = sample_logits(logits.squeeze(0), temperature=temperature, top_k=top_k, top_p=1.0, do_sample=do_sample,
                              suppress_mask=suppress_mask, suppress_tokens=[eos_id] if suppress_eos else None)
        past_hidden = hidden_states[:, -1:, :].clone()  # clone since it's the static buffer
        gen_step += 1

    timing = {"steps": len(all_codec_ids), "decode_s": time.time() - t_start}
    return (torch.stack(all_codec_ids) if all_codec_ids else None), timing


@torch.inference_mode()
def fast_generate_deferred(talker, talker_input_embeds, trailing_text_hiddens, tts_pad_embed, eos_id, num_code_groups,
                           predictor_graph, talker_graph, max_new_tokens=64, min_new_tokens=2, **kw):
    """PR #110: copy the token to a host slot without blocking, test the previous step's slot."""
    vocab_size = talker.codec_head.out_features
    out, _ = talker.prefill(talker_input_embeds)
    past_hidden = out[:, -1:]
    token = sample_logits(talker.codec_head(out[:, -1]), temperature=1.0, top_k=0, top_p=1.0, do_sample=False,
                          suppress_tokens=[eos_id])
    prefill_len = talker_graph.prefill_kv(out)
    host_slots = torch.empty(2, dtype=torch.long, pin_memory=torch.cuda.is_available())
    all_codec_ids = []
    for step_idx in range(max_new_tokens):
        slot = step_idx % 2
        host_slots[slot].copy_(token.view(()), non_blocking=True)
        if step_idx > 0 and int(host_slots[1 - slot]) == eos_id:  # host-resident copy from the previous step
            all_codec_ids.pop()
            break
        last_id_hidden = talker.codec_embed(token.unsqueeze(1))
        codebook_token_ids = predictor_graph.run(torch.cat((past_hidden, last_id_hidden), dim=1))
        all_codec_ids.append(torch.cat([token.view(1), codebook_token_ids]))
        inputs_embeds = last_id_hidden + tts_pad_embed
        hidden_states = talker_graph.run(inputs_embeds, position=prefill_len + step_idx)
        logits = talker.codec_head(hidden_states[:, -1, :])
        token = sample_logits(logits, temperature=1.0, top_k=0, top_p=1.0, do_sample=False,
                              suppress_tokens=[eos_id] if len(all_codec_ids) < min_new_tokens else None)
        past_hidden = hidden_states[:, -1:, :].clone()
    return (torch.stack(all_codec_ids) if all_codec_ids else None), {"steps": len(all_codec_ids)}


if __name__ == "__main__":
    torch.manual_seed(0)
    H, V, G, eos = 32, 64, 4, 5
    talker = Talker(H, V, G).eval()
    pg, tg = PredictorGraph(H, V, G), TalkerGraph(H)
    embeds = torch.randn(1, 6, H)
    trailing = torch.randn(1, 3, H)
    pad = torch.randn(1, 1, H)
    codes, timing = fast_generate(talker, embeds, trailing, pad, eos, G, pg, tg, max_new_tokens=20)
    assert codes is not None and codes.shape[1] == G and timing["steps"] <= 20
    codes2, t2 = fast_generate_deferred(talker, embeds, trailing, pad, eos, G, pg, TalkerGraph(H), max_new_tokens=20)
    assert codes2 is None or codes2.shape[1] == G
    print("ok", timing["steps"], t2["steps"])
