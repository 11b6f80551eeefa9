# source: LibreYOLO/libreyolo https://github.com/LibreYOLO/libreyolo/pull/772 — the RT-DETR/D-FINE training path built dn_positive_idx with torch.nonzero(positive_gt_mask) (a data-dependent-size sync every step) and the criterion normalised losses by `torch.clamp(num_boxes / world_size, min=1).item()`; the fix builds the positive indices with arange from the host-known per-image target counts and keeps the normaliser as a tensor.
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


def get_world_size():
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def get_contrastive_denoising_training_group(targets, num_classes, class_embed, num_denoising=100):
    num_gts = [len(t["labels"]) for t in targets]
    device = targets[0]["labels"].device
    max_gt_num = max(num_gts)
    num_group = max(num_denoising // max_gt_num, 1)
    bs = len(num_gts)

    input_query_class = torch.full([bs, max_gt_num], num_classes, dtype=torch.int64, device=device)
    input_query_bbox = torch.zeros([bs, max_gt_num, 4], device=device)
    pad_gt_mask = torch.zeros([bs, max_gt_num], dtype=torch.bool, device=device)
    for i in range(bs):
        num_gt = num_gts[i]
        if num_gt > 0:
            input_query_class[i, :num_gt] = targets[i]["labels"]
            input_query_bbox[i, :num_gt] = targets[i]["boxes"]
            pad_gt_mask[i, :num_gt] = 1
    input_query_class = input_query_class.tile([1, 2 * num_group])
    input_query_bbox = input_query_bbox.tile([1, 2 * num_group, 1])
    pad_gt_mask = pad_gt_mask.tile([1, 2 * num_group])
    negative_gt_mask = torch.zeros([bs, max_gt_num * 2, 1], device=device)
    negative_gt_mask[:, max_gt_num:] = 1
    negative_gt_mask = negative_gt_mask.tile([1, num_group, 1])
    positive_gt_mask = (1 - negative_gt_mask).squeeze(-1) * pad_gt_mask
    dn_positive_idx = torch.nonzero(positive_gt_mask)[:, 1]  # want: D
    dn_positive_idx = torch.split(dn_positive_idx, [n * num_group for n in num_gts])

    mask = torch.rand(input_query_class.shape, device=device) < 0.25
    new_label = torch.randint_like(input_query_class, 0, num_classes)
    input_query_class = torch.where(mask & pad_gt_mask, new_label, input_query_class)
    input_query_logits = class_embed(input_query_class)
    dn_meta = {"dn_positive_idx": dn_positive_idx, "dn_num_group": num_group}
    return input_query_logits, input_query_bbox, dn_meta


def get_contrastive_denoising_training_group_fixed(targets, num_classes, class_embed, num_denoising=100):
    num_gts = [len(t["labels"]) for t in targets]
    device = targets[0]["labels"].device
    max_gt_num = max(num_gts)
    num_group = max(num_denoising // max_gt_num, 1)
    bs = len(num_gts)

    input_query_class = torch.full([bs, max_gt_num], num_classes, dtype=torch.int64, device=device)
    input_query_bbox = torch.zeros([bs, max_gt_num, 4], device=device)
    pad_gt_mask = torch.zeros([bs, max_gt_num], dtype=torch.bool, device=device)
    for i in range(bs):
        num_gt = num_gts[i]
        if num_gt > 0:
            input_query_class[i, :num_gt] = targets[i]["labels"]
            input_query_bbox[i, :num_gt] = targets[i]["boxes"]
            pad_gt_mask[i, :num_gt] = 1
    input_query_class = input_query_class.tile([1, 2 * num_group])
    input_query_bbox = input_query_bbox.tile([1, 2 * num_group, 1])
    pad_gt_mask = pad_gt_mask.tile([1, 2 * num_group])
    negative_gt_mask = torch.zeros([bs, max_gt_num * 2, 1], device=device)
    negative_gt_mask[:, max_gt_num:] = 1
    negative_gt_mask = negative_gt_mask.tile([1, num_group, 1])
    # positives are fully determined by the host-side per-image target counts
    group_base = torch.arange(num_group, device=device).unsqueeze(1) * (2 * max_gt_num)
    dn_positive_idx = tuple((group_base + torch.arange(n, device=device)).reshape(-1) for n in num_gts)

    mask = torch.rand(input_query_class.shape, device=device) < 0.25
    new_label = torch.randint_like(input_query_class, 0, num_classes)
    input_query_class = torch.where(mask & pad_gt_mask, new_label, input_query_class)
    input_query_logits = class_embed(input_query_class)
    dn_meta = {"dn_positive_idx": dn_positive_idx, "dn_num_group": num_group}
    return input_query_logits, input_query_bbox, dn_meta


class RTDETRCriterion(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.num_classes = num_classes

    def _normalizer(self, num, device):
        num_boxes = torch.as_tensor([num], dtype=torch.float, device=device)
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(num_boxes)
        return torch.clamp(num_boxes / get_world_size(), min=1).item()  # want: D

    def loss_boxes(self, pred_boxes, target_boxes, num_boxes):
        return F.l1_loss(pred_boxes, target_boxes, reduction="none").sum() / num_boxes

    def loss_labels(self, logits, target_classes, num_boxes):
        onehot = F.one_hot(target_classes, self.num_classes + 1)[..., :-1].float()
        return F.binary_cross_entropy_with_logits(logits, onehot, reduction="none").mean(1).sum() / num_boxes

    def forward(self, outputs, targets, dn_meta):
        device = outputs["pred_logits"].device
        num_boxes = self._normalizer(sum(len(t["labels"]) for t in targets), device)
        losses = {}
        logits, boxes = outputs["pred_logits"], outputs["pred_boxes"]
        tgt_cls = torch.full(logits.shape[:2], self.num_classes, dtype=torch.int64, device=device)
        for i, (t, pos) in enumerate(zip(targets, dn_meta["dn_positive_idx"])):
            n = len(t["labels"])
            tgt_cls[i, pos] = t["labels"].repeat(len(pos) // max(n, 1))
            losses.setdefault("loss_bbox", 0)
            losses["loss_bbox"] = losses["loss_bbox"] + self.loss_boxes(boxes[i, pos], t["boxes"].repeat(len(pos) // max(n, 1), 1), num_boxes)
        losses["loss_vfl"] = self.loss_labels(logits, tgt_cls, num_boxes)
        return losses


class RTDETRCriterionFixed(RTDETRCriterion):
    def _normalizer(self, num, device):
        num_boxes = torch.as_tensor(num, dtype=torch.float, device=device)
        if dist.is_available() and dist.is_initialized():
            dist.all_reduce(num_boxes)
        return torch.clamp(num_boxes / get_world_size(), min=1)


if __name__ == "__main__":
    nc = 5
    targets = [{"labels": torch.tensor([1, 3]), "boxes": torch.rand(2, 4)},
               {"labels": torch.tensor([0, 2, 4]), "boxes": torch.rand(3, 4)}]
    embed = nn.Embedding(nc + 1, 8)
    torch.manual_seed(0)
    _, _, meta_a = get_contrastive_denoising_training_group(targets, nc, embed, num_denoising=12)
    torch.manual_seed(0)
    q, bbox, meta_b = get_contrastive_denoising_training_group_fixed(targets, nc, embed, num_denoising=12)
    print("dn_positive_idx equal:", all(torch.equal(x, y) for x, y in zip(meta_a["dn_positive_idx"], meta_b["dn_positive_idx"])))
    outputs = {"pred_logits": torch.randn(2, q.shape[1], nc), "pred_boxes": torch.rand(2, q.shape[1], 4)}
    la = RTDETRCriterion(nc)(outputs, targets, meta_a)
    lb = RTDETRCriterionFixed(nc)(outputs, targets, meta_b)
    print("losses close:", all(torch.allclose(torch.as_tensor(la[k]), torch.as_tensor(lb[k])) for k in la))
