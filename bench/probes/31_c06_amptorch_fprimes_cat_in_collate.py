# source: ulissigroup/amptorch https://github.com/ulissigroup/amptorch/pull/13 — `factorize_data` (called from the DataLoader collate_fn) built the sparse fingerprint-derivative matrix by `torch.cat`-ing each image's indices/values onto running tensors inside the per-image loop, re-copying everything accumulated so far (issue #12 "torch.cat() bottleneck"); the fix counts the entries first, pre-allocates `fprimes_inds`/`fprimes_vals` and fills slices.
from collections import OrderedDict

import torch


def make_sparse(primes):
    return primes.to_sparse()


def factorize_data(training_data):
    unique_atoms = []
    fingerprint_dataset = []
    energy_dataset = []
    num_of_atoms = []
    for image in training_data:
        num_of_atoms.append(float(len(image[0])))
        image[2] = make_sparse(image[2])

    image_forces = []
    dim1_start = 0
    dim2_start = 0
    fprimes_inds = torch.LongTensor(2, 0)
    fprimes_vals = torch.FloatTensor()
    for idx, image in enumerate(training_data):
        image_fingerprint = image[0]
        fingerprint_dataset.append(image_fingerprint)
        for atom in image_fingerprint:
            if atom[0] not in unique_atoms:
                unique_atoms.append(atom[0])
        energy_dataset.append(image[1])
        fprime = image[2]
        dim1 = fprime.shape[0]
        dim2 = fprime.shape[1]
        s_fprime_inds = fprime._indices() + torch.LongTensor([[dim1_start], [dim2_start]])
        s_fprime_vals = fprime._values().type(torch.FloatTensor)
        fprimes_inds = torch.cat((fprimes_inds, s_fprime_inds), axis=1)  # want: C
        fprimes_vals = torch.cat((fprimes_vals, s_fprime_vals))  # want: C
        dim1_start += dim1
        dim2_start += dim2
        image_forces.append(image[3])
    sparse_fprimes = torch.sparse_coo_tensor(fprimes_inds, fprimes_vals, torch.Size([dim1_start, dim2_start]))
    image_forces = torch.cat(image_forces).float()
    unique_atoms = OrderedDict.fromkeys(unique_atoms, 1)
    return unique_atoms, fingerprint_dataset, energy_dataset, num_of_atoms, sparse_fprimes, image_forces


def factorize_data_fixed(training_data):
    unique_atoms = []
    fingerprint_dataset = []
    energy_dataset = []
    num_of_atoms = []
    total_entries = 0
    previous_entries = 0
    for image in training_data:
        num_of_atoms.append(float(len(image[0])))
        # track the number of entries in the fprimes matrix
        image[2] = make_sparse(image[2])
        total_entries += len(image[2]._values())

    image_forces = []
    dim1_start = 0
    dim2_start = 0
    # pre-define matrices filled with zeros
    fprimes_inds = torch.zeros((2, total_entries), dtype=torch.int64)
    fprimes_vals = torch.zeros((total_entries))
    for idx, image in enumerate(training_data):
        image_fingerprint = image[0]
        fingerprint_dataset.append(image_fingerprint)
        for atom in image_fingerprint:
            if atom[0] not in unique_atoms:
                unique_atoms.append(atom[0])
        energy_dataset.append(image[1])
        fprime = image[2]
        dim1 = fprime.shape[0]
        dim2 = fprime.shape[1]
        s_fprime_inds = fprime._indices() + torch.LongTensor([[dim1_start], [dim2_start]])
        s_fprime_vals = fprime._values().type(torch.FloatTensor)
        num_entries = len(s_fprime_vals)
        # fill in the entries
        fprimes_inds[:, previous_entries : previous_entries + num_entries] = s_fprime_inds
        fprimes_vals[previous_entries : previous_entries + num_entries] = s_fprime_vals
        previous_entries += num_entries
        dim1_start += dim1
        dim2_start += dim2
        image_forces.append(image[3])
    sparse_fprimes = torch.sparse_coo_tensor(fprimes_inds, fprimes_vals, torch.Size([dim1_start, dim2_start]))
    image_forces = torch.cat(image_forces).float()
    unique_atoms = OrderedDict.fromkeys(unique_atoms, 1)
    return unique_atoms, fingerprint_dataset, energy_dataset, num_of_atoms, sparse_fprimes, image_forces


def make_images(n_images, seed):
    g = torch.Generator().manual_seed(seed)
    images = []
    for _ in range(n_images):
        n_atoms = int(torch.randint(2, 6, (1,), generator=g))
        fps = [("Cu" if i % 2 else "O", torch.rand(4, generator=g).tolist()) for i in range(n_atoms)]
        fprime = torch.rand(4 * n_atoms, 3 * n_atoms, generator=g)
        fprime[fprime < 0.7] = 0
        images.append([fps, float(torch.rand(1, generator=g)), fprime, torch.rand(n_atoms, 3, generator=g)])
    return images


if __name__ == "__main__":
    rb = factorize_data(make_images(200, 0))
    rf = factorize_data_fixed(make_images(200, 0))
    torch.testing.assert_close(rb[4].to_dense(), rf[4].to_dense())
    torch.testing.assert_close(rb[5], rf[5])
    print("nnz:", rf[4]._nnz(), "- buggy re-copies the accumulated indices/values once per image (200 times)")
