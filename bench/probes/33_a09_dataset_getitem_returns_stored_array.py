# source: lkriener/yin_yang_data_set https://github.com/lkriener/yin_yang_data_set/pull/4 — YinYangDataset.__getitem__ returned `(self.__vals[index], self.__cs[index])`, i.e. the dataset's own stored array, so any transform that worked in place rewrote the dataset itself and every epoch saw drifted data; the fix returns `self.__vals[index].copy()`.
import numpy as np
from torch.utils.data.dataset import Dataset


class YinYangDataset(Dataset):
    def __init__(self, r_small=0.1, r_big=0.5, size=1000, seed=42, transform=None):
        super(YinYangDataset, self).__init__()
        rng = np.random.RandomState(seed)
        self.transform = transform
        self.r_small = r_small
        self.r_big = r_big
        self.__vals = []
        self.__cs = []
        for i in range(size):
            goal_class = rng.randint(3)
            x, y, c = self.get_sample(rng, goal=goal_class)
            val = np.array([x, y, 1. - x, 1. - y])
            self.__vals.append(val)
            self.__cs.append(c)

    def get_sample(self, rng, goal=None):
        while True:
            x, y = rng.rand(2) * 2. * self.r_big
            if np.sqrt((x - self.r_big) ** 2 + (y - self.r_big) ** 2) > self.r_big:
                continue
            c = self.which_class(x, y)
            if goal is None or c == goal:
                return x, y, c

    def which_class(self, x, y):
        d_right = np.sqrt((x - 1.5 * self.r_big) ** 2 + (y - self.r_big) ** 2)
        d_left = np.sqrt((x - 0.5 * self.r_big) ** 2 + (y - self.r_big) ** 2)
        criterion1 = d_right <= self.r_small
        criterion2 = d_left > self.r_small and d_left <= 0.5 * self.r_big
        criterion3 = y > self.r_big and d_right > 0.5 * self.r_big
        if d_right < self.r_small or d_left < self.r_small:
            return 2
        return int(criterion1 or criterion2 or criterion3)

    def _item(self, index):
        return (self.__vals[index], self.__cs[index])  # want: A

    def __getitem__(self, index):
        sample = self._item(index)
        if self.transform:
            sample = self.transform(sample)
        return sample

    def __len__(self):
        return len(self.__cs)


class YinYangDatasetFixed(YinYangDataset):
    def _item(self, index):
        return (self._YinYangDataset__vals[index].copy(), self._YinYangDataset__cs[index])


def center(sample):
    vals, c = sample
    vals -= 0.5  # in-place centring, as users commonly write transforms
    return vals, c


if __name__ == "__main__":
    for cls in (YinYangDataset, YinYangDatasetFixed):
        ds = cls(size=50, transform=center)
        epochs = [np.stack([ds[i][0] for i in range(len(ds))]).mean() for _ in range(3)]
        print(f"{cls.__name__}: mean input per epoch = {[round(float(m), 3) for m in epochs]}")
