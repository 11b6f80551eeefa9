"""`--verify`: every fixture finding is measured on real tensors (CPU), look-alikes are refuted,
and broken scripts (raise, hang, sys.exit, os._exit) are reported without stopping the run.

One child process verifies all fixtures (plus the look-alikes) for the whole module, so torch
is imported once for most of these tests.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, fixture_files, run_viewlint, verify_script
from viewlint.diagnostics import Diagnostic, Location
from viewlint.engine import lint_path
from viewlint.settings import Settings
from viewlint.verify.instrument import PLANNERS, instrument
from viewlint.verify.runner import VerifyResult, verify_command, verify_scripts

torch = pytest.importorskip("torch")

DATA = Path(__file__).parent / "data"
SYNC_CODES = ("VL401", "VL402", "VL403", "VL404", "VL405")
# Fixture sites a CPU run cannot reach, and why: anything else must be measured.
NOT_RUN_ON_CPU = {
    ("positive_move_then_cast.py", 7): "`upload` runs only when CUDA is available (on the CPU its move is a no-op)",
    ("positive_move_then_cast.py", 11): "`upload_cuda` runs only when CUDA is available",
    ("positive_transfer_in_forward.py", 24): "the `torch.compile`d function is never called",
    ("positive_convert_then_slice.py", 22): "`forward_moved` runs only when CUDA is available (on the CPU its move is a no-op)",
}
try:
    import numpy  # noqa: F401 - torch runs without NumPy; the array one finding is about needs it
except ImportError:
    NOT_RUN_ON_CPU[("positive_host_round_trip.py", 33)] = "the NumPy half of the demo runs only where NumPy is installed"


def finding_at(path: Path, code: str, snippet: str) -> Diagnostic:
    """A finding of ``code`` on the first occurrence of ``snippet`` (one expression on one line).

    Used to ask the probes about look-alikes the rules rightly leave alone: the measurement
    must then say the problem is not there.
    """
    for row, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        column = line.find(snippet)
        if column >= 0:
            return Diagnostic(str(path), code, "look-alike", "look-alike", Location(row, column + 1),
                              Location(row, column + 1 + len(snippet)))
    raise AssertionError(f"{snippet!r} not in {path}")


LOOKALIKES = [
    ("VL101/negative_owned_copies_and_designed_views.py", "VL101", "x[:, 0].clone()", "owns its storage"),
    ("VL101/negative_owned_copies_and_designed_views.py", "VL101", "h.detach()", "owns its storage"),
    ("VL201/negative_basic_index_writes_through.py", "VL201", "buf[1:3].copy_(torch.ones(2, 4))", "shares storage with 'buf'"),
    ("VL203/negative_conversion_used_or_no_copy.py", "VL203", "buf.reshape(-1).add_(1.0)", "shares storage with 'buf'"),
    ("VL301/negative_layout_needed.py", "VL301", "x.t().contiguous()", "input non-contiguous"),
    ("VL307/negative_data_that_is_not_a_tensor.py", "VL307", "torch.tensor(values)", "`values` was not a tensor (list)"),
    ("VL105/negative_copied_or_latest.py", "VL105", "copy.deepcopy(model.state_dict())", "unchanged at the end of the run"),
    ("VL314/negative_host_round_trip.py", "VL314", "torch.tensor(lengths_cpu).to(x.device)", "`lengths_cpu` was not a NumPy array (list)"),
]


def _lint(paths: list[Path]) -> list[Diagnostic]:
    settings = Settings(select=("ALL",))
    return [d for p in paths for d in lint_path(p, str(p), settings).diagnostics]


@pytest.fixture(scope="module")
def fixtures_verified() -> tuple[VerifyResult, list[Diagnostic]]:
    """Every fixture finding, plus the look-alikes, verified in one child process."""
    lookalikes = [finding_at(FIXTURES / rel, code, snippet) for rel, code, snippet, _ in LOOKALIKES]
    found = _lint(fixture_files())
    result = verify_scripts([*found, *lookalikes], timeout=120, device="cpu")
    return result, lookalikes


def _verdicts_of(result: VerifyResult, path: Path) -> list[Diagnostic]:
    return [d for d in result.diagnostics if d.path == str(path) and d.name != "look-alike"]


@pytest.mark.parametrize("path", [p for p in fixture_files()], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixture_findings_are_confirmed(fixtures_verified, path: Path) -> None:
    result, _ = fixtures_verified
    for diagnostic in _verdicts_of(result, path):
        verdict = diagnostic.verdict
        assert verdict is not None, diagnostic
        if (path.name, diagnostic.start.row) in NOT_RUN_ON_CPU:
            assert verdict.status == "not reached", verdict
            continue
        expected = "cpu-only" if diagnostic.code in SYNC_CODES else "confirmed"
        assert verdict.status == expected, f"{diagnostic.code} at {path.name}:{diagnostic.start.row}: {verdict}"
        assert verdict.hits >= 1 and verdict.evidence and verdict.device == "cpu"
        if expected == "cpu-only":
            assert verdict.evidence.startswith("would sync on cuda; ran on cpu")


def test_every_rule_has_a_probe() -> None:
    from viewlint.registry import all_rules

    assert set(all_rules()) <= set(PLANNERS)


def test_seed_batch_pins_exactly_its_storage(fixtures_verified) -> None:
    """The SGLang seed: a [100, 4096] bf16 piece of a [1000, 4096] batch, cached."""
    result, _ = fixtures_verified
    path = str(FIXTURES / "VL101" / "positive_split_pieces_cached.py")
    site = next(s for s in result.sites.values() if s.diagnostic.path == path and s.diagnostic.code == "VL101")
    worst = result.records[site.site_id]["worst"]
    assert (worst["storage"], worst["payload"]) == (8_192_000, 819_200)
    verdict = next(d.verdict for d in result.diagnostics if d.path == path and d.start == site.diagnostic.start)
    assert verdict is not None and verdict.evidence.startswith("pins 7.81 MiB for a 0.78 MiB payload (10.0x)")


@pytest.mark.parametrize("rel, code, snippet, evidence", LOOKALIKES, ids=[f"{c}:{s}" for _, c, s, _ in LOOKALIKES])
def test_lookalikes_are_refuted(fixtures_verified, rel: str, code: str, snippet: str, evidence: str) -> None:
    result, _ = fixtures_verified
    asked = finding_at(FIXTURES / rel, code, snippet)
    verdict = next(d.verdict for d in result.diagnostics
                   if d.name == "look-alike" and (d.path, d.code, d.start) == (asked.path, asked.code, asked.start))
    assert verdict is not None and verdict.status == "refuted", verdict
    assert evidence in verdict.evidence


def test_instrumentation_keeps_every_line(tmp_path: Path) -> None:
    """Probes wrap expressions in place: same line count, untouched lines identical."""
    for path in fixture_files():
        source = path.read_text(encoding="utf-8")
        found = [d for d in _lint([path]) if d.code in PLANNERS]
        rewritten = instrument(str(path), source, found)
        old, new = source.split("\n"), rewritten.source.split("\n")
        assert len(old) == len(new)
        for row, (a, b) in enumerate(zip(old, new), start=1):
            if a != b:
                assert "__viewlint__." in b, (path, row, b)
        compile(rewritten.source, str(path), "exec")


def test_broken_scripts_are_reported_and_the_run_continues() -> None:
    """raise, hang (2 s timeout), sys.exit and os._exit each become a per-file message."""
    folder = DATA / "verify_scripts"
    found = _lint(sorted(folder.glob("*.py")))
    result = verify_scripts(found, timeout=2, device="cpu")
    by_place = {(Path(d.path).name, d.start.row): d.verdict for d in result.diagnostics}
    outcomes = {Path(path).name: outcome for path, outcome in result.files.items()}

    assert outcomes["a_raises.py"].status == "raised"
    assert by_place[("a_raises.py", 6)].status == "confirmed"  # measured before the error
    assert by_place[("a_raises.py", 8)].status == "error"
    assert "ValueError: boom (line 7)" in by_place[("a_raises.py", 8)].evidence

    assert outcomes["b_hangs.py"].status == "timeout"
    assert by_place[("b_hangs.py", 8)].status == "confirmed"  # reported by the stopped child
    assert by_place[("b_hangs.py", 11)].evidence.startswith("timed out after 2 s")

    assert outcomes["c_exits.py"].status == "exit"
    assert "sys.exit(3)" in by_place[("c_exits.py", 10)].evidence
    assert outcomes["d_dies.py"].status == "died"
    assert "status 7" in by_place[("d_dies.py", 10)].evidence

    assert outcomes["e_runs.py"].status == "ok"
    assert by_place[("e_runs.py", 6)].status == "confirmed"


REFUTED_ONLY = '''\
import sys
from pathlib import Path

import torch


def flatten_and_clear(x: torch.Tensor) -> None:
    x.reshape(-1).zero_()


if __name__ == "__main__":
    Path(sys.argv[0]).with_suffix(".ran").write_text("ran")
    x = torch.ones(4, 4)
    flatten_and_clear(x)
    assert float(x.sum()) == 0.0  # contiguous: reshape was a view, the write landed
'''


def test_cli_runs_code_only_with_verify_and_refuted_findings_pass(tmp_path: Path) -> None:
    script = tmp_path / "flatten.py"
    script.write_text(REFUTED_ONLY, encoding="utf-8")
    marker = script.with_suffix(".ran")

    plain = run_viewlint("check", "--isolated", "--no-cache", "--select", "VL203", str(script))
    assert plain.returncode == 1 and "VL203" in plain.stdout
    assert not marker.exists(), "linting must never run the user's code"

    verified = run_viewlint("check", "--isolated", "--no-cache", "--select", "VL203", "--verify", "--device", "cpu",
                            "--output-format", "json", str(script))
    assert verified.returncode == 0, verified.stderr  # the only finding is refuted
    [finding] = json.loads(verified.stdout)
    assert finding["verdict"]["status"] == "refuted"
    assert finding["verdict"]["evidence"].startswith("result shares storage with 'x'")
    assert finding["verdict"]["device"] == "cpu" and finding["verdict"]["hits"] == 1
    assert marker.exists() and script.read_text(encoding="utf-8") == REFUTED_ONLY  # ran; file untouched


def test_verify_run_python_file_confirms_what_check_verify_confirms(fixtures_verified, tmp_path: Path) -> None:
    """`verify --run "python FILE"` instruments FILE as the script it runs: every fixture gets the
    verdicts `check --verify` gave it, and nothing is written where the command runs."""
    checked, _ = fixtures_verified
    found = _lint(fixture_files())
    scripts = sorted({d.path for d in found if d.code in PLANNERS})
    # `python FILE` once per fixture, a few at a time (each process imports torch).
    listing = " ".join(shlex.quote(path) for path in scripts)
    workers = min(4, os.cpu_count() or 1)
    command = f"printf '%s\\n' {listing} | xargs -n 1 -P {workers} {shlex.quote(sys.executable)}"
    monkeypatch = pytest.MonkeyPatch()
    monkeypatch.chdir(tmp_path)  # the command runs in the current folder
    try:
        ran = verify_command(found, command, timeout=900, device="cpu")
    finally:
        monkeypatch.undo()
    expected = {(d.path, d.code, d.start): d.verdict for d in checked.diagnostics if d.name != "look-alike"}
    assert len(ran.diagnostics) == len(expected)
    for diagnostic in ran.diagnostics:
        want, got = expected[(diagnostic.path, diagnostic.code, diagnostic.start)], diagnostic.verdict
        assert want is not None and got is not None
        place = f"{diagnostic.code} at {diagnostic.path}:{diagnostic.start.row}"
        assert got.status == want.status, f"{place}: check --verify {want}, verify --run {got}"
        if want.status != "not reached":  # the reasons differ: a script, a command
            assert (got.evidence, got.hits) == (want.evidence, want.hits), place
    assert sum(d.verdict.status == "confirmed" for d in ran.diagnostics if d.verdict) >= 100
    assert list(tmp_path.iterdir()) == []


def test_verify_run_python_file_keeps_the_scripts_exit_status_and_traceback() -> None:
    """A script that raises or calls sys.exit ends the command as it would without viewlint."""
    folder = DATA / "verify_scripts"
    raised = run_viewlint("verify", "--isolated", "--no-cache", "--device", "cpu", "--output-format", "json",
                          "--run", f"{sys.executable} a_raises.py", "a_raises.py", cwd=folder)
    assert "exited with status 1" in raised.stderr
    assert 'a_raises.py", line 7, in <module>' in raised.stderr and "ValueError: boom" in raised.stderr
    assert "hook.py" not in raised.stderr  # the traceback shows the user's frames only
    rows = {f["location"]["row"]: f["verdict"]["status"] for f in json.loads(raised.stdout)}
    assert rows == {6: "confirmed", 8: "not reached"}

    exited = run_viewlint("verify", "--isolated", "--no-cache", "--device", "cpu", "--run",
                          f"{sys.executable} c_exits.py", "c_exits.py", cwd=folder)
    assert "exited with status 3" in exited.stderr


def test_verify_run_confirms_a_finding_inside_a_package() -> None:
    """`viewlint verify --run "pytest ..." vpkg`: the package's own test reaches two of its three findings."""
    project = DATA / "verify_pkg"
    command = f"{sys.executable} -m pytest -q -p no:cacheprovider check_cache.py"
    completed = run_viewlint("verify", "--isolated", "--no-cache", "--select", "ALL", "--output-format", "json",
                             "--run", command, "vpkg", cwd=project)
    assert completed.returncode == 1, completed.stderr
    verdicts = {(f["code"], f["location"]["row"]): f["verdict"] for f in json.loads(completed.stdout)}
    assert verdicts[("VL101", 12)]["status"] == "confirmed"
    assert verdicts[("VL101", 12)]["evidence"].startswith("pins 32.00 KiB for a 64 B payload (512.0x)")
    assert verdicts[("VL201", 16)] == {"status": "confirmed", "evidence": "write lost: result does not share storage with 'buf'",
                                       "device": "cpu", "hits": 1}
    assert verdicts[("VL201", 20)]["status"] == "not reached"
    assert "2 passed" in completed.stderr and "exited with status 0" in completed.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error given when there is no GPU")
