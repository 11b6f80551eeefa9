# source: facebookresearch/maskrcnn-benchmark issue #350 ("Optimization for filter_results") — the box-head PostProcessor took ~40% of inference: for every image it looped over the 80 COCO classes calling `inds_all[:, j].nonzero()` (a device->host sync per class, ~10 ms per image), then pulled the kept scores to the host with `cls_scores.cpu()` for kthvalue; fmassa pointed at the sync points in roi_heads/box_head/inference.py
import torch
import torch.nn.functional as F
from torch import nn


class BoxList:
    def __init__(self, bbox, image_size, mode="xyxy"):
        self.bbox = bbox
        self.size = image_size
        self.mode = mode
        self.extra_fields = {}

    def add_field(self, field, field_data):
        self.extra_fields[field] = field_data

    def get_field(self, field):
        return self.extra_fields[field]

    def __len__(self):
        return self.bbox.shape[0]

    def __getitem__(self, item):
        out = BoxList(self.bbox[item], self.size, self.mode)
        for k, v in self.extra_fields.items():
            out.add_field(k, v[item])
        return out

    def clip_to_image(self, remove_empty=False):
        w, h = self.size
        self.bbox[:, 0].clamp_(min=0, max=w - 1)
        self.bbox[:, 1].clamp_(min=0, max=h - 1)
        self.bbox[:, 2].clamp_(min=0, max=w - 1)
        self.bbox[:, 3].clamp_(min=0, max=h - 1)
        return self


