# source: ultralytics/ultralytics https://github.com/ultralytics/ultralytics/pull/2289 — TaskAlignedAssigner.get_targets called `target_labels.clamp(0)` as a statement, so the clamped labels were thrown away and the gathered labels fed to one_hot unchanged; the fix uses the in-place `target_labels.clamp_(0)`.
import torch
import torch.nn as nn
import torch.nn.functional as F


class TaskAlignedAssigner(nn.Module):
    def __init__(self, topk=13, num_classes=80, alpha=1.0, beta=6.0, eps=1e-9):
        super().__init__()
        self.topk = topk
        self.num_classes = num_classes
        self.bg_idx = num_classes
        self.alpha = alpha
        self.beta = beta
        self.eps = eps

    @torch.no_grad()
    def forward(self, pd_scores, gt_labels, gt_bboxes, mask_pos):
        self.bs = pd_scores.size(0)
        self.n_max_boxes = gt_bboxes.size(1)
        fg_mask = mask_pos.sum(-2)
        target_gt_idx = mask_pos.argmax(-2)  # (b, h*w)
        target_labels, target_bboxes, target_scores = self.get_targets(gt_labels, gt_bboxes, target_gt_idx, fg_mask)
        return target_labels, target_bboxes, target_scores, fg_mask.bool()

    def get_targets(self, gt_labels, gt_bboxes, target_gt_idx, fg_mask):
        """
        Args:
            gt_labels: (b, max_num_obj, 1)
            gt_bboxes: (b, max_num_obj, 4)
            target_gt_idx: (b, h*w)
            fg_mask: (b, h*w)
        """

        # assigned target labels, (b, 1)
        batch_ind = torch.arange(end=self.bs, dtype=torch.int64, device=gt_labels.device)[..., None]
        target_gt_idx = target_gt_idx + batch_ind * self.n_max_boxes  # (b, h*w)
        target_labels = gt_labels.long().flatten()[target_gt_idx]  # (b, h*w)

        # assigned target boxes, (b, max_num_obj, 4) -> (b, h*w)
        target_bboxes = gt_bboxes.view(-1, 4)[target_gt_idx]

        # assigned target scores
        target_labels.clamp(0)  # want: B
        target_scores = F.one_hot(target_labels, self.num_classes)  # (b, h*w, 80)
        fg_scores_mask = fg_mask[:, :, None].repeat(1, 1, self.num_classes)  # (b, h*w, 80)
        target_scores = torch.where(fg_scores_mask > 0, target_scores, 0)

        return target_labels, target_bboxes, target_scores


class TaskAlignedAssignerFixed(TaskAlignedAssigner):
    def get_targets(self, gt_labels, gt_bboxes, target_gt_idx, fg_mask):
        # assigned target labels, (b, 1)
        batch_ind = torch.arange(end=self.bs, dtype=torch.int64, device=gt_labels.device)[..., None]
        target_gt_idx = target_gt_idx + batch_ind * self.n_max_boxes  # (b, h*w)
        target_labels = gt_labels.long().flatten()[target_gt_idx]  # (b, h*w)

        # assigned target boxes, (b, max_num_obj, 4) -> (b, h*w)
        target_bboxes = gt_bboxes.view(-1, 4)[target_gt_idx]

        # assigned target scores
        target_labels.clamp_(0)
        target_scores = F.one_hot(target_labels, self.num_classes)  # (b, h*w, 80)
        fg_scores_mask = fg_mask[:, :, None].repeat(1, 1, self.num_classes)  # (b, h*w, 80)
        target_scores = torch.where(fg_scores_mask > 0, target_scores, 0)

        return target_labels, target_bboxes, target_scores


if __name__ == "__main__":
    torch.manual_seed(0)
    bs, n_max, n_anchors, nc = 2, 3, 6, 4
    pd_scores = torch.rand(bs, n_anchors, nc)
    # image 1 has a single object; padding rows carry label -1
    gt_labels = torch.tensor([[[1.0], [2.0], [3.0]], [[2.0], [-1.0], [-1.0]]])
    gt_bboxes = torch.rand(bs, n_max, 4)
    mask_pos = torch.zeros(bs, n_max, n_anchors)
    mask_pos[0, 0, :2] = 1
    mask_pos[0, 2, 4] = 1
    mask_pos[1, 0, 1] = 1
    mask_pos[1, 1, 5] = 1  # background anchor resolved to a padded gt slot

    fixed = TaskAlignedAssignerFixed(num_classes=nc)
    labels, _, scores, fg = fixed(pd_scores, gt_labels, gt_bboxes, mask_pos)
    print("fixed: min label", int(labels.min()), "scores", tuple(scores.shape))

    buggy = TaskAlignedAssigner(num_classes=nc)
    try:
        buggy(pd_scores, gt_labels, gt_bboxes, mask_pos)
        raise AssertionError("expected the discarded clamp to leave negative labels")
    except RuntimeError as e:
        print("buggy: clamp result discarded ->", str(e).splitlines()[0])
