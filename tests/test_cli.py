"""The command line as a user meets it: exit codes, flags, output formats, stdin, config, `viewlint rule`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, ClassVar

import libcst as cst
import pytest

from conftest import run_viewlint

import viewlint
import viewlint.engine as engine
import viewlint.registry as registry
from viewlint.cli import run_check
from viewlint.rule import Rule

BAD = (
    "import torch\n"
    "\n"
    "\n"
    "def write_rows(buf: torch.Tensor, rows: list[int], value: torch.Tensor) -> None:\n"
    "    buf[rows].copy_(value)\n"
)
CLEAN = (
    "import torch\n"
    "\n"
    "\n"
    "def write_rows(buf: torch.Tensor, value: torch.Tensor) -> None:\n"
    "    buf[1:3].copy_(value)\n"
)
FINDING = "bad.py:5:5: VL201"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A folder with one file that has a VL201 finding and one that is clean."""
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "clean.py").write_text(CLEAN)
    return tmp_path


def viewlint_in(folder: Path, *args: str, input: str | None = None):
    """Run the real CLI in ``folder``, without the cache so each run really lints."""
    return run_viewlint(*args, "--no-cache", cwd=folder, input=input)


def codes_in(stdout: str) -> list[str]:
    return [line.split(": ")[1].split()[0] for line in stdout.splitlines() if line]


# --- exit codes and the summary ---------------------------------------------------------------


def test_findings_exit_1_with_concise_lines_on_stdout_and_summary_on_stderr(project: Path) -> None:
    result = viewlint_in(project, "bad.py")
    assert result.returncode == 1
    # VL201's fix changes behaviour (the write starts landing): unsafe, so no `[*]` without --unsafe-fixes.
    assert result.stdout.startswith(f"{FINDING} `buf[rows].copy_(…)` writes into a temporary copy")
    assert len(result.stdout.splitlines()) == 1
    assert result.stderr == "Found 1 finding (0 fixable).\n1 hidden fix can be enabled with the `--unsafe-fixes` option.\n"


def test_clean_file_exits_0_and_says_all_checks_passed(project: Path) -> None:
    result = viewlint_in(project, "clean.py")
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "All checks passed!\n")


def test_plural_summary_counts_findings_and_fixable(project: Path) -> None:
    (project / "two.py").write_text(BAD + "    buf[rows].zero_()\n    torch.nn.init.zeros_(buf[rows])\n")
    result = viewlint_in(project, "two.py")
    assert result.returncode == 1
    assert len(result.stdout.splitlines()) == 3
    assert result.stderr == "Found 3 findings (0 fixable).\n2 hidden fixes can be enabled with the `--unsafe-fixes` option.\n"


def test_bare_paths_mean_check(project: Path) -> None:
    bare = viewlint_in(project, "bad.py", "clean.py")
    explicit = viewlint_in(project, "check", "bad.py", "clean.py")
    assert (bare.returncode, bare.stdout, bare.stderr) == (explicit.returncode, explicit.stdout, explicit.stderr)


def test_default_path_is_the_current_directory(project: Path) -> None:
    result = viewlint_in(project)
    assert result.returncode == 1
    assert result.stdout.startswith(FINDING)


def test_exit_zero_keeps_the_findings(project: Path) -> None:
    result = viewlint_in(project, "--exit-zero", "bad.py")
    assert result.returncode == 0
    assert result.stdout.startswith(FINDING)


def test_quiet_prints_findings_only(project: Path) -> None:
    result = viewlint_in(project, "-q", "bad.py")
    assert result.returncode == 1
    assert result.stdout.startswith(FINDING)
    assert result.stderr == ""
    assert viewlint_in(project, "--quiet", "clean.py").stderr == ""


