# source: saprmarks/dictionary_learning https://github.com/saprmarks/dictionary_learning/commit/a346be9abc6644fd59ae493e44ef8fdbd1e339e2 — StandardTrainer.resample_neurons re-initialised dead SAE latents with `self.ae.encoder.weight[deads][:n_resample] = ...` (and the same for the decoder columns and encoder bias). Indexing with the boolean `deads` mask returns a copy, so the second `[:n_resample]` assignment wrote into that temporary and dead neurons were never resampled. The fix ("fixing neuron resampling") first trims the mask (`deads[deads.nonzero()[n_resample:]] = False`) and then assigns through a single mask index.
import torch as t
import torch.nn as nn


class AutoEncoder(nn.Module):
    def __init__(self, activation_dim, dict_size):
        super().__init__()
        self.dict_size = dict_size
        self.bias = nn.Parameter(t.zeros(activation_dim))
        self.encoder = nn.Linear(activation_dim, dict_size, bias=True)
        dec_weight = t.randn_like(self.encoder.weight.T)
        dec_weight = dec_weight / dec_weight.norm(dim=0, keepdim=True)
        self.decoder = nn.Linear(dict_size, activation_dim, bias=False)
        self.decoder.weight = nn.Parameter(dec_weight)

    def forward(self, x, output_features=False):
        f = nn.ReLU()(self.encoder(x - self.bias))
        x_hat = self.decoder(f) + self.bias
        return (x_hat, f) if output_features else x_hat


class StandardTrainer:
    def __init__(self, ae, lr=1e-3, l1_penalty=1e-1, resample_steps=None):
        self.ae = ae
        self.l1_penalty = l1_penalty
        self.resample_steps = resample_steps
        self.steps_since_active = t.zeros(ae.dict_size, dtype=int)
        self.optimizer = t.optim.Adam(ae.parameters(), lr=lr)

    def resample_neurons(self, deads, activations):
        with t.no_grad():
            if deads.sum() == 0: return
            # compute loss for each activation
            losses = (activations - self.ae(activations)).norm(dim=-1)
            # sample input to create encoder/decoder weights from
            n_resample = min([deads.sum(), losses.shape[0]])
            indices = t.multinomial(losses, num_samples=n_resample, replacement=False)
            sampled_vecs = activations[indices]
            # reset encoder/decoder weights for dead neurons
            alive_norm = self.ae.encoder.weight[~deads].norm(dim=-1).mean()
            self.ae.encoder.weight[deads][:n_resample] = sampled_vecs * alive_norm * 0.2  # want: B
            self.ae.decoder.weight[:,deads][:,:n_resample] = (sampled_vecs / sampled_vecs.norm(dim=-1, keepdim=True)).T  # want: B
            self.ae.encoder.bias[deads][:n_resample] = 0.  # want: B

            # reset Adam parameters for dead neurons
            state_dict = self.optimizer.state_dict()['state']
            state_dict[1]['exp_avg'][deads] = 0.
            state_dict[1]['exp_avg_sq'][deads] = 0.

    def loss(self, x):
        x_hat, f = self.ae(x, output_features=True)
        l2_loss = t.linalg.norm(x - x_hat, dim=-1).mean()
        l1_loss = f.norm(p=1, dim=-1).mean()
        deads = (f == 0).all(dim=0)
        self.steps_since_active[deads] += 1
        self.steps_since_active[~deads] = 0
        return l2_loss + self.l1_penalty * l1_loss

    def update(self, step, activations):
        self.optimizer.zero_grad()
        loss = self.loss(activations)
        loss.backward()
        self.optimizer.step()
        if self.resample_steps is not None and step % self.resample_steps == 0:
            self.resample_neurons(self.steps_since_active > self.resample_steps / 2, activations)


class StandardTrainerFixed(StandardTrainer):
    def resample_neurons(self, deads, activations):
        with t.no_grad():
            if deads.sum() == 0: return
            # compute loss for each activation
            losses = (activations - self.ae(activations)).norm(dim=-1)
            # sample input to create encoder/decoder weights from
            n_resample = min([deads.sum(), losses.shape[0]])
            indices = t.multinomial(losses, num_samples=n_resample, replacement=False)
            sampled_vecs = activations[indices]
            # get norm of the living neurons
            alive_norm = self.ae.encoder.weight[~deads].norm(dim=-1).mean()
            # resample first n_resample dead neurons
            deads[deads.nonzero()[n_resample:]] = False
            self.ae.encoder.weight[deads] = sampled_vecs * alive_norm * 0.2
            self.ae.decoder.weight[:,deads] = (sampled_vecs / sampled_vecs.norm(dim=-1, keepdim=True)).T
            self.ae.encoder.bias[deads] = 0.

            # reset Adam parameters for dead neurons
            state_dict = self.optimizer.state_dict()['state']
            state_dict[1]['exp_avg'][deads] = 0.
            state_dict[1]['exp_avg_sq'][deads] = 0.


def _run(trainer_cls):
    t.manual_seed(0)
    ae = AutoEncoder(activation_dim=8, dict_size=16)
    with t.no_grad():
        ae.encoder.bias[8:] = -100.0  # latents 8..15 never fire
    trainer = trainer_cls(ae, resample_steps=4)
    acts = t.randn(32, 8)
    for step in range(1, 4):
        trainer.update(step, acts)
    deads = trainer.steps_since_active > trainer.resample_steps / 2
    before = ae.encoder.weight[deads].clone()
    trainer.update(4, acts)
    return deads, before, ae.encoder.weight[deads].detach().clone(), ae.encoder.bias.detach().clone()


if __name__ == "__main__":
    deads, before, after, bias = _run(StandardTrainer)
    assert deads.sum() > 0
    assert t.equal(before, after), "buggy resample should leave dead encoder rows untouched"
    assert (bias[deads] == -100.0).all()

    deads, before, after, bias = _run(StandardTrainerFixed)
    assert not t.allclose(before, after), "fixed resample rewrites dead encoder rows"
    assert (bias[deads] == 0.0).all()
    print("ok")
