"""`--verify --device cuda`: the fixtures run on CUDA tensors and host syncs are confirmed.

Skipped cleanly on machines without a CUDA device (CI runs the CPU half in test_verify.py).
"""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, fixture_files, run_viewlint, verify_script

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

SYNC_CODES = ("VL401", "VL402", "VL403", "VL404", "VL405")
# Sites no run reaches (the function is never called).
NEVER_RUN = {("positive_transfer_in_forward.py", 24)}


@pytest.fixture(scope="module")
def cuda_findings() -> list[dict]:
    """All fixtures verified on CUDA in one command."""
    completed = run_viewlint("check", "--isolated", "--no-cache", "--select", "ALL", "--verify", "--device", "cuda",
                             "--output-format", "json", str(FIXTURES))
    assert completed.returncode in (0, 1), completed.stderr
    return json.loads(completed.stdout)


def test_fixtures_confirmed_on_cuda(cuda_findings: list[dict]) -> None:
    for finding in cuda_findings:
        verdict = finding["verdict"]
        place = (finding["filename"].rsplit("/", 1)[-1], finding["location"]["row"])
        if place in NEVER_RUN:
            continue
        assert verdict["status"] == "confirmed", (place, finding["code"], verdict)


def test_syncs_confirmed_with_counts_on_cuda(cuda_findings: list[dict]) -> None:
    syncs = [f for f in cuda_findings if f["code"] in SYNC_CODES and f["verdict"]["hits"]]
    assert syncs
    for finding in syncs:
        verdict = finding["verdict"]
        assert verdict["device"].startswith("cuda")
        assert verdict["evidence"].startswith(f"synced {verdict['hits']} times on cuda") or "synced" in verdict["evidence"]


def test_auto_picks_cuda() -> None:
    path = FIXTURES / "VL201" / "positive_inplace_on_gather.py"
    completed = run_viewlint("check", "--isolated", "--no-cache", "--verify", "--output-format", "json", str(path))
    findings = json.loads(completed.stdout)
    assert findings and all(f["verdict"]["device"].startswith("cuda") for f in findings)


def test_every_fixture_file_is_covered() -> None:
    assert fixture_files()


PINNED_TABLE = '''\
import torch


class Table:
    def __init__(self, n: int) -> None:
        self.rows = torch.zeros(n, 4, pin_memory=True)  # pinning needs a host tensor

    def put(self, idx: torch.Tensor, rows: torch.Tensor) -> None:
        self.rows[idx].copy_(rows)


if __name__ == "__main__":
    table = Table(8)
    table.put(torch.arange(2), torch.ones(2, 4))
'''


def test_a_file_that_raises_with_factories_on_the_gpu_runs_again_on_the_host(tmp_path) -> None:
    """`pin_memory=True` fails when factories allocate on the GPU: the file runs again as written."""
    [finding], completed = verify_script(tmp_path, "pinned.py", PINNED_TABLE, "VL201", device="cuda")
    assert finding["verdict"]["status"] == "confirmed", finding["verdict"]
    assert finding["verdict"]["device"] == "cpu"
    assert "with factories on the GPU; verified again with factories on the host" in completed.stderr