def test_no_python_files_exits_0_with_a_note(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not python\n")
    result = viewlint_in(tmp_path, ".")
    assert result.returncode == 0
    assert result.stdout == ""
    assert "no Python files found" in result.stderr


def test_missing_path_exits_2_with_a_message(project: Path) -> None:
    result = viewlint_in(project, "bad.py", "missing.py")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.strip() == "viewlint: error: missing.py: No such file or directory"


def test_version() -> None:
    result = run_viewlint("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"viewlint {viewlint.__version__}"


def test_unknown_option_is_a_usage_error(project: Path) -> None:
    assert viewlint_in(project, "--no-such-flag", "bad.py").returncode == 2


# --- selection ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "found"),
    [
        (("--select", "VL201"), True),
        (("--select", "VL2"), True),
        (("--select", "vl20"), True),  # case-insensitive
        (("--select", "ALL"), True),
        (("--select", "VL1"), False),
        (("--ignore", "VL201"), False),
        (("--ignore", "VL2"), False),
        (("--select", "ALL", "--ignore", "VL2"), False),
        (("--extend-ignore", "VL201"), False),
        # The more specific selector wins, whichever list it is in.
        (("--ignore", "VL2", "--extend-select", "VL201"), True),
        (("--select", "VL201", "--ignore", "VL2"), True),
        (("--select", "VL2", "--ignore", "VL201"), False),
        (("--select", "VL1,VL201"), True),
        (("--select", "VL1", "--extend-select", "VL201"), True),
    ],
)
def test_select_and_ignore(project: Path, args: tuple[str, ...], found: bool) -> None:
    result = viewlint_in(project, *args, "bad.py")
    assert result.returncode == (1 if found else 0), result.stderr
    assert ("VL201" in codes_in(result.stdout)) is found


@pytest.mark.parametrize("flag", ["--select", "--ignore", "--extend-select", "--extend-ignore"])
def test_unknown_code_exits_2_with_one_line(project: Path, flag: str) -> None:
    result = viewlint_in(project, flag, "VL999", "bad.py")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == f"viewlint: error: {flag}: unknown rule code or prefix 'VL999'\n"


# --- output formats -----------------------------------------------------------------------------


def test_concise_is_the_default_and_can_come_from_the_environment(project: Path) -> None:
    plain = viewlint_in(project, "bad.py")
    concise = viewlint_in(project, "--output-format", "concise", "bad.py")
    assert plain.stdout == concise.stdout
    environment = {**os.environ, "VIEWLINT_OUTPUT_FORMAT": "pylint"}
    from_env = subprocess.run([sys.executable, "-m", "viewlint", "--no-cache", "bad.py"], cwd=project, env=environment,
                              capture_output=True, text=True, timeout=300)
    assert from_env.stdout.startswith("bad.py:5: [VL201]")


def test_full_shows_the_source_line_carets_and_fix_hint(project: Path) -> None:
    result = viewlint_in(project, "--output-format", "full", "bad.py")
    assert result.returncode == 1
    assert FINDING in result.stdout
    assert "buf[rows].copy_(value)" in result.stdout
    assert "^" in result.stdout


def test_json_uses_ruffs_schema(project: Path) -> None:
    result = viewlint_in(project, "--output-format", "json", "bad.py", "clean.py")
    assert result.returncode == 1
    (finding,) = json.loads(result.stdout)
    assert set(finding) >= {"code", "name", "message", "filename", "location", "end_location", "fix", "noqa_row", "url"}
    assert finding["code"] == "VL201"
    assert finding["name"] == "inplace-on-advanced-index"
    assert finding["filename"] == "bad.py"
    assert finding["location"] == {"row": 5, "column": 5}
    assert finding["end_location"]["row"] == 5
    assert finding["noqa_row"] == 5
    assert finding["fix"]["applicability"] == "unsafe"
    assert finding["fix"]["edits"], "an unsafe fix carries edits too"


def test_json_of_a_clean_run_is_an_empty_list(project: Path) -> None:
    result = viewlint_in(project, "--output-format", "json", "clean.py")
    assert (result.returncode, json.loads(result.stdout)) == (0, [])


def test_json_lines_is_one_object_per_line(project: Path) -> None:
    (project / "also_bad.py").write_text(BAD)
    result = viewlint_in(project, "--output-format", "json-lines", "bad.py", "also_bad.py")
    lines = result.stdout.splitlines()
    assert [json.loads(line)["filename"] for line in lines] == ["also_bad.py", "bad.py"]


def test_sarif(project: Path) -> None:
    result = viewlint_in(project, "--output-format", "sarif", "bad.py")
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    assert any(rule["id"] == "VL201" for rule in run["tool"]["driver"]["rules"])
    (found,) = run["results"]
    region = found["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (5, 5)
    assert found["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "bad.py"


def test_github(project: Path) -> None:
    result = viewlint_in(project, "--output-format", "github", "bad.py")
    assert result.stdout.startswith("::warning file=bad.py,line=5,col=5,endLine=5,")
    assert "title=viewlint (VL201)::" in result.stdout


def test_pylint(project: Path) -> None:
    result = viewlint_in(project, "--output-format", "pylint", "bad.py")
    assert result.stdout.startswith("bad.py:5: [VL201] ")


def test_junit(project: Path) -> None:
    result = viewlint_in(project, "--output-format", "junit", "bad.py", "clean.py")
    root = ET.fromstring(result.stdout)
    failures = root.findall(".//failure")
    assert len(failures) == 1
    assert "VL201" in ET.tostring(root, encoding="unicode")


def test_unknown_output_format_is_a_usage_error(project: Path) -> None:
    assert viewlint_in(project, "--output-format", "xml", "bad.py").returncode == 2


def test_statistics_counts_per_rule(project: Path) -> None:
    (project / "two.py").write_text(BAD + "    buf[rows].zero_()\n")
    result = viewlint_in(project, "--statistics", "two.py", "bad.py")
    assert result.returncode == 1
    assert result.stdout.split("\t") == ["    3", "VL201", "inplace-on-advanced-index\n"]
    as_json = viewlint_in(project, "--statistics", "--output-format", "json", "two.py", "bad.py")
    assert json.loads(as_json.stdout) == [{"code": "VL201", "name": "inplace-on-advanced-index", "count": 3, "fixable": False,
                                              "fixable_count": 0}]
    unsafe = viewlint_in(project, "--statistics", "--unsafe-fixes", "two.py", "bad.py")
    assert unsafe.stdout.split("\t") == ["    3", "VL201", "[*] inplace-on-advanced-index\n"]


def test_output_file_takes_the_findings_and_stdout_stays_empty(project: Path) -> None:
    result = viewlint_in(project, "-o", "report.json", "--output-format", "json", "bad.py")
    assert result.returncode == 1
    assert result.stdout == ""
    assert json.loads((project / "report.json").read_text())[0]["code"] == "VL201"
    assert result.stderr == "Found 1 finding (0 fixable).\n1 hidden fix can be enabled with the `--unsafe-fixes` option.\n"


# --- stdin ---------------------------------------------------------------------------------------


def test_stdin_is_linted_under_the_given_name(project: Path) -> None:
    result = viewlint_in(project, "-", "--stdin-filename", "pkg/model.py", input=BAD)
    assert result.returncode == 1
    assert result.stdout.startswith("pkg/model.py:5:5: VL201")
    assert viewlint_in(project, "-", input=CLEAN).returncode == 0
    unnamed = viewlint_in(project, "-", input=BAD)
    assert unnamed.stdout.startswith("-:5:5: VL201")


def test_stdin_filename_picks_up_config_and_per_file_ignores(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.viewlint]\nper-file-ignores = { "legacy/*.py" = ["VL2"] }\n')
    ignored = viewlint_in(project, "-", "--stdin-filename", "legacy/old.py", input=BAD)
    assert ignored.returncode == 0, ignored.stdout
    linted = viewlint_in(project, "-", "--stdin-filename", "new/model.py", input=BAD)
    assert linted.returncode == 1
    # An absolute name (as editors pass it) is matched relative to the project too.
    absolute = viewlint_in(project, "-", "--stdin-filename", str(project / "legacy" / "old.py"), input=BAD)
    assert absolute.returncode == 0, absolute.stdout


def test_stdin_force_exclude(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.viewlint]\nextend-exclude = ["generated"]\n')
    result = viewlint_in(project, "--force-exclude", "-", "--stdin-filename", "generated/x.py", input=BAD)
    assert result.returncode == 0
    assert result.stdout == ""


# --- configuration -------------------------------------------------------------------------------


def test_per_file_ignores_from_pyproject(project: Path) -> None:
    (project / "tests").mkdir()
    (project / "tests" / "test_bad.py").write_text(BAD)
    (project / "pyproject.toml").write_text('[tool.viewlint]\nper-file-ignores = { "tests/*" = ["VL201"] }\n')
    result = viewlint_in(project, ".")
    assert result.returncode == 1
    assert result.stdout.splitlines()[0].startswith(FINDING)
    assert "test_bad.py" not in result.stdout


def test_config_select_ignore(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.viewlint]\nignore = ["VL201"]\n')
    assert viewlint_in(project, "bad.py").returncode == 0
    # --isolated ignores every config file.
    assert viewlint_in(project, "--isolated", "bad.py").returncode == 1


def test_explicit_config_file(project: Path) -> None:
    (project / "strict.toml").write_text('select = ["VL1"]\n')
    other = project / "elsewhere"
    other.mkdir()
    (other / "viewlint.toml").write_text('select = ["VL2"]\n')
    (other / "bad.py").write_text(BAD)
    assert viewlint_in(project, "elsewhere/bad.py").returncode == 1
    assert viewlint_in(project, "--config", "strict.toml", "elsewhere/bad.py").returncode == 0


def test_missing_config_file_exits_2(project: Path) -> None:
    result = viewlint_in(project, "--config", "nope.toml", "bad.py")
    assert result.returncode == 2
    assert "nope.toml" in result.stderr and len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ('selectt = ["VL2"]', "unknown key 'selectt'"),
        ('select = ["VL999"]', "unknown rule code or prefix 'VL999'"),
        ('respect-gitignore = "yes"', "must be a boolean"),
        ('select = "VL2"', "must be a list of strings"),
    ],
)
def test_config_mistakes_exit_2_with_one_line_naming_file_and_key(project: Path, body: str, expected: str) -> None:
    (project / "pyproject.toml").write_text(f"[tool.viewlint]\n{body}\n")
    result = viewlint_in(project, "bad.py")
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith("viewlint: error: pyproject.toml: [tool.viewlint] ")
    assert expected in line


class ForbiddenCall(Rule):
    """
    ## What it does
    Test-only rule: flags calls to the functions named in its `names` option.

    ## Why it matters
    It proves that `[tool.viewlint.rules.<CODE>]` options reach a rule.

    ## Example
    ```python
    forbidden()
    ```

    ## Fix
    Do not call it.
    """

    code = "VL901"
    name = "forbidden-call"
    summary = "Calls a configured function"
    options: ClassVar[dict[str, Any]] = {"names": ["forbidden"]}

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value in self.option("names"):
            self.report(node, f"`{node.func.value}()` is forbidden")


def test_rule_options_from_config_reach_the_rule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    rules = {**registry.all_rules(), "VL901": ForbiddenCall}
    monkeypatch.setattr(registry, "all_rules", lambda: rules)
    monkeypatch.setattr(engine, "all_rules", lambda: rules)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "code.py").write_text("forbidden()\nlegacy()\n")

    def lint() -> list[str]:
        code = run_check(("code.py",), select=("VL901",), no_cache=True, jobs=1, quiet=True)
        out = capsys.readouterr().out
        assert code == (1 if out else 0)
        return out.splitlines()

    assert lint() == ["code.py:1:1: VL901 `forbidden()` is forbidden"]
    (tmp_path / "pyproject.toml").write_text('[tool.viewlint.rules.VL901]\nnames = ["legacy"]\n')
    assert lint() == ["code.py:2:1: VL901 `legacy()` is forbidden"]


