"""What a user sees on a terminal and in a pipe: colour, the progress bar, the per-rule summary,
`--statistics` fixable counts, a closed pipe, `rule --all`, `--help`, and the verify summary's wording."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from conftest import run_viewlint
from viewlint.diagnostics import Diagnostic, Location, Verdict
from viewlint.terminal import colour_enabled
from viewlint.verify.runner import VerifyResult

# VL201 twice (one with a fix, one without), VL301 (a safe fix), VL401 (no fix).
MIXED = '''\
import torch
import torch.nn as nn


def write_rows(buf: torch.Tensor, rows: list[int], value: torch.Tensor) -> None:
    buf[rows].copy_(value)
    torch.nn.init.zeros_(buf[rows])


def fresh() -> torch.Tensor:
    return torch.zeros(4, 8).contiguous()


class Head(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum().item() > 0:
            return x
        return -x
'''
ESCAPE = "\x1b["
posix_only = pytest.mark.skipif(os.name != "posix", reason="needs a pseudo-terminal")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "mixed.py").write_text(MIXED)
    return tmp_path


def _environment(**changes: str | None) -> dict[str, str]:
    env = {**os.environ}
    for name in ("NO_COLOR", "FORCE_COLOR", "VIEWLINT_OUTPUT_FORMAT"):
        env.pop(name, None)
    env["TERM"] = "xterm"
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def on_terminal(args: list[str], cwd: Path, *, streams: tuple[str, ...], **env: str | None) -> tuple[int, str, str, str]:
    """Run viewlint with the named streams ("stdout", "stderr") on one pseudo-terminal; the exit
    code, what the terminal showed, and what reached the other streams' pipes."""
    import pty

    master, slave = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "viewlint", *args], cwd=cwd, env=_environment(**env),
                               stdin=subprocess.DEVNULL,
                               stdout=slave if "stdout" in streams else subprocess.PIPE,
                               stderr=slave if "stderr" in streams else subprocess.PIPE)
    os.close(slave)
    shown = bytearray()

    def read_terminal() -> None:
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: every writer is gone
                return
            if not chunk:
                return
            shown.extend(chunk)

    reader = threading.Thread(target=read_terminal)
    reader.start()
    out, err = process.communicate(timeout=300)
    reader.join(timeout=60)
    os.close(master)
    terminal = shown.decode("utf-8", "replace").replace("\r\n", "\n")
    return process.returncode, terminal, (out or b"").decode(), (err or b"").decode()


# --- colour ------------------------------------------------------------------------------------


class _Terminal:
    def isatty(self) -> bool:
        return True


class _Pipe:
    def isatty(self) -> bool:
        return False


@pytest.mark.parametrize(
    ("choice", "stream", "env", "expected"),
    [
        ("auto", _Terminal(), {}, True),
        ("auto", _Pipe(), {}, False),
        ("auto", _Terminal(), {"NO_COLOR": "1"}, False),
        ("auto", _Terminal(), {"NO_COLOR": ""}, True),  # present but empty: no effect (no-color.org)
        ("auto", _Pipe(), {"FORCE_COLOR": "1"}, True),
        ("auto", _Terminal(), {"NO_COLOR": "1", "FORCE_COLOR": "1"}, False),
        ("auto", _Terminal(), {"TERM": "dumb"}, False),
        ("always", _Pipe(), {"NO_COLOR": "1"}, True),  # the flag beats the environment, as in Ruff
        ("never", _Terminal(), {"FORCE_COLOR": "1"}, False),
    ],
)
def test_colour_choice(monkeypatch: pytest.MonkeyPatch, choice: str, stream: object, env: dict[str, str], expected: bool) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert colour_enabled(choice, stream) is expected  # type: ignore[arg-type]


def test_piped_output_has_no_escape_codes_and_no_progress_bar(project: Path) -> None:
    result = run_viewlint("--no-cache", "mixed.py", cwd=project, env=_environment())
    assert result.returncode == 1
    assert "mixed.py:11:12: VL301" in result.stdout
    assert ESCAPE not in result.stdout + result.stderr
    assert "\r" not in result.stderr and "files" not in result.stderr


def test_color_always_colours_the_findings_but_never_an_output_file(project: Path) -> None:
    result = run_viewlint("--no-cache", "--color", "always", "--select", "VL301", "mixed.py", cwd=project, env=_environment())
    assert result.stdout.splitlines()[0].startswith(
        "\x1b[1mmixed.py\x1b[0m\x1b[36m:\x1b[0m11\x1b[36m:\x1b[0m12\x1b[36m:\x1b[0m \x1b[1;31mVL301\x1b[0m \x1b[36m[*]\x1b[0m `torch.zeros(4, 8)`")
    written = run_viewlint("--no-cache", "--color", "always", "-o", "out.txt", "mixed.py", cwd=project, env=_environment())
    assert written.returncode == 1 and written.stdout == ""
    assert ESCAPE not in (project / "out.txt").read_text()
    assert "mixed.py:11:12: VL301 [*]" in (project / "out.txt").read_text()


@posix_only
def test_a_terminal_gets_colour_unless_no_color_or_never(project: Path) -> None:
    code, shown, _, _ = on_terminal(["--no-cache", "--select", "VL301", "mixed.py"], project, streams=("stdout",))
    assert code == 1
    assert "\x1b[1;31mVL301\x1b[0m" in shown
    for args, env in ((["--color", "never"], {}), ([], {"NO_COLOR": "1"})):
        code, shown, _, _ = on_terminal(["--no-cache", *args, "--select", "VL301", "mixed.py"], project,
                                        streams=("stdout",), **env)
        assert code == 1
        assert "mixed.py:11:12: VL301 [*] `torch.zeros(4, 8)`" in shown and ESCAPE not in shown


