# source: ulissigroup/amptorch issues #11/#12, PR #13 — factorize_data() grew the sparse fingerprint-derivative index/value tensors with torch.cat once per image, re-copying everything collected so far (quadratic); the fix preallocates and fills slices.
import torch


def factorize_data(training_data):
    fingerprints, energies = [], []
    image_forces = []
    fprimes_inds = torch.zeros((2, 0), dtype=torch.int64)
    fprimes_vals = torch.zeros(0)
    dim1_start = dim2_start = 0
    for image in training_data:
        fingerprints.append(image[0])
        energies.append(image[1])
        fprime = image[2].to_sparse()
        s_fprime_inds = fprime._indices() + torch.tensor([[dim1_start], [dim2_start]])
        s_fprime_vals = fprime._values().float()
        fprimes_inds = torch.cat((fprimes_inds, s_fprime_inds), dim=1)  # want: C
        fprimes_vals = torch.cat((fprimes_vals, s_fprime_vals))  # want: C
        dim1_start += fprime.shape[0]
        dim2_start += fprime.shape[1]
        pair = torch.cat((image[3][:1], image[3][-1:]))  # a fresh, fixed-size tensor per image: fine
        image_forces.append(pair)
    image_forces = torch.cat(image_forces).float()  # one concatenation after the loop: fine
    sparse_fprimes = torch.sparse_coo_tensor(fprimes_inds, fprimes_vals, (dim1_start, dim2_start), check_invariants=True)
    return fingerprints, energies, sparse_fprimes, image_forces


def factorize_data_fixed(training_data):
    primes = [image[2].to_sparse() for image in training_data]
    total_entries = sum(len(p._values()) for p in primes)
    fprimes_inds = torch.zeros((2, total_entries), dtype=torch.int64)
    fprimes_vals = torch.zeros(total_entries)
    previous = dim1_start = dim2_start = 0
    for fprime in primes:
        n = len(fprime._values())
        fprimes_inds[:, previous:previous + n] = fprime._indices() + torch.tensor([[dim1_start], [dim2_start]])
        fprimes_vals[previous:previous + n] = fprime._values()
        previous += n
        dim1_start += fprime.shape[0]
        dim2_start += fprime.shape[1]
    return torch.sparse_coo_tensor(fprimes_inds, fprimes_vals, (dim1_start, dim2_start), check_invariants=True)


if __name__ == "__main__":
    torch.manual_seed(0)
    data = []
    for n_atoms in (2, 3, 4):
        fp = torch.randn(n_atoms * 5, n_atoms * 3)
        fp[fp.abs() < 1] = 0
        data.append((torch.randn(n_atoms, 5), 1.0, fp, torch.randn(n_atoms, 3)))
    _, _, slow, forces = factorize_data(data)
    fast = factorize_data_fixed(data)
    assert torch.equal(slow.to_dense(), fast.to_dense()) and forces.shape == (6, 3)
    print("ok: same result; the first version re-copies the growing buffers every image")
