# source: prob-ml/bliss https://github.com/prob-ml/bliss/pull/757 — generate.py's itemize_data split the concatenated simulation batch into per-image dicts (flat_data["images"][i], tile_catalog[k][i]: row views) and pickle.dump'ed the list; pickle writes a view's whole storage for every element, so a 150-image file grew to 1.5 GB (vs 11 MB) and grew quadratically with images per file; fix: torch.save(file_data, f), which writes each shared storage once
import io
import os
import pickle
import tempfile
from typing import Dict, List

import torch


def simulate_batch(bs: int, seed: int) -> Dict:
    g = torch.Generator().manual_seed(seed)
    return {
        "tile_catalog": {
            "n_sources": torch.randint(0, 3, (bs, 4, 4), generator=g),
            "locs": torch.rand(bs, 4, 4, 1, 2, generator=g),
        },
        "images": torch.rand(bs, 1, 40, 40, generator=g),
        "background": torch.rand(bs, 1, 40, 40, generator=g),
    }


def generate_data(n_batches: int, bs: int, seed: int = 0) -> List[Dict]:
    return [simulate_batch(bs, seed + i) for i in range(n_batches)]


def itemize_data(batch_data, n_items: int) -> List[Dict]:
    flat_data = {
        "tile_catalog": {
            key: torch.cat([data["tile_catalog"][key] for data in batch_data])
            for key in batch_data[0]["tile_catalog"].keys()
        },
        "images": torch.cat([data["images"] for data in batch_data]),
        "background": torch.cat([data["background"] for data in batch_data]),
    }
    file_data: List[Dict] = []
    for i in range(n_items):
        file_datum = {}
        file_datum["tile_catalog"] = {k: flat_data["tile_catalog"][k][i] for k in flat_data["tile_catalog"].keys()}
        file_datum["images"] = flat_data["images"][i]
        file_datum["background"] = flat_data["background"][i]
        file_data.append(file_datum)
    return file_data


def write_cached_dataset(cached_data_path: str, n_files: int, images_per_file: int, bs: int):
    for file_idx in range(n_files):
        batch_data = generate_data(images_per_file // bs, bs, seed=100 * file_idx)
        file_data = itemize_data(batch_data, n_items=images_per_file)
        with open(f"{cached_data_path}/dataset_{file_idx}.pkl", "wb") as f:
            pickle.dump(file_data, f)  # want: A


def write_cached_dataset_fixed(cached_data_path: str, n_files: int, images_per_file: int, bs: int):
    for file_idx in range(n_files):
        batch_data = generate_data(images_per_file // bs, bs, seed=100 * file_idx)
        file_data = itemize_data(batch_data, n_items=images_per_file)
        with open(f"{cached_data_path}/dataset_{file_idx}.pt", "wb") as f:
            torch.save(file_data, f)  # every row of the same storages in one file: written once


def write_valid(cached_data_path: str, bs: int):
    valid = generate_data(3, bs, seed=7)  # whole batches, not views
    with open(f"{cached_data_path}/dataset_valid.pkl", "wb") as f:
        pickle.dump(valid, f)


if __name__ == "__main__":
    images_per_file, bs = 48, 4
    with tempfile.TemporaryDirectory() as d:
        write_cached_dataset(d, 1, images_per_file, bs)
        write_cached_dataset_fixed(d, 1, images_per_file, bs)
        write_valid(d, bs)
        pkl = os.path.getsize(f"{d}/dataset_0.pkl")
        pt = os.path.getsize(f"{d}/dataset_0.pt")
        assert pkl > 20 * pt, (pkl, pt)
        with open(f"{d}/dataset_0.pkl", "rb") as f:
            loaded = pickle.load(f)
        img = loaded[5]["images"]
        assert img.untyped_storage().nbytes() == images_per_file * 40 * 40 * 4
        assert img.untyped_storage().nbytes() > img.numel() * img.element_size()
        # one clone per item would also fix the pickle path
        buf = io.BytesIO()
        pickle.dump([{k: v.clone() for k, v in item.items() if k != "tile_catalog"} for item in loaded], buf)
        assert buf.getbuffer().nbytes < pkl / 20
    print("ok: pickling per-item views wrote the whole batch once per item")
