# source: vllm-project/vllm-omni https://github.com/vllm-project/vllm-omni/pull/4563 — HiggsAudioV3Talker._decode_request_token_positions, called from forward via _apply_audio_feedback on every decode step, filtered its per-request rows with a boolean mask (req_rows[decode_mask]). The data-dependent output shape forces a device-to-host sync (nonzero) on every step and crashes CUDA graph capture (issue #4562); the fix returns the unfiltered req_rows/starts when the external decode CUDA graph is used, since every span is 1 there.
import torch
import torch.nn as nn


class HiggsAudioV3Talker(nn.Module):
    def __init__(self, hidden_size=16, num_codebooks=4, codebook_size=32, max_num_reqs=8,
                 use_external_decode_cudagraph=False):
        super().__init__()
        self.num_codebooks = num_codebooks
        self.audio_feedback_embed = nn.Embedding(num_codebooks * codebook_size, hidden_size)
        self.codebook_offsets = nn.Parameter(
            torch.arange(num_codebooks) * codebook_size, requires_grad=False
        )
        self.norm = nn.LayerNorm(hidden_size)
        self._use_external_decode_cudagraph = use_external_decode_cudagraph
        self.register_buffer(
            "last_audio_codes",
            torch.zeros(max_num_reqs, num_codebooks, dtype=torch.long),
            persistent=False,
        )

    def _decode_request_token_positions(self, query_start_loc, num_tokens):
        starts = query_start_loc[:-1]
        spans = query_start_loc[1:] - starts
        req_rows = torch.arange(starts.shape[0], device=starts.device)
        decode_mask = (spans == 1) & (starts >= 0) & (starts < int(num_tokens))
        return req_rows[decode_mask], starts[decode_mask]  # want: D

    def _apply_audio_feedback(self, hidden_states, input_ids, query_start_loc):
        req_rows, token_pos = self._decode_request_token_positions(
            query_start_loc, input_ids.shape[0]
        )
        codes = self.last_audio_codes[req_rows] + self.codebook_offsets
        feedback = self.audio_feedback_embed(codes).sum(dim=1)
        return hidden_states.index_add(0, token_pos, feedback.to(hidden_states.dtype))

    def forward(self, input_ids, positions, hidden_states, query_start_loc):
        hidden_states = self._apply_audio_feedback(hidden_states, input_ids, query_start_loc)
        return self.norm(hidden_states)


class HiggsAudioV3TalkerFixed(HiggsAudioV3Talker):
    def _decode_request_token_positions(self, query_start_loc, num_tokens):
        if self._use_external_decode_cudagraph:
            # Uniform single-token decode under the captured graph: every span is 1.
            starts = query_start_loc[:-1]
            req_rows = torch.arange(starts.shape[0], device=starts.device)
            return req_rows, starts
        return super()._decode_request_token_positions(query_start_loc, num_tokens)


if __name__ == "__main__":
    torch.manual_seed(0)
    ref = HiggsAudioV3Talker(use_external_decode_cudagraph=True)
    fixed = HiggsAudioV3TalkerFixed(use_external_decode_cudagraph=True)
    fixed.load_state_dict(ref.state_dict())
    ref.last_audio_codes.copy_(torch.randint(0, 32, ref.last_audio_codes.shape))
    fixed.last_audio_codes.copy_(ref.last_audio_codes)

    num_reqs = 5
    input_ids = torch.randint(0, 100, (num_reqs,))
    positions = torch.arange(num_reqs)
    hidden = torch.randn(num_reqs, 16)
    qsl = torch.arange(num_reqs + 1)
    with torch.no_grad():
        a = ref(input_ids, positions, hidden, qsl)
        b = fixed(input_ids, positions, hidden, qsl)
    assert torch.allclose(a, b)
    print("ok")
