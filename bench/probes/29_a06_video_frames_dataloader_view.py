# source: embeddings-benchmark/mteb https://github.com/embeddings-benchmark/mteb/pull/4747 — the video dataset returned video.get_frames_at(indices).data, a view into the whole decoded video, from __getitem__; with num_workers > 0 the DataLoader moves the entire underlying storage into /dev/shm per sample ("shared memory is full"); the PR appends .clone() so only the sampled frames are shared.
import io

import torch
from torch.utils.data import DataLoader, Dataset


class FrameBatch:
    def __init__(self, data, pts_seconds):
        self.data = data
        self.pts_seconds = pts_seconds


class VideoDecoder:
    """Stand-in for torchcodec's decoder: decodes the clip once and serves frames from it."""

    def __init__(self, num_frames, height, width, fps=30.0):
        self._decoded = torch.randint(0, 255, (num_frames, 3, height, width), dtype=torch.uint8)
        self._fps = fps

    def __len__(self):
        return self._decoded.shape[0]

    def get_frames_at(self, indices):
        start, stop, step = indices.start, indices.stop, indices.step
        data = self._decoded[start:stop:step]
        pts = torch.arange(start, stop, step, dtype=torch.float64) / self._fps
        return FrameBatch(data, pts)


def _indices(total, n):
    step = max(total // n, 1)
    return slice(0, step * n, step)


class VideoDataset(Dataset):
    def __init__(self, videos, num_frames=8):
        self.videos = videos
        self.num_frames = num_frames

    def __len__(self):
        return len(self.videos)

    def __getitem__(self, idx):
        video = self.videos[idx]
        n = self.num_frames
        frames = video.get_frames_at(_indices(len(video), n)).data  # want: A
        return {"video": frames, "id": idx}


class VideoDatasetFixed(VideoDataset):
    def __getitem__(self, idx):
        video = self.videos[idx]
        n = self.num_frames
        frames = video.get_frames_at(_indices(len(video), n)).data.clone()
        return {"video": frames, "id": idx}


def _transfer_bytes(sample):
    # what crosses the worker boundary: the tensor's whole storage
    buf = io.BytesIO()
    torch.save(sample["video"], buf)
    return buf.tell()


if __name__ == "__main__":
    torch.manual_seed(0)
    videos = [VideoDecoder(240, 32, 32) for _ in range(4)]
    for cls in (VideoDataset, VideoDatasetFixed):
        ds = cls(videos)
        s = ds[0]
        v = s["video"]
        print(cls.__name__, "frames", tuple(v.shape), "payload", v.numel(),
              "storage", v.untyped_storage().nbytes(), "transfer", _transfer_bytes(s))
        loader = DataLoader(ds, batch_size=2, num_workers=0)
        assert next(iter(loader))["video"].shape == (2, 8, 3, 32, 32)
    assert ds[0]["video"].untyped_storage().nbytes() == ds[0]["video"].numel()