def _box_nms(boxes, scores, thresh):
    """Stand-in for the compiled maskrcnn_benchmark._C.nms kernel."""
    order = scores.argsort(descending=True)
    b = boxes[order]
    area = (b[:, 2] - b[:, 0]).clamp(min=0) * (b[:, 3] - b[:, 1]).clamp(min=0)
    lt = torch.max(b[:, None, :2], b[None, :, :2])
    rb = torch.min(b[:, None, 2:], b[None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    iou = inter / (area[:, None] + area[None, :] - inter + 1e-6)
    suppressed = torch.zeros(len(b), dtype=torch.bool, device=b.device)
    upper = torch.triu(iou > thresh, diagonal=1)
    for i in range(len(b)):
        suppressed |= upper[i] & ~suppressed[i]
    return order[~suppressed]  # maybe: D (the real kernel also sizes its output on the host)


def boxlist_nms(boxlist, nms_thresh):
    keep = _box_nms(boxlist.bbox, boxlist.get_field("scores"), nms_thresh)
    return boxlist[keep]


def cat_boxlist(bboxes):
    out = BoxList(torch.cat([b.bbox for b in bboxes], dim=0), bboxes[0].size)
    for field in bboxes[0].extra_fields:
        out.add_field(field, torch.cat([b.get_field(field) for b in bboxes], dim=0))
    return out


class BoxCoder:
    def __init__(self, weights=(10.0, 10.0, 5.0, 5.0)):
        self.weights = weights

    def decode(self, rel_codes, boxes):
        wx, wy, ww, wh = self.weights
        widths = boxes[:, 2] - boxes[:, 0] + 1
        heights = boxes[:, 3] - boxes[:, 1] + 1
        ctr_x = boxes[:, 0] + 0.5 * widths
        ctr_y = boxes[:, 1] + 0.5 * heights
        dx, dy = rel_codes[:, 0::4] / wx, rel_codes[:, 1::4] / wy
        dw, dh = (rel_codes[:, 2::4] / ww).clamp(max=4.135), (rel_codes[:, 3::4] / wh).clamp(max=4.135)
        pcx, pcy = dx * widths[:, None] + ctr_x[:, None], dy * heights[:, None] + ctr_y[:, None]
        pw, ph = torch.exp(dw) * widths[:, None], torch.exp(dh) * heights[:, None]
        out = torch.zeros_like(rel_codes)
        out[:, 0::4], out[:, 1::4] = pcx - 0.5 * pw, pcy - 0.5 * ph
        out[:, 2::4], out[:, 3::4] = pcx + 0.5 * pw - 1, pcy + 0.5 * ph - 1
        return out


class PostProcessor(nn.Module):
    def __init__(self, score_thresh=0.05, nms=0.5, detections_per_img=100, box_coder=None):
        super().__init__()
        self.score_thresh = score_thresh
        self.nms = nms
        self.detections_per_img = detections_per_img
        self.box_coder = box_coder or BoxCoder()

    def forward(self, x, boxes):
        class_logits, box_regression = x
        class_prob = F.softmax(class_logits, -1)
        image_shapes = [box.size for box in boxes]
        boxes_per_image = [len(box) for box in boxes]  # host-side row counts of the proposals
        concat_boxes = torch.cat([a.bbox for a in boxes], dim=0)
        proposals = self.box_coder.decode(box_regression.view(sum(boxes_per_image), -1), concat_boxes)
        num_classes = class_prob.shape[1]
        proposals = proposals.split(boxes_per_image, dim=0)
        class_prob = class_prob.split(boxes_per_image, dim=0)

        results = []
        for prob, boxes_per_img, image_shape in zip(class_prob, proposals, image_shapes):
            boxlist = self.prepare_boxlist(boxes_per_img, prob, image_shape)
            boxlist = boxlist.clip_to_image(remove_empty=False)
            boxlist = self.filter_results(boxlist, num_classes)
            results.append(boxlist)
        return results

    def prepare_boxlist(self, boxes, scores, image_shape):
        boxlist = BoxList(boxes.reshape(-1, 4), image_shape, mode="xyxy")
        boxlist.add_field("scores", scores.reshape(-1))
        return boxlist

    def filter_results(self, boxlist, num_classes):
        boxes = boxlist.bbox.reshape(-1, num_classes * 4)
        scores = boxlist.get_field("scores").reshape(-1, num_classes)
        device = scores.device
        result = []
        # Skip j = 0, because it's the background class
        inds_all = scores > self.score_thresh
        for j in range(1, num_classes):
            inds = inds_all[:, j].nonzero().squeeze(1)  # want: D
            scores_j = scores[inds, j]
            boxes_j = boxes[inds, j * 4:(j + 1) * 4]
            boxlist_for_class = BoxList(boxes_j, boxlist.size, mode="xyxy")
            boxlist_for_class.add_field("scores", scores_j)
            boxlist_for_class = boxlist_nms(boxlist_for_class, self.nms)
            num_labels = len(boxlist_for_class)
            boxlist_for_class.add_field("labels", torch.full((num_labels,), j, dtype=torch.int64, device=device))
            result.append(boxlist_for_class)

        result = cat_boxlist(result)
        number_of_detections = len(result)

        # Limit to max_per_image detections **over all classes**
        if number_of_detections > self.detections_per_img > 0:
            cls_scores = result.get_field("scores")
            image_thresh, _ = torch.kthvalue(
                cls_scores.cpu(), number_of_detections - self.detections_per_img + 1  # want: D
            )
            keep = cls_scores >= image_thresh.item()  # image_thresh is already a CPU tensor
            keep = torch.nonzero(keep).squeeze(1)  # maybe: D (once per image, after the class loop)
            result = result[keep]
        return result


if __name__ == "__main__":
    torch.manual_seed(0)
    num_classes, per_img = 6, 40
    post = PostProcessor(score_thresh=0.05, nms=0.5, detections_per_img=20)
    props = []
    for _ in range(2):
        xy = torch.rand(per_img, 2) * 80
        wh = torch.rand(per_img, 2) * 40 + 4
        props.append(BoxList(torch.cat([xy, xy + wh], dim=1), (128, 128)))
    logits = torch.randn(2 * per_img, num_classes) * 2
    deltas = torch.randn(2 * per_img, num_classes * 4) * 0.1
    with torch.no_grad():
        dets = post((logits, deltas), props)
    assert len(dets) == 2 and all(len(d) <= 20 for d in dets)
    assert all(d.get_field("labels").min() >= 1 for d in dets if len(d))
    print("ok", [len(d) for d in dets])
