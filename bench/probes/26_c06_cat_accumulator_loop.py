# source: debpalash/VoiceStudio https://github.com/debpalash/VoiceStudio/pull/2259 — concatenate_audio_chunks grew its output with `result = torch.cat([result, ...])` inside the per-chunk loop, re-copying all audio joined so far on every chunk (quadratic); the fix prices overlaps first, allocates the final length once and writes each chunk into its slice, crossfading in place.
import logging

import torch

logger = logging.getLogger("omnivoice.chunked_tts")

DEFAULT_CROSSFADE_MS = 50


def report_dropped_chunks(dropped: list, total: int, texts=None, sink=None) -> None:
    named = [str(texts[i]) for i in dropped if texts and 0 <= i < len(texts)]
    if sink is not None:
        sink.extend(named or [""] * len(dropped))
    logger.warning("Dropped %d of %d rendered chunk(s)", len(dropped), total)


def _normalize_chunk_shapes(chunks: list) -> list:
    target = max(c.dim() for c in chunks)
    if any(c.dim() != target for c in chunks):
        promoted = []
        for c in chunks:
            while c.dim() < target:
                c = c.unsqueeze(0)
            promoted.append(c)
        chunks = promoted
    if target > 1:
        lead = tuple(max(c.shape[i] for c in chunks) for i in range(target - 1))
        chunks = [c if tuple(c.shape[:-1]) == lead else c.expand(*lead, -1) for c in chunks]
    return chunks


def concatenate_audio_chunks(chunks: list, sample_rate: int, crossfade_ms: int = DEFAULT_CROSSFADE_MS,
                             texts=None, sink=None):
    """Join per-chunk waveforms with a linear crossfade on the sample axis."""
    kept, dropped = [], []
    for i, c in enumerate(chunks):
        if c is not None and c.shape[-1] > 0:
            kept.append(c)
        else:
            dropped.append(i)
    if dropped:
        report_dropped_chunks(dropped, len(chunks), texts, sink)
    chunks = kept
    if not chunks:
        return torch.zeros(1, dtype=torch.float32)
    if len(chunks) == 1:
        return chunks[0]
    chunks = _normalize_chunk_shapes(chunks)

    crossfade_samples = int(sample_rate * crossfade_ms / 1000)
    result = chunks[0]

    for chunk in chunks[1:]:
        chunk = chunk.to(device=result.device, dtype=result.dtype)
        overlap = min(crossfade_samples, result.shape[-1], chunk.shape[-1])
        if overlap > 0:
            fade_out = torch.linspace(1.0, 0.0, overlap, dtype=result.dtype, device=result.device)
            fade_in = torch.linspace(0.0, 1.0, overlap, dtype=result.dtype, device=result.device)
            blended = result[..., -overlap:] * fade_out + chunk[..., :overlap] * fade_in
            result = torch.cat([result[..., :-overlap], blended, chunk[..., overlap:]], dim=-1)  # want: C
        else:
            result = torch.cat([result, chunk], dim=-1)  # want: C

    return result


def concatenate_audio_chunks_linear(chunks: list, sample_rate: int, crossfade_ms: int = DEFAULT_CROSSFADE_MS):
    """The merged one-pass join (look-alike)."""
    chunks = _normalize_chunk_shapes([c for c in chunks if c is not None and c.shape[-1] > 0])
    crossfade_samples = int(sample_rate * crossfade_ms / 1000)
    overlaps, joined = [], chunks[0].shape[-1]
    for chunk in chunks[1:]:
        overlap = min(crossfade_samples, joined, chunk.shape[-1])
        overlaps.append(overlap)
        joined += chunk.shape[-1] - overlap
    first = chunks[0]
    out = torch.empty((*first.shape[:-1], joined), dtype=first.dtype, device=first.device)
    out[..., :first.shape[-1]] = first
    filled = first.shape[-1]
    for chunk, overlap in zip(chunks[1:], overlaps):
        chunk = chunk.to(device=out.device, dtype=out.dtype)
        if overlap > 0:
            fade_out = torch.linspace(1.0, 0.0, overlap, dtype=out.dtype, device=out.device)
            fade_in = torch.linspace(0.0, 1.0, overlap, dtype=out.dtype, device=out.device)
            tail = out[..., filled - overlap:filled]
            tail.mul_(fade_out).add_(chunk[..., :overlap] * fade_in)
        remainder = chunk.shape[-1] - overlap
        if remainder > 0:
            out[..., filled:filled + remainder] = chunk[..., overlap:]
        filled += remainder
    return out


def join_rendered_chunks(rendered: list, sample_rate: int, *, crossfade_ms: int = DEFAULT_CROSSFADE_MS,
                         texts=None, sink=None):
    dropped = [i for i, r in enumerate(rendered) if r is None or getattr(r, "shape", (0,))[-1] == 0]
    kept = [r for i, r in enumerate(rendered) if i not in set(dropped)]
    if not kept:
        if dropped:
            report_dropped_chunks(dropped, len(rendered), texts, sink)
        return None
    if len(kept) == 1:
        return kept[0]
    return concatenate_audio_chunks(rendered, sample_rate, crossfade_ms=crossfade_ms, texts=texts, sink=sink)


if __name__ == "__main__":
    torch.manual_seed(0)
    sr = 24000
    rendered = [torch.randn(1, sr * 2) for _ in range(60)]  # ~2 min of audio in 2 s chunks
    rendered[7] = torch.zeros(1, 0)
    a = join_rendered_chunks(rendered, sr, sink=[])
    b = concatenate_audio_chunks_linear(rendered, sr)
    print("ok", tuple(a.shape), torch.allclose(a, b, atol=1e-5))
