import torch


def predict(model, images):
    results = []
    for img in images:
        outputs = model([img])
        results.append(outputs[0]["boxes"])
    return results