def test_device_cuda_without_a_gpu_is_a_clear_error() -> None:
    path = FIXTURES / "VL201" / "positive_inplace_on_gather.py"
    completed = run_viewlint("check", "--isolated", "--no-cache", "--verify", "--device", "cuda", str(path))
    assert completed.returncode == 2
    assert "--device cuda: no CUDA device is available" in completed.stderr


def test_verify_needs_no_torch_in_the_linter_process() -> None:
    """The viewlint process imports the verify machinery without torch (only the child imports it)."""
    code = ("import sys, viewlint.verify.runner, viewlint.verify.instrument, viewlint.verify.verdicts, "
            "viewlint.verify.hook; assert 'torch' not in sys.modules")
    import subprocess

    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


FACTORY_CHAIN = '''\
import torch


def upload(values: list[float], device: torch.device) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64).to(device).half()


if __name__ == "__main__":
    assert upload([0.5] * 256, torch.device("meta")).dtype == torch.half
'''


def test_a_chain_from_a_factory_is_measured_from_the_factorys_tensor(tmp_path: Path) -> None:
    """`torch.tensor(v).to(d).half()`: the chain starts at the factory's tensor (the `torch` module
    it is called on is no tensor), so the move and the cast are the two copies measured."""
    [finding], _ = verify_script(tmp_path, "upload.py", FACTORY_CHAIN, "VL305")
    assert finding["verdict"]["status"] == "confirmed", finding["verdict"]
    assert finding["verdict"]["evidence"].startswith("2 copies per call: 2.00 KiB then 512 B")


