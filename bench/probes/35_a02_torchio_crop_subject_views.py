# source: TorchIO-project/torchio https://github.com/TorchIO-project/torchio/pull/1337 — after "Stop copying whole image before cropping" (#1308) Crop built the cropped Subject from `image.data[:, i0:i1, j0:j1, k0:k1]` slices, so every cropped patch kept the whole (uncropped) volume alive and memory leaked in patch pipelines; the hotfix made the cropped image own a copy of the cropped region again.
import copy

import torch


class Image(dict):
    def __init__(self, tensor, affine=None):
        super().__init__(data=tensor, affine=torch.eye(4) if affine is None else affine)

    @property
    def data(self):
        return self["data"]

    def set_data(self, tensor):
        self["data"] = tensor


class Subject(dict):
    def __init__(self, **images):
        super().__init__(**images)
        self.applied_transforms = []

    def get_images(self):
        return [v for v in self.values() if isinstance(v, Image)]

    def update_attributes(self):
        self.__dict__.update(self)


class Crop:
    def __init__(self, bounds, copy=False):
        self.bounds = bounds
        self.copy = copy

    def apply_transform(self, sample):
        index_ini, index_fin = self.bounds
        if not self.copy:
            cropped_sample = Subject()
            for name, image in sample.items():
                new_image = Image(image.data, image["affine"].clone())
                self.crop_image(new_image, index_ini, index_fin)
                cropped_sample[name] = new_image
            cropped_sample.applied_transforms = copy.deepcopy(sample.applied_transforms)
            cropped_sample.update_attributes()
            return cropped_sample
        for image in sample.get_images():
            self.crop_image(image, index_ini, index_fin)
        return sample

    def crop_image(self, image, index_ini, index_fin):
        i0, j0, k0 = index_ini
        i1, j1, k1 = index_fin
        image.set_data(image.data[:, i0:i1, j0:j1, k0:k1])  # want: A
        affine = image["affine"].clone()
        affine[:3, 3] += torch.tensor([i0, j0, k0], dtype=affine.dtype)
        image["affine"] = affine


class CropFixed(Crop):
    def crop_image(self, image, index_ini, index_fin):
        i0, j0, k0 = index_ini
        i1, j1, k1 = index_fin
        image.set_data(image.data[:, i0:i1, j0:j1, k0:k1].clone())
        affine = image["affine"].clone()
        affine[:3, 3] += torch.tensor([i0, j0, k0], dtype=affine.dtype)
        image["affine"] = affine


def patch_queue(transform, n_volumes=4):
    patches = []
    for _ in range(n_volumes):
        subject = Subject(t1=Image(torch.randn(1, 64, 64, 64)), seg=Image(torch.zeros(1, 64, 64, 64)))
        patches.append(transform.apply_transform(subject))
    return patches


if __name__ == "__main__":
    bounds = ((10, 10, 10), (26, 26, 26))
    for cls in (Crop, CropFixed):
        patches = patch_queue(cls(bounds))
        held = sum(p["t1"].data.untyped_storage().nbytes() for p in patches)
        payload = sum(p["t1"].data.numel() * 4 for p in patches)
        print(f"{cls.__name__:10s} t1 payload={payload:8d} B  storage kept={held:9d} B")
