# source: ai-dynamo/dynamo https://github.com/ai-dynamo/dynamo/pull/11411 — the vLLM frontend split the batched `pixel_values` per image and put each split view into the per-item payload written to shared memory, so each item serialised the whole batch (4-image request: 50.3 MB SHM instead of 12.6 MB); the fix compacts view tensors (`.clone()` when storage > payload) before transfer.
import io
import torch


class SharedMemoryWriter:
    """Stand-in for the SHM transfer: one serialised blob per multimodal item."""

    def __init__(self):
        self.segments = {}

    def put(self, key, obj):
        buf = io.BytesIO()
        torch.save(obj, buf)
        self.segments[key] = buf.getvalue()
        return key, len(self.segments[key])

    def total_bytes(self):
        return sum(len(v) for v in self.segments.values())


class MultimodalRequestProcessor:

    def __init__(self, writer):
        self.writer = writer

    def _split_per_item(self, processed, num_items):
        pixel_values = processed["pixel_values"]
        image_grid_thw = processed["image_grid_thw"]
        sizes = image_grid_thw.prod(-1).tolist()
        return pixel_values.split(sizes), image_grid_thw.unbind(0)

    def prepare_mm_items(self, request_id, processed, num_items):
        handles = []
        pixel_chunks, grids = self._split_per_item(processed, num_items)
        for idx in range(num_items):
            item = {
                "modality": "image",
                "pixel_values": pixel_chunks[idx],  # want: A
                "image_grid_thw": grids[idx],  # maybe: A (3-element grid row pins only the small grid tensor)
            }
            handles.append(self.writer.put(f"{request_id}/{idx}", item))
        return handles


def _compact(t):
    if t.untyped_storage().nbytes() > t.numel() * t.element_size():
        return t.clone()
    return t


class MultimodalRequestProcessorFixed(MultimodalRequestProcessor):

    def prepare_mm_items(self, request_id, processed, num_items):
        handles = []
        pixel_chunks, grids = self._split_per_item(processed, num_items)
        for idx in range(num_items):
            item = {
                "modality": "image",
                "pixel_values": _compact(pixel_chunks[idx]),
                "image_grid_thw": _compact(grids[idx]),
            }
            handles.append(self.writer.put(f"{request_id}/{idx}", item))
        return handles


if __name__ == "__main__":
    num_items = 4
    processed = {
        "pixel_values": torch.randn(num_items * 196, 128),
        "image_grid_thw": torch.tensor([[1, 14, 14]] * num_items),
    }
    payload = processed["pixel_values"].numel() * processed["pixel_values"].element_size()
    for cls in (MultimodalRequestProcessor, MultimodalRequestProcessorFixed):
        writer = SharedMemoryWriter()
        handles = cls(writer).prepare_mm_items("req-0", processed, num_items)
        back = torch.load(io.BytesIO(writer.segments["req-0/2"]))
        assert torch.equal(back["pixel_values"], processed["pixel_values"][2 * 196:3 * 196])
        print("%-32s pixel payload %7d B, SHM total %8d B" % (cls.__name__, payload, writer.total_bytes()))
        if cls is MultimodalRequestProcessor:
            assert writer.total_bytes() > 3 * payload
        else:
            assert writer.total_bytes() < 1.5 * payload
