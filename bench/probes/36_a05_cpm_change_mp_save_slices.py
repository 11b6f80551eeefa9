# source: TsinghuaAI/CPM-1-Generate https://github.com/TsinghuaAI/CPM-1-Generate/pull/32 — change_mp.py ("Increase MP size") split each model-parallel weight with `v[shift*part:(shift+1)*part, :]` / `v[:, shift*part:(shift+1)*part]` and `torch.save`d the dict of slices for every new rank; torch.save serialises the whole underlying storage of a view, so every mp_rank_XX file carried the full unsplit weights. PR "Only save necessary parameters" adds `.clone()` to both slices.
import os
import tempfile

import torch


def increase_mp(d, ratio, start, new_checkpoint):
    for j in range(start, start + ratio):
        d_new = {}
        shift = j - start
        for k, v in d.items():
            if k != "module":
                d_new[k] = None
        d_new["module"] = {}
        for k, v in d["module"].items():
            assert len(v.shape) < 3
            if len(v.shape) == 2 and "position" not in k:
                if "word" in k or "query" in k or "h_to_4h" in k:
                    part = v.shape[0] // ratio
                    d_new["module"][k] = v[shift * part:(shift + 1) * part, :]  # want: A
                else:
                    part = v.shape[1] // ratio
                    d_new["module"][k] = v[:, shift * part:(shift + 1) * part]  # want: A
            else:
                d_new["module"][k] = v
        filename = os.path.join(new_checkpoint, "mp_rank_{:02d}_model_states.pt".format(j))
        torch.save(d_new, filename)


def increase_mp_fixed(d, ratio, start, new_checkpoint):
    for j in range(start, start + ratio):
        shift = j - start
        d_new = {k: None for k in d if k != "module"}
        d_new["module"] = {}
        for k, v in d["module"].items():
            if len(v.shape) == 2 and "position" not in k:
                if "word" in k or "query" in k or "h_to_4h" in k:
                    part = v.shape[0] // ratio
                    d_new["module"][k] = v[shift * part:(shift + 1) * part, :].clone()
                else:
                    part = v.shape[1] // ratio
                    d_new["module"][k] = v[:, shift * part:(shift + 1) * part].clone()
            else:
                d_new["module"][k] = v
        torch.save(d_new, os.path.join(new_checkpoint, "mp_rank_{:02d}_model_states.pt".format(j)))


def fake_rank0_checkpoint(hidden=256):
    torch.manual_seed(0)
    module = {
        "word_embeddings.weight": torch.randn(2048, hidden),
        "layers.0.attention.query_key_value.weight": torch.randn(3 * hidden, hidden),
        "layers.0.attention.dense.weight": torch.randn(hidden, hidden),
        "layers.0.mlp.dense_h_to_4h.weight": torch.randn(4 * hidden, hidden),
        "layers.0.mlp.dense_4h_to_h.weight": torch.randn(hidden, 4 * hidden),
        "position_embeddings.weight": torch.randn(64, hidden),
    }
    return {"module": module, "iteration": 1000, "mp_world_size": 1}


def total_size(folder):
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))


if __name__ == "__main__":
    d = fake_rank0_checkpoint()
    with tempfile.TemporaryDirectory() as buggy_dir, tempfile.TemporaryDirectory() as fixed_dir:
        increase_mp(d, ratio=4, start=0, new_checkpoint=buggy_dir)
        increase_mp_fixed(d, ratio=4, start=0, new_checkpoint=fixed_dir)
        a = torch.load(os.path.join(buggy_dir, "mp_rank_01_model_states.pt"))["module"]
        b = torch.load(os.path.join(fixed_dir, "mp_rank_01_model_states.pt"))["module"]
        assert all(torch.equal(a[k], b[k]) for k in a)
        print("bytes on disk buggy:", total_size(buggy_dir), "fixed:", total_size(fixed_dir))
        assert total_size(buggy_dir) > 2.5 * total_size(fixed_dir)
