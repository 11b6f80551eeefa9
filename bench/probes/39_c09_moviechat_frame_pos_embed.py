# source: wenhaochai/MovieChat https://github.com/wenhaochai/MovieChat/issues/25 — MovieChat's forward rebuilt `frame_position_embeddings` from the fixed `video_frame_position_embedding` table on every inference: it expanded position ids over the batch, ran the table lookup, then formed n_position^2 interpolated rows one by one and torch.cat-ed them, producing a fresh copy of data that never changes between calls. The issue asks why this is recomputed for every inference when the embedding is fixed; the fixed version below builds the interpolated table once and reuses it.
import torch
import torch.nn as nn


class MovieChatVideoQFormer(nn.Module):
    def __init__(self, max_frame_pos=32, hidden_size=24, n_position=4, alpha=0.01):
        super().__init__()
        self.video_frame_position_embedding = nn.Embedding(max_frame_pos, hidden_size)
        self.n_position = n_position
        self.alpha = alpha
        self.last_pos = None

    def _frame_position_embeddings(self, batch_size, device):
        n_position = self.n_position
        position_ids = torch.arange(n_position, dtype=torch.long, device=device)
        position_ids = position_ids.unsqueeze(0).expand(batch_size, -1)
        p = self.video_frame_position_embedding(position_ids).squeeze(0)

        u = []
        alpha = self.alpha
        for p_i in p:
            u_i = (p_i - alpha * p[0]) / (1 - alpha)
            u.append(u_i)

        frame_position_embeddings = []
        for i in range(n_position):
            for j in range(n_position):
                q_i = alpha * u[i] + (1 - alpha) * u[j]
                q_i = q_i.unsqueeze(0)
                frame_position_embeddings.append(q_i)
        return torch.cat(frame_position_embeddings, dim=0)  # want: C

    def forward(self, frame_hidden_state):
        batch_size, n_frames, hidden = frame_hidden_state.shape
        frame_position_embeddings = self._frame_position_embeddings(1, frame_hidden_state.device)
        self.last_pos = frame_position_embeddings
        return frame_hidden_state + frame_position_embeddings[:n_frames].unsqueeze(0)


class MovieChatVideoQFormerFixed(MovieChatVideoQFormer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._cached_frame_position_embeddings = None

    def forward(self, frame_hidden_state):
        batch_size, n_frames, hidden = frame_hidden_state.shape
        if self._cached_frame_position_embeddings is None:
            self._cached_frame_position_embeddings = self._frame_position_embeddings(1, frame_hidden_state.device)
        frame_position_embeddings = self._cached_frame_position_embeddings
        self.last_pos = frame_position_embeddings
        return frame_hidden_state + frame_position_embeddings[:n_frames].unsqueeze(0)


if __name__ == "__main__":
    torch.manual_seed(0)
    bug = MovieChatVideoQFormer().eval()
    fix = MovieChatVideoQFormerFixed().eval()
    fix.load_state_dict(bug.state_dict())
    x = torch.randn(2, 16, 24)
    with torch.no_grad():
        a1 = bug(x); p1 = bug.last_pos
        a2 = bug(x); p2 = bug.last_pos
        b1 = fix(x); q1 = fix.last_pos
        b2 = fix(x); q2 = fix.last_pos
    assert torch.allclose(a1, b1) and torch.allclose(a2, b2)
    assert p1.data_ptr() != p2.data_ptr()
    assert q1.data_ptr() == q2.data_ptr()
    print("ok")
