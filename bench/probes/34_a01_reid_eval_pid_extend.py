# source: KaiyangZhou/deep-person-reid https://github.com/KaiyangZhou/deep-person-reid/pull/493 — Engine._evaluate's _feature_extraction did `pids_.extend(pids)` / `camids_.extend(camids)`, so every id kept in the lists was a 0-d view pinning the whole per-batch label tensor; the fix extends with `pids.tolist()` / `camids.tolist()`.
import numpy as np
import torch
import torch.nn as nn


class Engine(object):

    def __init__(self, model, use_gpu=False):
        self.model = model
        self.use_gpu = use_gpu

    def parse_data_for_eval(self, data):
        imgs = data['img']
        pids = data['pid']
        camids = data['camid']
        return imgs, pids, camids

    def extract_features(self, input):
        return self.model(input)

    def _evaluate(self, query_loader=None, gallery_loader=None):

        def _feature_extraction(data_loader):
            f_, pids_, camids_ = [], [], []
            for batch_idx, data in enumerate(data_loader):
                imgs, pids, camids = self.parse_data_for_eval(data)
                if self.use_gpu:
                    imgs = imgs.cuda()
                features = self.extract_features(imgs)
                features = features.cpu().clone()
                f_.append(features)
                pids_.extend(pids)  # want: A
                camids_.extend(camids)  # want: A
            f_ = torch.cat(f_, 0)
            pids_ = np.asarray(pids_)
            camids_ = np.asarray(camids_)
            return f_, pids_, camids_

        with torch.no_grad():
            qf, q_pids, q_camids = _feature_extraction(query_loader)
            gf, g_pids, g_camids = _feature_extraction(gallery_loader)
        return qf, q_pids, gf, g_pids


class EngineFixed(Engine):

    def collect(self, data_loader):
        f_, pids_, camids_ = [], [], []
        for batch_idx, data in enumerate(data_loader):
            imgs, pids, camids = self.parse_data_for_eval(data)
            features = self.extract_features(imgs)
            features = features.cpu().clone()
            f_.append(features)
            pids_.extend(pids.tolist())
            camids_.extend(camids.tolist())
        return f_, pids_, camids_


def collect_buggy(engine, data_loader):
    # same loop as the nested _feature_extraction, returning the raw lists
    f_, pids_, camids_ = [], [], []
    for batch_idx, data in enumerate(data_loader):
        imgs, pids, camids = engine.parse_data_for_eval(data)
        features = engine.extract_features(imgs)
        features = features.cpu().clone()
        f_.append(features)
        pids_.extend(pids)  # want: A
        camids_.extend(camids)  # want: A
    return f_, pids_, camids_


def make_loader(n_batches=4, bs=32):
    out = []
    for i in range(n_batches):
        out.append({
            'img': torch.randn(bs, 3, 8, 4),
            'pid': torch.randint(0, 100, (bs,)),
            'camid': torch.randint(0, 6, (bs,)),
        })
    return out


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 4, 16)).eval()
    loader = make_loader()
    engine = Engine(model)
    qf, q_pids, gf, g_pids = engine._evaluate(loader, loader)
    print('evaluate ok', qf.shape, q_pids.shape)

    _, pids_b, _ = collect_buggy(engine, loader)
    _, pids_f, _ = EngineFixed(model).collect(loader)
    assert [int(p) for p in pids_b] == pids_f
    elem = pids_b[0]
    print('buggy list item type:', type(elem).__name__, 'dim', elem.dim(),
          'payload', elem.element_size(), 'B, pinned storage', elem.untyped_storage().nbytes(), 'B')
    pinned = {p.untyped_storage().data_ptr(): p.untyped_storage().nbytes() for p in pids_b}
    print('buggy: %d 0-d views keep %d storages (%d B) alive' % (len(pids_b), len(pinned), sum(pinned.values())))
    print('fixed list item type:', type(pids_f[0]).__name__)
    assert elem.untyped_storage().nbytes() > elem.element_size()
