import torch


def clip_boxes(boxes, width):
    over = boxes[:, 2] > width
    boxes[over][:, 2] = width  # want: B
    return boxes
