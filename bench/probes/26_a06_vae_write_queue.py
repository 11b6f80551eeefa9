# source: bghira/SimpleTuner https://github.com/bghira/SimpleTuner/issues/550 — encode_images returned per-image rows latents_uncached[i] of the batched VAE output, which travelled through write_queue into _write_latents_in_batch's latents list and were torch.save'd one per file, so cached latents grew with VAE batch size; the fix (commit a0a36db) became latents.append(latent_vector.clone()).
import os
import tempfile
from queue import Queue

import torch
import torch.nn as nn


class _LatentDist:
    def __init__(self, mean):
        self.mean = mean

    def sample(self):
        return self.mean + 0.01 * torch.randn_like(self.mean)


class _EncoderOutput:
    def __init__(self, mean):
        self.latent_dist = _LatentDist(mean)


class ToyVAE(nn.Module):
    class config:
        scaling_factor = 0.18215

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, kernel_size=8, stride=8)

    def encode(self, x):
        return _EncoderOutput(self.conv(x))


class LocalDataBackend:
    def __init__(self):
        self.files = {}

    def exists(self, filepath):
        return os.path.exists(filepath)

    def torch_save(self, data, location):
        torch.save(data, location)

    def write_batch(self, filepaths: list, data_list: list) -> None:
        for filepath, data in zip(filepaths, data_list):
            self.torch_save(data, filepath)

    def torch_load(self, filename):
        return torch.load(filename)


class VAECache:
    def __init__(self, vae, cache_dir, data_backend, vae_batch_size=4, write_batch_size=128):
        self.vae = vae
        self.cache_dir = cache_dir
        self.data_backend = data_backend
        self.vae_batch_size = vae_batch_size
        self.write_batch_size = write_batch_size
        self.vae_input_queue = Queue()
        self.write_queue = Queue()

    def generate_vae_cache_filename(self, filepath: str) -> tuple:
        base_filename = os.path.splitext(os.path.basename(filepath))[0] + ".pt"
        return os.path.join(self.cache_dir, base_filename), base_filename

    def _read_from_storage(self, filename: str):
        return self.data_backend.torch_load(filename)

    def encode_images(self, images, filepaths, load_from_cache=True):
        batch_size = len(images)
        full_filenames = [self.generate_vae_cache_filename(filepath)[0] for filepath in filepaths]
        uncached_image_indices = [
            i for i, filename in enumerate(full_filenames) if not self.data_backend.exists(filename)
        ]
        uncached_images = [images[i] for i in uncached_image_indices]
        latents = []
        if len(uncached_images) > 0:
            with torch.no_grad():
                processed_images = torch.stack(uncached_images)
                latents_uncached = self.vae.encode(processed_images).latent_dist.sample()
                latents_uncached = latents_uncached * self.vae.config.scaling_factor
            cached_idx, uncached_idx = 0, 0
            for i in range(batch_size):
                if i in uncached_image_indices:
                    latents.append(latents_uncached[uncached_idx])
                    uncached_idx += 1
                else:
                    latents.append(self._read_from_storage(full_filenames[i]))
                    cached_idx += 1
        return latents

    def _write_latents_in_batch(self, input_latents: list = None):
        # Pull the 'filepaths' and 'latents' from self.write_queue
        filepaths, latents = [], []
        if input_latents is not None:
            qlen = len(input_latents)
        else:
            qlen = self.write_queue.qsize()

        for idx in range(0, qlen):
            if input_latents:
                output_file, filepath, latent_vector = input_latents.pop()
            else:
                output_file, filepath, latent_vector = self.write_queue.get()
            file_extension = os.path.splitext(output_file)[1]
            if file_extension != ".pt":
                raise ValueError(f"Cannot write a latent embedding to an image path, {output_file}")
            filepaths.append(output_file)
            latents.append(latent_vector)  # want: A

        self.data_backend.write_batch(filepaths, latents)

        return latents

    def _encode_images_in_batch(self, image_pixel_values: list = None, disable_queue: bool = False):
        if image_pixel_values is not None:
            qlen = len(image_pixel_values)
        else:
            qlen = self.vae_input_queue.qsize()
        if qlen == 0:
            return
        output_values = []
        while qlen > 0:
            vae_input_images, vae_input_filepaths, vae_output_filepaths = [], [], []
            count_to_process = min(qlen, self.vae_batch_size)
            for idx in range(0, count_to_process):
                if image_pixel_values:
                    pixel_values, filepath, aspect_bucket, is_final_sample = image_pixel_values.pop()
                else:
                    pixel_values, filepath, aspect_bucket, is_final_sample = self.vae_input_queue.get()
                vae_input_images.append(pixel_values)
                vae_input_filepaths.append(filepath)
                vae_output_filepaths.append(self.generate_vae_cache_filename(filepath)[0])
                if is_final_sample:
                    break
            latents = self.encode_images(
                [sample.to(dtype=torch.float32) for sample in vae_input_images],
                vae_input_filepaths,
                load_from_cache=False,
            )
            if latents is None:
                raise ValueError("Received None from encode_images")
            for output_file, latent_vector, filepath in zip(vae_output_filepaths, latents, vae_input_filepaths):
                if latent_vector is None:
                    raise ValueError(f"Latent vector is None for filepath {filepath}")
                output_value = (output_file, filepath, latent_vector)
                output_values.append(output_value)
                if not disable_queue:
                    self.write_queue.put(output_value)
            if image_pixel_values is not None:
                qlen = len(image_pixel_values)
            else:
                qlen = self.vae_input_queue.qsize()
        return output_values

    def process_buckets(self):
        self._encode_images_in_batch()
        if self.write_queue.qsize() > 0:
            self._write_latents_in_batch()


class FixedVAECache(VAECache):
    def _write_latents_in_batch(self, input_latents: list = None):
        filepaths, latents = [], []
        qlen = len(input_latents) if input_latents is not None else self.write_queue.qsize()
        for idx in range(0, qlen):
            if input_latents:
                output_file, filepath, latent_vector = input_latents.pop()
            else:
                output_file, filepath, latent_vector = self.write_queue.get()
            filepaths.append(output_file)
            # pytorch will hold onto all of the tensors in the list if we do not use clone()
            latents.append(latent_vector.clone())
        self.data_backend.write_batch(filepaths, latents)
        return latents


if __name__ == "__main__":
    torch.manual_seed(0)
    vae = ToyVAE()
    for cls in (VAECache, FixedVAECache):
        with tempfile.TemporaryDirectory() as d:
            cache = cls(vae, d, LocalDataBackend(), vae_batch_size=8)
            for i in range(16):
                cache.vae_input_queue.put((torch.randn(3, 64, 64), f"/data/img_{i}.png", 1.0, False))
            cache.process_buckets()
            print(cls.__name__, sorted({os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)}))
