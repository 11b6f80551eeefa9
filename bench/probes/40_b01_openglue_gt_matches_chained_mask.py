# source: ucuapps/OpenGlue https://github.com/ucuapps/OpenGlue/pull/17 — `generate_gt_matches` labels mutual nearest-neighbour keypoint pairs and then tries to mark pairs whose symmetric reprojection distance is too large as IGNORE with `gt_matches0[cross_check_consistent0][symmetric_dist > positive_threshold] = IGNORE_INDEX`. The first boolean-mask index returns a copy, so the second assignment writes into a temporary and the ground-truth matches are never relabelled. The PR clones the masked selection, assigns into the clone and writes it back with `gt_matches0.masked_scatter_(cross_check_consistent0, ...)`.
from typing import Dict, Any, Optional, Tuple

import torch

# define module constants
UNMATCHED_INDEX = -1  # index of keypoint that don't have a match
IGNORE_INDEX = -2  # index of keypoints to ignore during loss calculation


def get_inverse_transformation(transformation):
    return {**transformation, 'H': torch.linalg.inv(transformation['H'])}


def reproject_keypoints(kpts, transformation):
    H = transformation['H']
    kpts_h = torch.cat([kpts, torch.ones_like(kpts[..., :1])], dim=-1)
    projected = kpts_h @ H.transpose(-1, -2)
    projected = projected[..., :2] / projected[..., 2:]
    w, h = transformation['image_size']
    mask = (projected[..., 0] >= 0) & (projected[..., 0] < w) & (projected[..., 1] >= 0) & (projected[..., 1] < h)
    return projected, mask


def generate_gt_matches(data: Dict[str, Any],
                        features0: Dict[str, torch.Tensor],
                        features1: Dict[str, torch.Tensor],
                        positive_threshold: float,
                        negative_threshold: Optional[float] = None
                        ) -> Tuple[Optional[Dict[str, Any]], Optional[Dict[str, torch.Tensor]]]:
    """Given image pair, keypoints detected in each image, return set of ground truth correspondences"""
    if negative_threshold is None:
        negative_threshold = positive_threshold

    kpts0, kpts1 = features0['keypoints'], features1['keypoints']

    transformation = data['transformation']
    transformation_inv = get_inverse_transformation(transformation)
    num0, num1 = kpts0.size(1), kpts1.size(1)

    # skip step if no keypoint are detected
    if num0 == 0 or num1 == 0:
        return None, None

    # establish ground truth correspondences given transformation
    kpts0_transformed, mask0 = reproject_keypoints(kpts0, transformation)
    kpts1_transformed, mask1 = reproject_keypoints(kpts1, transformation_inv)
    reprojection_error_0_to_1 = torch.cdist(kpts0_transformed, kpts1, p=2)  # batch_size x num0 x num1
    reprojection_error_1_to_0 = torch.cdist(kpts1_transformed, kpts0, p=2)  # batch_size x num1 x num0

    min_dist0, nn_matches0 = reprojection_error_0_to_1.min(2)  # batch_size x num0
    min_dist1, nn_matches1 = reprojection_error_1_to_0.min(2)  # batch_size x num1
    gt_matches0, gt_matches1 = nn_matches0.clone(), nn_matches1.clone()
    device = gt_matches0.device
    cross_check_consistent0 = torch.arange(num0, device=device).unsqueeze(0) == gt_matches1.gather(1, gt_matches0)
    gt_matches0[~cross_check_consistent0] = UNMATCHED_INDEX

    cross_check_consistent1 = torch.arange(num1, device=device).unsqueeze(0) == gt_matches0.gather(1, gt_matches1)
    gt_matches1[~cross_check_consistent1] = UNMATCHED_INDEX

    # so far mutual NN are marked MATCHED and non-mutual UNMATCHED

    symmetric_dist = 0.5 * (min_dist0[cross_check_consistent0] + min_dist1[cross_check_consistent1])

    gt_matches0[cross_check_consistent0][symmetric_dist > positive_threshold] = IGNORE_INDEX  # want: B
    gt_matches1[cross_check_consistent1][symmetric_dist > positive_threshold] = IGNORE_INDEX  # want: B

    # ignore kpts with unknown depth data
    gt_matches0[~mask0] = IGNORE_INDEX
    gt_matches1[~mask1] = IGNORE_INDEX

    y_true = {'gt_matches0': gt_matches0, 'gt_matches1': gt_matches1}
    return data, y_true