SEES_A_GPU = '''\
import torch


def head(x: torch.Tensor) -> float:  # viewlint: hot
    return x.sum().item()


if __name__ == "__main__":
    print(head(torch.ones(3)))
    assert not torch.cuda.is_available(), "--device cpu hides the GPU"
'''


def test_device_cpu_hides_the_gpu_from_the_files(tmp_path: Path) -> None:
    """`--device cpu` runs the files as on a machine without a GPU, also where there is one."""
    findings, _ = verify_script(tmp_path, "sees.py", SEES_A_GPU, "VL401")
    assert findings and all(f["verdict"]["status"] == "cpu-only" for f in findings), findings


CHUNKED_INPLACE = '''\
import torch


def add_in_chunks(x: torch.Tensor) -> torch.Tensor:
    flat = x.flatten(0, 1)
    for piece in torch.split(flat, 2):
        piece.add_(1.0)
    return x


if __name__ == "__main__":
    x = torch.zeros(3, 4, 5)
    y = add_in_chunks(x{layout})
    print(float(y.sum()))
'''


@pytest.mark.parametrize(("layout", "status", "evidence"), [
    (".transpose(0, 1)", "confirmed", "write lost: result does not share storage with 'x' (6/6 calls)"),
    ("", "refuted", "result shares storage with 'x'"),
])
def test_a_write_through_a_loops_pieces_is_measured_against_the_buffer(tmp_path: Path, layout: str, status: str,
                                                                         evidence: str) -> None:
    """`for piece in torch.split(x.flatten(0, 1), n): piece.add_(1)`: the buffer is read once before
    the loop, and every pass's write is compared with it."""
    [finding], _ = verify_script(tmp_path, "chunks.py", CHUNKED_INPLACE.format(layout=layout), "VL203")
    assert finding["verdict"]["status"] == status, finding["verdict"]
    assert finding["verdict"]["evidence"].startswith(evidence)
