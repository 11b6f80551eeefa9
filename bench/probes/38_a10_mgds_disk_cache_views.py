# source: Nerogar/mgds https://github.com/Nerogar/mgds/commit/5ea389a62408cff79a8f3a11b2f25c185c7c1c2e — DiskCache (the latent/text-embedding cache used by OneTrainer) put whatever the previous pipeline module returned straight into `split_item` (torch.save'd per sample) and `aggregate_item` (kept in memory and saved as aggregate.pt). Outputs such as a VAE latent from `distribution.mode().squeeze()` are views into larger tensors (the mean half of the packed mean/logvar parameters), so every cache file carried the whole backing storage. The fix clones each tensor (`__clone_for_cache`) before it goes into the cache.
import concurrent.futures
import os
import tempfile
from typing import Any

import torch


class DiagonalGaussianDistribution:
    def __init__(self, parameters: torch.Tensor):
        self.mean, self.logvar = torch.chunk(parameters, 2, dim=1)

    def mode(self) -> torch.Tensor:
        return self.mean


class SampleVAEDistribution:
    def __init__(self, encoded: dict[int, torch.Tensor]):
        self.encoded = encoded

    def get_item(self, variation: int, index: int, requested_name: str = None) -> dict:
        distribution = DiagonalGaussianDistribution(self.encoded[index])
        latent = distribution.mode()
        latent = latent.squeeze()
        return {'latent_image': latent}


class DiskCache:
    def __init__(self, previous, cache_dir: str, split_names: list[str], aggregate_names: list[str]):
        self.previous = previous
        self.cache_dir = cache_dir
        self.split_names = split_names
        self.aggregate_names = aggregate_names
        self.executor = concurrent.futures.ThreadPoolExecutor(max_workers=2)
        self.aggregate_cache = {}

    def _get_previous_item(self, variation: int, name: str, index: int) -> Any:
        return self.previous.get_item(variation, index, name)[name]

    def start(self, indices: list[int], in_variation: int = 0):
        self.__refresh_cache(indices, in_variation)

    def __refresh_cache(self, indices: list[int], in_variation: int):
        cache_dir = os.path.join(self.cache_dir, "variation-" + str(in_variation))
        os.makedirs(cache_dir, exist_ok=True)
        aggregate_cache = [None] * len(indices)

        def fn(group_index, in_index, in_variation):
            split_item = {}
            aggregate_item = {}

            with torch.no_grad():
                for name in self.split_names:
                    split_item[name] = self._get_previous_item(in_variation, name, in_index)  # want: A
                for name in self.aggregate_names:
                    aggregate_item[name] = self._get_previous_item(in_variation, name, in_index)  # maybe: A (aggregate items stay in memory for the whole run and go into aggregate.pt)

            torch.save(split_item, os.path.realpath(os.path.join(cache_dir, str(group_index) + '.pt')))
            aggregate_cache[group_index] = aggregate_item

        fs = [self.executor.submit(fn, group_index, in_index, in_variation) for (group_index, in_index) in enumerate(indices)]
        for f in concurrent.futures.as_completed(fs):
            f.result()

        torch.save(aggregate_cache, os.path.realpath(os.path.join(cache_dir, 'aggregate.pt')))
        self.aggregate_cache[in_variation] = aggregate_cache


class DiskCacheFixed(DiskCache):
    def start(self, indices: list[int], in_variation: int = 0):
        self.__refresh_cache(indices, in_variation)

    def __clone_for_cache(self, x: Any):
        if isinstance(x, torch.Tensor):
            return x.clone()
        return x

    def __refresh_cache(self, indices: list[int], in_variation: int):
        cache_dir = os.path.join(self.cache_dir, "variation-" + str(in_variation))
        os.makedirs(cache_dir, exist_ok=True)
        aggregate_cache = [None] * len(indices)

        def fn(group_index, in_index, in_variation):
            split_item = {}
            aggregate_item = {}

            with torch.no_grad():
                for name in self.split_names:
                    split_item[name] = self.__clone_for_cache(self._get_previous_item(in_variation, name, in_index))
                for name in self.aggregate_names:
                    aggregate_item[name] = self.__clone_for_cache(self._get_previous_item(in_variation, name, in_index))

            torch.save(split_item, os.path.realpath(os.path.join(cache_dir, str(group_index) + '.pt')))
            aggregate_cache[group_index] = aggregate_item

        fs = [self.executor.submit(fn, group_index, in_index, in_variation) for (group_index, in_index) in enumerate(indices)]
        for f in concurrent.futures.as_completed(fs):
            f.result()

        torch.save(aggregate_cache, os.path.realpath(os.path.join(cache_dir, 'aggregate.pt')))
        self.aggregate_cache[in_variation] = aggregate_cache


if __name__ == "__main__":
    vae = SampleVAEDistribution(encoded := {i: torch.randn(1, 8, 32, 32) for i in range(4)})  # packed mean/logvar
    latent_bytes = 4 * 32 * 32 * 4
    with tempfile.TemporaryDirectory() as d1, tempfile.TemporaryDirectory() as d2:
        bad = DiskCache(vae, d1, ['latent_image'], ['latent_image'])
        good = DiskCacheFixed(vae, d2, ['latent_image'], ['latent_image'])
        bad.start(list(range(4)))
        good.start(list(range(4)))
        for i in range(4):
            bad_size = os.path.getsize(os.path.join(d1, "variation-0", f"{i}.pt"))
            good_size = os.path.getsize(os.path.join(d2, "variation-0", f"{i}.pt"))
            assert bad_size >= 2 * latent_bytes and good_size < latent_bytes + 2048, (bad_size, good_size)
            assert torch.equal(torch.load(os.path.join(d2, "variation-0", f"{i}.pt"))['latent_image'], encoded[i][0, :4])
            assert bad.aggregate_cache[0][i]['latent_image'].untyped_storage().nbytes() == 2 * latent_bytes
            assert good.aggregate_cache[0][i]['latent_image'].untyped_storage().nbytes() == latent_bytes
        bad.executor.shutdown(), good.executor.shutdown()
    print("ok")
