# source: ultralytics/yolov3 https://github.com/ultralytics/yolov3/pull/961 — clip_coords() called boxes[:, [0, 2]].clamp_(...), which clamps the copy produced by list (advanced) indexing so detections were never clipped to the image; the fix clamps each column through a basic-index view (boxes[:, 0].clamp_(...), ...).
import torch


def scale_coords(img1_shape, coords, img0_shape, ratio_pad=None):
    # Rescale coords (xyxy) from img1_shape to img0_shape
    if ratio_pad is None:  # calculate from img0_shape
        gain = max(img1_shape) / max(img0_shape)  # gain  = old / new
        pad = (img1_shape[1] - img0_shape[1] * gain) / 2, (img1_shape[0] - img0_shape[0] * gain) / 2  # wh padding
    else:
        gain = ratio_pad[0][0]
        pad = ratio_pad[1]

    coords[:, [0, 2]] -= pad[0]  # x padding
    coords[:, [1, 3]] -= pad[1]  # y padding
    coords[:, :4] /= gain
    clip_coords(coords, img0_shape)
    return coords


def clip_coords(boxes, img_shape):
    # Clip bounding xyxy bounding boxes to image shape (height, width)
    boxes[:, [0, 2]].clamp_(0, img_shape[1])  # clip x  # want: B
    boxes[:, [1, 3]].clamp_(0, img_shape[0])  # clip y  # want: B


def clip_coords_fixed(boxes, img_shape):
    # Clip bounding xyxy bounding boxes to image shape (height, width)
    boxes[:, 0].clamp_(0, img_shape[1])  # x1
    boxes[:, 1].clamp_(0, img_shape[0])  # y1
    boxes[:, 2].clamp_(0, img_shape[1])  # x2
    boxes[:, 3].clamp_(0, img_shape[0])  # y2


if __name__ == "__main__":
    img1_shape = (416, 416)   # network input (letterboxed)
    img0_shape = (480, 640)   # original image (h, w)
    # detections: x1, y1, x2, y2, conf, cls -- some spill over the letterbox border
    det = torch.tensor([[-5.0, 40.0, 120.0, 390.0, 0.9, 0.0],
                        [300.0, 45.0, 430.0, 380.0, 0.8, 2.0]])
    out = scale_coords(img1_shape, det.clone(), img0_shape)
    print("after scale_coords (buggy clip):\n", out[:, :4])
    print("x still outside [0, 640]:", bool((out[:, [0, 2]] < 0).any() or (out[:, [0, 2]] > 640).any()))

    ref = det.clone()
    gain = max(img1_shape) / max(img0_shape)
    pad = (img1_shape[1] - img0_shape[1] * gain) / 2, (img1_shape[0] - img0_shape[0] * gain) / 2
    ref[:, [0, 2]] -= pad[0]
    ref[:, [1, 3]] -= pad[1]
    ref[:, :4] /= gain
    clip_coords_fixed(ref, img0_shape)
    print("fixed clip:\n", ref[:, :4])
