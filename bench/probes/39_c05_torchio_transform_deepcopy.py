# source: TorchIO-project/torchio https://github.com/TorchIO-project/torchio/issues/200 — Transform.__call__ always ran `sample = deepcopy(data)` before apply_transform, but a sample coming out of ImagesDataset.__getitem__ had already been deep-copied by ImagesDataset._get_sample_dict_from_subject, so every image tensor was duplicated once more per transform call for nothing. The issue (labelled bug, closed) drops the redundant copy for inputs the dataset already copied; the fixed Transform below only copies inputs it does not own.
from abc import ABC, abstractmethod
from copy import deepcopy

import torch

DATA = "data"
AFFINE = "affine"


class ImagesDataset(torch.utils.data.Dataset):
    def __init__(self, subjects, transform=None):
        self.subjects = subjects
        self._transform = transform

    def __len__(self):
        return len(self.subjects)

    def __getitem__(self, index):
        subject = self.subjects[index]
        sample = self._get_sample_dict_from_subject(subject)
        if self._transform is not None:
            sample = self._transform(sample)
        return sample

    def _get_sample_dict_from_subject(self, subject):
        subject_sample = {}
        for key, image in subject.items():
            subject_sample[key] = {DATA: image[DATA].clone(), AFFINE: image[AFFINE].clone()}
        subject_sample["_from_dataset"] = True
        return subject_sample


class Transform(ABC):
    def __init__(self, p=1):
        self.probability = p
        self.last_input = None
        self.last_sample = None

    def __call__(self, data):
        if self.probability < 1 and torch.rand(1).item() > self.probability:
            return data
        self.last_input = data
        sample = deepcopy(data)  # want: C
        self.last_sample = sample
        return self.apply_transform(sample)

    @abstractmethod
    def apply_transform(self, sample):
        raise NotImplementedError


class RescaleIntensity(Transform):
    def __init__(self, out_min_max=(0, 1), p=1):
        super().__init__(p=p)
        self.out_min, self.out_max = out_min_max

    def apply_transform(self, sample):
        for key, image in sample.items():
            if not isinstance(image, dict):
                continue
            tensor = image[DATA]
            array = (tensor - tensor.min()) / (tensor.max() - tensor.min())
            image[DATA] = array * (self.out_max - self.out_min) + self.out_min
        return sample


class TransformFixed(Transform):
    def __call__(self, data):
        if self.probability < 1 and torch.rand(1).item() > self.probability:
            return data
        self.last_input = data
        sample = data if data.get("_from_dataset", False) else deepcopy(data)
        self.last_sample = sample
        return self.apply_transform(sample)


class RescaleIntensityFixed(TransformFixed, RescaleIntensity):
    pass


if __name__ == "__main__":
    torch.manual_seed(0)
    subjects = [{"t1": {DATA: torch.rand(1, 8, 8, 8), AFFINE: torch.eye(4)}} for _ in range(2)]
    t_bug, t_fix = RescaleIntensity(), RescaleIntensityFixed()
    s_bug = ImagesDataset(subjects, t_bug)[0]
    in_bug, used_bug = t_bug.last_input, t_bug.last_sample
    s_fix = ImagesDataset(subjects, t_fix)[0]
    in_fix, used_fix = t_fix.last_input, t_fix.last_sample
    assert torch.allclose(s_bug["t1"][DATA], s_fix["t1"][DATA])
    assert used_bug["t1"][AFFINE].data_ptr() != in_bug["t1"][AFFINE].data_ptr()
    assert used_fix["t1"][AFFINE].data_ptr() == in_fix["t1"][AFFINE].data_ptr()
    assert subjects[0]["t1"][DATA].max() < 1.0 or subjects[0]["t1"][DATA].min() > 0.0
    print("ok")