def generate_gt_matches_fixed(data, features0, features1, positive_threshold, negative_threshold=None):
    if negative_threshold is None:
        negative_threshold = positive_threshold
    kpts0, kpts1 = features0['keypoints'], features1['keypoints']
    transformation = data['transformation']
    transformation_inv = get_inverse_transformation(transformation)
    num0, num1 = kpts0.size(1), kpts1.size(1)
    if num0 == 0 or num1 == 0:
        return None, None
    kpts0_transformed, mask0 = reproject_keypoints(kpts0, transformation)
    kpts1_transformed, mask1 = reproject_keypoints(kpts1, transformation_inv)
    min_dist0, nn_matches0 = torch.cdist(kpts0_transformed, kpts1, p=2).min(2)
    min_dist1, nn_matches1 = torch.cdist(kpts1_transformed, kpts0, p=2).min(2)
    gt_matches0, gt_matches1 = nn_matches0.clone(), nn_matches1.clone()
    device = gt_matches0.device
    cross_check_consistent0 = torch.arange(num0, device=device).unsqueeze(0) == gt_matches1.gather(1, gt_matches0)
    gt_matches0[~cross_check_consistent0] = UNMATCHED_INDEX
    cross_check_consistent1 = torch.arange(num1, device=device).unsqueeze(0) == gt_matches0.gather(1, gt_matches1)
    gt_matches1[~cross_check_consistent1] = UNMATCHED_INDEX

    symmetric_dist = 0.5 * (min_dist0[cross_check_consistent0] + min_dist1[cross_check_consistent1])

    gt_matches0_check = gt_matches0[cross_check_consistent0].clone()
    gt_matches0_check[symmetric_dist > positive_threshold] = IGNORE_INDEX
    gt_matches0.masked_scatter_(cross_check_consistent0, gt_matches0_check)
    gt_matches1_check = gt_matches1[cross_check_consistent1].clone()
    gt_matches1_check[symmetric_dist > positive_threshold] = IGNORE_INDEX
    gt_matches1.masked_scatter_(cross_check_consistent1, gt_matches1_check)

    gt_matches0[~mask0] = IGNORE_INDEX
    gt_matches1[~mask1] = IGNORE_INDEX
    return data, {'gt_matches0': gt_matches0, 'gt_matches1': gt_matches1}


if __name__ == "__main__":
    data = {'transformation': {'H': torch.eye(3), 'image_size': (100, 100)}}
    features0 = {'keypoints': torch.tensor([[[0., 0.], [10., 0.], [20., 0.]]])}
    features1 = {'keypoints': torch.tensor([[[0., 0.], [10., 2.], [50., 50.]]])}
    _, buggy = generate_gt_matches(data, features0, features1, positive_threshold=1.0, negative_threshold=3.0)
    _, fixed = generate_gt_matches_fixed(data, features0, features1, positive_threshold=1.0, negative_threshold=3.0)
    # pair (1, 1) is a mutual NN at distance 2 > positive_threshold: it must be ignored
    assert buggy['gt_matches0'][0, 1].item() == 1 and buggy['gt_matches1'][0, 1].item() == 1
    assert fixed['gt_matches0'][0, 1].item() == IGNORE_INDEX and fixed['gt_matches1'][0, 1].item() == IGNORE_INDEX
    assert fixed['gt_matches0'][0, 0].item() == 0
    print("ok")