# --- suppressions through the CLI ---------------------------------------------------------------


def test_add_noqa_writes_the_code_and_a_rerun_passes(project: Path) -> None:
    added = viewlint_in(project, "--add-noqa", "bad.py", "clean.py")
    assert added.returncode == 0, added.stderr
    assert "Added 1 noqa directive." in added.stderr
    assert (project / "bad.py").read_text().splitlines()[4] == "    buf[rows].copy_(value)  # noqa: VL201"
    assert (project / "clean.py").read_text() == CLEAN
    rerun = viewlint_in(project, "bad.py", "clean.py")
    assert rerun.returncode == 0, rerun.stdout
    assert viewlint_in(project, "--ignore-noqa", "bad.py").returncode == 1


def test_file_level_noqa(project: Path) -> None:
    (project / "bad.py").write_text("# viewlint: noqa: VL2\n" + BAD)
    assert viewlint_in(project, "bad.py").returncode == 0


# --- viewlint rule ------------------------------------------------------------------------------


def test_rule_prints_the_markdown_documentation() -> None:
    result = run_viewlint("rule", "VL201")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "# inplace-on-advanced-index (VL201)"
    headings = [line for line in lines if line.startswith("## ")]
    assert headings[:4] == ["## What it does", "## Why it matters", "## Example", "## Fix"]
    assert run_viewlint("rule", "vl201").stdout == result.stdout


def test_rule_json() -> None:
    data = json.loads(run_viewlint("rule", "VL201", "--output-format", "json").stdout)
    assert data["code"] == "VL201"
    assert data["name"] == "inplace-on-advanced-index"
    assert data["fix"] == "unsafe"
    assert data["explanation"].startswith("# inplace-on-advanced-index (VL201)")


def test_rule_unknown_code_exits_2() -> None:
    result = run_viewlint("rule", "VL999")
    assert result.returncode == 2
    assert "VL999" in result.stderr


def test_rule_all_lists_every_rule_with_state_and_fix() -> None:
    result = run_viewlint("rule", "--all")
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    codes = [line.split()[0] for line in lines]
    assert codes == sorted(set(codes)) and "VL201" in codes
    vl201 = next(line for line in lines if line.startswith("VL201"))
    assert vl201.split()[1:4] == ["on", "fix:unsafe", "inplace-on-advanced-index:"]


def test_rule_all_json() -> None:
    data = json.loads(run_viewlint("rule", "--all", "--output-format", "json").stdout)
    codes = [item["code"] for item in data]
    assert codes == sorted(set(codes)) and "VL201" in codes
    for item in data:
        assert set(item) >= {"code", "name", "summary", "default_enabled", "fix"}
