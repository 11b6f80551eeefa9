# source: bytedance/Protenix https://github.com/bytedance/Protenix/pull/246 — the data Featurizer built ~20 integer features as torch.Tensor(ndarray).long(), copying each array into a new float32 tensor and then copying again to int64; the fix uses torch.from_numpy(arr.astype(np.int64)) (one numpy cast, zero-copy wrap), measured 3–24x faster.
import numpy as np
import torch


class AtomArray:
    """Minimal stand-in for the biotite AtomArray annotations the featurizer reads."""

    def __init__(self, n_atoms, n_tokens, rng):
        self.res_id = rng.integers(1, 500, n_atoms)
        self.asym_id_int = rng.integers(0, 4, n_atoms)
        self.entity_id_int = rng.integers(0, 3, n_atoms)
        self.sym_id_int = rng.integers(0, 2, n_atoms)
        self.mol_id = rng.integers(0, 4, n_atoms)
        self.mol_atom_index = np.arange(n_atoms)
        self.entity_mol_id = rng.integers(0, 3, n_atoms)
        self.ref_pos = rng.standard_normal((n_atoms, 3)).astype(np.float32)
        self.ref_mask = rng.integers(0, 2, n_atoms)
        self.ref_charge = rng.integers(-1, 2, n_atoms)
        self.ref_space_uid = rng.integers(0, n_tokens, n_atoms)
        self.tokatom_idx = rng.integers(0, 14, n_atoms)
        self.is_protein = rng.integers(0, 2, n_atoms).astype(bool)
        self.is_ligand = ~self.is_protein
        self.is_dna = np.zeros(n_atoms, dtype=bool)
        self.is_rna = np.zeros(n_atoms, dtype=bool)

    def __getitem__(self, idx):
        return self


class Featurizer:
    def __init__(self, atom_array, n_tokens):
        self.cropped_atom_array = atom_array
        self.n_tokens = n_tokens
        n_atoms = len(atom_array.res_id)
        bounds = np.linspace(0, n_atoms, n_tokens + 1).astype(int)
        self.token_atom_indices = [range(bounds[i], bounds[i + 1]) for i in range(n_tokens)]

    def get_token_features(self, centre_atoms):
        token_features = {}
        token_features["token_index"] = torch.arange(0, self.n_tokens)
        token_features["residue_index"] = torch.Tensor(centre_atoms.res_id.astype(int)).long()  # want: C
        token_features["asym_id"] = torch.Tensor(centre_atoms.asym_id_int).long()  # want: C
        token_features["entity_id"] = torch.Tensor(centre_atoms.entity_id_int).long()  # want: C
        token_features["sym_id"] = torch.Tensor(centre_atoms.sym_id_int).long()  # want: C
        return token_features

    def get_chain_perm_features(self):
        chain_perm_features = {}
        chain_perm_features["mol_id"] = torch.Tensor(self.cropped_atom_array.mol_id).long()  # want: C
        chain_perm_features["mol_atom_index"] = torch.Tensor(self.cropped_atom_array.mol_atom_index).long()  # want: C
        chain_perm_features["entity_mol_id"] = torch.Tensor(self.cropped_atom_array.entity_mol_id).long()  # want: C
        return chain_perm_features

    def get_reference_features(self):
        ref_features = {}
        ref_features["ref_pos"] = torch.Tensor(self.cropped_atom_array.ref_pos)
        ref_features["ref_mask"] = torch.Tensor(self.cropped_atom_array.ref_mask).long()  # want: C
        ref_features["ref_charge"] = torch.Tensor(self.cropped_atom_array.ref_charge).long()  # want: C
        ref_features["ref_space_uid"] = torch.Tensor(self.cropped_atom_array.ref_space_uid).long()  # want: C
        return ref_features

    def get_extra_features(self):
        atom_to_token_idx_dict = {}
        for idx, atom_indices in enumerate(self.token_atom_indices):
            for atom_idx in atom_indices:
                atom_to_token_idx_dict[atom_idx] = idx
        # Ensure the order of the atom_to_token_idx is the same as the atom_array
        atom_to_token_idx = [
            atom_to_token_idx_dict[atom_idx] for atom_idx in range(len(self.cropped_atom_array.res_id))
        ]
        extra_features = {}
        extra_features["atom_to_token_idx"] = torch.Tensor(atom_to_token_idx).long()  # want: C
        extra_features["atom_to_tokatom_idx"] = torch.Tensor(self.cropped_atom_array.tokatom_idx).long()  # want: C
        extra_features["is_protein"] = torch.Tensor(self.cropped_atom_array.is_protein).long()  # want: C
        extra_features["is_ligand"] = torch.Tensor(self.cropped_atom_array.is_ligand).long()  # want: C
        extra_features["is_dna"] = torch.Tensor(self.cropped_atom_array.is_dna).long()  # want: C
        extra_features["is_rna"] = torch.Tensor(self.cropped_atom_array.is_rna).long()  # want: C
        return extra_features

    # fixed versions (after #246)
    def get_token_features_fixed(self, centre_atoms):
        token_features = {}
        token_features["token_index"] = torch.arange(0, self.n_tokens)
        token_features["residue_index"] = torch.from_numpy(centre_atoms.res_id.astype(np.int64))
        token_features["asym_id"] = torch.from_numpy(centre_atoms.asym_id_int.astype(np.int64))
        token_features["entity_id"] = torch.from_numpy(centre_atoms.entity_id_int.astype(np.int64))
        token_features["sym_id"] = torch.from_numpy(centre_atoms.sym_id_int.astype(np.int64))
        return token_features

    def get_extra_features_fixed(self):
        n_atoms = len(self.cropped_atom_array.res_id)
        atom_idx_to_token_idx = np.full(n_atoms, -1, dtype=int)
        for idx, atom_indices in enumerate(self.token_atom_indices):
            for atom_idx in atom_indices:
                atom_idx_to_token_idx[atom_idx] = idx
        extra_features = {}
        extra_features["atom_to_token_idx"] = torch.from_numpy(atom_idx_to_token_idx.astype(np.int64))
        extra_features["is_protein"] = torch.from_numpy(self.cropped_atom_array.is_protein.astype(np.int64))
        return extra_features


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    arr = AtomArray(4000, 300, rng)
    f = Featurizer(arr, 300)
    feats = {}
    for _ in range(5):  # one call per sample in the data loader
        feats.update(f.get_token_features(arr))
        feats.update(f.get_chain_perm_features())
        feats.update(f.get_reference_features())
        feats.update(f.get_extra_features())
    fixed = f.get_token_features_fixed(arr)
    assert torch.equal(fixed["residue_index"], feats["residue_index"])
    fx = f.get_extra_features_fixed()
    assert torch.equal(fx["is_protein"], feats["is_protein"])
    assert torch.equal(fx["atom_to_token_idx"], feats["atom_to_token_idx"])
    print("ok", len(feats))
