# source: webdataset/webdataset https://github.com/webdataset/webdataset/issues/261 — writing a TensorDict to a TarWriter row by row `torch.save`d each row tensor `v` (a view into the full `[N, 30]` column), so every sample serialized the whole column and a 2.4 MB dataset became a 47 GB tar; the remedy was to serialize an owning copy of each row (`v.clone()`).
import io

import torch


class RowDict:
    """Minimal stand-in for TensorDict: iterating yields per-row views."""

    def __init__(self, source, batch_size):
        self.source = source
        self.batch_size = batch_size

    def __len__(self):
        return self.batch_size

    def __iter__(self):
        for i in range(self.batch_size):
            yield {k: v[i] for k, v in self.source.items()}


class TarWriter:
    def __init__(self):
        self.members = []
        self.nbytes = 0

    def write(self, obj):
        self.members.append(obj["__key__"])
        self.nbytes += sum(len(v) for k, v in obj.items() if k != "__key__")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def encode_rows(tensordict, sink):
    for i, d in enumerate(tensordict):
        obj = {"__key__": f"{i}"}
        for k, v in d.items():
            buffer = io.BytesIO()
            torch.save(v, buffer)  # want: A
            obj[f"{k}.pth"] = buffer.getvalue()
        sink.write(obj)


def encode_rows_fixed(tensordict, sink):
    for i, d in enumerate(tensordict):
        obj = {"__key__": f"{i}"}
        for k, v in d.items():
            buffer = io.BytesIO()
            torch.save(v.clone(), buffer)
            obj[f"{k}.pth"] = buffer.getvalue()
        sink.write(obj)


if __name__ == "__main__":
    N = 400
    inps = torch.rand(N, 30)
    tgts = torch.arange(N, dtype=torch.float32)
    td = RowDict(dict(inps=inps, tgts=tgts), batch_size=N)
    for fn in (encode_rows, encode_rows_fixed):
        with TarWriter() as sink:
            fn(td, sink)
        print(f"{fn.__name__:18s} tar payload {sink.nbytes/1e6:7.2f} MB for {(inps.numel()+tgts.numel())*4/1e6:.3f} MB of data")
