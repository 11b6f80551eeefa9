# source: jwohlwend/boltz https://github.com/jwohlwend/boltz/commit/620ce49e23e1340515aae7192f3540fd720f372d — `process_token_features` in Boltz-2's featurizer encodes inference pocket constraints into the token-pair `contact_conditioning` and `contact_threshold` matrices with `contact_conditioning[binder_mask][:, idx] = ...`. Indexing with the boolean `binder_mask` first returns a copy, so the BINDER>POCKET entries and their distance thresholds were written into a temporary and never reached the features. The fix indexes both axes in one `__setitem__`: `contact_conditioning[binder_mask, idx] = ...`.
import numpy as np
import torch

CHAIN_TYPE_IDS = {"PROTEIN": 0, "NONPOLYMER": 3}
CONTACT_CONDITIONING_INFO = {"UNSPECIFIED": 0, "UNSELECTED": 1, "POCKET>BINDER": 2, "BINDER>POCKET": 3}
TOKEN_DTYPE = np.dtype([("asym_id", "i4"), ("mol_type", "i4"), ("res_idx", "i4"), ("atom_idx", "i4")])


def process_token_features(token_data, inference_pocket_constraints=None):
    contact_conditioning = np.zeros((len(token_data), len(token_data)))
    contact_threshold = np.zeros((len(token_data), len(token_data)))

    if inference_pocket_constraints is not None:
        for binder, contacts, max_distance in inference_pocket_constraints:
            binder_mask = token_data["asym_id"] == binder

            for idx, token in enumerate(token_data):
                if (
                    token["mol_type"] != CHAIN_TYPE_IDS["NONPOLYMER"]
                    and (token["asym_id"], token["res_idx"]) in contacts
                ) or (
                    token["mol_type"] == CHAIN_TYPE_IDS["NONPOLYMER"]
                    and (token["asym_id"], token["atom_idx"]) in contacts
                ):
                    contact_conditioning[binder_mask][:, idx] = CONTACT_CONDITIONING_INFO["BINDER>POCKET"]  # want: B
                    contact_conditioning[idx][binder_mask] = CONTACT_CONDITIONING_INFO["POCKET>BINDER"]
                    contact_threshold[binder_mask][:, idx] = max_distance  # want: B
                    contact_threshold[idx][binder_mask] = max_distance

    return {
        "contact_conditioning": torch.from_numpy(contact_conditioning).long(),
        "contact_threshold": torch.from_numpy(contact_threshold).float(),
    }


def process_token_features_fixed(token_data, inference_pocket_constraints=None):
    contact_conditioning = np.zeros((len(token_data), len(token_data)))
    contact_threshold = np.zeros((len(token_data), len(token_data)))

    if inference_pocket_constraints is not None:
        for binder, contacts, max_distance in inference_pocket_constraints:
            binder_mask = token_data["asym_id"] == binder

            for idx, token in enumerate(token_data):
                if (
                    token["mol_type"] != CHAIN_TYPE_IDS["NONPOLYMER"]
                    and (token["asym_id"], token["res_idx"]) in contacts
                ) or (
                    token["mol_type"] == CHAIN_TYPE_IDS["NONPOLYMER"]
                    and (token["asym_id"], token["atom_idx"]) in contacts
                ):
                    contact_conditioning[binder_mask, idx] = CONTACT_CONDITIONING_INFO["BINDER>POCKET"]
                    contact_conditioning[idx, binder_mask] = CONTACT_CONDITIONING_INFO["POCKET>BINDER"]
                    contact_threshold[binder_mask, idx] = max_distance
                    contact_threshold[idx, binder_mask] = max_distance

    return {
        "contact_conditioning": torch.from_numpy(contact_conditioning).long(),
        "contact_threshold": torch.from_numpy(contact_threshold).float(),
    }


if __name__ == "__main__":
    tokens = np.array(
        [(0, 0, 0, 0), (0, 0, 1, 5), (0, 0, 2, 9), (1, 3, 0, 0), (1, 3, 0, 1)], dtype=TOKEN_DTYPE
    )
    constraints = [(1, {(0, 1), (0, 2)}, 6.0)]
    buggy = process_token_features(tokens, constraints)
    fixed = process_token_features_fixed(tokens, constraints)
    assert buggy["contact_conditioning"][3:, 1:3].sum().item() == 0
    assert buggy["contact_threshold"][3:, 1:3].sum().item() == 0.0
    assert torch.all(fixed["contact_conditioning"][3:, 1:3] == 3)
    assert torch.all(fixed["contact_threshold"][3:, 1:3] == 6.0)
    assert torch.equal(buggy["contact_conditioning"][1:3, 3:], fixed["contact_conditioning"][1:3, 3:])
    print("ok")
