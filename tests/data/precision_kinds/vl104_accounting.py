# VL104: three counters that charge no cache of views: (1) bytes DMA-copied into the object's own
# region through data_ptr (vllm ec_connector/cpu/worker:285); (2) `.nbytes` of a transfer-spec record,
# no tensor held (mooncake/state.py:411). (Also seen: a counter only logged, flashinfer_ops.py:727.)
import torch


class Saver:
    def __init__(self, region: torch.Tensor):
        self._region = region
        self._save_bytes = 0
        self._copies: list = []

    def save(self, src: torch.Tensor) -> None:
        total_bytes = src.numel() * src.element_size()
        self._copies.append((src.data_ptr(), self._region.data_ptr(), total_bytes))
        self._save_bytes += total_bytes


class Scheduler:
    def __init__(self):
        self._resident: dict = {}
        self._resident_bytes = 0

    def mark_resident(self, record) -> None:
        self._resident[record.transfer_id] = None
        self._resident_bytes += record.spec.nbytes