# --- progress bar ------------------------------------------------------------------------------


@posix_only
def test_a_terminal_sees_a_progress_bar_that_is_erased_before_the_summary(tmp_path: Path) -> None:
    for i in range(40):
        (tmp_path / f"m{i:02}.py").write_text("import torch\n\n\ndef f(x: torch.Tensor) -> torch.Tensor:\n    return x + 1\n")
    (tmp_path / "mixed.py").write_text(MIXED)
    (tmp_path / "pyproject.toml").write_text('[tool.viewlint]\nextend-select = ["VL401"]\n')
    code, shown, out, _ = on_terminal(["--no-cache", "-j", "1", "."], tmp_path, streams=("stderr",))
    assert code == 1
    assert "mixed.py:11:12: VL301" in out and ESCAPE not in out  # stdout is a pipe: plain
    assert shown.startswith("\r[..............................]  0/41 files")
    assert "\r[##############################] 41/41 files\r\x1b[2KFound 4 findings" in shown
    quiet_code, quiet_shown, _, _ = on_terminal(["--no-cache", "-j", "1", "-q", "."], tmp_path, streams=("stderr",))
    assert quiet_code == 1 and quiet_shown == ""  # -q: no bar, no summary


# --- summaries ---------------------------------------------------------------------------------


def test_summary_counts_each_rule_and_its_fixes_when_more_than_one_rule_fired(project: Path) -> None:
    result = run_viewlint("--no-cache", "--select", "VL301,VL401", "mixed.py", cwd=project, env=_environment())
    assert result.returncode == 1
    assert result.stderr == ("Found 2 findings (1 fixable).\n"
                             "  1  VL301  redundant-contiguous (1 fixable)\n"
                             "  1  VL401  host-sync-scalar\n")
    one_rule = run_viewlint("--no-cache", "--select", "VL301", "mixed.py", cwd=project, env=_environment())
    assert one_rule.stderr == "Found 1 finding (1 fixable).\n"
    quiet = run_viewlint("--no-cache", "-q", "--select", "VL301,VL401", "mixed.py", cwd=project, env=_environment())
    assert quiet.stderr == ""


def test_statistics_mark_partly_fixable_rules_and_count_fixes(project: Path) -> None:
    # Under --unsafe-fixes one of the two VL201 findings has a fix --fix would apply, the other none.
    result = run_viewlint("--no-cache", "--statistics", "--unsafe-fixes", "--select", "VL201,VL301", "mixed.py",
                          cwd=project, env=_environment())
    assert result.stdout.splitlines() == ["    2\tVL201\t[~] inplace-on-advanced-index", "    1\tVL301\t[*] redundant-contiguous"]
    as_json = run_viewlint("--no-cache", "--statistics", "--unsafe-fixes", "--output-format", "json",
                           "--select", "VL201,VL301", "mixed.py", cwd=project, env=_environment())
    rows = {row["code"]: (row["count"], row["fixable"], row["fixable_count"]) for row in json.loads(as_json.stdout)}
    assert rows == {"VL201": (2, True, 1), "VL301": (1, True, 1)}


# --- a closed pipe -----------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "expected"), [
    (["--show-files", "."], 0),
    (["--no-cache", "."], 1),  # findings: the exit code is the run's, not the pipe's
    (["rule", "--all"], 0),
])
def test_a_reader_that_goes_away_ends_the_output_quietly(project: Path, args: list[str], expected: int) -> None:
    read, write = os.pipe()
    os.close(read)  # `| head` that already exited
    try:
        result = subprocess.run([sys.executable, "-m", "viewlint", *args], cwd=project, stdout=write,
                                stderr=subprocess.PIPE, text=True, env=_environment(), timeout=300)
    finally:
        os.close(write)
    assert result.returncode == expected, result.stderr
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr
    assert "Broken pipe" not in result.stderr and "BrokenPipe" not in result.stderr


# --- rule --all, --help ------------------------------------------------------------------------


def test_rule_all_lists_every_code_the_reserved_ones_first() -> None:
    text = run_viewlint("rule", "--all")
    assert text.returncode == 0
    lines = text.stdout.splitlines()
    assert [line.split()[0] for line in lines[:3]] == ["VL000", "VL001", "VL002"]
    assert lines[0].split()[1:4] == ["on", "fix:none", "syntax-error:"]
    as_json = json.loads(run_viewlint("rule", "--all", "--output-format", "json").stdout)
    assert [row["code"] for row in as_json] == [line.split()[0] for line in lines]
    assert as_json[2] == {**as_json[2], "code": "VL002", "name": "internal-error", "fix": "none", "default_enabled": True}


def test_help_says_bare_paths_mean_check() -> None:
    result = run_viewlint("--help")
    assert result.returncode == 0
    assert "`viewlint PATHS` is short for `viewlint check PATHS`" in " ".join(result.stdout.split())
    check_help = " ".join(run_viewlint("check", "--help").stdout.split())
    assert "--color [auto|always|never]" in check_help


# --- the verify summary's wording --------------------------------------------------------------


def _judged(status: str, row: int) -> Diagnostic:
    return Diagnostic("m.py", "VL201", "inplace-on-advanced-index", "msg", Location(row, 1), Location(row, 2),
                      verdict=Verdict(status))


def test_verify_summary_counts_in_plural_and_says_when_nothing_ran_on_a_device() -> None:
    nothing_ran = VerifyResult([_judged("error", row) for row in (1, 2, 3)])
    assert nothing_ran.messages()[-1] == "3 errors (no flagged code ran on a device)"
    ran = VerifyResult([_judged("confirmed", 1), _judged("error", 2)], device="cpu")
    assert ran.messages()[-1] == "1 confirmed, 1 error (device: cpu)"
