# source: ultralytics/yolov3 https://github.com/ultralytics/yolov3/pull/961 — utils.clip_coords did boxes[:, [0, 2]].clamp_(0, img_shape[1]) and boxes[:, [1, 3]].clamp_(0, img_shape[0]); the list index gathers a copy, so the in-place clamp never reached the boxes and predictions kept negative / out-of-image coordinates; fix: clamp per column (boxes[:, 0].clamp_(...)) or assign back
import torch


def clip_coords(boxes, img_shape):
    # Clip bounding xyxy bounding boxes to image shape (height, width)
    boxes[:, [0, 2]].clamp_(0, img_shape[1])  # want: B
    boxes[:, [1, 3]].clamp_(0, img_shape[0])  # want: B


def clip_coords_fixed(boxes, img_shape):
    boxes[:, 0].clamp_(0, img_shape[1])  # x1
    boxes[:, 1].clamp_(0, img_shape[0])  # y1
    boxes[:, 2].clamp_(0, img_shape[1])  # x2
    boxes[:, 3].clamp_(0, img_shape[0])  # y2


def clip_coords_assign(boxes, img_shape):
    boxes[:, [0, 2]] = boxes[:, [0, 2]].clamp(0, img_shape[1])
    boxes[:, [1, 3]] = boxes[:, [1, 3]].clamp(0, img_shape[0])


def scale_coords(img1_shape, coords, img0_shape, clip=clip_coords):
    # Rescale coords (xyxy) from img1_shape (letterboxed) to img0_shape
    gain = max(img1_shape) / max(img0_shape)
    pad = (img1_shape[1] - img0_shape[1] * gain) / 2, (img1_shape[0] - img0_shape[0] * gain) / 2
    coords[:, [0, 2]] -= pad[0]  # x padding: __setitem__ writes back
    coords[:, [1, 3]] -= pad[1]  # y padding
    coords[:, :4] /= gain
    clip(coords, img0_shape)
    return coords


if __name__ == "__main__":
    det = torch.tensor([[-5.0, 10.0, 700.0, 500.0, 0.9, 0.0],
                        [100.0, -3.0, 200.0, 650.0, 0.8, 1.0]])
    img0_shape = (480, 640)  # h, w
    bug = scale_coords((480, 640), det.clone(), img0_shape)
    fixed = scale_coords((480, 640), det.clone(), img0_shape, clip=clip_coords_fixed)
    assigned = scale_coords((480, 640), det.clone(), img0_shape, clip=clip_coords_assign)
    assert bug[0, 0] < 0 and bug[0, 2] > 640 and bug[1, 3] > 480  # nothing was clipped
    assert torch.equal(fixed, assigned)
    assert fixed[:, [0, 2]].min() >= 0 and fixed[:, [0, 2]].max() <= 640 and fixed[:, [1, 3]].max() <= 480
    print("ok: clamp_ on boxes[:, [0, 2]] clipped a gathered copy")
