# source: InternLM/lmdeploy https://github.com/InternLM/lmdeploy/pull/4583 — get_expanded_mm_items split a bundled multimodal item into per-image / per-frame items by slicing `item['feature']`, so every small item kept (and pickled to the engine process) the whole bundled pixel buffer; the fix `.clone()`s the split slices so each item owns a compact tensor.
import pickle
import torch


def get_expanded_mm_items(mm_items, split_video_frames=True):
    """Expand bundled qwen-vl style items (several images / video frames in one
    tensor) into one item per image or per frame."""
    expanded = []
    for item in mm_items:
        modality = item['modality']
        if modality == 'image':
            image_grid_thw = item['image_grid_thw']
            if image_grid_thw.shape[0] == 1:
                expanded.append(item)
                continue
            patches_per_image = image_grid_thw.prod(-1).tolist()
            start_idx = 0
            for i, num_patches in enumerate(patches_per_image):
                end_idx = start_idx + num_patches
                expanded.append(dict(
                    modality='image',
                    pixel_values=item['feature'][start_idx:end_idx],  # want: A
                    image_grid_thw=image_grid_thw[i],  # maybe: A (tiny 3-elem row, pins only the grid tensor)
                    offset=item['offsets'][i],
                ))
                start_idx = end_idx
        elif modality == 'video':
            video_grid_thw = item['video_grid_thw']
            start = 0
            for i, (t, h, w) in enumerate(video_grid_thw.tolist()):
                end = start + t * h * w
                if not split_video_frames:
                    expanded.append(dict(
                        modality='video',
                        pixel_values_videos=item['feature'][start:end],  # want: A
                        video_grid_thw=video_grid_thw[i:i + 1].clone(),
                        offset=item['offsets'][i],
                    ))
                    start = end
                    continue
                video_feature = item['feature'][start:end]
                for frame_idx in range(t):
                    expanded.append(dict(
                        modality='video',
                        pixel_values_videos=video_feature[frame_idx * h * w:(frame_idx + 1) * h * w],  # want: A
                        video_grid_thw=torch.tensor([1, h, w]),
                        offset=item['offsets'][i] + frame_idx,
                    ))
                start = end
        else:
            expanded.append(item)
    return expanded


def get_expanded_mm_items_fixed(mm_items, split_video_frames=True):
    expanded = []
    for item in mm_items:
        modality = item['modality']
        if modality == 'image':
            image_grid_thw = item['image_grid_thw']
            if image_grid_thw.shape[0] == 1:
                expanded.append(item)
                continue
            patches_per_image = image_grid_thw.prod(-1).tolist()
            start_idx = 0
            for i, num_patches in enumerate(patches_per_image):
                end_idx = start_idx + num_patches
                expanded.append(dict(
                    modality='image',
                    pixel_values=item['feature'][start_idx:end_idx].clone(),
                    image_grid_thw=image_grid_thw[i].clone(),
                    offset=item['offsets'][i],
                ))
                start_idx = end_idx
        elif modality == 'video':
            video_grid_thw = item['video_grid_thw']
            start = 0
            for i, (t, h, w) in enumerate(video_grid_thw.tolist()):
                end = start + t * h * w
                if not split_video_frames:
                    expanded.append(dict(
                        modality='video',
                        pixel_values_videos=item['feature'][start:end].clone(),
                        video_grid_thw=video_grid_thw[i:i + 1].clone(),
                        offset=item['offsets'][i],
                    ))
                    start = end
                    continue
                video_feature = item['feature'][start:end]
                for frame_idx in range(t):
                    expanded.append(dict(
                        modality='video',
                        pixel_values_videos=video_feature[frame_idx * h * w:(frame_idx + 1) * h * w].clone(),
                        video_grid_thw=torch.tensor([1, h, w]),
                        offset=item['offsets'][i] + frame_idx,
                    ))
                start = end
        else:
            expanded.append(item)
    return expanded


if __name__ == "__main__":
    grid = torch.tensor([[1, 8, 8]] * 6)
    image_item = dict(modality='image', feature=torch.randn(6 * 64, 96),
                      image_grid_thw=grid, offsets=list(range(0, 600, 100)))
    vgrid = torch.tensor([[4, 4, 4], [2, 4, 4]])
    video_item = dict(modality='video', feature=torch.randn(6 * 16, 96),
                      video_grid_thw=vgrid, offsets=[1000, 2000])
    for fn in (get_expanded_mm_items, get_expanded_mm_items_fixed):
        per_video = fn([video_item], split_video_frames=False)
        print('%-28s per-video item pickled %d B (payload %d B)' % (
            fn.__name__, len(pickle.dumps(per_video[1])), per_video[1]['pixel_values_videos'].nbytes))
        items = fn([image_item, video_item])
        sizes = [len(pickle.dumps(it)) for it in items]
        payload = sum(v.numel() * v.element_size() for it in items for k, v in it.items()
                      if k.startswith('pixel'))
        print('%-28s %d items, payload %7d B, pickled total %8d B' % (fn.__name__, len(items), payload, sum(sizes)))
        if fn is get_expanded_mm_items:
            assert sum(sizes) > 3 * payload
        else:
            assert sum(sizes) < 2 * payload
