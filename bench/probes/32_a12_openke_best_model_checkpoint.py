# source: thunlp/OpenKE https://github.com/thunlp/OpenKE/pull/131 — Config.run() kept `best_model = self.trainModel.state_dict()` when validation hit@10 improved, but state_dict() only references the live embedding tensors, so the checkpoint and embedding matrix saved as "best" were always the last trained epoch; the PR deep-copies the state_dict.
import copy
import io

import torch
import torch.nn as nn


class TransE(nn.Module):
    def __init__(self, ent_tot, rel_tot, dim=16):
        super().__init__()
        self.ent_embeddings = nn.Embedding(ent_tot, dim)
        self.rel_embeddings = nn.Embedding(rel_tot, dim)

    def forward(self, h, t, r):
        return (self.ent_embeddings(h) + self.rel_embeddings(r) - self.ent_embeddings(t)).norm(p=1, dim=-1)


class Config:
    def __init__(self, triples, valid, ent_tot=20, rel_tot=3, train_times=12, valid_steps=1, alpha=0.5):
        torch.manual_seed(0)
        self.triples, self.valid_triples, self.ent_tot = triples, valid, ent_tot
        self.trainModel = TransE(ent_tot, rel_tot)
        self.optimizer = torch.optim.SGD(self.trainModel.parameters(), lr=alpha)
        self.train_times, self.valid_steps = train_times, valid_steps
        self.early_stopping_patience = 100
        self.saved = {}

    def train_one_step(self):
        h, t, r = self.triples.T
        t_neg = torch.randint(0, self.ent_tot, t.shape)
        self.optimizer.zero_grad()
        loss = torch.relu(1.0 + self.trainModel(h, t, r) - self.trainModel(h, t_neg, r)).mean()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    @torch.no_grad()
    def valid(self, model):
        h, t, r = self.valid_triples.T
        ents = torch.arange(self.ent_tot)
        scores = model(h[:, None].expand(-1, self.ent_tot), ents[None].expand(len(h), -1), r[:, None].expand(-1, self.ent_tot))
        rank = (scores < scores.gather(1, t[:, None])).sum(1)
        return (rank < 10).float().mean().item()

    def save_best_checkpoint(self, best_model):
        buf = io.BytesIO()
        torch.save(best_model, buf)
        self.saved["checkpoint"] = buf.getvalue()

    def run(self):
        best_epoch, best_hit10, best_model, bad_counts = 0, 0.0, None, 0
        for epoch in range(self.train_times):
            res = self.train_one_step()
            if (epoch + 1) % self.valid_steps == 0:
                hit10 = self.valid(self.trainModel)
                if hit10 > best_hit10:
                    best_hit10, best_epoch = hit10, epoch
                    best_model = self.trainModel.state_dict()  # want: A
                    bad_counts = 0
                else:
                    bad_counts += 1
                if bad_counts == self.early_stopping_patience:
                    break
        self.best_epoch, self.best_hit10 = best_epoch, best_hit10
        self.save_best_checkpoint(best_model)
        return best_model


# ---------------------------------------------------------------- fixed version
class ConfigFixed(Config):
    def run(self):
        best_epoch, best_hit10, best_model, bad_counts = 0, 0.0, None, 0
        for epoch in range(self.train_times):
            res = self.train_one_step()
            if (epoch + 1) % self.valid_steps == 0:
                hit10 = self.valid(self.trainModel)
                if hit10 > best_hit10:
                    best_hit10, best_epoch = hit10, epoch
                    best_model = copy.deepcopy(self.trainModel.state_dict())
                    bad_counts = 0
                else:
                    bad_counts += 1
                if bad_counts == self.early_stopping_patience:
                    break
        self.best_epoch, self.best_hit10 = best_epoch, best_hit10
        self.save_best_checkpoint(best_model)
        return best_model


def reloaded_hit10(cfg):
    model = TransE(cfg.ent_tot, 3)
    model.load_state_dict(torch.load(io.BytesIO(cfg.saved["checkpoint"])))
    return cfg.valid(model)


if __name__ == "__main__":
    g = torch.Generator().manual_seed(1)
    triples = torch.stack([torch.randint(0, 20, (64,), generator=g), torch.randint(0, 20, (64,), generator=g), torch.randint(0, 3, (64,), generator=g)], 1)
    valid = torch.stack([torch.randint(0, 20, (32,), generator=g), torch.randint(0, 20, (32,), generator=g), torch.randint(0, 3, (32,), generator=g)], 1)
    for cls in (Config, ConfigFixed):
        cfg = cls(triples, valid)
        cfg.run()
        print(cls.__name__, "best epoch", cfg.best_epoch, "best hit@10 %.3f" % cfg.best_hit10, "reloaded checkpoint hit@10 %.3f" % reloaded_hit10(cfg))
        if cls is ConfigFixed:
            assert abs(reloaded_hit10(cfg) - cfg.best_hit10) < 1e-6
        else:
            assert abs(reloaded_hit10(cfg) - cfg.valid(cfg.trainModel)) < 1e-6
